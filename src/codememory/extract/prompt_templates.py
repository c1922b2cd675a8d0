"""The extraction prompts (`extract/prompts/*.txt`): read and checked once, filled with `{name}` placeholders."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

PROMPTS_DIR = Path(__file__).parent / "prompts"
PROMPT_FILES = {
    "extraction_system": "extraction_system.txt",
    "extraction_user": "extraction_user.txt",
    "extraction_repair": "extraction_repair.txt",
    "compression_system": "compression_system.txt",
}
_PLACEHOLDER_RE = re.compile(r"\{(\w+)\}")


def fill(template: str, **values: str) -> str:
    """Replace `{name}` placeholders of the template (only known names; inserted text is not rescanned)."""
    return _PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


@dataclass(frozen=True)
class Prompts:
    extraction_system: str
    extraction_user: str
    extraction_repair: str
    compression_system: str

    @classmethod
    def load(cls, folder: Path | None = None) -> Prompts:
        """Read every prompt file; a missing or empty one raises FileNotFoundError (fail fast). The packaged
        prompts (no `folder`) are read once per process: the daemon extracts session after session."""
        return _packaged_prompts() if folder is None else cls._read(folder)

    @classmethod
    def _read(cls, folder: Path) -> Prompts:
        texts: dict[str, str] = {}
        for key, name in PROMPT_FILES.items():
            path = folder / name
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise FileNotFoundError(f"extraction prompt file missing: {path}") from None
            if not text.strip():
                raise FileNotFoundError(f"extraction prompt file is empty: {path}")
            texts[key] = text
        if "{transcript}" not in texts["extraction_user"]:
            raise FileNotFoundError(f"{folder / PROMPT_FILES['extraction_user']} has no {{transcript}} placeholder")
        return cls(**texts)


@functools.cache
def _packaged_prompts() -> Prompts:
    return Prompts._read(PROMPTS_DIR)
