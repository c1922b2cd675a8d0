"""The ranking's order rules (retrieval/fusion.py) on evidence as a search gathers it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from codememory.retrieval.fusion import Evidence, RankWeights, Sessions, newer_supersedes, order, updates_first

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


def test_a_memory_saying_it_changed_a_setting_ranks_above_the_older_one_from_far_below() -> None:
    evidence = {
        1: Evidence(keyword=0.9, coverage=0.7, meaning=5.3, created_at="2026-06-01T00:00:00Z"),  # runs 1.27
        2: Evidence(keyword=0.3, coverage=0.3, meaning=4.1, created_at="2026-06-02T00:00:00Z"),  # another subject
        3: Evidence(keyword=0.2, coverage=0.2, meaning=4.0, created_at="2026-06-03T00:00:00Z"),  # another subject
        4: Evidence(meaning=1.8, created_at="2026-06-20T00:00:00Z", changes=True),  # upgraded to 1.29
    }
    before = ranked(evidence)
    assert [pk for _, pk, _ in before] == [1, 2, 3, 4]  # far more than `supersede` apart
    after = updates_first(before, evidence, lambda older, newer: (older, newer) == (1, 4), W)
    assert [pk for _, pk, _ in after] == [4, 1, 2, 3]
    # it names what it passed, but does not take on its likelihood: it is no near-duplicate of it
    assert after[0][2]["updates"] == [1] and "supersedes" not in after[0][2]


def test_a_change_note_takes_on_the_likelihood_only_of_a_memory_it_nearly_repeats() -> None:
    evidence = {
        1: Evidence(keyword=0.9, coverage=0.7, meaning=5.3, created_at="2026-06-01T00:00:00Z"),  # snaps to 15 min
        2: Evidence(keyword=0.3, coverage=0.3, meaning=4.1, created_at="2026-06-02T00:00:00Z"),
        3: Evidence(meaning=1.8, created_at="2026-06-20T00:00:00Z", changes=True),  # snap changed to 30 min
    }
    before = ranked(evidence)
    after = updates_first(before, evidence, lambda older, newer: older == 1, W, alike=lambda a, b: {a, b} == {1, 3})
    assert [pk for _, pk, _ in after] == [3, 1, 2]
    assert after[0][2]["supersedes"] == [1] and "updates" not in after[0][2]


def test_a_change_note_stays_put_unless_it_is_newer_updates_the_memory_and_keeps_the_keyword_tier() -> None:
    evidence = {
        1: Evidence(keyword=0.9, coverage=0.7, meaning=5.3, created_at="2026-06-10T00:00:00Z"),
        2: Evidence(keyword=0.3, coverage=0.3, meaning=4.1, created_at="2026-06-02T00:00:00Z"),
        3: Evidence(meaning=1.8, created_at="2026-06-01T00:00:00Z", changes=True),  # older than 1
        4: Evidence(meaning=1.7, created_at="2026-06-20T00:00:00Z", changes=False),  # says no change
    }
    before = ranked(evidence)
    assert updates_first(before, evidence, lambda older, newer: True, W) == before
    assert updates_first(before, evidence, lambda older, newer: False, W) == before
    # a keyword match holding every distinctive word is not passed by a change note that does not hold them
    covered = {
        1: Evidence(keyword=1.0, coverage=1.0, meaning=5.0, created_at="2026-06-01T00:00:00Z"),
        2: Evidence(meaning=4.0, created_at="2026-06-20T00:00:00Z", changes=True),
    }
    before = ranked(covered)
    assert before[0][2].get("covered")
    assert updates_first(before, covered, lambda older, newer: True, W) == before


def test_a_memory_of_the_kind_the_question_asks_for_ranks_above_a_closer_one_of_another_kind() -> None:
    """ "why didn't we use Elasticsearch?": the rejected alternative, not the fact closest in wording."""
    fact = Evidence(keyword=0.3, coverage=0.3, meaning=5.0, created_at="2026-06-01T00:00:00Z")
    rejected = Evidence(keyword=0.25, coverage=0.25, meaning=4.8, created_at="2026-06-01T00:00:00Z")
    assert [pk for _, pk, _ in ranked({1: fact, 2: rejected})] == [1, 2]  # no kind asked for: wording decides
    fits = {1: replace(fact, kind_fit=-1.0), 2: replace(rejected, kind_fit=1.0)}
    assert [pk for _, pk, _ in ranked(fits)] == [2, 1]


def test_the_kind_asked_for_never_lifts_a_memory_over_a_keyword_match_holding_every_distinctive_word() -> None:
    holds = Evidence(keyword=1.0, coverage=1.0, meaning=3.0, created_at="2026-06-01T00:00:00Z", kind_fit=-1.0)
    other = Evidence(keyword=0.0, coverage=0.0, meaning=6.0, created_at="2026-06-01T00:00:00Z", kind_fit=1.0)
    assert [pk for _, pk, _ in ranked({1: holds, 2: other})] == [1, 2]
