"""What each captured turn's tool calls held, per session (the `session_seen` table): use detection's memory of a
session, so that a memory's term the session already held before the memory was shown to it is not taken as
evidence of its use (capture/usage.py). The calls' arguments are kept as scrubbed, bounded text, what their outputs
showed as keyed digests only, and only the newest rows are kept."""

from __future__ import annotations

from collections.abc import Sequence

from codememory.core.lazy_pattern import lazy_pattern
from codememory.store.connection import StoreConnection
from codememory.store.rows import is_stamp, is_text
from codememory.text.privacy import scrub_start

MAX_SEEN_TURN_CHARS = 12_000  # of one turn's text kept
MAX_SEEN_SESSION_CHARS = 240_000  # of a session's earlier turns read back, oldest first
MAX_SEEN_ROWS = 2_000  # turns kept over all sessions; past it the oldest go
MAX_SEEN_TOKEN_CHARS = 8_000  # of one turn's output digests kept
MAX_SEEN_TOKENS = MAX_SEEN_TOKEN_CHARS // 13  # digests of a turn kept whole (twelve hex digits and a space each)
TOKENS_MARK = "\n\x00"  # between a row's text and its output digests
_DIGEST_RE = lazy_pattern(r"[0-9a-f]{12}")


class SessionSeenRows(StoreConnection):
    def record_seen(self, session_id: str, seq: int, ended_at: str, said: str, tokens: Sequence[str] = ()) -> None:
        """Keep what a captured turn's tool calls held (once per turn: a turn captured again keeps its first row):
        `said` as text (scrubbed), `tokens` as digests only (capture/usage.py: what their outputs showed)."""
        digests = " ".join(t for t in tokens if _DIGEST_RE.fullmatch(t))[:MAX_SEEN_TOKEN_CHARS]
        text = scrub_start(said, MAX_SEEN_TURN_CHARS).lower() + (TOKENS_MARK + digests if digests else "")
        with self.transaction() as c:
            cur = c.execute(
                "INSERT OR IGNORE INTO session_seen(session_id, seq, ended_at, said) VALUES (?, ?, ?, ?)",
                (session_id, seq, ended_at, text),
            )
            if cur.rowcount and cur.lastrowid is not None and cur.lastrowid > MAX_SEEN_ROWS:
                c.execute("DELETE FROM session_seen WHERE id <= ?", (cur.lastrowid - MAX_SEEN_ROWS,))

    def seen_before(self, session_id: str, seq: int) -> list[tuple[str, str]]:
        """(ended_at, text) of the session's turns before `seq`, oldest first, up to MAX_SEEN_SESSION_CHARS in all.
        Rows of the wrong shape (the file is untrusted input) are passed over."""
        out: list[tuple[str, str]] = []
        budget = MAX_SEEN_SESSION_CHARS
        rows = self.conn.execute(
            "SELECT ended_at, said FROM session_seen WHERE session_id = ? AND seq < ? ORDER BY seq", (session_id, seq)
        )
        for ended_at, said in rows:
            if budget <= 0:
                break
            if is_stamp(ended_at) and is_text(said):
                out.append((ended_at, said[:budget]))
                budget -= len(out[-1][1])
        return out
