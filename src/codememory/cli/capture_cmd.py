"""`codememory capture`: one capture-and-extraction pass in the foreground (for cron, tests, debugging)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import click

from codememory.cli.render import dump_json
from codememory.core.lazy_pattern import lazy_pattern

if TYPE_CHECKING:
    from codememory.core.config import LLMConfig
    from codememory.extract.capture_and_extract import PassReport

_UNITS = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_DURATION_RE = lazy_pattern(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d)?\s*$", re.IGNORECASE)


def parse_duration(text: str) -> float:
    """'90', '90s', '15m', '2h', '1d' -> seconds."""
    match = _DURATION_RE.match(text)
    if not match:
        raise click.BadParameter(f"{text!r} is not a duration (examples: 0, 90s, 15m, 2h, 1d)")
    return float(match.group(1)) * _UNITS[(match.group(2) or "").lower()]


class _Duration(click.ParamType):  # type: ignore[type-arg]
    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, (int, float)):
            return float(value)
        return parse_duration(str(value))


@click.command("capture")
@click.option(
    "--idle-after",
    type=_Duration(),
    default=None,
    help="Extract sessions idle this long (e.g. 0, 90s, 15m, 2h); default: [capture] idle_after, 60 min.",
)
@click.option("--no-extract", is_flag=True, help="Only capture turns to the daily logs; extract nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the pass's report as JSON.")
def capture(idle_after: float | None, no_extract: bool, as_json: bool) -> None:
    """Capture new OpenCode turns into every initialised project's daily log, then extract memories
    from sessions idle past the threshold (OpenCode's, and the Claude Code and Codex sessions their
    hooks captured in registered projects), once, and exit.

    This is what the daemon does every few seconds. The OpenCode database is found like OpenCode finds
    it (OPENCODE_DB, XDG_DATA_HOME/opencode, ~/.local/share/opencode) or set by [capture] opencode_db.
    Exit status 1 when the database cannot be read or a project failed (2 when a settings file is invalid,
    or a prompt file of [llm] prompts_dir is missing or empty).
    """
    from codememory.core.config import load_config
    from codememory.extract.capture_and_extract import run_pass

    settings = load_config(None)
    cfg = settings.capture
    if not no_extract:
        _check_prompts(settings.llm)
    report = run_pass(
        opencode_db=cfg.opencode_db,
        auto_init=cfg.auto_init,
        idle_after=idle_after,
        extract=not no_extract,
        registered=True,
    )
    if as_json:
        dump_json(report.to_dict())
    else:
        _print(report)
    if report.capture.db.state not in ("ok", "missing") or report.errors:
        click.get_current_context().exit(1)


def _check_prompts(llm: LLMConfig) -> None:
    """Fail fast on the user's own `[llm] prompts_dir` (PromptFileError: exit 2) rather than in every
    project; a project's relative one is checked when its extraction starts (the project's error)."""
    from pathlib import Path

    if (llm.provider or "none").strip().lower() == "none" or not llm.prompts_dir.strip():
        return
    folder = Path(llm.prompts_dir.strip()).expanduser()
    if folder.is_absolute():
        from codememory.extract.prompt_templates import Prompts

        Prompts.load(folder)


def _print(report: PassReport) -> None:
    cap = report.capture
    db = cap.db
    if db.state != "ok":
        click.echo(f"OpenCode database: {db.state}: {db.reason}")
    else:
        click.echo(f"OpenCode database: {db.path}")
    for project in cap.projects:
        line = f"  {project.root}: {project.turns_captured} turns captured"
        if project.turns_pending:
            line += f", {project.turns_pending} still running"
        if project.log_files:
            line += f" -> {', '.join(sorted(project.log_files))}"
        click.echo(line)
    for root, why in sorted(cap.skipped.items()):
        click.echo(f"  skipped {root}: {why}")
    for extraction in report.extraction:
        for session in extraction.sessions:
            click.echo(
                f"  extracted {session.session_id} (turns {session.first_seq}-{session.last_seq}): "
                f"{session.status}, {session.created} new memories, {session.duplicates} duplicates"
            )
            over = next((s for s in session.spans if s.status == "over_budget"), None)
            if over is not None:  # the model was not asked: say why, and that the rules did the work
                click.echo(f"    {over.detail.get('reason', 'token budget reached')}; the rules extracted these turns")
        if extraction.waiting:
            click.echo(f"  {extraction.root}: {extraction.waiting} sessions wait until idle")
        if extraction.skipped:
            click.echo(f"  {extraction.root}: extraction skipped: {extraction.skipped}")
    click.echo(f"{report.turns_captured} turns captured, {report.memories_created} memories created")
    for error in report.errors:
        click.echo(f"error: {error}", err=True)
