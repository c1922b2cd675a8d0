"""The ambiguity rule: whether a vocabulary word found in text names the technology or is ordinary English.

Vocabulary matching is case-insensitive and respects token boundaries ("go" never matches inside "gopher",
"mongo" never inside "mongo_client", "react" never inside "src/react/app.py"). Surface forms that are also
ordinary English fall in one of four tiers, listed in `data/entity_words.txt`; every other surface form matches
in any case.

* strict (go, make, next, express, spring, click, rich, black, requests, node, cursor, windows, ...):
  common English words. Matched only
    - capitalised as a name ("Go", not "GO") and NOT at the start of a sentence, line or list item
      ("written in Go" yes; "Go ahead and merge" no, "Make sure ..." no), or
    - in a clear technical context, whatever the case (see `_strong_context`): in backticks or after a shell
      prompt (`make test`); after import/install commands (`pip install rich`, `from click import`); before
      a version ("go 1.22", "express@4") or a noun like library/formatter/compiler ("black formatter");
      as a module prefix (`click.echo`, `clap::Parser`); after a choice verb (use/prefer/replace/switch
      to/instead of: "httpx instead of requests"); next to another tech term in a list ("black and ruff");
      a language after in/using/into ("in go"); a tool after run/via ("run make").
  Never when immediately followed by "(" (a call: next(), make()), never as the head of a hyphenated word
  ("go-to", "Next-gen"). Manifests imply the word: go.mod/go.sum -> go, Cargo.toml/.lock -> rust, Makefile -> make.
* name_case (rust, react, swift, helm, poetry, yarn, cargo, slack, stripe, ...): rarer as English in a
  coding memory. Matched when capitalised anywhere (sentence starts included) or in a technical context.
* upper_only (rest, soap): only in capitals ("REST API" yes, "the rest of" no).
* single_letter (c): only "C" after in/using ("written in C"), before a noun like code/library/extension,
  or in "C/C++". Never on its own ("Plan C", "option C").
"""

from __future__ import annotations

import re

from codememory.text.entity_vocabulary import LazyPattern, Term, entity_words, vocabulary, words

__all__ = ["accepted"]

_SENTENCE_END = frozenset(".!?:•>#|")
_OPENERS = " \t\"'(“‘[*_"
# Words just before a term that make it technical, whatever its case (see _strong_context).
_CHOICE_WORDS = words(
    """use uses used using prefer prefers preferred replace replaces replaced replacing upgrade upgrades upgraded
    downgrade downgrades downgraded bump bumped pin pinned install installed uninstall uninstalled import"""
)
_CHOICE_PAIRS = frozenset(
    {("instead", "of"), ("rather", "than")}
    | {(verb, "to") for verb in words("switch switched switching migrate migrated migrating move moved moving")}
    | {(verb, "from") for verb in words("switch switched switching migrate migrated migrating move moved moving")}
)
_PACKAGE_MANAGERS = words("pip pip3 pipx uv poetry pdm npm pnpm yarn bun cargo gem go composer brew apt apt-get conda")
_INSTALL_VERBS = words("install add i get require")
LANGUAGE_PREPOSITIONS = words("in using into")
_COMMAND_WORDS = words("run runs ran running via invoke invoked")
_LIST_WORDS = words("and or vs vs. versus than not")
_NEIGHBOUR_PUNCTUATION = "()[]{},;:'\"`/"
_AFTER_IMPORT_RE = LazyPattern(r"\s+import\b")
_AFTER_VERSION_RE = LazyPattern(r"(?:\s*v?\d+\.\d+|@[\^~]?\d)")
_AFTER_MODULE_RE = LazyPattern(r"(?:\.|::)[A-Za-z_]")
_AFTER_NOUN_RE = LazyPattern(
    r"\s+(?:library|libraries|lib|package|packages|framework|crate|crates|formatter|linter|compiler|toolchain"
    r"|runtime|cli|sdk|bindings|plugin|plugins|target|targets|binary|binaries|language|lang|programming)\b",
    re.IGNORECASE,
)
# Strict words that are also adjectives ("the next library", "a rich framework") only take tool-ish nouns.
_AFTER_TOOL_NOUN_RE = LazyPattern(r"\s+(?:formatter|linter|cli|sdk|crate|bindings)\b", re.IGNORECASE)
_AFTER_NOUN_C_RE = LazyPattern(
    r"\s+(?:code|library|libraries|extension|extensions|header|headers|api|abi|compiler|bindings|program|programs"
    r"|source|toolchain)\b|/c\+\+",
    re.IGNORECASE,
)
# Lists of tech terms: "black and ruff", "ruff, black, isort", "flask vs express". A neighbour before the word
# counts only if the word also ends the list item, so "restart nginx and make sure" stays English.
_AFTER_LIST_RE = LazyPattern(r"\s*(?:,|/|\band\b|\bor\b|\bvs\.?|\bversus\b)\s*([\w.+#-]+)", re.IGNORECASE)
_ITEM_END_RE = LazyPattern(r"\s*(?:[,.;:!?)]|\band\b|\bor\b|$)", re.IGNORECASE)


def _sentence_initial(before: str) -> bool:
    """True when the text just before a word ends a sentence, a line, or is a list marker."""
    stripped = before.rstrip(_OPENERS)
    if not stripped or "\n" in before[len(stripped) :]:
        return True
    last = stripped[-1]
    if last in _SENTENCE_END or last == "\n":
        return True
    if last in "-*+" and (len(stripped) == 1 or stripped[-2].isspace()):
        return True
    word = stripped.rsplit(None, 1)[-1]
    return last == ")" and word[:-1].isdigit()  # "1) Go ..." numbered list item


def _safe_neighbour(word: str) -> bool:
    """A neighbouring word that is itself an unambiguous vocabulary term."""
    key = word.lower().rstrip(".-/")
    term = vocabulary().aliases.get(key)
    tiers = entity_words()
    return (
        term is not None and key not in tiers.strict and key not in tiers.upper_only and key not in tiers.single_letter
    )


def _strong_context(key: str, before: str, after: str, term: Term) -> bool:
    """Context that makes an ambiguous word technical whatever its case (see the module docstring)."""
    tail = before.rstrip(" \t")
    if tail.endswith("`") or (tail.endswith("$") and (len(tail) == 1 or tail[-2].isspace())):  # `make`, $ make
        return True
    if tail.endswith(("'", '"')):  # from 'express', require("express"), import 'react'
        head = tail[:-1].rstrip().lower()
        if head.endswith(("require(", " from", " import")) or head in ("from", "import"):
            return True
    if _AFTER_VERSION_RE.match(after) or _AFTER_MODULE_RE.match(after):
        return True
    if (_AFTER_TOOL_NOUN_RE if key in entity_words().adjectives else _AFTER_NOUN_RE).match(after):
        return True
    match = _AFTER_LIST_RE.match(after)
    if match and _safe_neighbour(match.group(1)):
        return True
    words = tail[-48:].lower().split()
    if not words:
        return False
    last = words[-1]
    if last in _CHOICE_WORDS or (len(words) > 1 and (words[-2], last) in _CHOICE_PAIRS):
        return True
    if last == "from" and _AFTER_IMPORT_RE.match(after):  # from click import echo
        return True
    if term.type == "language" and last in LANGUAGE_PREPOSITIONS:
        return True
    if term.type == "tool" and last in _COMMAND_WORDS:
        return True
    position = len(words) - 1
    while position > 0 and words[position].startswith("-"):  # pip install -U rich
        position -= 1
    if position > 0 and words[position] in _INSTALL_VERBS and words[position - 1] in _PACKAGE_MANAGERS:
        return True
    if last.endswith((",", "/")):
        neighbour = last
    elif last in _LIST_WORDS and len(words) > 1:
        neighbour = words[-2]
    else:
        return False
    return _safe_neighbour(neighbour.strip(_NEIGHBOUR_PUNCTUATION)) and bool(_ITEM_END_RE.match(after))


def accepted(key: str, term: Term, text: str, start: int, end: int) -> bool:
    """Whether the surface form `key` found at text[start:end] names `term` here (the ambiguity rule)."""
    tiers = entity_words()
    if key in tiers.upper_only:
        return text[start:end].isupper()
    strict = key in tiers.strict
    if not strict and key not in tiers.name_case and key not in tiers.single_letter:
        return True
    surface = text[start:end]
    before = text[max(0, start - 48) : start]
    after = text[end : end + 48]
    if after.startswith("("):  # next(), make(): a call, not the tool
        return False
    capitalised = surface[:1].isupper()
    if key in tiers.single_letter:
        words = before.split()
        language_before = bool(words) and words[-1].lower() in LANGUAGE_PREPOSITIONS  # "written in C"
        return surface.isupper() and (language_before or bool(_AFTER_NOUN_C_RE.match(after)))
    if _strong_context(key, before, after, term):
        return True
    if not capitalised:
        return False
    if not strict:
        return True
    if len(surface) > 1 and surface.isupper():  # "GO AHEAD" is shouting, not the language
        return False
    return not _sentence_initial(before)
