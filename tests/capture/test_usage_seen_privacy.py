"""What use detection keeps of a session's tool calls (store/session_seen.py via capture/usage.py): no part of a
secret survives the bounds the text is cut to, nothing the user marked private is kept even as a digest, and which
output words a busy turn keeps does not depend on the process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codememory.capture.daily_log import MEMORY_DIR, DailyLog
from codememory.capture.opencode import write_turn
from codememory.capture.turns import SessionInfo, ToolCall, Turn
from codememory.capture.usage import MAX_SEEN_CALL_CHARS, _digest
from codememory.core.project import store_dir
from codememory.service.project_store import Store
from codememory.store.capture import CaptureTables
from codememory.store.session_seen import MAX_SEEN_TURN_CHARS, TOKENS_MARK

SESSION = "ses_seen1"
AT = "2000-01-01T00:00:00.000Z"
# a GitHub token's shape (ghp_ and 36 letters and digits): scrubbed whole, and only whole
TOKEN = "ghp_Q7mZ2xK9vR4tL8nB3cW6yH1jD5fG0sA2eP4u"
SECRET_PART = TOKEN[4:14].lower()


@pytest.fixture
def store(project: Path) -> Iterator[Store]:
    with Store.open(project) as opened:
        yield opened


def capture(store: Store, *calls: ToolCall, seq: int = 1) -> None:
    t = Turn("opencode", SESSION, f"msg_{seq}", seq, AT, AT, "look around", tool_calls=calls)
    info = SessionInfo("opencode", SESSION, str(store.root), None, AT, AT)
    log = DailyLog(store_dir(store.root) / MEMORY_DIR, root=store.root)
    assert write_turn(CaptureTables(store.db), log, info, t, "2000-01-01T00:00:10.000Z") is not None


def bash(seq: int, command: str, output: str = "") -> ToolCall:
    return ToolCall("bash", f"call_{seq}", "completed", {"command": command}, output, started_at=AT)


def kept(store: Store) -> tuple[str, set[str]]:
    [(_, said)] = store.db.seen_before(SESSION, 99)
    text, _, digests = said.partition(TOKENS_MARK)
    return text, set(digests.split())


def test_a_secret_a_calls_bound_cuts_through_leaves_no_part_of_it(store: Store) -> None:
    """A call's arguments are kept up to MAX_SEEN_CALL_CHARS: a token the bound cuts through is no longer the
    token's shape, so scrubbing after the cut would keep its first characters."""
    lead = "echo " + "word " * ((MAX_SEEN_CALL_CHARS - 30) // 5)
    command = lead.ljust(MAX_SEEN_CALL_CHARS - 20) + f"{TOKEN} done"  # 20 characters of it before the bound
    assert command.index(TOKEN) < MAX_SEEN_CALL_CHARS < command.index(TOKEN) + len(TOKEN)
    capture(store, bash(1, command))
    text, _ = kept(store)
    assert "echo word" in text and SECRET_PART not in text


def test_a_secret_the_turns_bound_cuts_through_leaves_no_part_of_it(store: Store) -> None:
    said = "x " * ((MAX_SEEN_TURN_CHARS - 20) // 2) + f"use {TOKEN} then"
    assert said.index(TOKEN) < MAX_SEEN_TURN_CHARS < said.index(TOKEN) + len(TOKEN)
    store.db.record_seen(SESSION, 1, AT, said)
    text, _ = kept(store)
    assert text.startswith("x x") and SECRET_PART not in text


def test_what_an_output_holds_privately_is_not_kept_even_as_a_digest(store: Store) -> None:
    """The outputs' words are kept as digests keyed by the session id, which the store holds: a word's digest
    confirms a guess of the word. Private spans and secrets are left out before the words are taken."""
    output = (
        "app/api/photos.py\n<private>diagnosis melanoma, patient ingrid</private>\n"
        "STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc\nREADME.md"
    )
    capture(store, bash(1, "ls; cat .env", output))
    _, digests = kept(store)
    assert _digest(SESSION, "app/api/photos.py") in digests and _digest(SESSION, "readme.md") in digests
    for word in ("melanoma", "ingrid", "sk_live_4ec39hqlyjwdarjtt1zdp7dc"):
        assert _digest(SESSION, word) not in digests, word


def test_a_busy_turn_keeps_the_output_words_of_its_first_calls(store: Store) -> None:
    """A turn's digests are bounded: which words are kept follows the calls' order, not the order a set of strings
    happens to have in this process (which changes from one process to the next)."""
    calls = [bash(i, f"ls dir{i}", " ".join(f"name{i}x{j}.py" for j in range(80))) for i in range(40)]
    capture(store, *calls)
    _, digests = kept(store)
    first = {_digest(SESSION, f"name0x{j}.py") for j in range(80)}
    assert first <= digests
    assert _digest(SESSION, "name39x0.py") not in digests  # past the bound
