"""`codememory repair`: rebuild a clean store from the data of a damaged or foreign one (a thin layer over
codememory.store.repair)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from codememory.cli.progress_output import progress_note
from codememory.cli.render import dump_json
from codememory.core.project import db_path, find_project_root

if TYPE_CHECKING:
    from codememory.store.repair import RepairReport

PROGRESS_FROM = 10_000  # rows in a table before progress is shown
PROGRESS_EVERY = 5_000


def _progress(table: str, done: int, total: int | None) -> None:
    if total is None or total >= PROGRESS_FROM:
        progress_note(f"repair: {table} {done:,}/{'?' if total is None else f'{total:,}'} rows read")


def _healthy_text(report: RepairReport) -> str:
    memories = report.table("memories").kept
    lines = [
        f"The store {report.store} is healthy: its schema, its pages, its full-text indexes and its rows "
        f"({memories:,} {'memory' if memories == 1 else 'memories'}) passed every check repair makes. "
        "Nothing was changed and no backup made.",
        "Run `codememory repair --force` to rebuild it anyway.",
    ]
    if report.from_memory_files:
        lines.append(
            f"It took {report.from_memory_files:,} memories from the shared memory files (.codememory/memories/)."
        )
    return "\n".join(lines)


def _text(report: RepairReport) -> str:
    if not report.rebuilt:
        return _healthy_text(report)
    memories = report.table("memories")
    lines = [f"Rebuilt {report.store} from the data it held."]
    if report.problems:
        lines.append("It needed repair:")
        lines += [f"  - {problem}" for problem in report.problems]
    else:
        lines.append("Its checks found nothing to repair (rebuilt because of --force).")
    shared = report.from_memory_files
    if not report.readable and shared:
        lines.append(
            f"Nothing could be read from the old file ({report.problem}); the new store took the {shared:,} "
            "memories of the shared memory files (.codememory/memories/)."
        )
    elif not report.readable:
        lines.append(f"Nothing could be read from the old file ({report.problem}): the new store is empty.")
    elif shared:
        lines.append(
            f"The new store also took {shared:,} memories from the shared memory files (.codememory/memories/)."
        )
    lines.append(
        f"Memories: {memories.kept:,} kept, {memories.skipped:,} skipped"
        + (f", {memories.unreadable:,} damaged regions unreadable" if memories.unreadable else "")
        + "."
    )
    for table in report.tables:
        if table.table in ("memories", "sqlite_master") or not (table.kept or table.skipped or table.unreadable):
            continue
        detail = f"{table.kept:,} kept, {table.skipped:,} skipped"
        if table.unreadable:
            detail += f", {table.unreadable:,} damaged regions unreadable"
        lines.append(f"  {table.table}: {detail}")
    notes = [t for t in report.tables if t.note and t.note != "not in the old store"]
    lines += [f"  {t.table}: {t.note}" for t in notes]
    if report.examples:
        lines.append("Skipped, for example:")
        lines += [f"  - {example}" for example in report.examples]
    lines.append(
        f"The old store is kept at {report.backup}. It still holds everything the old store held (forgotten "
        "text and anything foreign included): delete it once the new store looks right, and never commit it."
    )
    return "\n".join(lines)


def _follow_memory_files(root: Path) -> int:
    """A project that shares its memory has it in text form too: the new store takes what it lacks now (any open
    would), so that what repair reports is what the store holds. How many memories it took."""
    from codememory.service.project_store import Store

    with Store.open(root) as store:
        return len(store.followed.added) if store.followed is not None else 0


@click.command("repair")
@click.option("--force", is_flag=True, help="Rebuild the store even when its checks find nothing to repair.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def repair_cmd(ctx: click.Context, force: bool, as_json: bool) -> None:
    """Rebuild a clean store from the data of a damaged or tampered one.

    Use it when a command says the store is corrupt, or holds a trigger, view, table or index codememory
    did not create (a committed `.codememory/memory.db` is written by whoever pushed last). Only the data
    tables are read, nothing stored in the file runs, every row is checked (id, category, lengths, JSON)
    and invalid rows are skipped and counted; on damaged pages whatever SQLite can read is kept. The new
    store is built by the migrations, its search indexes are rebuilt, and it replaces the old one in one
    rename; the old file is kept as memory.db.bak-<time> beside it (repair never deletes data).

    A healthy store is left as it is, with no backup: the schema is exactly codememory's, SQLite's integrity
    check and the full-text indexes' own checks pass, and every row would be copied unchanged. Then repair says
    so and changes nothing; `--force` rebuilds it anyway.

    Stop the daemon and agents first: writes made to the old store during the repair stay in the backup.

    \b
    JSON keys: store, healthy, rebuilt, problems [why it needs repair], backup (null when not rebuilt),
    readable, problem, from_memory_files, memories {kept, skipped, unreadable},
    tables [{table, kept, skipped, unreadable, corrected, note}], examples.
    """
    from codememory.store.repair import repair

    root = find_project_root(ctx.obj["project"])
    report = repair(db_path(root), force=force, progress=_progress, progress_every=PROGRESS_EVERY)
    report.from_memory_files = _follow_memory_files(root)
    if as_json:
        dump_json(report.to_dict())
    else:
        click.echo(_text(report))
