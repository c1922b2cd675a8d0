"""What the calls of one turn made before a memory was shown held: the agent was there already (the read that made
OpenCode's HUD show a memory naming the file it read), so a term of the memory that such a call held is no evidence
that a later call acted on the memory (capture/usage.py).

Each question (did a call made before this moment hold this term, or this run of a memory's words) is answered by
reading each call at most once for the turn: the answer found so far is kept with how many calls it covered, and a
later question reads only the calls made since. Asked again for every call and every shown memory, a long turn
(hundreds of calls, each a whole file written) would otherwise read its earlier calls again each time."""

from __future__ import annotations

from codememory.text.usage_cues import phrase_text, term_in


class CallsBeforeShown:
    """The turn's calls so far, in order, and what was found in them."""

    def __init__(self) -> None:
        self._calls: list[tuple[str, str]] = []  # when, what the call held (lower-cased)
        self._phrases: dict[int, str] = {}  # a call's text as `phrase_text`, made when first needed
        self._found: dict[tuple[str, str, bool], tuple[int, bool]] = {}  # the answer, and how many calls it read

    def add(self, when: str, held: str) -> None:
        """A call of the turn, once it has been judged: `held` lower-cased."""
        self._calls.append((when, held))

    def held(self, needle: str, shown_at: str, *, phrase: bool = False) -> bool:
        """Whether a call added so far, made before `shown_at`, holds `needle` whole: a term (lower-cased), or with
        `phrase` a run of a memory's words (as `copied_phrase` builds them)."""
        key = (shown_at, needle, phrase)
        read, found = self._found.get(key, (0, False))
        if not found:
            for index in range(read, len(self._calls)):
                when, text = self._calls[index]
                if when < shown_at and term_in(needle, self._phrase(index) if phrase else text, lowered=True):
                    found = True
                    break
            self._found[key] = (len(self._calls), found)
        return found

    def _phrase(self, index: int) -> str:
        if index not in self._phrases:
            self._phrases[index] = phrase_text(self._calls[index][1])
        return self._phrases[index]


__all__ = ["CallsBeforeShown"]
