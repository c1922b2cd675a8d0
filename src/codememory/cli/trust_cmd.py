"""`codememory trust`: let a project's committed config.toml choose where data goes and what runs (a thin
layer over codememory.operations.trust)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from codememory.operations.trust import TrustReport


@click.command("trust")
@click.option("--revoke", is_flag=True, help="Forget the trust given to this project's config.toml.")
@click.option("--show", is_flag=True, help="Only show which settings of the file apply and which are ignored.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def trust(ctx: click.Context, revoke: bool, show: bool, as_json: bool) -> None:
    """Trust this project's .codememory/config.toml, so that all of its settings apply.

    A project's .codememory/ is committed with the repository, so its config.toml was written by
    whoever pushed last. Until you trust it, only its harmless settings apply: thresholds, weights,
    intervals, timeouts, lowering a token budget, switching embeddings or the LLM off. Settings that
    send data somewhere (base_url, a remote provider), pick a credential (api_key_env), run a program
    (llm.opencode_bin), load a model, or name a path outside the project are ignored, with a one-line
    warning on stderr. Your own ~/.config/codememory/config.toml, CODEMEMORY_* environment variables
    and command-line flags always apply.

    Trusting records the file's sha256 under its path in your state folder
    ($XDG_STATE_HOME/codememory/trusted-configs.json). Any change to the file (a `git pull`) makes it
    untrusted again until you trust it anew. Read the file, or run --show, before trusting it. The
    daemon picks a change up at once; restart running MCP servers.

    \b
    Examples:
      codememory trust --show
      codememory trust
      codememory trust --revoke
    """
    from codememory.core.project import find_project_root
    from codememory.operations.trust import revoke_trust, show_trust, trust_config

    if revoke and show:
        raise click.UsageError("--revoke and --show cannot be combined")
    root = find_project_root((ctx.obj or {}).get("project"))
    report = revoke_trust(root) if revoke else show_trust(root) if show else trust_config(root)
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2, default=str))  # TOML dates as text
    else:
        _print(report)


_STATE_TEXT = {
    "absent": "no such file: only your own settings apply",
    "trusted": "trusted: all of its settings apply",
    "changed": "changed since you trusted it: only its harmless settings apply",
    "untrusted": "not trusted: only its harmless settings apply",
}


def _print(report: TrustReport) -> None:
    from codememory.core.safe_text import printable_line

    config = printable_line(report.config)
    if report.action == "trusted":
        click.echo(f"Trusted {config}.")
    elif report.action == "already trusted":
        click.echo(f"{config} was already trusted.")
    elif report.action == "revoked":
        click.echo(f"No longer trusted: {config}.")
    elif report.action == "was not trusted":
        click.echo(f"{config} was not trusted: nothing to revoke.")
    digest = f" (sha256 {report.sha256[:16]}…)" if report.sha256 else ""
    click.echo(f"{config}{digest}: {_STATE_TEXT[report.trust]}")
    for s in report.settings:
        value = printable_line(json.dumps(s.value, ensure_ascii=False, default=str))
        click.echo(f"  {s.status:<10} {s.key} = {value}  ({s.reason})")
    if report.trust in ("untrusted", "changed") and any(s.status == "ignored" for s in report.settings):
        click.echo("Run `codememory trust` in the project to apply the ignored settings.")
