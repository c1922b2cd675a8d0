"""`codememory` command line: the group, its global options, and every command registered on it. Each command lives
in a module of its group (memory_cmds, search_cmd, sessions_cmd, ...) and is a thin layer over an operation of
codememory.operations: it parses its options, calls the operation, and renders the typed result as text, markdown
or JSON."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import click

from codememory import __version__
from codememory.cli.capture_cmd import capture
from codememory.cli.consolidate_cmd import consolidate
from codememory.cli.embed_cmd import embed
from codememory.cli.explain_cmd import explain
from codememory.cli.group import CliGroup
from codememory.cli.hook_cmd import hook
from codememory.cli.init_cmd import init, projects
from codememory.cli.mcp_cmd import mcp_cmd
from codememory.cli.memory_cmds import archive, edit, forget, link, list_cmd, prune, remember_scan, show, store_cmd
from codememory.cli.publish_cmd import publish
from codememory.cli.repair_cmd import repair_cmd
from codememory.cli.retrieve_cmd import retrieve
from codememory.cli.review_cmd import review
from codememory.cli.runs_cmd import runs
from codememory.cli.search_cmd import search
from codememory.cli.sessions_cmd import sessions
from codememory.cli.share_cmd import share, sync_cmd
from codememory.cli.stale_cmd import stale
from codememory.cli.stats_cmd import stats
from codememory.cli.transcript_cmd import transcript
from codememory.cli.transfer_cmd import export, import_cmd
from codememory.cli.trust_cmd import trust
from codememory.cli.viewer_cmd import viewer
from codememory.daemon.commands import daemon


def _agent_context(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(resources.files("codememory.cli").joinpath("agent_context.md").read_text(encoding="utf-8"))
    ctx.exit(0)


@click.group(cls=CliGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


for _command in (
    init,
    projects,
    store_cmd,
    edit,
    search,
    publish,
    list_cmd,
    show,
    link,
    forget,
    archive,
    prune,
    consolidate,
    stats,
    stale,
    runs,
    export,
    import_cmd,
    embed,
    retrieve,
    remember_scan,
    sessions,
    mcp_cmd,
    hook,
    daemon,
    transcript,
    capture,
    explain,
    trust,
    repair_cmd,
    review,
    viewer,
    share,
    sync_cmd,
):
    cli.add_command(_command)


def _help_flags_everywhere(group: click.Group) -> None:
    """`-h` on every command, also when a command object was first run on its own (click caches each command's
    help option the first time it builds one, from that run's settings: a test or a script calling `hook`
    directly would otherwise leave `codememory hook -h` without `-h`)."""
    for command in group.commands.values():
        command.context_settings.setdefault("help_option_names", ["-h", "--help"])
        if isinstance(command, click.Group):
            _help_flags_everywhere(command)


_help_flags_everywhere(cli)


def main() -> None:
    cli(prog_name="codememory")
