"""The extraction prompts (`extract/prompts/*.txt`): read and checked once, filled with `{name}` placeholders."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from codememory.core.lazy_pattern import lazy_pattern
from codememory.errors import PromptFileError

PROMPTS_DIR = Path(__file__).parent / "prompts"
PROMPT_FILES = {
    "extraction_system": "extraction_system.txt",
    "extraction_user": "extraction_user.txt",
    "extraction_repair": "extraction_repair.txt",
    "compression_system": "compression_system.txt",
}
_PLACEHOLDER_RE = lazy_pattern(r"\{(\w+)\}")


def fill(template: str, **values: str) -> str:
    """Replace `{name}` placeholders of the template (only known names; inserted text is not rescanned)."""
    return _PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


# Placeholders each file must hold: without them the model would never see the transcript, the stored
# memories, or why its answer was refused.
REQUIRED = {
    "extraction_user": ("{transcript}", "{existing_memories}"),
    "extraction_repair": ("{error}",),
}


@dataclass(frozen=True)
class Prompts:
    extraction_system: str
    extraction_user: str
    extraction_repair: str
    compression_system: str

    @classmethod
    def load(cls, folder: Path | None = None) -> Prompts:
        """Read every prompt file; a missing or empty one, or one without its placeholders, raises
        PromptFileError (fail fast: no model is asked with half a prompt). The packaged prompts (no `folder`)
        are read once per process: the daemon extracts session after session."""
        return _packaged_prompts() if folder is None else cls._read(folder)

    @classmethod
    def _read(cls, folder: Path) -> Prompts:
        return cls(**{key: read_prompt(folder / name, REQUIRED.get(key, ())) for key, name in PROMPT_FILES.items()})


def read_prompt(path: Path, required: tuple[str, ...] = (), kind: str = "extraction") -> str:
    """One prompt file's text; a missing, unreadable or empty file, or one without a `required` placeholder,
    raises PromptFileError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PromptFileError(f"{kind} prompt file missing: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptFileError(f"cannot read {kind} prompt file {path}: {exc}") from None
    if not text.strip():
        raise PromptFileError(f"{kind} prompt file is empty: {path}")
    missing = [p for p in required if p not in text]
    if missing:
        raise PromptFileError(f"{kind} prompt file {path} has no {' or '.join(missing)} placeholder")
    return text


def prompts_folder(setting: str, project_root: Path) -> Path | None:
    """`[llm] prompts_dir` as a folder: None (the packaged prompts) when empty; `~` expanded; a relative path
    is the project's (a team keeps its prompts in the repository)."""
    if not setting.strip():
        return None
    path = Path(setting.strip()).expanduser()
    return path if path.is_absolute() else project_root / path


@functools.cache
def _packaged_prompts() -> Prompts:
    return Prompts._read(PROMPTS_DIR)
