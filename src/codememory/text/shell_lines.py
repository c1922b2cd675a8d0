"""A shell line as the programs it runs: split into its commands (at `&&`, `||`, `;`, `|` and line breaks), each
command's words from its program on (without variable settings and runners such as `sudo`, `uv run`,
`python -m`). Used to tell whether a line runs a forbidden command or installs a package, and whether it only
looks (every command a lookup program used only to show, nothing written to a file). Pure text, never run:
the lines come from transcripts."""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Sequence

from codememory.core.lazy_pattern import lazy_pattern

# Programs that run another one: the command they run is what a command prohibition is checked against.
_RUNNERS = {"sudo", "env", "npx", "pnpx", "bunx", "exec", "time", "nohup"}
_RUNNER_PAIRS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run")}
_INSTALLERS = {("pip", "install"), ("pip3", "install"), ("uv", "add"), ("uv", "pip"), ("poetry", "add")}
_INSTALLERS |= {("npm", "install"), ("npm", "i"), ("yarn", "add"), ("pnpm", "add"), ("cargo", "add"), ("go", "get")}


def shell_words(segment: str) -> list[str]:
    try:
        return shlex.split(segment)
    except ValueError:
        return segment.split()


SEGMENT_RE = lazy_pattern(r"&&|\|\||[;|\n]")


def program_words(tokens: list[str]) -> list[str]:
    """A command's words from its program on: leading variable settings and runners (`uv run`, `sudo`, `python -m`)
    taken off, the program by its base name."""
    i = 0
    while i < len(tokens):
        word = tokens[i]
        if re.fullmatch(r"[A-Za-z_]\w*=.*", word) or word in _RUNNERS:
            i += 1
        elif (i + 1 < len(tokens) and (word.rsplit("/", 1)[-1], tokens[i + 1]) in _RUNNER_PAIRS) or (
            re.fullmatch(r"python[\d.]*", word.rsplit("/", 1)[-1]) and i + 2 < len(tokens) and tokens[i + 1] == "-m"
        ):
            i += 2
        else:
            break
    words = tokens[i:]
    if words:
        words = [words[0].rsplit("/", 1)[-1] if "/" not in words[0].strip("./") else words[0], *words[1:]]
    return words


@functools.lru_cache(maxsize=256)
def commands(command: str) -> tuple[tuple[str, ...], ...]:
    """The program words of each command a shell line runs (see `program_words`): split once per line, however
    many rules it is checked against."""
    return tuple(tuple(program_words(shell_words(segment.strip()))) for segment in SEGMENT_RE.split(command))


def runs(command: str, forbidden: str) -> bool:
    """Whether a shell command runs the forbidden command (its program then its following words, in order)."""
    want = [w.lower() for w in shell_words(forbidden)]
    if not want:
        return False
    return any(
        len(words) >= len(want) and [w.lower() for w in words[: len(want)]] == want for words in commands(command)
    )


def installs(command: str, package: str) -> bool:
    for words in commands(command):
        if len(words) >= 3 and (words[0], words[1]) in _INSTALLERS:
            names = [re.split(r"[<>=!~\[@]", w, maxsplit=1)[0].lower() for w in words[2:] if not w.startswith("-")]
            if package.lower() in names:
                return True
    return False


# Programs that only show what is there. A shell line all of whose commands are these (git with a subcommand that
# only shows, sed without -i, find without -delete or -exec), and that writes no file, looks; anything else acts.
_LOOKUP_PROGRAMS = frozenset(
    "ls cat head tail less more grep egrep fgrep rg ag find fd tree wc stat file du pwd cd which type nl sed".split()
)
_LOOKUP_GIT = frozenset("status log diff show blame ls-files ls-tree grep shortlog describe rev-parse cat-file".split())
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})  # `git -C repo log`
# what makes a lookup program change or run something: `find . -delete`, `fd -x rm`, `sed -i`
_ACTING_OPTIONS = {
    "find": frozenset("-delete -exec -execdir -ok -okdir -fprint -fprint0 -fprintf -fls".split()),
    "fd": frozenset("-x --exec -X --exec-batch".split()),
}
_IN_PLACE_RE = lazy_pattern(r"-[A-Za-z]*i|--in-place")  # sed's -i, -i.bak, -Ei, --in-place=.bak
# a redirection to a file (not `2>&1`, not /dev/null), once quoted text is gone: `grep '->' x` writes nothing
_WRITES_FILE_RE = lazy_pattern(r">>?\s*(?!&|/dev/null\b)\S")
_QUOTED_RE = lazy_pattern(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
# `$(...)` and backticks run what they hold; `<(...)` too
_SUBSTITUTION_RE = lazy_pattern(r"[$<]\(([^()]*)\)|`([^`]*)`")


def looks_only(command: str) -> bool:
    """Whether a shell line only looks (`ls migrations`, `git log --oneline | head`, `sed -n 1,80p src/app.py`):
    every command in it, and in what it substitutes (`$(...)`), is a lookup program used only to show, and nothing
    is written to a file (`cat > notes.txt` writes)."""
    inner = [a or b for a, b in _SUBSTITUTION_RE.findall(command)]
    if any(not looks_only(part) for part in inner if part.strip()):
        return False
    line = _SUBSTITUTION_RE.sub(" x ", command)
    if _WRITES_FILE_RE.search(_QUOTED_RE.sub("x", line)):
        return False
    each = [_unbracketed(words) for words in commands(line)]
    each = [words for words in each if words]
    return bool(each) and all(_shows(words) for words in each)


def _unbracketed(words: Sequence[str]) -> list[str]:
    """A command without the subshell or group around it: `(cd src && ls)`, `{ ls; }`."""
    out = [w for w in words if w not in ("(", ")", "{", "}")]
    if out:
        out[0] = out[0].lstrip("({").rstrip(")}") or out[0]
    return out


def _shows(words: Sequence[str]) -> bool:
    program = words[0]
    if program == "git":
        i = 1
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in _GIT_VALUE_OPTIONS else 1
        return i < len(words) and words[i] in _LOOKUP_GIT
    if program not in _LOOKUP_PROGRAMS:
        return False
    if program == "sed":
        return not any(_IN_PLACE_RE.match(w) for w in words[1:])
    acting = _ACTING_OPTIONS.get(program, frozenset())
    return not any(w.split("=", 1)[0] in acting for w in words[1:])
