"""text.mood: what the speaker says of its own work (its status, a change it makes) is read in one place, and a
sentence's mood is read once however many rules ask. The sentences are written for these tests, not taken from the
benchmark sets."""

from __future__ import annotations

import pytest

from codememory.text.mood import asks, logged, mood, narration, reports_status, tells_a_change


@pytest.mark.parametrize(
    "sentence",
    [
        "Let me look at the compose file.",
        "We'll rerun the suite with the seed pinned.",
        "Now I see where the duplicate comes from.",
        "Running the linter once more.",
        "To check, I queried the replica directly.",
        "Done.",
        "Fixed, and pushed to the branch.",
        "Committed as a separate change.",
        "Here's the updated handler.",
        "All 48 pass now.",
        "3 tests still fail on Windows.",
        "Tests green on both runners.",
        "Builds cleanly with the new toolchain.",
        "Works now.",
        "Still open: the retry budget.",
        "Files changed: api.py and worker.py.",
    ],
)
def test_the_speakers_status_is_told_work(sentence: str) -> None:
    assert reports_status(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        # a look that goes on to say what it found states the finding
        "Looking at the nginx config: the upstream still points at the old container name.",
        "Checking the cron table: the backup job runs as root and writes to /tmp.",
        "The cache is keyed by tenant, so each tenant warms its own.",
        "Running migrations on the primary locks the orders table for minutes.",  # "running" inside a finding
        "Fixtures are rebuilt on every run.",
        "I've seen this before with the arm64 runners.",
        "Donations are exported monthly.",  # "done" only as a word of its own
    ],
)
def test_a_finding_is_no_status(sentence: str) -> None:
    assert not reports_status(sentence)


@pytest.mark.parametrize(
    ("sentence", "change"),
    [
        ("I'll add a timeout to the webhook client.", True),
        ("I've changed the pool size to four.", True),
        ("Added an index on the created_at column.", True),
        ("Updated the lockfile.", True),
        ("Rewrote the CSV reader around the csv module.", True),
        ("I'll check the lockfile first.", False),  # a look, not a change
        ("Additional fields go in the metadata column.", False),
        ("The updater runs every night at two.", False),
    ],
)
def test_a_change_the_speaker_makes_is_told_apart_from_its_status(sentence: str, change: bool) -> None:
    assert tells_a_change(sentence) is change


def test_a_sentences_mood_is_read_once_in_a_bounded_cache() -> None:
    sentence = "The nightly export retries once, then pages the on-call person."
    for reading in (asks, narration, logged):
        reading.cache_clear()
    for _ in range(5):
        assert mood(sentence) == "statement"
    for reading in (asks, narration, logged):
        info = reading.cache_info()
        assert info.maxsize is not None and info.maxsize > 0  # bounded: a long-lived process keeps no every sentence
        assert info.misses == 1 and info.hits == 4
