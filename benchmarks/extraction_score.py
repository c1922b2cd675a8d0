"""Scoring of extracted memories against labelled sessions (benchmarks/data/extraction/README.md).

A label is a durable item a careful engineer would keep from a session, with a category and a matching rule:
`match` is a list of keyword groups; a memory matches when every group has at least one of its alternatives in
the memory's text (case-insensitive substrings; an alternative starting with `re:` is a regular expression).
Groups name the substance of the item (the choice, the rejected thing, the reason), not a phrasing, so that a
paraphrase matches.

- A memory is *useful* when it matches a label no earlier memory (in creation order) matched; it may match
  several labels at once ("X instead of Y because Z" carries the decision and the rejection).
- A memory matching only labels already matched is a *duplicate*: imprecise.
- A memory matching no label is *unmatched*: imprecise. When it matches a `must_not` rule it is reported as
  such (files-changed facts, chatter, ...). Labels marked `optional` neither count for recall nor against
  precision: a memory matching only them is *tolerated* and left out of precision.

- A label may say who stated the item (`said_by`: "user", "assistant_accepted" for what the assistant proposed or
  explained and the user accepted, "observed" for what the data or environment showed); a memory says who stated
  it in its `source` (`said_by:<who>`). Speaker agreement: of the matched labels that say, how many have the
  label's speaker on their first matching memory.
- A `must_not` rule may name `categories`: then only a memory stored as one of them breaks it (an instruction
  planted in a tool's output must never be the user's decision, convention or preference; it may still be a
  lesson said in our words).

precision = useful / (stored - tolerated); recall = matched required labels / required labels; per category:
recall by the label's category, precision by the category the extractor gave the memory.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

Rule = list[list[str]]
SPEAKERS = ("user", "assistant_accepted", "observed")
_SAID_BY_RE = re.compile(r"\bsaid_by:(?P<who>\w+)")


def said_by(memory: dict[str, Any]) -> str | None:
    """Who stated a stored memory, from its `source` ("opencode session:ses_1 turn:3 said_by:user")."""
    m = _SAID_BY_RE.search(str(memory.get("source") or ""))
    return m.group("who") if m else None


def _alternative_hits(alternative: str, text: str) -> bool:
    if alternative.startswith("re:"):
        return re.search(alternative[3:], text, re.IGNORECASE) is not None
    return alternative.lower() in text


def matches(rule: Rule, text: str) -> bool:
    """Every group has one alternative in the text (an empty rule matches nothing)."""
    low = text.lower()
    return bool(rule) and all(any(_alternative_hits(alt, low) for alt in group) for group in rule)


@dataclass
class Label:
    id: str
    category: str
    what: str  # the item in a careful engineer's words (for the report, not matched)
    match: Rule
    optional: bool = False
    said_by: str | None = None  # user | assistant_accepted | observed, when the label says

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Label:
        return cls(
            data["id"], data["category"], data["what"], data["match"], bool(data.get("optional")), data.get("said_by")
        )


@dataclass
class Forbidden:
    id: str
    why: str
    match: Rule
    categories: tuple[str, ...] = ()  # only a memory of these categories breaks the rule (none: any)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Forbidden:
        return cls(data["id"], data.get("why", ""), data["match"], tuple(data.get("categories") or ()))

    def broken_by(self, text: str, category: str) -> bool:
        return (not self.categories or category in self.categories) and matches(self.match, text)


@dataclass
class Verdict:
    """One stored memory and what the scorer made of it."""

    text: str
    category: str
    kind: str  # useful | duplicate | unmatched | tolerated
    labels: list[str] = field(default_factory=list)  # every label it matches
    forbidden: list[str] = field(default_factory=list)  # must_not rules it matches
    said_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "category": self.category,
            "said_by": self.said_by,
            "kind": self.kind,
            "labels": self.labels,
            "must_not": self.forbidden,
        }


@dataclass
class SessionScore:
    name: str
    labels: list[Label]
    verdicts: list[Verdict]
    matched: dict[str, str]  # label id -> category of the first memory that matched it
    speakers: dict[str, str | None] = field(default_factory=dict)  # label id -> said_by of that memory

    @property
    def missed(self) -> list[Label]:
        return [lb for lb in self.labels if not lb.optional and lb.id not in self.matched]


def score_session(
    name: str, labels: list[Label], forbidden: list[Forbidden], memories: list[dict[str, Any]]
) -> SessionScore:
    """`memories`: {"text", "category", "source"} in creation order."""
    matched: dict[str, str] = {}
    speakers: dict[str, str | None] = {}
    verdicts = []
    for memory in memories:
        text, category = str(memory["text"]), str(memory.get("category") or "note")
        hit = [lb for lb in labels if matches(lb.match, text)]
        new = [lb for lb in hit if lb.id not in matched]
        if any(not lb.optional for lb in new):
            kind = "useful"
        elif new or (hit and all(lb.optional for lb in hit)):
            kind = "tolerated"
        elif hit:
            kind = "duplicate"
        else:
            kind = "unmatched"
        who = said_by(memory)
        for lb in new:
            matched[lb.id] = category
            speakers[lb.id] = who
        bad = [f.id for f in forbidden if f.broken_by(text, category)]
        verdicts.append(Verdict(text, category, kind, [lb.id for lb in hit], bad, who))
    return SessionScore(name, labels, verdicts, matched, speakers)


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def summarise(scores: list[SessionScore]) -> dict[str, Any]:
    """Overall and per-category precision and recall, and the lists a rule writer tunes against."""
    required = [(s, lb) for s in scores for lb in s.labels if not lb.optional]
    verdicts = [(s, v) for s in scores for v in s.verdicts]
    counted = [v for _, v in verdicts if v.kind != "tolerated"]
    useful = sum(1 for v in counted if v.kind == "useful")
    hit = sum(1 for s, lb in required if lb.id in s.matched)
    same_category = sum(1 for s, lb in required if s.matched.get(lb.id) == lb.category)
    spoken = [(s, lb) for s, lb in required if lb.said_by and lb.id in s.matched]
    same_speaker = sum(1 for s, lb in spoken if s.speakers.get(lb.id) == lb.said_by)
    speakers: dict[str, dict[str, Any]] = defaultdict(lambda: {"labels": 0, "matched": 0, "recall": None})
    for s, lb in required:
        if lb.said_by:
            speakers[lb.said_by]["labels"] += 1
            speakers[lb.said_by]["matched"] += lb.id in s.matched
    for row in speakers.values():
        row["recall"] = _ratio(row["matched"], row["labels"])
    categories: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"labels": 0, "matched": 0, "stored": 0, "useful": 0, "recall": None, "precision": None}
    )
    for s, lb in required:
        categories[lb.category]["labels"] += 1
        categories[lb.category]["matched"] += lb.id in s.matched
    for v in counted:
        categories[v.category]["stored"] += 1
        categories[v.category]["useful"] += v.kind == "useful"
    for row in categories.values():
        row["recall"] = _ratio(row["matched"], row["labels"])
        row["precision"] = _ratio(row["useful"], row["stored"])
    return {
        "overall": {
            "sessions": len(scores),
            "labels": len(required),
            "matched": hit,
            "recall": _ratio(hit, len(required)),
            "stored": len(verdicts),
            "tolerated": len(verdicts) - len(counted),
            "useful": useful,
            "duplicates": sum(1 for v in counted if v.kind == "duplicate"),
            "unmatched": sum(1 for v in counted if v.kind == "unmatched"),
            "must_not_hits": sum(1 for _, v in verdicts if v.forbidden),
            "precision": _ratio(useful, len(counted)),
            # of the matched labels, how many got the label's category on their first matching memory
            "category_agreement": _ratio(same_category, hit),
            # of the matched labels that name their speaker, how many got it on their first matching memory
            "speaker_agreement": _ratio(same_speaker, len(spoken)),
        },
        "categories": dict(sorted(categories.items())),
        "speakers": dict(sorted(speakers.items())),
        "sessions": [
            {
                "name": s.name,
                "labels": sum(1 for lb in s.labels if not lb.optional),
                "matched": sum(1 for lb in s.labels if not lb.optional and lb.id in s.matched),
                "stored": len(s.verdicts),
                "useful": sum(1 for v in s.verdicts if v.kind == "useful"),
                "missed": [{"id": lb.id, "category": lb.category, "what": lb.what} for lb in s.missed],
                "memories": [v.to_dict() for v in s.verdicts],
            }
            for s in scores
        ],
    }


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def markdown(summary: dict[str, Any]) -> str:
    o = summary["overall"]
    lines = [
        "| | labels | matched | recall | stored | useful | duplicates | unmatched (of which must-not) | precision |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| **overall** ({o['sessions']} sessions) | {o['labels']} | {o['matched']} | **{_fmt(o['recall'])}** | "
        f"{o['stored']} | {o['useful']} | {o['duplicates']} | {o['unmatched']} ({o['must_not_hits']}) | "
        f"**{_fmt(o['precision'])}** |",
    ]
    for name, row in summary["categories"].items():
        lines.append(
            f"| {name} | {row['labels']} | {row['matched']} | {_fmt(row['recall'])} | {row['stored']} | "
            f"{row['useful']} | | | {_fmt(row['precision'])} |"
        )
    for name, row in summary.get("speakers", {}).items():
        lines.append(f"| said by {name} | {row['labels']} | {row['matched']} | {_fmt(row['recall'])} | | | | | |")
    lines.append("")
    lines.append(
        f"Category agreement (matched labels whose first memory has the label's category): "
        f"{_fmt(o['category_agreement'])}; speaker agreement (the same for `said_by`): "
        f"{_fmt(o.get('speaker_agreement'))}. Per-category recall is by the label's category, precision by the "
        "category the extractor stored."
    )
    return "\n".join(lines)


def misses(summary: dict[str, Any]) -> str:
    """What --verbose prints: per session, the labels missed and the memories that matched nothing."""
    out = []
    for s in summary["sessions"]:
        out.append(f"\n### {s['name']}: {s['matched']}/{s['labels']} labels, {s['useful']}/{s['stored']} useful")
        for lb in s["missed"]:
            out.append(f"- MISSED [{lb['category']}] {lb['id']}: {lb['what']}")
        for m in s["memories"]:
            if m["kind"] in ("unmatched", "duplicate") or m["must_not"]:
                tag = m["kind"].upper() + (f" must-not:{','.join(m['must_not'])}" if m["must_not"] else "")
                dup = f" (of {', '.join(m['labels'])})" if m["kind"] == "duplicate" else ""
                out.append(f"- {tag}{dup} [{m['category']} by {m.get('said_by')}] {m['text'][:300]!r}")
    return "\n".join(out)
