"""Technical entities in a memory's text (libraries, tools, files, errors, identifiers), without any LLM.

`extract_entities` runs a fixed pipeline of regexes (compiled once, on first use) over the text, masking what
each stage claims so later stages do not see it again:

1. URLs and e-mail addresses are masked and never reported.
2. Errors: `IntegrityError`, `TimeoutException`, errno names (`ECONNREFUSED`), `ERR_REQUIRE_ESM`,
   signals, Kubernetes pod failures, and HTTP statuses ("429 Too Many Requests", "HTTP 503" -> "http 503").
3. File paths: `src/auth/oauth.py`, `./scripts/test`, `Cargo.toml`, `.github/workflows/ci.yml`, `Dockerfile`;
   `tests/test_x.py:42` loses its line number. Versions (`1.2.3`), fractions (`2/3`) and prose with a slash
   (`and/or`, `TCP/IP`) are not paths (`text.entity_paths`).
4. Vocabulary terms from `data/tech_vocabulary.txt`, looked up token by token in a dict (no big alternation),
   with the ambiguity rule of `entity_ambiguity` for words that are also English (go, make, rest, C).
5. Identifiers: camelCase, PascalCase with 2+ humps, snake_case, dotted calls (`session.commit()`),
   `--flags`, and anything alone in backticks.

Results are ordered by salience: vocabulary terms and errors, then files, then identifiers; within a group,
by first appearance. Every name is already in `normalize_entity_name` form, and names are unique.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codememory.text.entity_ambiguity import accepted
from codememory.text.entity_paths import Found, PathVerdicts, clean_path, find_files, looks_like_file, mask
from codememory.text.entity_vocabulary import LazyPattern, Vocabulary, entity_words, vocabulary

__all__ = ["Entity", "entity_pairs", "extract_entities", "normalize_entity_name"]


@dataclass(frozen=True)
class Entity:
    name: str  # canonical: lower-case vocabulary term, path as written, identifier/error name as written
    type: str  # one of: library framework tool language database service protocol file error identifier


# --- Stage regexes -----------------------------------------------------------------------------------

_URL_RE = LazyPattern(r"\b(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)\S+")
_EMAIL_RE = LazyPattern(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b(?::\S*)?")
_ERROR_RE = LazyPattern(
    r"\b(?:[A-Z][A-Za-z0-9]*?(?:Error|Exception|Warning)"
    r"|E[A-Z][A-Z0-9_]{2,}|ERR_[A-Z0-9_]+|SIG[A-Z0-9]{3,}|ORA-\d{5}"
    r"|OOMKilled|CrashLoopBackOff|ImagePullBackOff|ErrImagePull|[Ss]egfault|[Ss]egmentation fault)\b"
)
# A literal every _ERROR_RE match holds (one per alternative): a text with none of them (most) is not scanned.
_ERROR_HINT_RE = LazyPattern(r"E[A-Z]|Error|Exception|Warning|SIG|ORA-|OOMKilled|BackOff|ErrImage|egfault|egmentation")
_HTTP_PHRASES = (
    "Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed|Not Acceptable"
    "|Request Timeout|Conflict|Gone|Length Required|Precondition Failed|Payload Too Large|Content Too Large"
    "|URI Too Long|Unsupported Media Type|I'm a teapot|Misdirected Request|Unprocessable (?:Entity|Content)"
    "|Too Early|Upgrade Required|Precondition Required|Too Many Requests|Request Header Fields Too Large"
    "|Unavailable For Legal Reasons|Internal Server Error|Not Implemented|Bad Gateway|Service Unavailable"
    "|Gateway Timeout|HTTP Version Not Supported|Insufficient Storage|Network Authentication Required"
)
_HTTP_STATUS_RE = LazyPattern(
    rf"\b(?:HTTP(?:/[\d.]+)?|status(?:\s+code)?)\s*:?\s*([45]\d\d)\b|\b([45]\d\d)\s+(?:{_HTTP_PHRASES})\b",
    re.IGNORECASE,
)
# Every HTTP status match holds a 4xx or 5xx number: a text without one (most) is not scanned for the phrases.
_HTTP_CODE_RE = LazyPattern(r"[45]\d\d")
_HTTP_NAME_RE = LazyPattern(r"(?:http|status)(?:\s*code)?\s*:?\s*([1-5]\d\d)")

_TOKEN_RE = LazyPattern(r"(?<![\w@#+./-])[@.]?[A-Za-z0-9][\w+#./@-]*")
_TOKEN_TRAILING = ".-/:@"
_GAP_RE = LazyPattern(r"[ \t]+")

_FLAG_RE = LazyPattern(r"(?<![\w-])--[A-Za-z0-9][\w-]*")
_BACKTICK_RE = LazyPattern(r"`([^`\n]+)`")
_IDENT_RE = LazyPattern(r"(?<![\w.@#$-])[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_IDENT_FULL_RE = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_CALL_SUFFIX_RE = LazyPattern(r"\((?:[^()]*)\)$")
_HUMP_RE = LazyPattern(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_PLURAL_ACRONYM_RE = LazyPattern(r"[A-Z]{2,}s")
_MEMBER_SEPARATOR_RE = LazyPattern(r"\.|::")


# --- Stages ------------------------------------------------------------------------------------------


def _find_errors(work: str, found: list[Found]) -> str:
    spans: list[tuple[int, int]] = []
    if _HTTP_CODE_RE.search(work):
        for match in _HTTP_STATUS_RE.finditer(work):
            found.append((0, match.start(), f"http {match.group(1) or match.group(2)}", "error"))
            spans.append(match.span())
    if spans:
        work = mask(work, spans)
        spans = []
    for match in _ERROR_RE.finditer(work) if _ERROR_HINT_RE.search(work) else ():
        name = match.group()
        if _valid_error(name):
            found.append((0, match.start(), name, "error"))
        spans.append(match.span())
    return mask(work, spans)


def _valid_error(name: str) -> bool:
    if name.endswith(("Error", "Exception", "Warning")) or name.startswith("ERR_"):
        return True
    if name.startswith("SIG"):
        return name in entity_words().signals
    if name.startswith("E") and name.isupper():  # ECONNREFUSED yes, ERROR / EXPLAIN / ENOUGH no
        return name in entity_words().errno or name.startswith(("ECONN", "EADDR"))
    return True


_PLAIN_MAX = 200_000
_paths: tuple[Vocabulary | None, PathVerdicts] = (None, {})  # the path candidates judged in this process


def _path_verdicts(vocab: Vocabulary) -> PathVerdicts:
    """What the path candidates seen so far came to (text.entity_paths), for this vocabulary, up to _PLAIN_MAX."""
    global _paths
    if _paths[0] is not vocab or len(_paths[1]) > _PLAIN_MAX:
        _paths = (vocab, {})
    return _paths[1]


_plain: tuple[Vocabulary | None, set[str]] = (None, set())


def _plain_tokens(vocab: Vocabulary) -> set[str]:
    """Tokens `_find_terms` passes over whatever surrounds them (no vocabulary word starts or is them, and they hold
    no parts), remembered: most words of every text are such words, and an import reads 100,000 texts."""
    global _plain
    if _plain[0] is not vocab or len(_plain[1]) > _PLAIN_MAX:
        _plain = (vocab, set())
    return _plain[1]


def _find_terms(text: str, work: str, vocab: Vocabulary, found: list[Found]) -> str:
    tokens = list(_TOKEN_RE.finditer(work))
    spans: list[tuple[int, int]] = []
    plain = _plain_tokens(vocab)
    index = 0
    while index < len(tokens):
        token = tokens[index]
        raw = token.group()
        if raw in plain:
            index += 1
            continue
        word = raw.rstrip(_TOKEN_TRAILING)
        start = token.start()
        if not word:
            index += 1
            continue
        lower = word.lower()
        # 1. Multi-word names ("claude code", "ruby on rails"), longest first; words separated by blanks only.
        if lower in vocab.first_words:
            consumed = _match_phrase(text, work, tokens, index, vocab, found, spans)
            if consumed:
                index += consumed
                continue
        # 2. The whole token ("PostgreSQL", "node.js", "c++", "http/2").
        term = vocab.aliases.get(lower)
        if term is not None:
            if accepted(lower, term, text, start, start + len(word)):
                found.append((0, start, term.canonical, term.type))
                spans.append((start, start + len(word)))
            index += 1
            continue
        # 3. Parts: "C/C++", "react/jsx-runtime", "express@4", "postgres-backed", "sqlalchemy.orm".
        if word.isalnum():
            if lower not in vocab.first_words:
                plain.add(raw)  # not a first word, not a term, no parts: nothing here, wherever it stands
            index += 1
            continue
        offset = 0
        for part in word.split("/"):
            if part:
                _match_part(text, part.rstrip(_TOKEN_TRAILING), start + offset, vocab, found, spans, whole=part == word)
            offset += len(part) + 1
        index += 1
    return mask(work, spans)


def _match_phrase(
    text: str,
    work: str,
    tokens: list[re.Match[str]],
    index: int,
    vocab: Vocabulary,
    found: list[Found],
    spans: list[tuple[int, int]],
) -> int:
    words = [tokens[index].group()]
    for following in tokens[index + 1 : index + vocab.max_words]:
        previous_end = tokens[index + len(words) - 1].end()
        if words[-1] != words[-1].rstrip(_TOKEN_TRAILING) or not _GAP_RE.fullmatch(
            work, previous_end, following.start()
        ):
            break
        words.append(following.group())
    for count in range(len(words), 1, -1):
        last = words[count - 1].rstrip(_TOKEN_TRAILING)
        key = " ".join([*(word.lower() for word in words[: count - 1]), last.lower()])
        term = vocab.aliases.get(key)
        if term is None:
            continue
        start = tokens[index].start()
        end = tokens[index + count - 1].start() + len(last)
        if not accepted(key, term, text, start, end):
            return 0
        found.append((0, start, term.canonical, term.type))
        spans.append((start, end))
        return count
    return 0


def _match_part(
    text: str,
    part: str,
    start: int,
    vocab: Vocabulary,
    found: list[Found],
    spans: list[tuple[int, int]],
    *,
    whole: bool,
) -> None:
    if not part:
        return
    lower = part.lower()
    if not whole:
        term = vocab.aliases.get(lower)
        if term is not None:
            if accepted(lower, term, text, start, start + len(part)):
                found.append((0, start, term.canonical, term.type))
                spans.append((start, start + len(part)))
            return
    at = lower.find("@", 1)  # express@4.18 / react@^18
    if at > 0:
        key = lower[:at]
        term = vocab.aliases.get(key)
        if term is not None and accepted(key, term, text, start, start + at):
            found.append((0, start, term.canonical, term.type))
            spans.append((start, start + at))
        return
    position = lower.rfind("-")
    while position > 0:  # longest hyphenated prefix first: "react-query-devtools" -> "react-query"
        key = lower[:position]
        term = vocab.aliases.get(key)
        if term is not None:
            # The head of a hyphenated word is English more often than not for strict words (go-to, next-gen).
            if key not in entity_words().strict and accepted(key, term, text, start, start + position):
                found.append((0, start, term.canonical, term.type))
            return
        position = lower.rfind("-", 0, position)
    position = lower.rfind(".")
    while position > 0:  # module paths: "sqlalchemy.orm", "python3.11", "React.useState"
        key = lower[:position]
        term = vocab.aliases.get(key)
        if term is not None:
            if accepted(key, term, text, start, start + position):
                found.append((0, start, term.canonical, term.type))
            return
        position = lower.rfind(".", 0, position)


_plain_words: set[str] = set()  # words `_find_identifiers` passes over by their shape, wherever they stand


def _find_identifiers(text: str, work: str, vocab: Vocabulary, found: list[Found]) -> None:
    def add(position: int, name: str, *, call: bool) -> None:
        key = name.lower()
        term = vocab.lookup(key)
        if term is None:
            found.append((2, position, name, "identifier"))
        elif not call and key not in entity_words().ambiguous:  # "nodeJS": a vocabulary term spelled like an identifier
            found.append((0, position, term.canonical, term.type))
        # else a call such as next(it) or make([]int, 3): a builtin, neither the tool nor a useful identifier

    # Each scan only where its literal is: most texts hold no "--" and no backtick (each scan a few µs a text).
    for match in _FLAG_RE.finditer(work) if "--" in work else ():
        found.append((2, match.start(), match.group(), "identifier"))
    for match in _BACKTICK_RE.finditer(text) if "`" in text else ():
        if work[match.start(1) : match.end(1)] != match.group(1):  # partly claimed already: `make test`
            continue
        stripped = match.group(1).strip()
        inner = _CALL_SUFFIX_RE.sub("", stripped)
        if inner and _IDENT_FULL_RE.fullmatch(inner):
            add(match.start(1) + match.group(1).index(inner[0]), inner, call=inner != stripped)
    for match in _IDENT_RE.finditer(work):
        name = match.group()
        end = match.end()
        following = work[end : end + 1]
        if name in _plain_words and following != "(":  # a plain word, not called: passed over below either way
            continue
        if following and (following.isalnum() or following == "_"):  # stopped at a non-ASCII letter
            continue
        is_call = following == "("
        if not is_call and "_" not in name and "." not in name and ":" not in name:
            tail = name[1:]
            if tail.islower() or tail.isupper() or not tail:  # plain words: "loop", "The", "API", "a"
                if len(_plain_words) < _PLAIN_MAX:
                    _plain_words.add(name)  # its shape alone makes it plain
                continue
        if name in entity_words().not_identifiers or _PLURAL_ACRONYM_RE.fullmatch(name):
            continue
        is_call = is_call and not work.startswith(("(s)", "(es)"), end)
        if "." in name or "::" in name:
            parts = _MEMBER_SEPARATOR_RE.split(name)
            if not (is_call or "::" in name or any(_code_like(part) for part in parts)):
                continue
        elif not (is_call or _code_like(name)):
            continue
        add(match.start(), name, call=is_call)


def _code_like(word: str) -> bool:
    if "_" in word.strip("_") or (word.startswith("_") and any(char.isalpha() for char in word)):
        return any(char.isalpha() for char in word)
    return bool(_HUMP_RE.search(word))


# --- Public API --------------------------------------------------------------------------------------


def extract_entities(text: str, *, limit: int = 20) -> list[Entity]:
    """Technical entities in text, most salient first, deduplicated by name, without any LLM."""
    return [Entity(name, kind) for name, kind in entity_pairs(text, limit=limit)]


def entity_pairs(text: str, *, limit: int = 20) -> list[tuple[str, str]]:
    """`extract_entities` as (name, type) pairs: what the store writes, without an object made per entity (an
    import reads the entities of every memory it adds)."""
    if limit <= 0 or not text or text.isspace():
        return []
    vocab = vocabulary()
    found: list[Found] = []
    spans: list[tuple[int, int]] = []
    if "://" in text or "www." in text:
        spans.extend(match.span() for match in _URL_RE.finditer(text))
    if "@" in text:
        spans.extend(match.span() for match in _EMAIL_RE.finditer(text))
    work = mask(text, spans)
    work = _find_errors(work, found)
    work = find_files(text, work, vocab, found, _path_verdicts(vocab))
    work = _find_terms(text, work, vocab, found)
    _find_identifiers(text, work, vocab, found)
    found.sort(key=lambda item: (item[0], item[1]))
    entities: list[tuple[str, str]] = []
    seen: set[str] = set()
    for _group, _position, name, kind in found:
        if name in seen or not name:
            continue
        seen.add(name)
        entities.append((name, kind))
        if len(entities) >= limit:
            break
    return entities


def normalize_entity_name(name: str) -> str:
    """Canonical form for lookups (e.g. "Postgres", "postgres", "PostgreSQL" -> "postgresql"; "K8s" -> "kubernetes";
    paths keep case but strip "./" and trailing punctuation)."""
    cleaned = name.strip().strip("`'\"")
    if not cleaned:
        return ""
    known = vocabulary()
    key = " ".join(cleaned.lower().split()).rstrip(".,;:!?")
    term = known.aliases.get(key)  # exact names first: "node.js" and "http/2" look like paths
    if term is not None:
        return term.canonical
    status = _HTTP_NAME_RE.fullmatch(key)
    if status:
        return f"http {status.group(1)}"
    cleaned = _CALL_SUFFIX_RE.sub("", cleaned)
    if "/" in cleaned or looks_like_file(cleaned.rstrip(".,;:!?)")):
        return clean_path(cleaned)  # no compact-form lookup: "go.mod" is a file, not "go mod"
    term = known.lookup(key)  # compact spellings: "Node JS", "spring-boot"
    if term is not None:
        return term.canonical
    return cleaned.rstrip(".,;:!?")
