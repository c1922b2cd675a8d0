"""The ranking's order rules (retrieval/fusion.py) on evidence as a search gathers it."""

from __future__ import annotations

from datetime import UTC, datetime

from codememory.retrieval.fusion import Evidence, RankWeights, Sessions, newer_supersedes, order

NOW = datetime(2026, 6, 30, tzinfo=UTC)
W = RankWeights()


def ranked(evidence: dict[int, Evidence]) -> list[tuple[float, int, dict[str, object]]]:
    return order(evidence, set(evidence), Sessions({}), W, NOW, 1.0)


def test_the_newer_of_two_near_duplicates_ranks_first_though_the_older_words_the_question_better() -> None:
    evidence = {
        1: Evidence(keyword=0.5, coverage=0.46, meaning=6.4, created_at="2026-06-01T00:00:00Z"),  # snaps to 15 min
        2: Evidence(keyword=0.4, coverage=0.38, meaning=5.4, created_at="2026-06-02T00:00:00Z"),  # the board
        3: Evidence(keyword=0.3, coverage=0.46, meaning=6.6, created_at="2026-06-10T00:00:00Z"),  # now 30 min
    }
    before = ranked(evidence)
    assert [pk for _, pk, _ in before] == [1, 3, 2]  # more than a near tie apart
    updated = {frozenset((1, 3))}
    after = newer_supersedes(before, evidence, lambda a, b: frozenset((a, b)) in updated, W)
    assert [pk for _, pk, _ in after] == [3, 1, 2]
    assert after[0][2]["supersedes"] == [1]  # whose likelihood it takes on


def test_unrelated_or_far_behind_memories_keep_their_place() -> None:
    evidence = {
        1: Evidence(keyword=0.5, coverage=0.46, meaning=6.4, created_at="2026-06-01T00:00:00Z"),
        2: Evidence(keyword=0.3, coverage=0.46, meaning=6.6, created_at="2026-06-10T00:00:00Z"),
        3: Evidence(keyword=0.0, coverage=0.0, meaning=2.0, created_at="2026-06-20T00:00:00Z"),
    }
    before = ranked(evidence)
    assert [pk for _, pk, _ in before] == [1, 2, 3]
    assert newer_supersedes(before, evidence, lambda a, b: False, W) == before  # nothing alike
    far = newer_supersedes(before, evidence, lambda a, b: {a, b} == {1, 3}, W)  # alike, but scores far lower
    assert [pk for _, pk, _ in far] == [1, 2, 3]
