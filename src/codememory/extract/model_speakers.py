"""Who said what a model's memory says, checked against the transcript before it is stored.

The extraction prompt asks the model to name each memory's speaker (`said_by`, one of core.provenance.SPEAKERS) and to
keep decisions, rejected alternatives, conventions, preferences and notes to what the user said or accepted. A
model can be led astray by the transcript it reads (an instruction inside a tool's output, an assistant's claim
about the user), so its word is checked where the transcript can check it:

- a decision, rejected alternative, convention, preference or note said by the assistant alone, or only observed in
  a tool's output or a file, is not stored;
- "user" needs the user's own words in that turn;
- "assistant_accepted" needs a later turn in which the user spoke (agreed or carried on).

A memory without `said_by` is stored without one: a team's own prompt files (`[llm] prompts_dir`) may not ask for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from codememory.capture.turns import Turn

# What only the user can settle: the assistant's proposal counts once the user accepted it.
USERS_OWN = frozenset({"decision", "rejected_alternative", "convention", "preference", "note"})
USER, ACCEPTED = "user", "assistant_accepted"


class SpeakerCheck:
    """The turns of one extraction run, for checking who said what."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self.user_spoke = {t.seq for t in turns if t.user_text.strip()}
        self.last_user_turn = max(self.user_spoke, default=-1)

    def refusal(self, category: str, said_by: str | None, seq: int | None) -> str | None:
        """Why a model's memory of `category`, said by `said_by` in turn `seq`, is not stored (None: it is). Without
        the turn (the model named none, or one not in its window) only the category is checked."""
        if said_by is None:
            return None
        if category in USERS_OWN and said_by not in (USER, ACCEPTED):
            return f"a {category} said by {said_by}: only the user's words or what the user accepted"
        if seq is None:
            return None
        if said_by == USER and seq not in self.user_spoke:
            return f"said by the user in turn {seq}, where the user said nothing"
        if said_by == ACCEPTED and seq >= self.last_user_turn:
            return f"accepted by the user, but the user did not speak after turn {seq}"
        return None
