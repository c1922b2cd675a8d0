"""Plain-text and markdown renderings of memories and search hits (JSON is `to_dict()` as is).

Agents read this output too, so every field goes through codememory.text.context_render: header fields on one
line, text behind a prefix on every line, tag-like `<` neutralised."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from codememory.text.context_render import FIELD_CHARS, one_line, quoted

if TYPE_CHECKING:  # the renderers only read these: a command module importing render stays light
    from codememory.core.model import Memory
    from codememory.operations.get import MemoryDetail
    from codememory.service.project_store import Store


def dump_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _day(ts: str | None) -> str:
    return one_line(ts[:10]) if ts else "-"


def _field(value: object) -> str:
    return one_line(value, FIELD_CHARS)


def memory_header(mem: Memory, extra: str = "") -> str:
    parts = [
        click.style(_field(mem.id), fg="cyan", bold=True),
        click.style(_field(mem.category), fg="magenta"),
        f"importance {mem.importance:g}",
        _day(mem.created_at),
    ]
    if mem.tags:
        parts.append(click.style(" ".join("#" + _field(t) for t in mem.tags), fg="green"))
    if mem.entered_by:
        parts.append(f"by {_field(mem.entered_by)}")
    parts.append(_origin(mem))
    if mem.expires_at:
        parts.append(f"expires {_day(mem.expires_at)}")
    if mem.archived:
        parts.append(click.style("archived", fg="yellow"))
    if extra:
        parts.append(extra)
    return "  ".join(parts)


def _origin(mem: Memory) -> str:
    """Where the memory came from, in brackets (core/provenance.py): dim when written here, else standing out."""
    label = "[" + _field(mem.provenance.label()).replace("[", "").replace("]", "") + "]"
    if mem.provenance.trusted:
        return click.style(label, dim=True)
    return click.style(label, fg="yellow", bold=mem.provenance.review == "pending")


def _indent(text: str, width: int = 4) -> str:
    return quoted(text, " " * width)


def memory_text(mem: Memory, *, personal: bool = False) -> str:
    """A listed memory: its header line (with "personal" when it stays out of the shared text form), its text."""
    return memory_header(mem, click.style("personal", fg="blue") if personal else "") + "\n" + _indent(mem.text)


def memory_from_dict(data: dict[str, Any]) -> Memory:
    """A memory from its JSON form (a search result's row carries score, match and explain beside it)."""
    from dataclasses import fields

    from codememory.core.model import Memory
    from codememory.core.provenance import provenance_from_dict

    values = {f.name: data[f.name] for f in fields(Memory) if f.name != "provenance"}
    return Memory(**values, provenance=provenance_from_dict(data.get("provenance")))


def hit_text(memory: Memory, match: str, held_back: bool = False, stale: str | None = None) -> str:
    """A search hit: the memory's header line (marked when only a typo-tolerant match found it, or when the relevance
    decision held it back and `--all` asked for it), then its text, then its "may be stale: ..." note when a
    staleness check marked it (as `show` and the blocks agents get say it)."""
    marks = [click.style("fuzzy", fg="yellow")] if match == "fuzzy" else []
    if held_back:
        marks.append(click.style("held back: unlikely to be relevant", fg="red"))
    note = "\n" + _indent(click.style(f"({stale})", fg="yellow")) if stale else ""
    return memory_header(memory, " ".join(marks)) + "\n" + _indent(memory.text) + note


def memory_detail(detail: MemoryDetail) -> str:
    mem, links, entities = detail.memory, detail.relations.links, detail.relations.entities
    rows = [
        ("id", mem.id),
        ("category", mem.category),
        ("importance", f"{mem.importance:g}"),
        ("tags", ", ".join(mem.tags) or "-"),
        ("origin", mem.provenance.label()),
        ("entered by", mem.entered_by or "-"),
        ("source", mem.source or "-"),
        ("created", mem.created_at),
        ("updated", mem.updated_at),
        ("expires", mem.expires_at or "never"),
        ("accessed", f"{mem.access_count} times, last {mem.last_accessed_at or 'never'}"),
        ("archived", "yes" if mem.archived else "no"),
    ]
    if detail.personal:
        rows.append(("personal", "yes: stays on this machine, never in the shared text form"))
    if mem.provenance.at:
        rows.append(("arrived", mem.provenance.at))
    if mem.provenance.review:
        rows.append(("review", _REVIEW_SHOWN[mem.provenance.review]))
    if mem.superseded_by:
        rows.append(("superseded by", mem.superseded_by))
    if entities:
        rows.append(("entities", ", ".join(e.name for e in entities)))
    stale = detail.staleness
    if stale.written_at_commit:
        rows.append(("written at", stale.written_at_commit[:12]))
    if stale.note:
        rows.append(("stale", stale.note.removeprefix("may be stale: ")))
        for reason in stale.reasons[1:]:
            rows.append(("stale", f"{reason.kind.replace('_', ' ')}: {reason.subject}"))
    rows += _usefulness_rows(detail)
    for item in links:
        arrow = "->" if item.direction == "out" else "<-"
        score = f" ({item.score})" if item.score is not None else ""
        rows.append(("link", f"{arrow} {item.type} {item.id}{score}"))
    head = "\n".join(f"{click.style(k + ':', bold=True):<22} {_field(v)}" for k, v in rows)
    return head + "\n\n" + quoted(mem.text, "")


_REVIEW_SHOWN = {
    "pending": "waiting (reads like instructions: `codememory review accept|reject ID`)",
    "accepted": "accepted",
    "rejected": "rejected (kept out of every agent's context)",
}


def _usefulness_rows(detail: MemoryDetail) -> list[tuple[str, str]]:
    """What agents did with it: shown and used in how many sessions, the ranking factor, a contradiction to review."""
    use = detail.usefulness
    if not use.shown:
        return [("used", "never shown to an agent yet")]
    last = f", last {use.last_used_at}" if use.last_used_at else ""
    rows = [("used", f"in {use.used} of the {use.shown} agent sessions it was shown in{last}")]
    if use.warning:
        rows.append(("counted", "a warning: a session that did not go against it is not counted as ignoring it"))
    if use.last_use:
        rows.append(("last use", use.last_use))
    if use.factor != 1.0:
        rows.append(("ranking", f"x{use.factor:.2f} (from what agents used)"))
    if use.contradicted:
        flag = "review: " if use.review else ""
        rows.append(("contradicted", f"{flag}in {use.contradicted} session(s), last {use.last_contradicted_at}"))
        if use.last_contradiction:
            rows.append(("contradiction", use.last_contradiction))
    return rows


def memory_markdown(mem: Memory, extra: str = "") -> str:
    meta = [f"`{_field(mem.id)}`", _field(mem.category), f"importance {mem.importance:g}", _day(mem.created_at)]
    if mem.tags:
        meta.append(" ".join(f"`#{_field(t)}`" for t in mem.tags))
    if mem.entered_by:
        meta.append(f"by {_field(mem.entered_by)}")
    if mem.source:
        meta.append(f"source: {_field(mem.source)}")
    meta.append(_field(mem.provenance.label()))
    if extra:
        meta.append(_field(extra))
    return "- " + " · ".join(meta) + "\n\n" + quoted(mem.text) + "\n"


def hits_markdown(query: str, hits: list[tuple[Memory, str]]) -> str:
    """Search hits, each as (memory, match), under a heading naming the query."""
    lines = [f"## Memories matching `{query}`", ""]
    if not hits:
        lines.append("_No matches._")
    for memory, match in hits:
        lines.append(memory_markdown(memory, "fuzzy match" if match == "fuzzy" else ""))
    return "\n".join(lines)


def memories_markdown(title: str, memories: list[Memory]) -> str:
    lines = [f"## {title}", ""]
    if not memories:
        lines.append("_None._")
    lines.extend(memory_markdown(m) for m in memories)
    return "\n".join(lines)


def entities_pending_note(count: int) -> str:
    """Said beside results an entity filter or entity counts chose, while an import's entities are still unread
    (those memories are not matched by entity until they are)."""
    return (
        f"({count} imported memories have no entities yet, so entity filters and counts miss them; the daemon reads "
        "them, or any `codememory import` does)"
    )


def note_entities_pending(store: Store, result: dict[str, Any] | None) -> None:
    """Add `entities_pending` to a --json `result`, or print the note (standard error) when there are any."""
    count = store.db.count_entities_pending()
    if result is not None:
        result["entities_pending"] = count
    elif count:
        click.echo(click.style(entities_pending_note(count), dim=True), err=True)
