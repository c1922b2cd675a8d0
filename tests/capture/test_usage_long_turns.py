"""A turn's calls made before a memory was shown are read once for the turn (capture/calls_before_shown.py), not
once per later call and shown memory: the same answers as rebuilding them for every call, in linear time."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codememory.capture.calls_before_shown import CallsBeforeShown
from codememory.capture.turns import ToolCall
from codememory.service.project_store import Store
from codememory.text.usage_cues import phrase_text, term_in
from support.usage import add, capture, exposure, shown, turn

EARLY = "1999-01-01T00:00:00.000Z"  # before any memory is shown (shown "now")
JOBS = "Since 0.9 the default --jobs is the number of logical CPUs minus one, at most 8: CI ran out of memory."
LIMIT = "The photo size limit is UPLOAD_MAX_BYTES in app/api/photos.py (10 MB since the 2.0 app)."


@pytest.fixture
def store(project: Path) -> Iterator[Store]:
    with Store.open(project) as opened:
        yield opened


def test_what_is_found_once_equals_the_calls_rebuilt_for_every_question() -> None:
    """Questions asked between the calls, as the turn asks them: each answer is what reading every call made so
    far (before the moment asked about) gives, for terms and for runs of words."""
    rng = random.Random(7)
    words = ["scripts/test", "upload_max_bytes", "minus one at most 8", "ruff", "photos.py", "at", "one", "x.py"]
    moments = ["2000-01-01", "2026-01-01", "2099-01-01"]
    calls: list[tuple[str, str]] = []
    before = CallsBeforeShown()
    for _ in range(300):
        when = rng.choice(["1999-06-01", "2026-06-01", "2100-01-01"])
        text = " ".join(
            rng.choice([*words, "Minus, One at-most 8", "xscripts/tests"]) for _ in range(rng.randint(0, 6))
        )
        for _ in range(rng.randint(0, 4)):
            needle, shown_at, phrase = rng.choice(words), rng.choice(moments), rng.random() < 0.4
            rebuilt = [phrase_text(t) if phrase else t for w, t in calls if w < shown_at]
            assert before.held(needle, shown_at, phrase=phrase) == any(
                term_in(needle, t, lowered=True) for t in rebuilt
            )
        calls.append((when, text.lower()))
        before.add(when, text.lower())


def padding(n: int, seq: int) -> ToolCall:
    text = f"fn helper_{n}() {{ let total = {n}; }}"
    return ToolCall("edit", f"pad{n}", "completed", {"filePath": f"src/pad{n}.rs", "oldString": "x", "newString": text},
                    started_at=EARLY if seq < 0 else f"2099-01-01T00:00:0{seq}.000Z")  # fmt: skip


@pytest.mark.parametrize("pad", [0, 120])
def test_a_long_turn_judges_each_call_as_a_short_one_does(store: Store, pad: int) -> None:
    """Words and names a call made before the showing wrote are no evidence, however many calls come between; those
    only a later call writes are."""
    jobs, limit = add(store, JOBS), add(store, LIMIT)
    shown(store, jobs, limit, at_query="tidy the cli")
    copied = "/// How many tasks run at once [default: logical CPUs minus one, at most 8]"
    early = ToolCall("edit", "e0", "completed", {"filePath": "src/cli.rs", "oldString": "x", "newString": copied},
                     started_at=EARLY)  # fmt: skip
    late = [
        ToolCall("edit", "e1", "completed", {"filePath": "src/doc.rs", "oldString": "y", "newString": copied},
                 started_at="2099-01-01T00:00:01.000Z"),
        ToolCall("bash", "b1", "completed", {"command": "grep -rn UPLOAD_MAX_BYTES app && make"},
                 started_at="2099-01-01T00:00:02.000Z"),
    ]  # fmt: skip
    calls = [early, *(padding(n, -1) for n in range(pad)), *late, *(padding(n + pad, 3) for n in range(pad))]
    capture(store, turn(*calls, user="tidy the cli"))
    assert exposure(store, jobs)["used_at"] is None  # the run was written before the memory was shown
    assert exposure(store, limit)["evidence"] == "bash: UPLOAD_MAX_BYTES"


LONG_TURN = """
import sys
from pathlib import Path
from support.usage import add, capture, shown, turn
from codememory.capture.turns import ToolCall
from codememory.service.project_store import Store

JOBS = "Since 0.9 the default --jobs is the number of logical CPUs minus one, at most 8: CI ran out of memory."
body = " ".join(f"word{i % 997}" for i in range(2_400))[:18_000]
copied = " logical CPUs minus one, at most 8"
with Store.open(Path(sys.argv[1])) as store:
    jobs = add(store, JOBS)
    shown(store, jobs, at_query="tidy the cli")
    calls = [
        ToolCall("edit", f"c{n}", "completed", {"filePath": f"f{n}.rs", "oldString": "x", "newString": body + copied},
                 started_at="1999-01-01T00:00:00.000Z" if n < 500 else "2099-01-01T00:00:01.000Z")
        for n in range(1_000)
    ]
    capture(store, turn(*calls, user="tidy the cli"))
print("ok")
"""


@pytest.mark.slow
def test_a_turn_of_a_thousand_large_edits_is_judged_in_linear_time(project: Path) -> None:
    # Every call after the showing that copies the memory's words asked for the earlier calls again, each made into
    # words again: 400 calls of 18k characters took 20 s, and this turn (1,000 of them) well over a minute.
    tests = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", LONG_TURN, str(project)], capture_output=True, text=True, timeout=60, cwd=tests
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
