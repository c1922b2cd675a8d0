"""Choosing the extraction model path (`codememory init --extract-with opencode|claude|codex|none`): the user's own
coding agent reads each finished session, or the rules do (none). The choice is written to `[llm]` in the user's own
config (never a project's committed one), with a daily token budget, and said back with what it costs.

The cost per session is an estimate for a typical session: our prompt (the prompt files, a typical session's
transcript, the stored memories shown), the answer, and what the CLI adds to a request (measured against scripted
servers: benchmarks/README.md, "Extraction with an agent CLI"). What a session really costs is in
`codememory stats` (each CLI's own usage report); the session and daily budgets are hard limits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from codememory.core.config import load_config
from codememory.core.result import Result
from codememory.core.user_config import SectionEdit, user_config_path
from codememory.errors import InvalidInput
from codememory.extract.llm import AGENT_CLIS, agent_cli_provider
from codememory.extract.prompt_templates import Prompts
from codememory.text.tokens import estimate_tokens

CHOICES = ("none", *AGENT_CLIS)
DEFAULT_DAILY_TOKENS = 200_000  # ~20 typical sessions a day in each project
# A typical session as the model reads it: a dozen turns. The benchmark corpus's sessions, of about three turns,
# come to ~150 tokens a turn with the stored memories shown (benchmarks/README.md, "Extraction with an agent CLI");
# the answer's size is an allowance (a model's answers were not measured).
TYPICAL_TRANSCRIPT_TOKENS = 1_700
TYPICAL_ANSWER_TOKENS = 400
TYPICAL_KNOWN_TOKENS = 600  # the stored memories shown: a young project has few

COMMANDS = {"opencode": "opencode run", "claude": "claude -p", "codex": "codex exec"}
BILLED_TO = {
    "opencode": "the provider and key your OpenCode model uses",
    "claude": "your Claude plan or Anthropic API key",
    "codex": "your ChatGPT plan or OpenAI API key",
}


@dataclass
class ExtractionSetup(Result):
    """The extraction model path as init left it (`init --json`'s "extraction")."""

    provider: str  # none | opencode | claude | codex
    command: str | None  # the CLI run for each session: "claude -p"
    model: str  # "" : the CLI's own model setting
    tokens_per_session: int | None  # the estimate for a typical session
    session_token_budget: int | None
    daily_token_budget: int | None  # per project and UTC day
    billed_to: str | None
    config: str  # the user's config file it is written in
    changed: bool  # init changed that file


@dataclass
class ExtractionPlan:
    setup: ExtractionSetup
    edit: SectionEdit

    def apply(self) -> ExtractionSetup:
        self.edit.apply()
        return self.setup


def plan_extraction(choice: str, *, model: str | None = None, daily_tokens: int | None = None) -> ExtractionPlan:
    """Check the choice (the CLI is on PATH and its own config can be read) and prepare the edit of the user's
    config, writing nothing yet: InvalidInput with one line otherwise."""
    kind = choice.strip().lower()
    if kind not in CHOICES:
        raise InvalidInput(f"--extract-with: choose one of {', '.join(CHOICES)}, not {choice!r}")
    if daily_tokens is not None and daily_tokens <= 0:
        raise InvalidInput(f"--daily-tokens must be positive, got {daily_tokens}")
    current = load_config(None).llm  # the user's own settings (and the environment's)
    if kind == "none":
        edit = SectionEdit.plan("llm", {"provider": "none"})
        return ExtractionPlan(
            ExtractionSetup("none", None, "", None, None, None, None, str(edit.path), edit.changed), edit
        )
    same = current.provider.strip().lower() == kind
    # another provider's model means nothing to this CLI: its own setting applies unless one is given
    chosen_model = model.strip() if model is not None else (current.model.strip() if same else "")
    daily = daily_tokens or (current.daily_token_budget if same else DEFAULT_DAILY_TOKENS)
    values: dict[str, object] = {"provider": kind, "daily_token_budget": daily}
    if chosen_model:
        values["model"] = chosen_model
    remove = () if chosen_model else ("model",)
    chosen = replace(current, provider=kind, model=chosen_model)
    provider = agent_cli_provider(kind, chosen)  # InvalidInput when the CLI is missing or its config unreadable
    edit = SectionEdit.plan("llm", values, remove)
    setup = ExtractionSetup(
        provider=kind,
        command=COMMANDS[kind],
        model=chosen_model,
        tokens_per_session=session_tokens(provider.overhead_tokens),
        session_token_budget=current.session_token_budget,
        daily_token_budget=daily,
        billed_to=BILLED_TO[kind],
        config=str(edit.path),
        changed=edit.changed,
    )
    return ExtractionPlan(setup, edit)


def installed_clis() -> list[str]:
    """The agent CLIs the user's `[llm]` settings find on PATH (what init offers when it asks)."""
    import shutil

    cfg = load_config(None).llm
    commands = {"opencode": cfg.opencode_bin, "claude": cfg.claude_bin, "codex": cfg.codex_bin}
    return [kind for kind in AGENT_CLIS if shutil.which(commands[kind].strip() or kind)]


def chosen_before() -> bool:
    """The user's own config already names an extraction provider (init does not ask again)."""
    import tomllib

    path = user_config_path()
    try:
        llm = tomllib.loads(path.read_text(encoding="utf-8")).get("llm") if path.exists() else None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # a file init cannot read is not one to start changing by a question
    return isinstance(llm, dict) and "provider" in llm


def session_tokens(overhead: int) -> int:
    """The tokens one typical session's extraction costs: one call with our prompt files, a typical transcript and
    stored memories, the CLI's own additions, and the answer (rounded to hundreds)."""
    prompts = Prompts.load()
    prompt = estimate_tokens(prompts.extraction_system) + estimate_tokens(prompts.extraction_user)
    total = prompt + TYPICAL_TRANSCRIPT_TOKENS + TYPICAL_KNOWN_TOKENS + overhead + TYPICAL_ANSWER_TOKENS
    return -(-total // 100) * 100


def describe(setup: ExtractionSetup) -> list[str]:
    """One or two lines for the person who ran init: what runs, what it costs and who pays, how to turn it off."""
    if setup.provider == "none":
        return [
            "Extraction: rules only, no model (free). To have your own agent CLI read each session: "
            "codememory init --extract-with opencode|claude|codex."
        ]
    model = f"model {setup.model}" if setup.model else "its own model setting"
    return [
        f"Extraction: `{setup.command}` ({model}) reads each finished session: about {setup.tokens_per_session:,} "
        f"tokens a session (at most {setup.session_token_budget:,}), at most {setup.daily_token_budget:,} a day in "
        f"each project, billed to {setup.billed_to}.",
        f"Turn it off: codememory init --extract-with none (it is [llm] in {setup.config}; `codememory stats` shows "
        "what was spent).",
    ]
