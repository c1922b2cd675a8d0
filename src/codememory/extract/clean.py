"""Memory text from a sentence someone said: no stray quotes, no filler words, capitalised, a full stop, and
never cut inside a sentence.

Stray quotes come from prompts given on a command line (`opencode run "Add a slug field."`): the quote that
opens the message and the one that closes it land on the first and last sentences, and a quote in front of
"Ok, …" also hid the filler from the filler rule."""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern

_QUOTE_PAIRS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}
_OPENING = "\"'\u201c\u2018"
_CLOSING = "\"'\u201d\u2019"
_FILLER_RE = lazy_pattern(
    r"^(?:ok(?:ay)?(?:\s+so)?|so|also|and|but|alright|all\s+right|right|great|cool|nice|sure|well|yes|yeah|yep|"
    r"good|perfect|fine|thanks|thank\s+you|hmm+|hm|actually|anyway|note|fyi|btw|one\s+more\s+thing|important|"
    r"got\s+it|sounds\s+good|makes\s+sense|understood|agreed|hey|hi|please|now|then|in\s+that\s+case|"
    r"oh|ah|i\s+see)\b[,!.:;\u2014\u2013-]*\s+",
    re.IGNORECASE,
)
# A trailing "then" / ", please" adds nothing once the sentence stands alone ("let's stay with sqlite3 then").
_TRAILING_FILLER_RE = lazy_pattern(r"(?:,?\s+(?:then|please|instead|i\s+think|i\s+guess))+(?=[.!]?$)", re.IGNORECASE)
_EMPHASIS_RE = lazy_pattern(r"\*\*|(?<!\w)__|__(?!\w)")  # "SLA_Priority__mdt" keeps its underscores
_SENTENCE_END_RE = lazy_pattern(r"(?<=[.!?])\s+(?=[A-Z`\"'(*\u201c])")
_CLAUSE_END_RE = lazy_pattern(r"[;,:\u2014]\s+")

MAX_MEMORY_CHARS = 360


def strip_stray_quotes(text: str) -> str:
    """`text` without a quote at either end that has no partner: a message wrapped in quotes loses both,
    a sentence that starts the message loses its opening one. Quotes around a phrase inside stay."""
    t = text.strip()
    if len(t) >= 2 and t[0] in _QUOTE_PAIRS and t[-1] == _QUOTE_PAIRS[t[0]] and t[0] not in t[1:-1].replace("'", ""):
        t = t[1:-1].strip()
    if t and t[0] in _OPENING and not _has_partner(t, 0):
        t = t[1:].lstrip()
    if t and t[-1] in _CLOSING and not _has_partner(t, len(t) - 1):
        t = t[:-1].rstrip()
    # "… then." + a stray closing quote before the full stop: `sqlite3 then".`
    if len(t) >= 2 and t[-1] in ".!" and t[-2] in _CLOSING and not _has_partner(t, len(t) - 2):
        t = t[:-2] + t[-1]
    return t


def unquote_message(text: str) -> str:
    """A whole message without the quotes a command line wrapped it in, its lines otherwise untouched
    (indentation marks code)."""
    start = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    if end - start < 2 or text[start] not in _QUOTE_PAIRS:
        return text
    if text[end - 1] == _QUOTE_PAIRS[text[start]] and text[start] not in text[start + 1 : end - 1].replace("'", ""):
        return text[:start] + text[start + 1 : end - 1] + text[end:]
    return text


def _has_partner(text: str, index: int) -> bool:
    ch = text[index]
    if ch in "'\u2019":
        # an apostrophe ("don't", "users'") is not a quote: only a quote that opens a word pairs
        if index == 0:
            ends = range(1, len(text))
            return any(text[i] == "'" and (i + 1 == len(text) or not text[i + 1].isalnum()) for i in ends)
        return any(text[i] in "'\u2018" and (i == 0 or not text[i - 1].isalnum()) for i in range(index))
    if ch == "\u2018":
        return "\u2019" in text[index + 1 :]
    if ch == "\u201c":
        return "\u201d" in text[index + 1 :]
    if ch == "\u201d":
        return "\u201c" in text[:index]
    return text.count('"') % 2 == 0  # a straight double quote pairs when the count is even


def tidy(sentence: str) -> str:
    """A statement as memory text: no stray quotes, no filler opening or ending, no emphasis, capitalised,
    ends with a full stop."""
    s = " ".join(_EMPHASIS_RE.sub("", sentence).split())
    while True:
        stripped = _FILLER_RE.sub("", strip_stray_quotes(s), count=1)
        if stripped == s:
            break
        s = stripped
    s = s.strip(" \u2013\u2014:")
    s = re.sub(r"^-+(?!\d)\s*", "", s).rstrip(" -")  # a dash before a number is its sign ("-99 means missing")
    s = _TRAILING_FILLER_RE.sub("", s).strip(" ,")
    if not s:
        return ""
    s = s[0].upper() + s[1:]
    if s[-1].isalnum() or s[-1] in "`)\"'":
        s += "."
    return s


def clip(text: str, limit: int = MAX_MEMORY_CHARS) -> str:
    """`text` cut to at most `limit` characters at a sentence end, else at a clause end, else a word end
    (with an ellipsis): a memory never stops mid-sentence without saying so."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    out = ""
    for sentence in _SENTENCE_END_RE.split(text):
        if len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    if out:
        return out
    head = text[: limit - 1]
    cut = max((m.start() for m in _CLAUSE_END_RE.finditer(head)), default=-1)
    if cut < limit // 2:
        cut = head.rfind(" ")
    return head[: max(cut, 1)].rstrip(" ,;:") + "\u2026"


_ASIDE_RE = lazy_pattern(r"\s*\((?P<x>[^()]{12,200})\)")
_TECHNICAL_RE = lazy_pattern(r"[`/_\\@=<>{}\[\]#$%]|\d|\b[a-z]+[A-Z]\w*|\.\w")
MIN_ASIDE_WORDS = 4
_ASIDE_PART_RE = lazy_pattern(r"\s+and\s+|;\s+|,\s+(?:and\s+|but\s+)?")
# a part that bounds something is substance even without a technical word: "(never on Fridays, …)"
_BOUND_WORD_RE = lazy_pattern(r"\b(?:not|never|no|only|always|must|cannot|can'?t|won'?t|don'?t|off[- ]limits)\b", re.I)


def without_asides(text: str) -> str:
    """A user's words without the chatty asides in parentheses ("(he builds go-karts, don't ask)"): an aside of a
    few words naming nothing technical (no code, path, number or identifier) is not what a memory keeps."""

    def keep(m: re.Match[str]) -> str:
        inner = m.group("x")
        if inner.startswith("chosen over "):
            return m.group(0)  # what a pick was chosen over is part of the decision, not an aside
        if len(inner.split()) < MIN_ASIDE_WORDS:
            return m.group(0)
        # "(it's 2 euros a month and our treasurer would faint if it went up)": in an aside that names something,
        # what comes after it is story unless it names or bounds something too; its first part is what the aside
        # is about ("(not MySQL, the client runs 14.2 there)"), so it stays
        parts = [p for p in _ASIDE_PART_RE.split(inner) if p.strip()]
        if not any(_TECHNICAL_RE.search(p) for p in parts):
            return ""
        kept = [p for i, p in enumerate(parts) if not i or _TECHNICAL_RE.search(p) or _BOUND_WORD_RE.search(p)]
        if len(kept) == len(parts):
            return m.group(0)
        return f" ({', '.join(kept)})" if kept else ""

    return _ASIDE_RE.sub(keep, text) if "(" in text else text
