"""The extraction benchmark's scorer (benchmarks/extraction_score.py) on small hand-made cases, and the corpus's
labels are well-formed: a scorer that cannot fail would make the benchmark's figures meaningless."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import extraction_score as scoring  # noqa: E402
from codememory.core.model import CATEGORIES  # noqa: E402

LABELS = [
    scoring.Label("slug", "decision", "slugs via NFKD", [["unicodedata", "nfkd"], ["slug"]]),
    scoring.Label("no-orm", "rejected_alternative", "no SQLAlchemy: dependency", [["sqlalchemy"], ["dependenc"]]),
    scoring.Label("py39", "convention", "CI runs 3.9", [["3.9"], ["ci", "optional"]]),
    scoring.Label("port", "fact", "port 3001", [["3001"]], optional=True),
]
FORBIDDEN = [scoring.Forbidden("files", "session data", [["files changed"]])]
PERFECT = [
    {"text": "Slugs use unicodedata NFKD instead of python-slugify.", "category": "decision"},
    {"text": "SQLAlchemy was rejected: it would be the first dependency.", "category": "rejected_alternative"},
    {"text": "CI runs Python 3.9, so use Optional rather than X | None.", "category": "convention"},
]


def score(memories: list[dict[str, str]]) -> dict[str, object]:
    return scoring.summarise([scoring.score_session("case", LABELS, FORBIDDEN, memories)])


def test_a_perfect_extraction_scores_one() -> None:
    overall = score(PERFECT)["overall"]
    assert overall["recall"] == 1.0 and overall["precision"] == 1.0  # type: ignore[index]
    assert overall["category_agreement"] == 1.0  # type: ignore[index]


def test_nothing_stored_is_zero_recall_and_no_precision() -> None:
    summary = score([])
    assert summary["overall"]["recall"] == 0.0 and summary["overall"]["precision"] is None  # type: ignore[index]
    missed = [m["id"] for m in summary["sessions"][0]["missed"]]  # type: ignore[index]
    assert missed == ["slug", "no-orm", "py39"]  # the optional label is never "missed"


def test_a_duplicate_counts_once_for_recall_and_lowers_precision() -> None:
    dup = {"text": "Use NFKD normalisation (unicodedata) for slug generation.", "category": "gotcha"}
    summary = score([*PERFECT, dup])
    o = summary["overall"]
    assert o["recall"] == 1.0 and o["duplicates"] == 1 and o["precision"] == 0.75  # type: ignore[index]
    assert summary["categories"]["gotcha"]["precision"] == 0.0  # type: ignore[index]


def test_stray_and_forbidden_memories_are_imprecise_and_reported() -> None:
    stray = [
        {"text": "Files changed in session ses_1: a.py, b.py.", "category": "fact"},
        {"text": "Ok, thanks!", "category": "note"},
    ]
    summary = score([PERFECT[0], *stray])
    o = summary["overall"]
    assert (o["useful"], o["unmatched"], o["must_not_hits"]) == (1, 2, 1)  # type: ignore[index]
    assert o["precision"] == pytest.approx(1 / 3, abs=0.001) and o["recall"] == pytest.approx(1 / 3, abs=0.001)  # type: ignore[index]
    assert "must-not:files" in scoring.misses(summary) and "MISSED [convention] py39" in scoring.misses(summary)


def test_an_optional_label_is_tolerated_and_a_wrong_category_lowers_agreement() -> None:
    memories = [{"text": "The API listens on 3001.", "category": "fact"}, {**PERFECT[0], "category": "gotcha"}]
    o = score(memories)["overall"]
    assert o["tolerated"] == 1 and o["precision"] == 1.0 and o["category_agreement"] == 0.0  # type: ignore[index]


def test_one_memory_may_carry_a_decision_and_its_rejected_alternative() -> None:
    both = {"text": "Slugs use unicodedata NFKD; SQLAlchemy is out: it would add a dependency.", "category": "decision"}
    o = score([both])["overall"]
    assert o["matched"] == 2 and o["useful"] == 1  # type: ignore[index]


def test_rules_need_every_group_and_accept_any_alternative_or_regex() -> None:
    assert scoring.matches([["nfkd", "unicodedata"], ["slug"]], "UNICODEDATA makes the SLUG")
    assert not scoring.matches([["nfkd"], ["slug"]], "NFKD only")
    assert scoring.matches([["re:\\bport 30\\d\\d\\b"]], "runs on port 3001")
    assert not scoring.matches([], "anything")


def load_set(folder: Path) -> list[dict[str, object]]:
    items = []
    for path in sorted((folder / "sessions").glob("*.json")):
        item = {**json.loads(path.read_text(encoding="utf-8")), "name": path.stem}
        ids = [lb["id"] for lb in item["labels"]]
        assert len(ids) == len(set(ids)), item["project"]
        for lb in item["labels"]:
            assert lb["category"] in CATEGORIES and lb["match"] and all(lb["match"]), lb
        for rule in item.get("must_not", []):
            assert rule["id"] and rule["match"] and all(rule["match"]), rule
        if item["source"] == "opencode":
            assert (folder / "recorded" / f"{item['name']}.json").is_file(), item["name"]
        else:
            assert (folder / "sessions" / item["transcript"]).is_file(), item["name"]
        items.append(item)
    return items


def test_the_corpus_labels_are_well_formed() -> None:
    items = load_set(BENCH / "data/extraction")
    assert sum(1 for i in items if i["source"] == "opencode") >= 12
    assert 2 <= sum(1 for i in items if i["source"] in ("claude-code", "codex")) <= 4


def test_the_held_out_set_is_well_formed_and_new() -> None:
    heldout = load_set(BENCH / "data/extraction/heldout")
    assert len(heldout) >= 6
    main = {i["project"] for i in load_set(BENCH / "data/extraction")}
    assert not main & {i["project"] for i in heldout}  # other projects than the corpus the rules were tuned on
    categories = {lb["category"] for i in heldout for lb in i["labels"] if not lb.get("optional")}  # type: ignore[attr-defined]
    assert {"decision", "rejected_alternative", "convention", "gotcha", "fact", "todo"} <= categories


def test_the_second_held_out_set_is_well_formed_and_new() -> None:
    # heldout2 is the final judge of rules tuned on main and heldout: its projects must be new to both.
    heldout2 = load_set(BENCH / "data/extraction/heldout2")
    assert len(heldout2) >= 6 and all(i["source"] == "opencode" for i in heldout2)
    seen = {i["project"] for i in load_set(BENCH / "data/extraction") + load_set(BENCH / "data/extraction/heldout")}
    assert not seen & {i["project"] for i in heldout2}
    categories = {lb["category"] for i in heldout2 for lb in i["labels"] if not lb.get("optional")}  # type: ignore[attr-defined]
    assert {"decision", "rejected_alternative", "convention", "gotcha", "fact", "todo"} <= categories
