"""`codememory init` (the project's store, then each coding assistant's MCP server, hooks and rule block, then the
global registry) and `codememory projects` (that registry)."""

from __future__ import annotations

from pathlib import Path

import click

from codememory.cli import render
from codememory.cli.options import json_option


@click.command()
@click.option("--uninstall", is_flag=True, help="Remove exactly what init added (the store and its memories are kept).")
@click.option(
    "--assistants",
    metavar="LIST",
    help="claude,codex,cursor,opencode,gemini,copilot (comma-separated), all, or none (default: the installed ones; "
    "with --uninstall: all).",
)
@click.option(
    "--no-global",
    is_flag=True,
    help="Do not add the project to (or remove it from) the global registry (the daemon serves only "
    "registered projects).",
)
@click.option(
    "--extract-with",
    type=click.Choice(["none", "opencode", "claude", "codex"], case_sensitive=False),
    help="Which model reads each finished session for memories: your own agent CLI (`opencode run`, `claude -p`, "
    "`codex exec`, billed to your plan or key, within a daily token budget) or none (rules only, free). Written to "
    "your own config; asked on a terminal when you have not chosen yet (default: none).",
)
@click.option("--extract-model", metavar="MODEL", help="The model the CLI extracts with (default: its own setting).")
@click.option(
    "--daily-tokens",
    type=int,
    metavar="N",
    help="The daily token budget of extraction in each project (default with --extract-with: 200000).",
)
@json_option
@click.pass_context
def init(
    ctx: click.Context,
    uninstall: bool,
    assistants: str | None,
    no_global: bool,
    extract_with: str | None,
    extract_model: str | None,
    daily_tokens: int | None,
    as_json: bool,
) -> None:
    """Create the project's store in .codememory/ and set up the coding assistants (safe to run again).

    For each assistant: one tool set (Claude Code, Codex, Cursor, Gemini CLI, Copilot CLI: the MCP server,
    `codememory mcp`, and the hooks, `codememory-hook ...`; OpenCode: the codememory plugin, whose tools replace the
    MCP server there), and a rule block in CLAUDE.md / AGENTS.md / GEMINI.md / .cursorrules between codememory
    markers. Existing settings are merged, never replaced; a `<file>.codememory-backup` copy is kept before the
    first change. If a file to change is malformed, nothing at all is written. Files committed with the project
    name `codememory` and `codememory-hook` as found on PATH (init warns when they are not there). Then the project
    is added to the global registry ($XDG_CONFIG_HOME/codememory/registry.json).

    --extract-with sets how memories are extracted from finished sessions, for every project of this user (the
    `[llm]` section of ~/.config/codememory/config.toml): by your own coding agent's CLI, run isolated so none of
    codememory's hooks or plugin run inside it, within a daily token budget; or by rules alone (none).
    """
    from codememory.cli.init_report import InitReport
    from codememory.core import registry
    from codememory.core.project import db_path, find_project_root
    from codememory.install import plan as setup
    from codememory.service.project_store import Store

    root = find_project_root(ctx.obj["project"])
    if uninstall and (extract_with or extract_model or daily_tokens):
        raise click.UsageError("--extract-with, --extract-model and --daily-tokens set up extraction, not --uninstall")
    if uninstall and assistants is None:
        assistants = "all"
    chosen = setup.parse_assistants(assistants, root)
    if extract_with is None and (extract_model or daily_tokens):
        raise click.UsageError("--extract-model and --daily-tokens go with --extract-with")
    if extract_with is None and not uninstall and not as_json:
        extract_with = ask_extraction()
    extraction = None
    if extract_with is not None:
        from codememory.operations.extraction_setup import plan_extraction

        extraction = plan_extraction(extract_with, model=extract_model, daily_tokens=daily_tokens)
    # Read and check everything first (a malformed file or registry stops us before anything is written).
    others = [] if no_global else [p for p in registry.load() if p["root"] != str(root)]
    local_cli = setup.codememory_command()
    plan = setup.plan(root, chosen, uninstall=uninstall, exe=local_cli, other_projects=len(others))
    warnings = [] if uninstall else setup.path_warnings(chosen, local_cli)
    steps: list[setup.Step] = []
    created = False
    store_path = db_path(root)
    if not uninstall:
        store, created = Store.init(root)
        ctx.call_on_close(store.close)
        store_path = store.store_path
        steps.append(setup.Step("codememory", ".codememory/", "added" if created else "unchanged", "store"))
    setup.apply(plan)
    steps.extend(plan.steps)
    extraction_setup = extraction.apply() if extraction is not None else None
    reg = str(registry.registry_path())
    if no_global:
        steps.append(setup.Step("codememory", reg, "skipped", "--no-global"))
    elif uninstall:
        steps.append(setup.Step("codememory", reg, registry.unregister(root), "global registry"))
    else:
        steps.append(setup.Step("codememory", reg, registry.register(root, store_path), "global registry"))
    if uninstall:
        steps.append(setup.Step("codememory", ".codememory/", "skipped", "the store (your memories) is kept"))
    past = None if uninstall else _past_sessions(root) or None  # in --json only when there are some
    if as_json:
        created_now = None if uninstall else created
        report = InitReport(str(root), str(store_path), created_now, chosen, steps, warnings, extraction_setup, past)
        render.dump_json(report.to_dict())
        return
    if not uninstall:
        if created:
            click.echo(f"Initialized codememory store at {store_path}")
        else:
            click.echo(f"codememory store already exists at {store_path}")
    elif not chosen:
        click.echo("No assistants selected.")
    # Files that hold nothing of ours (assistants never set up, with --uninstall) are counted, not listed one by
    # one: 18 "unchanged (not present)" lines hid the few that were removed. --json keeps every step.
    absent = [s for s in steps if s.action == "unchanged" and s.reason == "not present"]
    for s in steps:
        if s not in absent:
            click.echo(f"  {s.assistant:<10} {s.action:<9} {s.file}" + (f"  ({s.reason})" if s.reason else ""))
    if absent:
        names = ", ".join(dict.fromkeys(s.assistant for s in absent))
        click.echo(f"  nothing of codememory's in {len(absent)} other files ({names})")
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    if not uninstall and not chosen and assistants is None:
        names = ",".join(setup.ASSISTANTS)
        click.echo(f"No coding assistant detected; use --assistants {names} to set one up.")
    if extraction_setup is not None:
        from codememory.operations.extraction_setup import describe

        for line in describe(extraction_setup):
            click.echo(line)
    if past:
        click.echo(
            f"Found {past} past assistant sessions of this project on this machine: "
            "run `codememory import-history` to bring what they established into memory."
        )


def ask_extraction() -> str | None:
    """On a terminal, when the user has not chosen yet and has an agent CLI: which model extracts memories (None:
    not asked; the rules stay)."""
    import sys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    from codememory.operations.extraction_setup import chosen_before, installed_clis

    found = installed_clis()
    if not found or chosen_before():
        return None
    click.echo(
        "Memories are extracted from each finished session by rules (free), or better by your own agent CLI, "
        "which costs tokens of your plan or key (within a daily budget)."
    )
    answer: str = click.prompt(
        "Extract with", type=click.Choice(["none", *found], case_sensitive=False), default="none", show_choices=True
    )
    return answer


def _past_sessions(root: Path) -> int:
    """The project's past sessions not imported yet; a failure to look never fails init."""
    from codememory.operations.import_history import count_history

    return count_history(root)


@click.command()
@json_option
def projects(as_json: bool) -> None:
    """List the projects in the global registry (added by `codememory init`)."""
    from codememory.operations.projects import list_projects

    listed = list_projects()
    if as_json:
        render.dump_json(listed.to_dict())
        return
    if not listed.projects:
        click.echo(f"No projects registered yet ({listed.registry}).")
        return
    for row in listed.projects:
        missing = "" if row["exists"] else "  (store missing)"
        click.echo(f"{row.get('name', '?')}\t{row['root']}{missing}")
