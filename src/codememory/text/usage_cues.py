"""What in a memory's text shows whether an agent used it or went against it: its distinctive terms, and what it
forbids. Pure text rules, no model; codememory.capture.usage applies them to what a session did next.

**Terms** (evidence of use): the paths, code names, commands, versions and values a memory states, the kind of
thing an agent copies into a tool call when it acts on the memory: the memory's file, identifier and error entities
(text/entities.py; a dotted name also by its last part: `Image.MAX_IMAGE_PIXELS` gives `MAX_IMAGE_PIXELS`), its
`code spans`, specific numbers (`4326`, `250_000_000`; not a year, a power of two or a round number), versions
(`2.3.0`), settings (`leeway=60`), switches (`concurrently: true`, `deprecated: true`), attributes
(`@disable_ddl_transaction`), calls with literal arguments (`problem(422)`) and coded words (`utf-8-sig`,
`problem+json`). A term must look like code (a separator, a digit, a hump, an error name): a plain word such as
`Query` is everywhere. Matching ignores case and wants the term whole: `4326` is not in `43260`, `app/jobs.py` is
in `/home/me/app/jobs.py`.

**Commit forms**: a memory about commits that gives the form of a commit subject by example (`fix(cache): ...`,
"with the area as prefix (api:, jobs:)") gives each example's form as a term of kind `commit`: a `git commit` whose
message starts the same way (the same type with a scope, `fix(hash): …`; the same plain prefix, `auth: …`) follows
it. An example is told from prose by what follows its colon (`...`, `,`, `)`, `;` or the end of a code span), not
a word: "Commit messages: an imperative subject" gives none. The message is read as `-m msg`, `-am msg`, `-mmsg`,
`--message=msg`, or the body of the heredoc in `-m "$(cat <<'EOF' ... EOF)"` (the form Claude Code writes); the
rest of a commit command, without its message, is where the memory's other terms count.

**Phrases**: an edit that adds a run of PHRASE_WORDS of the memory's own words (at least MIN_PHRASE_CONTENT of
them not function words) that neither the query it was shown for nor the text the edit replaces holds copies the
memory into the code or its docs: `logical CPUs minus one, at most 8` in a help text.

**Prohibitions** (evidence of contradiction), a small rule set over the memory's clauses (split at `.`, `;`, `:`,
a dash, and before ", use"):

| phrasing | what is forbidden |
|---|---|
| never, don't, do not, must not, should not, avoid, rejected, "instead of", "rather than", ", not" | what follows |
| "is not allowed", "is not accepted", "is forbidden", "fails review" (and plurals) | what comes before |
| "no" opening a clause ("No `pip install` in CI") | what follows |

The forbidden thing is each `code span` of that part of the clause, else each code-like word in it; after "run",
"call", "execute" or "invoke" also a plain word (`never run pytest bare`). An "always"/"use" sentence forbids only
the alternative it names with "instead of", "rather than" or ", not". What a prohibition forbids is a **command**
(after run/call/execute/invoke, or a code span whose first word is a lower-case program name followed by more
words: `pip install`), a **path** (after edit, modify, change, touch, write or delete), or **code** (the rest). A
command is contradicted by a shell command that runs it (its program, also through `uv run`, `python -m`, `npx`,
…, followed by the forbidden words: `pytest -q` runs `pytest`); a path by an edit of that file; code by an edit
whose added text holds it, or by a package install naming it (`pip install python-jose` for "Rejected
python-jose").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from codememory.core.lazy_pattern import lazy_pattern
from codememory.text.own_words import accounts_of_work
from codememory.text.shell_lines import SEGMENT_RE, installs, program_words, runs, shell_words

MIN_TERM_CHARS = 4
MAX_TERMS = 24
MAX_COMMIT_FORMS = 6
PHRASE_WORDS = 6  # a run of the memory's words this long, copied into what an edit adds, is a use
MIN_PHRASE_CONTENT = 3  # of them not function words ("is the number of the" is anyone's)
MAX_PHRASE_CHARS = 1000  # of a memory's text kept as its phrase cue
MAX_CUE_TERMS = MAX_TERMS + MAX_COMMIT_FORMS + 1  # a memory's terms, its commit forms and its phrase
PLACE = "place"  # a file many memories name: kept with a memory's terms, never evidence on its own
_PHRASE_WORD_RE = lazy_pattern(r"[a-z0-9]+(?:[._'-][a-z0-9]+)*")
_FUNCTION_WORDS = frozenset(
    "a an the of to in on at is are was be by for with and or as it its this that from not no so if then than".split()
)

# A commit subject's form given by example: a lower-case type, an optional (scope), then a colon that ends the
# example (what follows is `...`, a list's comma, a closing bracket or backtick), not a colon opening prose.
_COMMIT_FORM_RE = lazy_pattern(r"(?<![\w./-])([a-z][a-z0-9-]{1,20})(\([\w./-]{1,30}\))?!?:(?=[,;)`]|\s*(?:\.\.\.|…))")
_COMMIT_WORD_RE = lazy_pattern(r"\bcommit", re.IGNORECASE)
_SUBJECT_FORM_RE = lazy_pattern(r"([a-z][a-z0-9-]{1,20})(\([^()\s]{1,40}\))?!?:\s")

_BACKTICK_RE = lazy_pattern(r"`([^`\n]{1,120})`")
# The shapes a memory's text shows on its own, in one pass (the first alternative that matches at a place wins, so
# `leeway=60` is a setting, not a number): a setting, a switch (`concurrently: true`, `deprecated: true`: an option
# turned on or off as YAML, Elixir, Ruby or JavaScript write it), an attribute (`@disable_ddl_transaction`), a call
# with literal arguments, a coded word, a number.
_SHAPES_RE = lazy_pattern(
    r"(?P<setting>(?<![\w.])[A-Za-z_][\w.]*=(?:\d+|[\w.-]{2,}))"
    r"|(?P<switch>(?<![\w.])[a-z_]\w*: ?(?:true|false)(?!\w))"
    r"|(?P<attribute>(?<![\w@])@[A-Za-z_]\w*)"
    r"|(?P<call>(?<![\w.])[A-Za-z_][\w.]*\([\w.,'\"=-]{1,30}\))"
    r"|(?P<word>(?<![\w./-])[A-Za-z]\w*(?:[-+]\w+)+)"
    r"|(?P<number>(?<![\w.])\d(?:[\d_]*\d)?(?:\.\d+)*(?!\w))"
)
_HUMP_RE = lazy_pattern(r"[a-z0-9][A-Z]")
_PASCAL_PART_RE = lazy_pattern(r"[A-Z][a-z]+")
_YEAR_RE = lazy_pattern(r"(?:19|20)\d\d")
_WORD_RE = lazy_pattern(r"\w")

# Clauses: split at sentence ends, semicolons, colons, dashes and before ", use"/", prefer" (code spans protected).
_CLAUSE_RE = lazy_pattern(r"(?<=[.!?;:])\s+|\s+[—–]\s+|\s+-\s+|\n+|,\s+(?=(?:use|prefer|instead|but)\b)", re.IGNORECASE)
_PRE_CUES = lazy_pattern(
    r"\b(?:never|don't|do not|doesn't|does not|must not|mustn't|should not|shouldn't|avoid(?:s|ing)?|rejected"
    r"|instead of|rather than)\b|,\s*not\b",
    re.IGNORECASE,
)
_POST_CUES = lazy_pattern(
    r"\b(?:is|are) (?:not allowed|not accepted|forbidden|banned)\b|\bfails? review\b", re.IGNORECASE
)
_NO_CUE = lazy_pattern(r"^\s*no\s+", re.IGNORECASE)
_RUN_VERB_RE = lazy_pattern(r"\b(?:run|runs|running|call|calls|execute|invoke)\s+(`[^`]+`|[A-Za-z][\w./-]*)")
_RUN_BEFORE_RE = lazy_pattern(r"\b(?:run|runs|running|call|calls|execute|invoke)\s+$")
_PATH_VERB_RE = lazy_pattern(r"\b(?:edit|modify|change|touch|write|delete|commit)\b", re.IGNORECASE)
_STOP_AFTER = lazy_pattern(r"\b(?:use|uses|prefer|but|so|because)\b", re.IGNORECASE)
_PLACEHOLDER = "\x00{}\x00"
_PLACEHOLDER_RE = lazy_pattern(r"\x00(\d+)\x00")


@dataclass(frozen=True)
class Term:
    text: str
    kind: str  # path, symbol, error, span, number, setting, word


@dataclass(frozen=True)
class Prohibition:
    thing: str  # what the memory forbids, as written
    kind: str  # command, path, package or code
    clause: str  # the clause that forbids it (shown as evidence)


@dataclass(frozen=True)
class Action:
    """What one tool call did, as the rules read it: `shell` commands run, `paths` a read or an edit named, `added`
    the text an edit or a write added, `text` everything else it said (its other arguments)."""

    tool: str
    shell: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    edited: tuple[str, ...] = ()  # the paths of those it wrote
    added: str = ""
    text: str = ""
    replaced: str = ""  # the text an edit replaced: a name it held already is not what the edit adds
    removed: str = ""  # the lines of `replaced` the edit does not write again (what it takes out)
    look: bool = False  # it only looked (a read, a listing, a search, a read-only command): shell_lines.looks_only

    def haystack(self) -> str:
        """Where a term counts as used: the commands, the paths, the added text and the other arguments."""
        return "\n".join([*self.shell, *self.paths, self.added, self.text])


# --------------------------------------------------------------------------------------------- terms
def code_like(term: str) -> bool:
    """A term that looks like code rather than a word: a separator, a digit, a hump, an error name, or a hyphen
    (`allkeys-lru`, `python-jose`; prose compounds such as `per-user` pass too: see `distinctive`)."""
    if len(term) < MIN_TERM_CHARS and not any(ch.isdigit() for ch in term):
        return False
    if any(ch in term for ch in "_./=+()#:[") or any(ch.isdigit() for ch in term):
        return True
    if "-" in term.strip("-") or " " in term.strip():
        return True
    return bool(_HUMP_RE.search(term)) or term.endswith(("Error", "Exception", "Warning"))


def distinctive(term: Term) -> bool:
    """Whether a term is specific enough that finding it in a tool call says the memory was acted on: code-like,
    and not a hyphenated word without a digit (`key-value`), a product name with one hump (`PostGIS`, `GeoJSON`), or
    a plain number under four digits (HTTP statuses and small limits are everywhere), a year, a power of two or a
    multiple of a hundred: a number counts when it is specific (`4326`) or written as code (`250_000_000`, `2.3.0`)."""
    text = term.text
    if term.kind in ("commit", "phrase"):
        return True
    if term.kind == "number":
        return "_" in text or text.count(".") >= 2 or (text.isdigit() and len(text) >= 4 and not _common(int(text)))
    if term.kind == "path":
        return len(text) >= 3
    if term.kind == "span":
        return code_like(text)
    if not code_like(text):
        return False
    if term.kind == "word" and not any(ch.isdigit() or ch == "+" for ch in text) and text.count("-") < 2:
        return False
    plain = text.replace("2", "").isalpha() if text[:1].isupper() else False
    return not (plain and term.kind == "symbol" and len(_PASCAL_PART_RE.findall(text)) < 2)


def _common(number: int) -> bool:
    """A number code is full of whatever it is about: a year, a power of two (`1024`), a round one (`5000`)."""
    return bool(_YEAR_RE.fullmatch(str(number))) or number & (number - 1) == 0 or number % 100 == 0


def commit_forms(text: str) -> list[Term]:
    """The commit subject forms a memory about commits gives by example (see the module docstring): `fix(scope):`
    for `fix(cache): ...`, `auth:` for `auth:`."""
    if not _COMMIT_WORD_RE.search(text):
        return []
    forms = [f"{m.group(1)}{'(scope)' if m.group(2) else ''}:" for m in _COMMIT_FORM_RE.finditer(text)]
    return [Term(form, "commit") for form in dict.fromkeys(forms)][:MAX_COMMIT_FORMS]


def commit_messages(action: Action) -> list[str]:
    """The messages of the `git commit -m` commands an action's shell commands run."""
    return [message for command in action.shell for message in _commit_parts(command)[1] if message.strip()]


def said_without_commit_messages(action: Action) -> str:
    """What an action said (its haystack) with its commit messages taken out, and the text it adds to a changelog:
    a message or an entry is the agent's account of its work, not an act on a memory. Only the message arguments
    and the added text go; the rest of the command and the edited file's path stay."""
    shell = [(parts[0] if parts[1] else command) for command in action.shell for parts in [_commit_parts(command)]]
    added = "" if accounts_of_work(action.edited) else action.added
    return "\n".join([*shell, *action.paths, added, action.text])


# A message given as `-m "$(cat <<'EOF' ... EOF)"` (the form Claude Code writes): the heredoc's body is the message.
_HEREDOC_MESSAGE_RE = lazy_pattern(
    r"""(?P<flag>(?<!\S)(?:-[a-zA-Z]*m|--message=?))[ \t]*(?P<q>["']?)\$\([ \t]*cat[ \t]*<<-?[ \t]*(?P<d>['"]?)"""
    r"""(?P<tag>\w+)(?P=d)[^\n]*\n(?P<body>.*?)\n[ \t]*(?P=tag)[ \t]*\n\s*\)(?P=q)""",
    re.DOTALL,
)
_HELD = "\x00{}\x00"
_HELD_RE = lazy_pattern(r"\x00(\d+)\x00")
_MESSAGE_FLAG_RE = lazy_pattern(r"-[a-zA-Z]*m|--message")  # `-m`, `-am`, `-sam`
_ATTACHED_MESSAGE_RE = lazy_pattern(r"-[a-zA-Z]*?m(.+)|--message=(.*)", re.DOTALL)  # `-m"msg"`, `--message=msg`


@functools.lru_cache(maxsize=256)
def _commit_parts(command: str) -> tuple[str, tuple[str, ...]]:
    """A shell line split into its words without the `git commit` messages (joined, one command a line) and those
    messages, or the line as it is and no messages when it commits nothing."""
    bodies: list[str] = []

    def hold(m: re.Match[str]) -> str:
        bodies.append(m.group("body"))
        return f"{m.group('flag').rstrip('=')} {_HELD.format(len(bodies) - 1)}"

    def restore(word: str) -> str:
        return _HELD_RE.sub(lambda m: bodies[int(m.group(1))], word)

    flat = _HEREDOC_MESSAGE_RE.sub(hold, command)
    kept: list[str] = []
    messages: list[str] = []
    for segment in SEGMENT_RE.split(flat):
        tokens = shell_words(segment.strip())
        words = program_words(tokens)
        lead = len(tokens) - len(words)
        if len(words) < 3 or words[0] != "git" or "commit" not in words[1:4]:  # also `git -C dir commit`
            kept.append(" ".join(restore(t) for t in tokens))
            continue
        skip: set[int] = set()
        for i, word in enumerate(words):
            if i in skip:
                continue
            if _MESSAGE_FLAG_RE.fullmatch(word) and i + 1 < len(words):
                messages.append(restore(words[i + 1]))
                skip.add(i + 1)
            elif m := _ATTACHED_MESSAGE_RE.fullmatch(word):
                messages.append(restore(m.group(1) if m.group(1) is not None else m.group(2)))
                skip.add(i)
        kept.append(" ".join(restore(t) for j, t in enumerate(tokens) if j - lead not in skip))
    if not messages:
        return command, ()
    return "\n".join(kept), tuple(messages)


def commit_subjects(action: Action) -> list[str]:
    """The subjects (first lines) of the `git commit -m` messages an action gives."""
    return [message.strip().splitlines()[0] for message in commit_messages(action)]


def follows_commit_form(form: str, action: Action) -> str | None:
    """The subject of a commit in the action written in this form (a term of kind `commit`), or None."""
    want_type, _, rest = form.partition("(")
    scoped = bool(rest)
    want_type = want_type.rstrip(":")
    for subject in commit_subjects(action):
        m = _SUBJECT_FORM_RE.match(subject + " ")
        if m and m.group(1) == want_type and bool(m.group(2)) == scoped:
            return subject[:200]
    return None


def _grams(words: Sequence[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + PHRASE_WORDS]) for i in range(len(words) - PHRASE_WORDS + 1)}


@functools.lru_cache(maxsize=4096)
def _phrase_words(memory: str) -> tuple[str, ...]:
    return tuple(_PHRASE_WORD_RE.findall(memory.lower()))


@functools.lru_cache(maxsize=64)
def _added_words(added: str) -> frozenset[str]:
    return frozenset(_PHRASE_WORD_RE.findall(added.lower())) if len(added) >= 20 else frozenset()


@functools.lru_cache(maxsize=64)
def _added_grams(added: str) -> frozenset[tuple[str, ...]]:
    return frozenset(_grams(_PHRASE_WORD_RE.findall(added.lower())))


def phrase_text(text: str) -> str:
    """A text as its words, one blank apart: what a run of a memory's words is looked for in (`copied_phrase`)."""
    return " ".join(_PHRASE_WORD_RE.findall(text.lower()))


def copied_phrase(
    memory: str, added: str, known: Sequence[str], held_elsewhere: Callable[[str], bool] | None = None
) -> str | None:
    """A run of the memory's words (see the module docstring) that `added` holds and none of `known` does, or None.
    Cheap for the usual edit, which copies nothing: a memory sharing fewer than four distinct words with it is passed
    over before any run is built, the edit's runs are built once however many memories are checked against
    it, and `known` (a whole file as read, perhaps) is read only for a run the edit copied. `held_elsewhere`: whether
    a run is in texts the caller keeps as `phrase_text` itself (so that each is read once, not once per edit)."""
    words = _phrase_words(memory)
    shared = _added_words(added).intersection(words)
    if len(shared) < PHRASE_WORDS - 2:  # a run that counts has at least four distinct words, but for oddities
        return None
    grams = {g for g in _grams(words) if sum(w not in _FUNCTION_WORDS for w in g) >= MIN_PHRASE_CONTENT}
    copied = grams & _added_grams(added)
    if not copied:
        return None
    held = [phrase_text(text) for text in known if text]
    for run in sorted(" ".join(g) for g in copied):
        if not any(_bounded(text, run) for text in held) and not (held_elsewhere and held_elsewhere(run)):
            return run
    return None


def memory_terms(text: str, entities: Iterable[tuple[str, str]] = ()) -> list[Term]:
    """The distinctive terms a memory states (see the module docstring): its entities of type file, identifier and
    error (as `text.entities` stored them), then what the text shows on its own, at most MAX_TERMS, unique by case;
    then its commit forms and its phrase (its text as shown), which never take the place of one of those."""
    found: list[Term] = []
    for name, kind in entities:
        if kind == "file":
            found.append(Term(name, "path"))
        elif kind in ("identifier", "error"):
            found.append(Term(name, "symbol" if kind == "identifier" else "error"))
            if "." in name.strip(".") and "/" not in name:
                found.append(Term(name.rsplit(".", 1)[-1].rstrip("()"), "symbol"))
    for m in _BACKTICK_RE.finditer(text):
        found.append(Term(m.group(1).strip(), "span"))
    for m in _SHAPES_RE.finditer(text):
        kind = m.lastgroup or "word"
        kind = {"call": "setting", "switch": "setting", "attribute": "symbol"}.get(kind, kind)
        found.append(Term(m.group(0).rstrip("."), kind))
    forms = commit_forms(text)
    out: dict[str, Term] = {form.text.lower(): form for form in forms}  # `fix:` is a commit form, not a span too
    for term in found:
        key = term.text.lower()
        if key not in out and distinctive(term):
            out[key] = term
    return [*list(out.values())[len(forms) :][:MAX_TERMS], *forms, Term(text[:MAX_PHRASE_CHARS], "phrase")]


def _bounded(haystack: str, needle: str) -> bool:
    """`needle` in `haystack` (both lower-cased) as a whole: not inside a longer word or number on a side where the
    needle itself starts or ends with a word character."""
    start = 0
    while True:
        at = haystack.find(needle, start)
        if at < 0:
            return False
        end = at + len(needle)
        left_ok = at == 0 or not (_WORD_RE.match(needle[0]) and _WORD_RE.match(haystack[at - 1]))
        right_ok = end == len(haystack) or not (_WORD_RE.match(needle[-1]) and _WORD_RE.match(haystack[end]))
        if left_ok and right_ok:
            return True
        start = at + 1


def term_in(term: str, haystack: str, *, lowered: bool = False) -> bool:
    """Whether `term` occurs whole in a text, case ignored (`lowered`: the text is lower-cased already)."""
    return bool(term) and _bounded(haystack if lowered else haystack.lower(), term.lower())


def new_terms(terms: Sequence[Term], context: str) -> list[Term]:
    """The terms not already in `context` (the query a memory was shown for: its words were the agent's already)."""
    low = context.lower()
    return [t for t in terms if not term_in(t.text, low, lowered=True)]


# -------------------------------------------------------------------------------------- prohibitions
def _clauses(text: str) -> list[str]:
    spans: list[str] = []

    def protect(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return _PLACEHOLDER.format(len(spans) - 1)

    def restore(part: str) -> str:
        return _PLACEHOLDER_RE.sub(lambda m: spans[int(m.group(1))], part)

    masked = _BACKTICK_RE.sub(protect, text)
    return [restore(part).strip() for part in _CLAUSE_RE.split(masked) if part and part.strip()]


def _word(raw: str) -> str:
    """A word of prose without the punctuation around it (a call's own parentheses kept)."""
    word = raw
    while True:
        before = word
        word = word.strip(",;:!?'\"[]{}").rstrip(".")
        if word.endswith(")") and "(" not in word:
            word = word[:-1]
        if word.startswith("(") and ")" not in word:
            word = word[1:]
        if word == before:
            return word


def _things(part: str, *, alternative: bool) -> list[tuple[str, str]]:
    """(thing, how it was found: span, run, word or package) forbidden in one part of a clause; `alternative`: the
    part names an alternative ("instead of", "rather than", ", not", "rejected"), where a plain package name is
    a thing too."""
    spans = [(m.group(1).strip(), part[: m.start()]) for m in _BACKTICK_RE.finditer(part)]
    if spans:
        return [(span, "run" if _RUN_BEFORE_RE.search(before) else "span") for span, before in spans]
    out: list[tuple[str, str]] = []
    m = _RUN_VERB_RE.search(part)
    if m:
        out.append((m.group(1).strip("`"), "run"))
    for raw in part.split():
        word = _word(raw)
        if len(word) < 3 or len(word) > 80 or word.isdigit():
            continue
        if code_like(word):
            out.append((word, "package" if alternative and re.fullmatch(r"[a-z][a-z0-9_-]*", word) else "word"))
        elif alternative and re.fullmatch(r"[a-z][a-z0-9_-]{2,}", word) and _is_package(word):
            out.append((word, "package"))
    return list(dict.fromkeys(out))


def _is_package(word: str) -> bool:
    """A library, framework or tool the entity vocabulary knows (`requests`, `celery`)."""
    from codememory.text.entity_vocabulary import vocabulary

    term = vocabulary().lookup(word)
    return term is not None and term.type in ("library", "framework", "tool", "database")


def _kind(thing: str, found: str, part: str) -> str:
    words = thing.split()
    if found == "run":
        return "command"
    if found == "package":
        return "package"
    if found == "span" and len(words) > 1 and re.fullmatch(r"[a-z][\w.+-]*", words[0]) and "=" not in thing:
        return "command"
    if ("/" in thing or re.search(r"\.\w{1,6}$", thing)) and " " not in thing and _PATH_VERB_RE.search(part):
        return "path"
    return "code"


_SUBJECT_END_RE = lazy_pattern(r"\s(?:is|are|was|were)\s", re.IGNORECASE)
_ALTERNATIVE_RE = lazy_pattern(r"instead of|rather than|,\s*not|rejected", re.IGNORECASE)


_ANY_CUE_RE = lazy_pattern(
    r"never|n't|\bnot\b|avoid|rejected|instead of|rather than|forbidden|banned|review|(?:^|[.;:]\s*)no\s", re.IGNORECASE
)


def prohibitions(text: str) -> list[Prohibition]:
    """What the memory forbids (see the module docstring's table), in order, each once."""
    if not _ANY_CUE_RE.search(text):
        return []  # most memories forbid nothing: one search says so
    out: dict[tuple[str, str], Prohibition] = {}
    for clause in _clauses(text):
        parts: list[tuple[str, bool]] = []
        for cue in _PRE_CUES.finditer(clause):
            rest = clause[cue.end() :]
            stop = _STOP_AFTER.search(rest)
            rest = rest[: stop.start()] if stop and stop.start() > 0 else rest
            parts.append((rest, bool(_ALTERNATIVE_RE.fullmatch(cue.group(0).strip()))))
        for cue in _POST_CUES.finditer(clause):
            subject = clause[: cue.start()]
            end = _SUBJECT_END_RE.search(subject)
            parts.append((subject[: end.start()] if end else subject, False))
        if _NO_CUE.match(clause):
            parts.append((_NO_CUE.sub("", clause, count=1), False))
        for part, alternative in parts:
            for thing, found in _things(part, alternative=alternative):
                kind = _kind(thing, found, part)
                out.setdefault((thing.lower(), kind), Prohibition(thing, kind, clause[:200]))
    return list(out.values())


@functools.lru_cache(maxsize=4096)
def warns(text: str) -> bool:
    """Whether a memory forbids something the rules above can catch being done (`prohibitions`). Such a memory is
    heeded by *not* doing a thing, which leaves no trace in a session: a session that shows it and does not go
    against it tells nothing about its worth (retrieval/usefulness.py does not count it as ignored)."""
    return bool(prohibitions(text))


def violation(rule: Prohibition, action: Action) -> str | None:
    """What in the action goes against the rule (evidence), or None. Text added to a changelog is the agent's
    account of its work (`said_without_commit_messages`): "no longer writes `sep=,`" records the rule heeded."""
    if rule.kind == "command":
        for command in action.shell:
            if runs(command, rule.thing):
                return command
        return None
    if rule.kind == "path":
        for path in action.edited:
            if path.endswith(rule.thing) or term_in(rule.thing, path.lower()):
                return path
        return None
    for command in action.shell:
        if installs(command, rule.thing):
            return command
    added = "" if accounts_of_work(action.edited) else action.added
    if rule.kind == "package":
        name = re.escape(rule.thing.replace("-", "_"))
        imports = re.compile(rf"^\s*(?:import|from)\s+{name}\b|require\(['\"]{re.escape(rule.thing)}['\"]\)", re.M)
        found = imports.search(added)
        return found.group(0).strip()[:200] if found else None
    if added and _bounded(added, rule.thing):
        line = next((ln for ln in added.splitlines() if rule.thing in ln), rule.thing)
        return line.strip()[:200]
    return None
