"""The learned reader of durable knowledge (extract/reader.py): a veto on the rules' empty candidates, with the real
default embedding model. The sentences here are written for these tests, not taken from the benchmark sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory.core.config import EmbeddingConfig
from codememory.embedding.e5_small import E5SmallEmbedder
from codememory.extract import Extractor
from codememory.extract.candidate import USER, Candidate
from codememory.extract.heuristic import heuristic_candidates
from codememory.extract.reader import VETO_BAR, WEIGHTS_ENV, durable_odds, without_empty
from codememory.service.project_store import Store
from support.extraction import SESSION, stored_memories, turn

EMPTY = ["Never touch that.", "Switching to it.", "Okay, that one it is.", "Someone complained about it once."]
DURABLE = [
    "We deploy with Docker Compose on the Hetzner box because Kubernetes is overkill for one server.",
    "Always run the database migrations with alembic before starting the API.",
    "I'd rather not pull in moment.js, the bundle is already too big.",
    "The sensor reports -127 when the probe is disconnected, so drop those readings.",
]

pytestmark = pytest.mark.default_model


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    Store.init(root)[0].close()
    return root


@pytest.mark.parametrize("by_user", [True, False])
def test_the_reader_tells_empty_sentences_from_durable_ones(by_user: bool) -> None:
    vectors = E5SmallEmbedder(EmbeddingConfig()).embed_documents(EMPTY + DURABLE)
    odds = durable_odds(vectors, [by_user] * len(vectors))
    assert all(p < VETO_BAR for p in odds[: len(EMPTY)]), odds
    assert all(p > 3 * VETO_BAR for p in odds[len(EMPTY) :]), odds


def test_todos_and_remember_notes_are_kept_whatever_the_reader_says(tmp_path: Path) -> None:
    store = Store.open(project(tmp_path))
    try:
        empty = Candidate("Never touch that.", "convention", 0.7, 1, said_by=USER)
        todo = Candidate("Switching to it.", "todo", 0.5, 1, rule="todo", said_by=USER)
        note = Candidate("Okay, that one it is.", "note", 0.8, 1, rule="remember", said_by=USER)
        kept = Candidate(DURABLE[1], "convention", 0.75, 1, rule="convention", said_by=USER)
        assert without_empty([empty, todo, note, kept], store.semantic) == [todo, note, kept]
    finally:
        store.close()


TURNS = [
    turn(1, f"Set up the API project. {DURABLE[1]}", ("Done: the project is set up.",)),
    turn(2, "The old export script stays in tools/. Never rename that.", ("Understood.",)),
]


def test_extraction_stores_the_rules_durable_candidates_and_not_their_empty_ones(tmp_path: Path) -> None:
    assert "Never rename that." in [c.text for c in heuristic_candidates(TURNS, SESSION)]  # the rules' candidate
    store = Store.open(project(tmp_path))
    try:
        Extractor(store).extract_session(SESSION, TURNS)
        texts = [m["text"] for m in stored_memories(store)]
    finally:
        store.close()
    assert DURABLE[1] in texts
    assert "Never rename that." not in texts


def test_without_the_readers_model_the_rules_alone_decide(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".codememory" / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    store = Store.open(root)
    try:
        Extractor(store).extract_session(SESSION, TURNS)
        texts = [m["text"] for m in stored_memories(store)]
    finally:
        store.close()
    assert "Never rename that." in texts


def test_a_kept_candidate_is_stored_with_the_vector_the_reader_read(tmp_path: Path) -> None:
    """The reader embeds a span's candidates in one batch; `Store.add` then asks for each kept one's vector again and
    gets the same one (embedding.semantic keeps the last batch), so the veto costs no second model run."""
    store = Store.open(project(tmp_path))
    try:
        batch = store.semantic.embed_documents(DURABLE)
        again = store.semantic.embed_documents([DURABLE[2]])
        assert batch is not None and again is not None
        assert (again[0] == batch[2]).all()
    finally:
        store.close()


@pytest.mark.parametrize("weights", ["missing", "empty", "other_shape"])
def test_unreadable_reader_weights_leave_the_rules_to_decide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weights: str
) -> None:
    """CODEMEMORY_READER_WEIGHTS naming a file that is not there, empty, or trained for another vector size must not
    stop extraction: the reader is only a veto, so without it the rules' candidates are stored, as with no model."""
    import numpy as np

    path = tmp_path / f"{weights}.npy"
    if weights == "empty":
        path.write_bytes(b"")
    elif weights == "other_shape":
        np.save(path, np.ones((3, 17)))
    monkeypatch.setenv(WEIGHTS_ENV, str(path))
    store = Store.open(project(tmp_path))
    try:
        Extractor(store).extract_session(SESSION, TURNS)
        texts = [m["text"] for m in stored_memories(store)]
    finally:
        store.close()
    assert DURABLE[1] in texts
    assert "Never rename that." in texts
