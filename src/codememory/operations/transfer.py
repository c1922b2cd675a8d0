"""`codememory export` / `import`: every memory as JSON Lines, and back (idempotent; codememory.service.transfer)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codememory.core.result import Result
from codememory.service.results import ImportReport

if TYPE_CHECKING:
    from codememory.service.project_store import Store
    from codememory.service.transfer import EntityTiming, ImportProgress


@dataclass
class Exported(Result):
    """`export --json`: how many memories went to which file."""

    exported: int
    file: str


def export_file(store: Store, file: str, *, remap: Sequence[str] = ()) -> Exported:
    """Write every memory to `file` ('-': standard output); `remap`: "OLD=NEW" project paths rewritten."""
    return Exported(store.export(file, remap=remap), file)


def import_file(
    store: Store,
    file: str,
    *,
    skip_invalid: bool = False,
    remap: Sequence[str] = (),
    progress: ImportProgress | None = None,
    own: bool = False,
    entities: EntityTiming = "now",
) -> ImportReport:
    """Import the memories of a JSON Lines `file` ('-': standard input); with `skip_invalid`, the valid lines of a
    file that has invalid ones; `remap`: "OLD=NEW" project paths rewritten; `progress(phase, done, total)`; `own`:
    the user's own export, its memories count as written here (else they are imported ones: core/provenance.py);
    `entities`: when the memories' entities are read (`Store.import_`)."""
    return store.import_(file, skip_invalid=skip_invalid, remap=remap, progress=progress, own=own, entities=entities)
