"""A HOME holding many past sessions of several coding assistants, made from the transcripts the real CLIs wrote
(tests/fixtures/transcripts: Claude Code 2.1.197, Codex 0.171.0 and Gemini CLI 0.61.0, recorded through the test
harness): each past session is one recording placed where its CLI keeps it, under a session id of its own, its
file's modification time set to when it "ran". Used by the history-import tests and benchmark."""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
DAY = 86_400.0


@dataclass(frozen=True)
class Recording:
    assistant: str
    fixture: str
    session_id: str  # the recording's own session id, replaced in every copy

    def where(self, home: Path, project: Path, session: str) -> Path:
        if self.assistant == "claude":  # ~/.claude/projects/<the cwd, non-alphanumerics as ->/<session>.jsonl
            folder = "".join(c if c.isalnum() and c.isascii() else "-" for c in str(project))
            return home / ".claude" / "projects" / folder / f"{session}.jsonl"
        if self.assistant == "codex":
            return home / ".codex" / "sessions" / "2026" / "11" / "27" / f"rollout-2026-11-27T07-08-00-{session}.jsonl"
        return home / ".gemini" / "tmp" / project.name / "chats" / f"session-2026-11-27T07-08-{session[:8]}.jsonl"


def _first_line(fixture: str) -> dict[str, object]:
    return json.loads((FIXTURES / fixture).read_text(encoding="utf-8").split("\n", 1)[0])  # type: ignore[no-any-return]


def recordings() -> dict[str, Recording]:
    codex = str(_first_line("codex-0.171.0.jsonl")["payload"]["id"])  # type: ignore[index]
    gemini = str(_first_line("gemini-0.61.0.jsonl")["sessionId"])
    claude = next(
        str(line["sessionId"])
        for raw in (FIXTURES / "claude-code-2.1.197.jsonl").read_text(encoding="utf-8").splitlines()
        if "sessionId" in (line := json.loads(raw))
    )
    return {
        "claude": Recording("claude", "claude-code-2.1.197.jsonl", claude),
        "codex": Recording("codex", "codex-0.171.0.jsonl", codex),
        "gemini": Recording("gemini", "gemini-0.61.0.jsonl", gemini),
    }


def place_session(
    home: Path, project: Path, assistant: str, *, age_days: float = 0.0, replace: dict[str, str] | None = None
) -> tuple[str, Path]:
    """One past session of `assistant` in `project`, `age_days` old: its new session id and transcript file.
    `replace`: other text to change in the recording (a secret typed into a prompt, say)."""
    rec = recordings()[assistant]
    session = str(uuid.uuid4())
    path = rec.where(home, project, session)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (FIXTURES / rec.fixture).read_text(encoding="utf-8").replace(rec.session_id, session)
    text = text.replace("__PROJECT__", str(project)).replace("__TRANSCRIPT_DIR__", str(path.parent))
    text = text.replace("__HOME__", str(home))
    for old, new in (replace or {}).items():
        assert old in text, f"{old!r} is not in the {assistant} recording"
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    if assistant == "gemini":  # Gemini CLI notes the project of each folder of chats
        (path.parent.parent / ".project_root").write_text(str(project), encoding="utf-8")
    when = 1_795_000_000.0 - age_days * DAY  # 2026-11-18, minus the session's age
    os.utime(path, (when, when))
    return session, path


def fill_home(
    home: Path, project: Path, count: int, assistants: tuple[str, ...] = ("claude", "codex", "gemini")
) -> list[tuple[str, str, Path]]:
    """`count` past sessions of `project`, the assistants taking turns, one a day going back: (assistant, session
    id, transcript) each, newest first."""
    made = []
    for i in range(count):
        assistant = assistants[i % len(assistants)]
        session, path = place_session(home, project, assistant, age_days=float(i))
        made.append((assistant, session, path))
    return made


def env_for(home: Path) -> dict[str, str]:
    """The environment that points every assistant's folder (and codememory's registry) at `home`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEMEMORY_", "CLAUDE_", "GEMINI_", "COPILOT_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        CODEX_HOME=str(home / ".codex"),
        OPENCODE_DB=":memory:",  # no OpenCode database
    )
    return env
