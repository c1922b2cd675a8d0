"""A todo list said in prose lives in the todos, not also inside another memory (issue 25: one piece of knowledge,
one memory).

A user's message often ends on the errand list after a choice: "No login, it's only on the station LAN. Commit, and
keep a list for next time: an edit form for missing ISRCs, a quarter export button, and deploying it on rack-01."
The agent writes the list down as todos, and each todo is a memory of its own; the sentence that holds the list is
no part of the choice before it, nor a rule of its own ("Write todo for next week: the SMS text must be approved
by dr. Kowalska, I test on staging, …" is a list, not a convention). The evidence is structural: one sentence of a
memory holds most of the words of two or more of the span's todos. That sentence leaves the memory; a memory that
was nothing else is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import Candidate
from codememory.extract.offers import content_words
from codememory.extract.statements import user_sentences

# a todo holds its item when at least this share of the item's words (and two of them) are in one sentence
ITEM_SHARE = 0.5
MIN_ITEM_WORDS = 2
# a sentence holding this many of the todos is the list itself
MIN_LIST_ITEMS = 2
MIN_LEFT_WORDS = 4  # what is left of a memory once the list is out must still say something
# a choice or a refusal opens on its substance, which the agent often writes down as todos too ("We use Redis for
# the cache and Celery for the jobs, not cron" beside "Set up Redis…", "Move the jobs to Celery"): the todos are
# dropped once done, the choice and its reason must outlive them, so only the sentences after its first can go. Not
# a gotcha: a "reported" one can be the list itself ("Next time: ISRC edit form, export button, deploy to rack-01.")
_SUBSTANCE_FIRST = frozenset({"decision", "rejected_alternative"})

_TODO_PREFIX_RE = lazy_pattern(r"^\s*(?:todo|to-do)\s*[:\-]\s*")


def _item_words(todo: Candidate) -> set[str]:
    return content_words(_TODO_PREFIX_RE.sub("", todo.text.lower()))


def _holds_list(sentence: str, items: Sequence[set[str]]) -> bool:
    words = content_words(sentence)
    held = 0
    for item in items:
        shared = len(item & words)
        if item and shared >= MIN_ITEM_WORDS and shared >= ITEM_SHARE * len(item):
            held += 1
    return held >= MIN_LIST_ITEMS


def without_todo_lists(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Each memory other than a todo without the sentences that hold the span's todo list (see the module)."""
    items = [w for c in candidates if c.category == "todo" and (w := _item_words(c))]
    if len(items) < MIN_LIST_ITEMS:
        return list(candidates)
    out = []
    for c in candidates:
        if c.category == "todo":
            out.append(c)
            continue
        said = user_sentences(c.text)
        first = 1 if c.category in _SUBSTANCE_FIRST else 0
        kept = said[:first] + [s for s in said[first:] if not _holds_list(s, items)]
        if len(kept) == len(said):
            out.append(c)
        elif len(" ".join(kept).split()) >= MIN_LEFT_WORDS:
            out.append(replace(c, text=" ".join(kept)))
    return out
