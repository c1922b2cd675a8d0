"""Lessons with no failing tool: a bug the user reports ("One bug: with two tabs open I show up twice") and the
assistant's explanation of its cause and fix in the same turn ("Presence groups metas by key, and I keyed by
socket id, so each tab is its own entry. Keyed by the user id, …"). A turn with a failed shell command is left to
the failure's lesson (`gotchas`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from codememory.capture.turns import Turn
from codememory.extract.candidate import OBSERVED, Candidate, entity_names
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.clean import clip, tidy
from codememory.extract.gotchas import GOTCHA_IMPORTANCE, cause_sentence, follow_up
from codememory.extract.statements import sentences

_BUG_REPORT_RE = re.compile(
    r"^(?:one\s+|a\s+|another\s+|found\s+a\s+)?(?:bug|problem|issue|regression)\s*:"
    r"|\b(?:shows?\s+up|appears?|runs?|fires?|gets?\s+sent|is\s+sent|(?:is|are)\s+(?:listed|shown|counted))\s+twice\b"
    r"|\bis\s+broken\b|\b(?:doesn'?t|does\s+not|no\s+longer)\s+work\b|\bstopped\s+working\b|\bcrash(?:es|ed)\b",
    re.IGNORECASE,
)


# "…, so each tab is its own entry": the consequence that explains what the user saw
_CONSEQUENCE_RE = re.compile(r",\s*so\s+(?!(?:far|i|we|let'?s|now)\b)\w+", re.IGNORECASE)


def reported_bug_lessons(turns: Sequence[Turn]) -> list[Candidate]:
    out: list[Candidate] = []
    for turn in turns:
        report = next((s for s in sentences(scrub(turn.user_text)) if _is_report(s)), None)
        if report is None or not turn.assistant_texts:
            continue
        if any(call.failed for call in turn.tool_calls):
            continue
        said = [tidy(s) for s in sentences(scrub(turn.assistant_texts[0]))]
        for n, s in enumerate(said):
            if cause_sentence(s) or (_CONSEQUENCE_RE.search(s) and cause_sentence(s, cue=False)):
                picked = [s] + [x for x in said[n + 1 : n + 2] if follow_up(x)]
                text = clip(f"{' '.join(picked)} (reported: {clip(tidy(report), 120)})", 480)
                out.append(
                    Candidate(
                        text, "gotcha", GOTCHA_IMPORTANCE, turn.seq, entity_names(text), rule="lesson", said_by=OBSERVED
                    )
                )
                break
    return out


def _is_report(sentence: str) -> bool:
    s = tidy(sentence)
    return bool(s) and not s.endswith("?") and bool(_BUG_REPORT_RE.search(s))
