"""`codememory` command line: the group, its global options, and the table of its commands. Each command lives
in a module of its group (memory_cmds, search_cmd, sessions_cmd, ...), loaded only when it is used, and is a thin
layer over an operation of codememory.operations: it parses its options, calls the operation, and renders the typed
result as text, markdown or JSON."""

from __future__ import annotations

from pathlib import Path

import click

from codememory import __version__
from codememory.cli.group import LazyCliGroup

# Every command, as "module:attribute", imported when it runs (or when `--help` lists it): `codememory --version`
# imports none, a command only its own module. The order is `--help`'s (alphabetical).
COMMANDS = {
    "archive": "codememory.cli.memory_cmds:archive",
    "capture": "codememory.cli.capture_cmd:capture",
    "consolidate": "codememory.cli.consolidate_cmd:consolidate",
    "daemon": "codememory.daemon.commands:daemon",
    "edit": "codememory.cli.memory_cmds:edit",
    "embed": "codememory.cli.embed_cmd:embed",
    "explain": "codememory.cli.explain_cmd:explain",
    "export": "codememory.cli.transfer_cmd:export",
    "forget": "codememory.cli.memory_cmds:forget",
    "hook": "codememory.cli.hook_cmd:hook",
    "import": "codememory.cli.transfer_cmd:import_cmd",
    "import-history": "codememory.cli.history_cmd:import_history",
    "init": "codememory.cli.init_cmd:init",
    "link": "codememory.cli.memory_cmds:link",
    "list": "codememory.cli.memory_cmds:list_cmd",
    "mcp": "codememory.cli.mcp_cmd:mcp_cmd",
    "projects": "codememory.cli.init_cmd:projects",
    "prune": "codememory.cli.memory_cmds:prune",
    "publish": "codememory.cli.publish_cmd:publish",
    "remember-scan": "codememory.cli.memory_cmds:remember_scan",
    "repair": "codememory.cli.repair_cmd:repair_cmd",
    "report": "codememory.cli.report_cmd:report",
    "retrieve": "codememory.cli.retrieve_cmd:retrieve",
    "review": "codememory.cli.review_cmd:review",
    "runs": "codememory.cli.runs_cmd:runs",
    "search": "codememory.cli.search_cmd:search",
    "sessions": "codememory.cli.sessions_cmd:sessions",
    "share": "codememory.cli.share_cmd:share",
    "show": "codememory.cli.memory_cmds:show",
    "stale": "codememory.cli.stale_cmd:stale",
    "stats": "codememory.cli.stats_cmd:stats",
    "store": "codememory.cli.memory_cmds:store_cmd",
    "sync": "codememory.cli.share_cmd:sync_cmd",
    "transcript": "codememory.cli.transcript_cmd:transcript",
    "trust": "codememory.cli.trust_cmd:trust",
    "viewer": "codememory.cli.viewer_cmd:viewer",
}


def _agent_context(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from importlib import resources

    click.echo(resources.files("codememory.cli").joinpath("agent_context.md").read_text(encoding="utf-8"))
    ctx.exit(0)


@click.group(
    cls=LazyCliGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--project",
    "project",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="CODEMEMORY_PROJECT",
    help="Project folder (default: $CODEMEMORY_PROJECT, else the nearest folder above with .codememory/, "
    "else the git root).",
)
@click.option(
    "--agent-context",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_agent_context,
    help="Print a concise guide for AI agents on using codememory, then exit.",
)
@click.version_option(__version__, prog_name="codememory")
@click.pass_context
def cli(ctx: click.Context, project: Path | None) -> None:
    """Local, per-project memory for AI coding agents.

    Store decisions, conventions, gotchas and todos once; search them from any agent or shell.
    Start with `codememory init` in your project, then `codememory store` and `codememory search`.
    """
    ctx.obj = {"project": project}


def main() -> None:
    cli(prog_name="codememory")
