"""File paths in a memory's text: the third stage of `text.entities`, and what a name must look like to be a file.

A path candidate is what `_PATH_RE` matches in the text left after URLs and errors were masked; its verdict (a path
or not, its cleaned name, the language or tool its file name implies) depends on nothing but the matched text and
the vocabulary, so it is judged once per process and kept: an import reads the same files on thousands of memories.
`src/auth/oauth.py`, `./scripts/test`, `Cargo.toml`, `.github/workflows/ci.yml`, `Dockerfile` are paths;
`tests/test_x.py:42` loses its line number; versions (`1.2.3`), fractions (`2/3`) and prose with a slash (`and/or`,
`TCP/IP`) are not."""

from __future__ import annotations

from codememory.text.entity_vocabulary import LazyPattern, Vocabulary, entity_words

__all__ = ["Found", "PathVerdict", "PathVerdicts", "clean_path", "find_files", "looks_like_file", "mask"]

Found = tuple[int, int, str, str]  # (group, position, name, type); group 0 terms+errors, 1 files, 2 identifiers

_PATH_RE = LazyPattern(
    r"(?<![\w/.~@\\-])(?=[\w.@+\[\]/~-]*[./]|(?i:dockerfile|containerfile|makefile|gnumakefile|justfile|procfile"
    r"|gemfile|rakefile|vagrantfile|jenkinsfile|brewfile|pipfile|tiltfile|earthfile|codeowners)\b)"
    r"(?:~/|\.\.?/|/)?[\w.@+\[\]-]+(?:/[\w.@+\[\]-]+)*/?"
    r"(?P<line>(?::\d+){1,2}|#L\d+(?:-L?\d+)?)?"
)
_LINE_SUFFIX_RE = LazyPattern(r"(?::\d+)+$|#L\d+(?:-L?\d+)?$")
_EXTENSION_RE = LazyPattern(r"\.([A-Za-z][A-Za-z0-9]{0,11})$")
_DOTFILE_RE = LazyPattern(
    r"\.(?:env(?:\.[\w-]+)*|[\w-]*ignore|[\w-]+rc|gitattributes|gitmodules|gitkeep|editorconfig|python-version"
    r"|node-version|tool-versions|venv|github|gitlab|vscode|idea|devcontainer|husky|circleci|cargo|cursor"
    r"|cursorrules|windsurfrules|clinerules|aider[\w.-]*|claude|codex|opencode)"
)
# Manifests that imply the language or tool they belong to.
_IMPLIED_BY_FILE = {
    "go.mod": "go",
    "go.sum": "go",
    "cargo.toml": "rust",
    "cargo.lock": "rust",
    "makefile": "make",
    "gnumakefile": "make",
}


def mask(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with what a stage claimed blanked out, every position kept: later stages report positions in it."""
    if not spans:
        return text
    pieces: list[str] = []
    last = 0
    for start, end in sorted(spans):
        if start < last:
            start = last
        if end <= start:
            continue
        pieces.append(text[last:start])
        pieces.append(" " * (end - start))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _is_path(candidate: str, vocab: Vocabulary) -> bool:
    lower = candidate.lower()
    if lower in vocab.aliases:  # node.js, socket.io, coverage.py, http/2, pub/sub are vocabulary terms
        return False
    if not any(char.isalpha() for char in candidate):  # 2/3, 1.2.3, 2024/01/31
        return False
    if "/" in candidate:
        if candidate.startswith(("./", "../", "~/")):
            return True
        segments = [segment for segment in candidate.split("/") if segment]
        if not segments:
            return False
        if candidate.startswith("/"):
            return len(segments) >= 2 or bool(_EXTENSION_RE.search(segments[-1]))
        if _EXTENSION_RE.search(segments[-1]) or segments[0] in entity_words().path_roots:
            return True
        if len(segments) >= 3 and any(("." in s or "_" in s) for s in segments):
            return True
        return candidate.endswith("/") and len(segments) >= 2
    base = lower.split(".", 1)[0] if not lower.startswith(".") else lower
    lists = entity_words()
    if base in lists.special_files or lower in lists.known_filenames:
        return True
    if lower.startswith("."):
        return bool(_DOTFILE_RE.fullmatch(lower)) or (
            lower.count(".") >= 2 and _extension(lower) in lists.known_extensions
        )
    return _extension(lower) in lists.known_extensions and not lower.startswith(".")


def _extension(name: str) -> str:
    match = _EXTENSION_RE.search(name)
    return match.group(1) if match else ""


def _strip_brackets(candidate: str, start: int) -> tuple[str, int]:
    """`[src/x.py]` (a Markdown link label) -> `src/x.py`, but `app/[slug]/page.tsx` stays whole."""
    if candidate.startswith("[") and "]" not in candidate[1:-1]:
        candidate, start = candidate[1:], start + 1
    if candidate.endswith("]") and "[" not in candidate:
        candidate = candidate[:-1]
    return candidate, start


# What a path candidate, as the path pattern matched it, comes to: None (not a path), else where the path starts in
# it, its length, its name and the term its file name implies. It depends on nothing but the matched text (and the
# vocabulary), and the same files come back on thousands of memories of an import: each is judged once per process
# (text.entities keeps them, with its other per-process memos).
PathVerdict = tuple[int, int, str, tuple[str, str] | None] | None
PathVerdicts = dict[tuple[str, str | None], PathVerdict]
_KEPT_PATH_CHARS = 300  # longer candidates (rare) are judged anew each time, never kept


def _path_verdict(matched: str, line: str | None, vocab: Vocabulary) -> PathVerdict:
    raw = matched[: -len(line)] if line else matched
    if "/" not in raw and "." not in raw and raw.lower() not in entity_words().special_files:
        return None
    if not line:
        raw = raw.rstrip(".-+@")
    candidate, offset = _strip_brackets(raw, 0)
    if not candidate or not _is_path(candidate, vocab):
        return None
    name = clean_path(candidate)
    implied = _IMPLIED_BY_FILE.get(name.rsplit("/", 1)[-1].lower())
    term = None if implied is None else vocab.aliases[implied]
    return offset, len(candidate), name, None if term is None else (term.canonical, term.type)


def find_files(text: str, work: str, vocab: Vocabulary, found: list[Found], verdicts: PathVerdicts) -> str:
    """Stage 3: the files in `work` (the text with URLs and errors masked) added to `found`, with the language or
    tool a manifest implies; returns `work` with them masked. `verdicts`: those judged before, added to."""
    spans: list[tuple[int, int]] = []
    for match in _PATH_RE.finditer(work):
        key = (match.group(), match.group("line"))
        if len(key[0]) > _KEPT_PATH_CHARS:  # kept by count: a long one (anyone's token) would hold its text for good
            verdict = _path_verdict(*key, vocab)
        else:
            verdict = verdicts[key] if key in verdicts else verdicts.setdefault(key, _path_verdict(*key, vocab))
        if verdict is None:
            continue
        offset, length, name, implied = verdict
        start = match.start() + offset
        if text[start + length : start + length + 1] == "(":  # res.json()
            continue
        found.append((1, start, name, "file"))
        spans.append((match.start(), match.end()))
        if implied is not None:
            found.append((0, start, *implied))
    return mask(work, spans)


def clean_path(path: str) -> str:
    path = _LINE_SUFFIX_RE.sub("", path.strip().rstrip(".,;:!?)'\"`"))
    while path.startswith("./"):
        path = path[2:]
    if len(path) > 1:
        path = path.rstrip("/")
    return path


def looks_like_file(name: str) -> bool:
    base = _LINE_SUFFIX_RE.sub("", name)
    lower = base.lower()
    lists = entity_words()
    return (
        lower in lists.known_filenames
        or lower.split(".", 1)[0] in lists.special_files
        or bool(_DOTFILE_RE.fullmatch(lower))
        or _extension(lower) in lists.known_extensions
    )
