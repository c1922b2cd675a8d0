"""Grep-like query language compiled to a safe FTS5 expression.

Syntax: words are ANDed; `OR`, `AND`, `NOT` (upper case) are operators; `"exact phrase"`; `prefix*`;
parentheses group; `-word` (a hyphen at the start of a word: at the start of the query, after a space or
an opening parenthesis) leaves out every memory containing the word, whatever found it. Hyphenated words
(`e-mail`, `x-forwarded-for`), a lone `-`, a one-character option (`-k`) and anything starting `--` or
`-<digit>` (`--force`, `-1`) stay literal. Everything else is literal text: every term reaches FTS5 as a
quoted string, so `C++`, `a:b`, `@user`, `#tag`, `a=b` and `src/auth/oauth.py` are searched, never parsed as
syntax. Input that does not form a valid expression (a stray quote, unbalanced parentheses, a dangling
operator) is searched as plain words instead of raising; its exclusions still apply.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from codememory.core.lazy_pattern import lazy_pattern

MAX_TERMS = 64
# The most words one query's phrases hold in all (a "quoted phrase", or a chunk such as `a.b.c` that the index splits
# into several words). FTS5 holds the whole list of positions of every word of a phrase while it matches, once per
# word: a phrase of 2,000 words against memories repeating one of them took hundreds of MB. Past the budget, a phrase
# keeps its first words (so it may match a little more than asked); each later one keeps its first word.
PHRASE_WORDS = 32
# Function words that carry no topic: dropped from the keyword half of hybrid ranking and from the
# any-word fallback of keyword search (measured on LoCoMo: this list reproduces the reference BM25
# figures; NLTK's longer list scored lower). Lower-case "not" and the pieces of "don't", "isn't", ...
# are words here, never operators: as keywords they would rank "we do not use Redux" first for
# "why not requests?".
STOPWORDS = frozenset(
    """a an the and or of to in on at for with is are was were be been do does did what when where who whom
    which why how that this these those it its i you he she they we my your his her their our me him them
    us as by from about into not t don doesn didn isn aren wasn weren""".split()
)
_MONTHS = {
    name: i
    for i, name in enumerate(
        "January February March April May June July August September October November December".split(), start=1
    )
}
_MONTH_RE = lazy_pattern(r"\b(" + "|".join(_MONTHS) + r")\b")
_YEAR_RE = lazy_pattern(r"\b(19\d\d|20\d\d)\b")
MAX_DEPTH = 16
_OPERATORS = {"AND", "OR", "NOT"}
_CONTROL_RE = lazy_pattern(r"[\x00-\x08\x0b-\x1f\x7f]")
_WORD_RE = lazy_pattern(r"\w+")
_FTS_TOKEN_RE = lazy_pattern(r"[^\W_]+")  # what FTS5's unicode61 tokenizer counts as a word: letters and digits


@dataclass(frozen=True)
class Term:
    text: str
    phrase: bool = False
    prefix: bool = False

    def fts(self) -> str:
        body = '"' + self.text.replace('"', '""') + '"'
        return body + "*" if self.prefix else body

    def indexable(self) -> bool:
        """FTS5 finds nothing for a string without word characters; such terms are dropped."""
        return bool(_WORD_RE.search(self.text))


@dataclass
class Node:
    op: str  # "AND" | "OR" | "NOT" (binary: left NOT right) | "TERM"
    children: list[Node] = field(default_factory=list)
    term: Term | None = None


@dataclass
class ParsedQuery:
    raw: str
    fts: str | None  # None: nothing searchable by the keyword index
    terms: list[Term]  # positive terms (not under NOT), for fuzzy matching and highlighting
    literal: bool  # True when the input was not a valid expression and was read as plain words
    node: Node | None = None  # the expression tree (None for an empty query)
    explicit: bool = False  # uses syntax (OR, AND, NOT, "phrase", prefix*, parentheses): match strictly
    negated: bool = False  # excludes something with the NOT operator (strict boolean logic)
    # `-word` exclusions: whatever else finds a memory (keywords, meaning, typos), one holding any of these is
    # left out. They are part of `fts` already; `excluded_fts` is them ORed, to filter other candidates.
    excluded: list[Term] = field(default_factory=list)

    def excluded_fts(self) -> str | None:
        parts = list(dict.fromkeys(t.fts() for t in self.excluded if t.indexable()))
        return " OR ".join(parts) if parts else None

    def _excluding(self, positive: str | None) -> str | None:
        """`positive` (an FTS5 expression) without the memories holding an excluded term."""
        excluded = self.excluded_fts()
        if positive is None or excluded is None:
            return positive
        return f"({positive}) NOT ({excluded})"

    def any_term_fts(self) -> str | None:
        """The positive terms ORed: a natural-language query's lexical candidates for hybrid ranking."""
        parts = list(dict.fromkeys(t.fts() for t in self.terms if t.indexable()))
        return self._excluding(" OR ".join(parts) if parts else None)

    def keyword_fts(self) -> str | None:
        """The query's content words ORed (stopwords dropped, unless that leaves nothing)."""
        kept = self.content_words()
        if not kept:
            return self.any_term_fts()
        return self._excluding(" OR ".join('"' + w + '"' for w in kept))

    def content_words(self) -> list[str]:
        """The words of the positive terms that carry a topic (no stopwords, no question words), once each."""
        return list(dict.fromkeys(w for t in self.terms for w in words(t.text) if w not in STOPWORDS))

    def relaxed(self) -> ParsedQuery | None:
        """The keyword-only fallback for a plain-words query of several words: its content words ORed,
        so that a question ("why did we choose httpx?") finds the memories holding some of them. None for
        explicit syntax (it keeps its strict meaning), a single term, or nothing but stopwords."""
        kept = self.content_words() if not self.explicit and len(self.terms) > 1 else []
        if not kept:
            return None
        terms = [Term(w) for w in kept]
        node = Node("OR", [Node("TERM", term=t) for t in terms]) if len(terms) > 1 else Node("TERM", term=terms[0])
        node = _with_exclusions(node, self.excluded)
        return ParsedQuery(
            raw=self.raw,
            fts=compile_node(node),
            terms=terms,
            literal=self.literal,
            node=node,
            excluded=self.excluded,
        )

    def month(self) -> tuple[int | None, int | None]:
        """(month, year) named in the query ("in March 2026", "last May"); capitalised month names only,
        since "may" and "march" are also verbs."""
        m = _MONTH_RE.search(self.raw)
        y = _YEAR_RE.search(self.raw)
        return (_MONTHS[m.group(1)] if m else None, int(y.group(1)) if y and m else None)


def clean(query: str) -> str:
    return _CONTROL_RE.sub(" ", query)


def _lex(query: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            tokens.append((ch, ch))
            i += 1
        elif ch == "-" and _exclusion_at(query, i):
            if query[i + 1] == '"':
                end = query.find('"', i + 2)
                if end == -1:  # `-"` with no closing quote: the hyphen is literal, the quote stray
                    i += 2
                    continue
                prefix = end + 1 < n and query[end + 1] == "*"
                tokens.append(("EXCLUDE_PHRASE*" if prefix else "EXCLUDE_PHRASE", query[i + 2 : end]))
                i = end + (2 if prefix else 1)
            else:
                j = i + 1
                while j < n and not query[j].isspace() and query[j] not in '()"':
                    j += 1
                tokens.append(("EXCLUDE", query[i + 1 : j]))
                i = j
        elif ch == '"':
            end = query.find('"', i + 1)
            if end == -1:  # stray quote: literal, the rest is words
                i += 1
                continue
            prefix = end + 1 < n and query[end + 1] == "*"
            tokens.append(("PHRASE*" if prefix else "PHRASE", query[i + 1 : end]))
            i = end + (2 if prefix else 1)
        else:
            j = i
            while j < n and not query[j].isspace() and query[j] not in '()"':
                j += 1
            word = query[i:j]
            i = j
            if word in _OPERATORS:
                tokens.append((word, word))
            else:
                tokens.append(("WORD", word))
    return tokens


def _exclusion_at(query: str, i: int) -> bool:
    """Whether the hyphen at `i` starts a `-word` exclusion: at a word's start (the query's start, after a space
    or an opening parenthesis), followed by a quote or by a word of two characters or more that starts with a
    letter or `_`. So `e-mail` is a word, a lone `-` is literal, and so are `-k`, `--force` and `-1`."""
    if i > 0 and not (query[i - 1].isspace() or query[i - 1] == "("):
        return False
    rest = query[i + 1 : i + 3]
    if rest[:1] == '"':
        return True
    return len(rest) == 2 and (rest[0].isalpha() or rest[0] == "_") and not rest[1].isspace() and rest[1] not in '()"'


def is_exclusion(word: str) -> bool:
    """Whether a whole command-line argument is a `-word` exclusion (a shell passes `payment -sandbox` as two)."""
    if word[:1] != "-" or not _exclusion_at(word, 0):
        return False
    return word[1] == '"' or not any(ch.isspace() for ch in word)  # `-"a phrase"` holds a space


class _Syntax(Exception):
    """Control flow inside this module (the query is then read literally); never reaches a caller."""


class _PhraseBudget:
    """PHRASE_WORDS spent over the terms of one query, in order."""

    def __init__(self, left: int = PHRASE_WORDS) -> None:
        self.left = left

    def clip(self, text: str) -> str:
        ends = [m.end() for m in _FTS_TOKEN_RE.finditer(text)]
        if len(ends) <= 1:
            return text
        keep = max(1, min(len(ends), self.left))
        self.left -= keep
        return text if keep == len(ends) else text[: ends[keep - 1]]


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], budget: _PhraseBudget) -> None:
        self.tokens = tokens
        self.pos = 0
        self.depth = 0
        self.term_count = 0
        self.budget = budget

    def peek(self) -> str | None:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def parse(self) -> Node:
        node = self.or_expr()
        if self.pos != len(self.tokens):
            raise _Syntax("trailing tokens")
        return node

    def or_expr(self) -> Node:
        parts = [self.and_expr()]
        while self.peek() == "OR":
            self.take()
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else Node("OR", parts)

    def and_expr(self) -> Node:
        parts = [self.not_expr()]
        while self.peek() in ("AND", "WORD", "PHRASE", "PHRASE*", "("):
            if self.peek() == "AND":
                self.take()
            parts.append(self.not_expr())
        return parts[0] if len(parts) == 1 else Node("AND", parts)

    def not_expr(self) -> Node:
        node = self.primary()
        while self.peek() == "NOT":
            self.take()
            node = Node("NOT", [node, self.primary()])
        return node

    def primary(self) -> Node:
        kind = self.peek()
        if kind == "(":
            self.take()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _Syntax("too deep")
            node = self.or_expr()
            if self.peek() != ")":
                raise _Syntax("unclosed parenthesis")
            self.take()
            self.depth -= 1
            return node
        if kind in ("WORD", "PHRASE", "PHRASE*"):
            _, text = self.take()
            self.term_count += 1
            if self.term_count > MAX_TERMS:
                raise _Syntax("too many terms")
            return Node("TERM", term=_make_term(kind, text, self.budget))
        raise _Syntax(f"unexpected {kind}")


def _make_term(kind: str, text: str, budget: _PhraseBudget) -> Term:
    text = budget.clip(text)
    if kind.startswith("EXCLUDE"):
        kind = "WORD" if kind == "EXCLUDE" else kind.replace("EXCLUDE_", "")
    if kind == "WORD":
        if len(text) > 1 and text.endswith("*") and _WORD_RE.search(text[:-1].rstrip("*")):
            return Term(text.rstrip("*"), prefix=True)
        return Term(text)
    return Term(text, phrase=True, prefix=kind == "PHRASE*")


TermRenderer = Callable[[Term, bool], "str | None"]


def _render_exact(term: Term, _negated: bool) -> str | None:
    return term.fts() if term.indexable() else None


def compile_node(node: Node, render: TermRenderer = _render_exact, negated: bool = False) -> str | None:
    """FTS5 text for a node, or None when nothing in it is searchable. `render` turns each term into
    FTS5 text (it is told whether the term sits on the excluded side of a NOT)."""
    if node.op == "TERM":
        assert node.term is not None
        return render(node.term, negated)
    if node.op == "NOT":
        left = compile_node(node.children[0], render, negated)
        right = compile_node(node.children[1], render, not negated)
        if left is None:
            return None
        return f"({left} NOT {right})" if right else left
    parts = [p for p in (compile_node(c, render, negated) for c in node.children) if p]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(" + f" {node.op} ".join(parts) + ")"


def _positive_terms(node: Node) -> list[Term]:
    if node.op == "TERM":
        assert node.term is not None
        return [node.term]
    if node.op == "NOT":
        return _positive_terms(node.children[0])
    return [t for c in node.children for t in _positive_terms(c)]


def all_terms(node: Node) -> list[Term]:
    """Every term of the expression, excluded ones included."""
    if node.op == "TERM":
        assert node.term is not None
        return [node.term]
    return [t for c in node.children for t in all_terms(c)]


def _literal(tokens: list[tuple[str, str]], budget: _PhraseBudget) -> Node:
    """Plain-words reading: every word, operator and phrase word is a term (parentheses dropped)."""
    chunks = [w for kind, text in tokens if kind != "(" and kind != ")" for w in text.split()]
    return Node("AND", [Node("TERM", term=_make_term("WORD", w, budget)) for w in chunks[:MAX_TERMS]])


def _with_exclusions(node: Node, excluded: list[Term]) -> Node:
    if not excluded:
        return node
    terms = [Node("TERM", term=t) for t in excluded]
    return Node("NOT", [node, terms[0] if len(terms) == 1 else Node("OR", terms)])


def parse_query(query: str) -> ParsedQuery:
    text = clean(query)
    tokens = _lex(text)
    # `-word` exclusions apply to the whole query, wherever they stand: they are taken out before parsing.
    # They spend the phrase budget first; the rest is the positive part's, parsed or (failing that) read literally.
    budget = _PhraseBudget()
    excluded = list(
        dict.fromkeys(_make_term(kind, t, budget) for kind, t in tokens if kind.startswith("EXCLUDE") and t.strip())
    )[:MAX_TERMS]
    tokens = [tok for tok in tokens if not tok[0].startswith("EXCLUDE")]
    literal = False
    if not tokens:
        return ParsedQuery(raw=query, fts=None, terms=[], literal=False, excluded=excluded)
    try:
        node = _Parser(tokens, _PhraseBudget(budget.left)).parse()
    except _Syntax:
        node = _literal(tokens, _PhraseBudget(budget.left))
        literal = True
    terms = [t for t in _positive_terms(node) if t.text.strip()]
    explicit = not literal and any(kind != "WORD" or (len(text) > 1 and text.endswith("*")) for kind, text in tokens)
    negated = _has_not(node)
    node = _with_exclusions(node, excluded)
    return ParsedQuery(
        raw=query,
        fts=compile_node(node),
        terms=terms,
        literal=literal,
        node=node,
        explicit=explicit,
        negated=negated,
        excluded=excluded,
    )


def _has_not(node: Node) -> bool:
    return node.op == "NOT" or any(_has_not(c) for c in node.children)


def fold(text: str) -> str:
    """Lower-case and strip diacritics, as the index's tokenizer does."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    return _WORD_RE.findall(fold(text))
