"""`codememory viewer`: print (and with --open, open) a one-time login link to the daemon's web viewer."""

from __future__ import annotations

import click

from codememory.cli.render import dump_json


@click.command("viewer")
@click.option("--open", "open_browser", is_flag=True, help="Also open the link in the default browser.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def viewer(ctx: click.Context, open_browser: bool, as_json: bool) -> None:
    """Browse, search and curate the project's memory in a web browser.

    The viewer is served by the daemon on 127.0.0.1 (started now if it is not running). This prints a login
    link that works once, within five minutes: it sets a session cookie in the browser that opens it. Pages:
    an overview (counts, embedding coverage, capture lag, extraction spend, health), memories (search with the
    CLI's syntax and filters; edit, archive, forget, link), sessions, and the injections `explain` shows. The page
    opens on this project (--project, or the one found from here); every project registered on this machine
    (`codememory projects`) can be picked in it.

    \b
    JSON keys: url, address, expires_in_seconds, daemon_started, opened.
    """
    from codememory.core.project import find_project_root
    from codememory.daemon.viewer_link import login_link

    link = login_link(find_project_root(ctx.obj["project"]), open_browser=open_browser)
    if as_json:
        dump_json(link.to_dict())
        return
    if link.daemon_started:
        click.echo("Started the codememory daemon.", err=True)
    minutes = link.expires_in_seconds // 60
    click.echo(f"Open this link to log in to the viewer (it works once, within {minutes} minutes):")
    click.echo(f"  {link.url}")
    if open_browser and not link.opened:
        click.echo("No browser could be opened here: copy the link into one.", err=True)
