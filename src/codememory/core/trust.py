"""Trust in a project's committed `.codememory/config.toml`.

`.codememory/` is meant to be committed, so a project's config.toml is written by whoever pushed last.
The user's own config (`~/.config/codememory/config.toml`), environment variables and command-line
flags are trusted; a project's file is not. From an untrusted project file only the settings in
`UNTRUSTED_RULES` apply (limits, weights, intervals, budgets, and switching a remote feature off);
everything else (where data is sent, which credential goes with it, which program or model file runs,
paths outside the project, and any setting added later, by default) applies only once the user has run
`codememory trust`, which records the file's sha256 under its resolved path in the user's state folder.
A changed file is untrusted again until trusted anew.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codememory.core.dates import now_iso_seconds
from codememory.core.paths import state_dir
from codememory.core.private_file import read_entries, write_private
from codememory.core.safe_text import printable_line
from codememory.errors import InvalidInput, UnsafePath

TRUST_NAME = "trusted-configs.json"
VERSION = 1
# A settings file is a few hundred bytes; a bigger one is not a config anyone wrote by hand.
MAX_CONFIG_BYTES = 256 * 1024

# What an untrusted project file may still set, per "section.key". A key missing here needs trust.
HARMLESS = "harmless"  # applies as written
LOWER_ONLY = "lower-only"  # applies when it does not raise the value from the trusted layers
RAISE_ONLY = "raise-only"  # applies when it does not lower the value from the trusted layers
OFF_ONLY = "off-only"  # applies when it switches the feature off


@dataclass(frozen=True)
class Rule:
    kind: str
    # Numbers from an untrusted file must also lie in [low, high]: a harmless knob at an absurd value
    # (a batch size of 0, dedup at 0 so that every new memory "duplicates" a committed one) is not harmless.
    low: float | None = None
    high: float | None = None


UNTRUSTED_RULES: dict[str, Rule] = {
    # [embedding]: the provider chooses where every query and memory text is sent (ollama, openai) or
    # which code loads a model, so the project may only switch embeddings off. `model` / `query_model`
    # name a model: for a local provider a folder, which may be inside the repository and hold a
    # pickle that runs code when loaded; for a remote one, what the user's credential pays for.
    # `base_url` and `api_key_env` choose the destination and the credential sent with the text.
    # The prompt and prefixes belong to the model the user chose: a project's would silently put its
    # vectors in another space. `device` picks the user's hardware (GPU memory, a shared machine's GPUs).
    "embedding.provider": Rule(OFF_ONLY),
    "embedding.timeout": Rule(HARMLESS, 0.1, 600),  # how long we wait for the user's own provider
    "embedding.batch_size": Rule(HARMLESS, 1, 4096),  # texts per call to the user's own provider
    "embedding.daemon_query_timeout": Rule(HARMLESS, 0.1, 60),  # how long the CLI waits for the user's daemon
    # [search], [dedup], [links]: thresholds and weights that only shape this project's own results.
    "search.ann_threshold": Rule(HARMLESS, 0, 1e9),
    "search.neighbour_weight": Rule(HARMLESS, 0, 1),
    "dedup.text_ratio": Rule(HARMLESS, 0.8, 1),
    # A lower dedup cosine makes more new memories "duplicates" of committed ones (they are not stored), and
    # what is low depends on the model (e5's unrelated notes sit at 0.80-0.85): a project may only be stricter.
    "dedup.cosine": Rule(RAISE_ONLY, 0, 1),
    "links.cosine": Rule(RAISE_ONLY, 0, 1),
    "links.max_links": Rule(HARMLESS, 0, 50),
    # [capture]: intervals and thresholds are harmless. `auto_init` makes capture create stores in
    # other projects (off is harmless); `opencode_db` names a database outside the project to read.
    "capture.poll_interval": Rule(HARMLESS, 0.5, 86400),
    "capture.idle_after": Rule(HARMLESS, 0, 30 * 86400),
    "capture.min_messages": Rule(HARMLESS, 0, 1e6),
    "capture.auto_init": Rule(OFF_ONLY),
    # [llm]: the provider, base_url, model and api_key_env choose where transcripts go, with which
    # credential and at what price (`model` with provider "opencode" also picks OpenCode's provider);
    # `opencode_bin`, `claude_bin` and `codex_bin` are programs to run with the user's environment; the compress_*
    # settings do the same for
    # the tool-compression model; `prompts_dir` names files to read and the instructions the model gets.
    # None of them apply untrusted, except switching the LLM off. The budgets cap what the user's credential
    # spends: a project may tighten them, never loosen them. The rest only shapes calls the user already chose to make.
    "llm.provider": Rule(OFF_ONLY),
    "llm.timeout": Rule(HARMLESS, 1, 600),
    "llm.compress_tools": Rule(HARMLESS),
    "llm.session_token_budget": Rule(LOWER_ONLY, 0),
    "llm.daily_token_budget": Rule(LOWER_ONLY, 0),
    "llm.max_transcript_tokens": Rule(HARMLESS, 1, 1_000_000),
    "llm.known_memories_tokens": Rule(HARMLESS, 0, 100_000),
    # [daemon]: the user's daemon serves every project; nothing in it is a project's to choose.
    # [context]: the per-call budget caps what the user's model reads (and pays for): a project may only lower
    # it. The pin threshold only shapes this project's own memory blocks.
    "context.call_budget_tokens": Rule(LOWER_ONLY, 0, 1_000_000),
    "context.pinned_min_score": Rule(HARMLESS, 0, 2),
    # [staleness]: how often this project is checked and how much a stale memory is demoted in its own results.
    "staleness.check_interval": Rule(HARMLESS, 0, 30 * 86400),
    "staleness.demote": Rule(HARMLESS, 0, 1),
    # [usefulness]: how this project's own ranking listens to what agents used. A project may ask for more evidence
    # before its never-used memories are offered for archiving, never less.
    "usefulness.half_life_days": Rule(HARMLESS, 0, 3650),
    "usefulness.weight": Rule(HARMLESS, 0, 1),
    "usefulness.never_used_after": Rule(RAISE_ONLY, 1, 1_000_000),
    # [consolidation]: archives and squashes this project's own memories (recorded, undoable). A project may
    # make it stricter (a higher similarity, a longer or no decay, no model), never looser; how often it runs
    # costs only the user's budgets, which a project cannot raise.
    "consolidation.interval": Rule(HARMLESS, 0, 366 * 86400),
    "consolidation.similarity_threshold": Rule(RAISE_ONLY, 0, 1),
    "consolidation.use_model": Rule(OFF_ONLY),
    "consolidation.decay": Rule(OFF_ONLY),
    "consolidation.decay_after_days": Rule(RAISE_ONLY, 1, 36500),
    "consolidation.decay_max_importance": Rule(LOWER_ONLY, 0, 1),
}

# The values that switch a feature off, as each consumer understands them (after strip + lower).
_OFF_VALUES: dict[str, tuple[Any, ...]] = {
    "embedding.provider": ("", "none", "off"),
    "llm.provider": ("", "none"),
    "capture.auto_init": (False,),
    "consolidation.use_model": (False,),
    "consolidation.decay": (False,),
}

NEEDS_TRUST_REASON = "sends data, picks a credential, a program, a model or a path: needs `codememory trust`"


def rule(key: str) -> Rule | None:
    """How an untrusted project file's `key` is treated; None: it needs trust."""
    return UNTRUSTED_RULES.get(key)


def judge_untrusted(key: str, value: Any, current: Any) -> tuple[bool, str]:
    """Whether an untrusted project file's `value` for `key` applies over `current` (the value from the
    defaults and the user's config), and why. `value` is already coerced to the setting's type, except
    for keys that need trust (their value is never used)."""
    found = rule(key)
    if found is None:
        return False, NEEDS_TRUST_REASON
    if found.kind == OFF_ONLY:
        normalized = value.strip().lower() if isinstance(value, str) else value
        if normalized in _OFF_VALUES[key]:
            return True, "switches the feature off: applies untrusted"
        return False, "untrusted, a project may only switch this off"
    low = -math.inf if found.low is None else found.low
    high = math.inf if found.high is None else found.high
    if not isinstance(value, bool) and isinstance(value, int | float) and not low <= value <= high:
        return False, f"untrusted, must be between {low:g} and {high:g}"
    if found.kind == LOWER_ONLY:
        if value <= current:
            return True, "lowers a limit: applies untrusted"
        return False, f"untrusted, a project may only lower this limit (now {current})"
    if found.kind == RAISE_ONLY:
        if value >= current:
            return True, "raises a threshold: applies untrusted"
        return False, f"untrusted, a project may only raise this threshold (now {current})"
    return True, "a limit, weight or interval: applies untrusted"


# ------------------------------------------------------------------------------------ the project file
@dataclass(frozen=True)
class ProjectFile:
    """One read of a project's config.toml: the parsed settings and the hash of exactly those bytes."""

    path: Path  # as given (for messages about the file)
    resolved: Path  # what trust is recorded under
    digest: str  # sha256 of the bytes parsed
    data: dict[str, Any]


def read_project_file(path: Path) -> ProjectFile | None:
    """The project's config.toml, or None when there is none. Read once, so the hash is of what was
    parsed; never through a symbolic link (it could point anywhere the user can read); capped in size."""
    from codememory.core import safe_files

    try:  # no link at the file nor at any folder from .codememory down (a linked .codememory included)
        fd = safe_files.open_fd(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnsafePath as exc:
        if path.is_dir() or (not path.is_symlink() and path.exists() and not path.is_file()):
            return None  # a folder or a pipe named config.toml is not a config (and must not block us)
        raise InvalidInput(
            f"{exc}; codememory does not follow links in a project's .codememory/ (replace it with a real file)"
        ) from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        raw = fh.read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise InvalidInput(f"cannot read {path}: larger than {MAX_CONFIG_BYTES // 1024} KiB")
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None
    return ProjectFile(path, path.resolve(), hashlib.sha256(raw).hexdigest(), data)


# ------------------------------------------------------------------------------------ the trust record
def trust_path() -> Path:
    return state_dir() / TRUST_NAME


def _entries(strict: bool) -> dict[str, dict[str, Any]]:
    """{resolved path: {"sha256", "trusted_at"}}. Unreadable: an error when `strict` (the trust command,
    which would otherwise overwrite it), else nothing is trusted (settings then fall back, loudly)."""
    return read_entries(
        trust_path(),
        "configs",
        "trust",
        strict=strict,
        valid=lambda v: isinstance(v, dict) and isinstance(v.get("sha256"), str),
    )


def _save(entries: dict[str, dict[str, Any]]) -> None:
    """Atomically replace the trust file, readable and writable by the owner only."""
    text = json.dumps({"version": VERSION, "configs": entries}, indent=2, sort_keys=True) + "\n"
    write_private(trust_path(), text, sync=True)


def status(project: ProjectFile) -> str:
    """The file's trust: "trusted" (this exact content), "changed" (trusted once, edited since) or "untrusted"."""
    entry = _entries(strict=False).get(str(project.resolved))
    if entry is None:
        return "untrusted"
    return "trusted" if entry.get("sha256") == project.digest else "changed"


def trusted_at(project: ProjectFile) -> str | None:
    entry = _entries(strict=False).get(str(project.resolved))
    value = entry.get("trusted_at") if entry else None
    return value if isinstance(value, str) else None


def trust(project: ProjectFile) -> bool:
    """Record this content of the file as trusted. False when it already was."""
    entries = _entries(strict=True)
    key = str(project.resolved)
    if entries.get(key, {}).get("sha256") == project.digest:
        return False
    now = now_iso_seconds()
    entries[key] = {"sha256": project.digest, "trusted_at": now}
    _save(entries)
    return True


def revoke(resolved: Path) -> bool:
    """Forget the trust given to the file at `resolved`. False when there was none."""
    entries = _entries(strict=True)
    if entries.pop(str(resolved), None) is None:
        return False
    _save(entries)
    return True


# ------------------------------------------------------------------------------------ the warning
_warned: set[tuple[str, ...]] = set()


def warn_unusable(project: ProjectFile, keys: list[str]) -> None:
    """One line on stderr naming the project file's settings this codememory does not know (or cannot read), once
    per process per file content."""
    marker = (str(project.resolved), project.digest, "unusable")
    if not keys or marker in _warned:
        return
    _warned.add(marker)
    shown = printable_line(", ".join(keys), 300)
    _stderr_line(
        f"codememory: warning: ignoring unknown or invalid settings in {printable_line(str(project.resolved))}: "
        f"{shown} (from a newer codememory, or a typo)"
    )


def _stderr_line(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # no usable stderr (closed, detached): stay quiet
        pass


def warn_ignored(project: ProjectFile, keys: list[str], state: str) -> None:
    """One line on stderr naming the settings ignored, once per process per file content. stderr only:
    stdout carries JSON (CLI --json, hooks) and the MCP stdio protocol."""
    marker = (str(project.resolved), project.digest)
    if not keys or marker in _warned:
        return
    _warned.add(marker)
    changed = "config changed since you trusted it; " if state == "changed" else ""
    _stderr_line(
        f"codememory: ignoring untrusted settings in {printable_line(str(project.resolved))}: {', '.join(keys)} "
        f"({changed}run 'codememory trust' in the project to allow them)"
    )
