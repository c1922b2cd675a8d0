"""The one token estimate: what a text costs against a model's context or a token budget.

No tokenizer is loaded (the hooks run on every prompt, and the model behind an agent is unknown): English
prose and code average about four characters a token in the common BPE vocabularies, so a text of `n`
characters costs ⌈n / 4⌉ tokens. Rounding up is deliberate: every budget built on this (the extraction
spend cap, proactive retrieval, the hooks' context) should err towards spending less, and a non-empty text
never costs nothing.

What surrounds a text when it is shown is counted as characters added to it, so every figure comes from the
same division:

- a memory in a list (proactive retrieval, the daemon's cold start, the injection ledger) is shown as a
  bullet, ``- `mem_1a2b3c4d` [category] text``: `MEMORY_FRAMING_CHARS` more characters, so `memory_tokens`
  is `len(text) // 4 + 6`, the figure budgets and the ledger have always used;
- a rendered line joined to the next by a line break costs `estimate_tokens(line + "\\n")`.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4
# The bullet around a memory's text (`- `, the id in backticks, the category in brackets, the spaces).
MEMORY_FRAMING_CHARS = 21


def estimate_tokens(text: str, *, framing_chars: int = 0) -> int:
    """Tokens `text` costs, with `framing_chars` characters shown around it: ⌈characters / 4⌉."""
    return -(-(len(text) + framing_chars) // CHARS_PER_TOKEN)


def memory_tokens(text: str) -> int:
    """What one memory with this text costs in a list of memories (its text plus the bullet around it)."""
    return estimate_tokens(text, framing_chars=MEMORY_FRAMING_CHARS)
