"""`codememory trust`: let a project's committed config.toml choose where data goes and what runs (a thin
layer over codememory.core.trust and codememory.core.config.resolve_config)."""

from __future__ import annotations

import json
from typing import Any

import click

from codememory.errors import InvalidInput


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
    from codememory.core import trust as trust_model
    from codememory.core.config import CONFIG_NAME, resolve_config
    from codememory.core.project import find_project_root, store_dir

    if revoke and show:
        raise click.UsageError("--revoke and --show cannot be combined")
    folder = store_dir(find_project_root((ctx.obj or {}).get("project")))
    path = folder / CONFIG_NAME
    action: str | None = None
    if revoke:
        action = "revoked" if trust_model.revoke(path.resolve()) else "was not trusted"
    resolved = resolve_config(folder)
    if not show and not revoke:
        if resolved.project is None:
            raise InvalidInput(f"{path} does not exist: nothing to trust")
        action = "trusted" if trust_model.trust(resolved.project) else "already trusted"
        resolved = resolve_config(folder)  # show what applies now
    project = resolved.project
    data: dict[str, Any] = {
        "config": str(project.resolved if project else path),
        "exists": project is not None,
        "sha256": project.digest if project else None,
        "trust": resolved.trust_state,
        "trusted_at": trust_model.trusted_at(project) if project else None,
        "action": action,
        "settings": [
            {"key": s.key, "value": s.value, "status": s.status, "reason": s.reason} for s in resolved.settings
        ],
    }
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))  # default: TOML dates as text
    else:
        _print(data)


_STATE_TEXT = {
    "absent": "no such file: only your own settings apply",
    "trusted": "trusted: all of its settings apply",
    "changed": "changed since you trusted it: only its harmless settings apply",
    "untrusted": "not trusted: only its harmless settings apply",
}


def _print(data: dict[str, Any]) -> None:
    from codememory.core.safe_text import printable_line

    config = printable_line(data["config"])
    if data["action"] == "trusted":
        click.echo(f"Trusted {config}.")
    elif data["action"] == "already trusted":
        click.echo(f"{config} was already trusted.")
    elif data["action"] == "revoked":
        click.echo(f"No longer trusted: {config}.")
    elif data["action"] == "was not trusted":
        click.echo(f"{config} was not trusted: nothing to revoke.")
    digest = f" (sha256 {data['sha256'][:16]}…)" if data["sha256"] else ""
    click.echo(f"{config}{digest}: {_STATE_TEXT[data['trust']]}")
    for s in data["settings"]:
        value = printable_line(json.dumps(s["value"], ensure_ascii=False, default=str))
        click.echo(f"  {s['status']:<10} {s['key']} = {value}  ({s['reason']})")
    if data["trust"] in ("untrusted", "changed") and any(s["status"] == "ignored" for s in data["settings"]):
        click.echo("Run `codememory trust` in the project to apply the ignored settings.")
