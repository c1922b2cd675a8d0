"""Input from outside, bounded and made valid Unicode where it comes in.

Caps: every reader of standard input or of a file someone else may have written stops at a documented
size (one constant per reader, below), reading in chunks, so a huge or endless input costs bounded
memory and time. What happens past a cap depends on the reader: a single value (the text of `store`, a
hook's JSON) is refused with a one-line error; a stream of records (import lines, transcript lines,
`*Remember*` notes) skips the oversized record with a warning and goes on.

Text: bytes that are not UTF-8 and lone surrogates become U+FFFD, the replacement character, wherever
text enters (command-line arguments, which Python decodes with `surrogateescape`; standard input;
files; hook JSON; MCP tool arguments; the Python API). Replacing rather than refusing, because most of
this text comes from agents and transcripts: one stray byte must not lose a whole note or stop a hook,
and U+FFFD keeps the damage visible at its place. Nothing downstream (SQLite, markdown files, JSON
output) ever sees a string it cannot encode. Two exceptions refuse instead: a value chosen as a whole to be
stored (`store --file`, `store` from standard input) that holds a NUL byte or is not UTF-8, and any memory
text that is mostly control or replacement characters (`core.model.validate_text`): binary data is not a
memory.

Standard library only: the hook entry point imports this on every prompt.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import IO, Any, ParamSpec, TypeVar

from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.model import MAX_TEXT
from codememory.errors import InvalidInput

KiB = 1024
MiB = 1024 * KiB

# ---------------------------------------------------------------------------------------------- caps
REMEMBER_SCAN_MAX_BYTES = 10 * MiB  # `remember-scan`'s standard input; past it: a warning, the rest unread
REMEMBER_NOTE_MAX_CHARS = MAX_TEXT  # one `*Remember*` note (a memory's text limit); longer: skipped, warned
REMEMBER_SCAN_MAX_NOTES = 1000  # notes stored by one scan; past it: a warning, the rest not stored
STORE_INPUT_MAX_BYTES = 1 * MiB  # `store` from standard input or --file (a memory holds 10,000 characters)
RETRIEVE_INPUT_MAX_BYTES = 1 * MiB  # `retrieve --input`: one JSON request
IMPORT_LINE_MAX_BYTES = 1 * MiB  # `import`: one JSON line (one memory); longer: an invalid line
HOOK_STDIN_MAX_BYTES = 16 * MiB  # a hook's JSON payload (Write payloads carry whole files); longer: ignored
TRANSCRIPT_LINE_MAX_BYTES = 32 * MiB  # one JSON line of a Claude Code / Codex transcript; longer: skipped
TRANSCRIPT_READ_MAX_BYTES = 128 * MiB  # one read of a transcript that has no smaller limit (a whole session)
SESSION_MARKDOWN_MAX_BYTES = 4 * MiB  # a session's markdown file (`sessions show`, `sessions rebuild`)
PLAN_HEADER_MAX_BYTES = 64 * KiB  # read of a plan file while looking for its first heading
MCP_STDIO_LINE_MAX_BYTES = 4 * MiB  # one JSON-RPC message on `codememory mcp`'s standard input
QUERY_MAX_CHARS = 4000  # one search query or retrieval phrase (API, CLI, MCP, daemon); longer: refused
# (The daemon's request bodies are capped by its own setting, `[daemon] max_body_bytes`.)

_CHUNK = 64 * KiB


def size_text(n: int) -> str:
    """1048576 -> '1 MiB', 65536 -> '64 KiB', 1000 -> '1,000 bytes'."""
    for unit, name in ((MiB, "MiB"), (KiB, "KiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit:,} {name}"
    return f"{n:,} bytes"


EMPTY_QUERY = "the query is empty: give the words to search for"


def require_query(query: str, hint: str = "") -> None:
    """InvalidInput for a blank query, the same line from the CLI and MCP (a blank search is a mistake to report,
    not a search that found nothing)."""
    if not query.strip():
        raise InvalidInput(EMPTY_QUERY + hint)


def check_query(query: str, what: str = "query") -> None:
    """InvalidInput for a query longer than QUERY_MAX_CHARS: a search is a few words, or a sentence or two; a
    longer one is a paste, and the keyword and typo passes' work grows with its length."""
    if len(query) > QUERY_MAX_CHARS:
        raise InvalidInput(
            f"the {what} is {len(query):,} characters long; the limit is {QUERY_MAX_CHARS:,} (search for a few "
            "distinctive words instead)"
        )


# ---------------------------------------------------------------------------------------------- text
def valid_text(text: str) -> str:
    """`text` with every lone surrogate (an undecodable byte from `surrogateescape`, or an unpaired
    `\\ud800` from JSON) replaced by U+FFFD; a surrogate pair becomes the character it encodes."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def valid_deep(value: Any) -> Any:
    """`value` with `valid_text` applied to every string in it (lists, tuples, dicts, their keys)."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [valid_deep(v) for v in value]
    if isinstance(value, tuple):
        return tuple(valid_deep(v) for v in value)
    if isinstance(value, dict):
        return {valid_deep(k): valid_deep(v) for k, v in value.items()}
    return value


# What Windows editors and PowerShell 5 put ahead of a UTF-8 file: it marks the encoding and is none of the text.
BYTE_ORDER_MARK = "\ufeff"


def decode(data: bytes) -> str:
    """Bytes read from outside as text: UTF-8, anything else U+FFFD."""
    return data.decode("utf-8", "replace")


# A JSON string escape: a surrogate pair, a lone surrogate, or any other escape (consumed so that `\\ud800`,
# an escaped backslash and the letters ud800, is not mistaken for one).
_JSON_ESCAPE_RE = lazy_pattern(
    r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[dD][89a-fA-F][0-9a-fA-F]{2}|.)", re.DOTALL
)
_SURROGATE_ESCAPE_RE = lazy_pattern(r"\\u[dD][89a-fA-F]", re.ASCII)


def _fix_escape(match: re.Match[str]) -> str:
    escape = match.group(0)
    return "\\ufffd" if len(escape) == 6 and escape[1] == "u" else escape


def valid_json_text(text: str) -> str:
    """JSON text whose parse holds no lone surrogate: each `\\ud800`-style escape without its pair becomes
    `\\ufffd` (a strict parser refuses such text; Python's `json` would let the surrogate through)."""
    text = valid_text(text)
    if "\\" not in text or not _SURROGATE_ESCAPE_RE.search(text):
        return text
    return _JSON_ESCAPE_RE.sub(_fix_escape, text)


P = ParamSpec("P")
R = TypeVar("R")


def text_arguments(method: Callable[P, R]) -> Callable[P, R]:
    """Decorator for the Python API: every string among the arguments (in lists and dicts too) goes
    through `valid_text` first. Paths and open files pass untouched."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return method(*valid_deep(args), **valid_deep(kwargs))

    return wrapper


# ------------------------------------------------------------------------------------------- reading
def binary(stream: IO[Any]) -> IO[bytes] | None:
    """The byte stream under a text stream (sys.stdin.buffer), the stream itself when it is binary, or
    None for a text-only stream (io.StringIO)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        return buffer  # type: ignore[no-any-return]
    if "b" in getattr(stream, "mode", "") or isinstance(stream.read(0), bytes):
        return stream
    return None


def read_upto(stream: IO[bytes], cap: int) -> tuple[bytes, bool]:
    """At most `cap` bytes of `stream`, read in chunks, and whether more followed (left unread)."""
    chunks: list[bytes] = []
    size = 0
    while size <= cap:
        chunk = stream.read(min(_CHUNK, cap + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    return data[:cap], size > cap


def read_text_upto(stream: IO[Any], cap: int, *, whole_lines: bool = False) -> tuple[str, int, bool]:
    """At most `cap` bytes of a stream (text or binary) as valid text, how many bytes (characters for a
    text-only stream) that was, and whether more followed (left unread). `whole_lines`: when more
    followed, the text ends at its last newline (a line cut in two is not taken)."""
    raw = binary(stream)
    if raw is not None:
        data, more = read_upto(raw, cap)
        if more and whole_lines and b"\n" in data:
            data = data[: data.rfind(b"\n") + 1]
        return decode(data), len(data), more
    text = stream.read(cap + 1)
    more = len(text) > cap
    text = text[:cap]
    if more and whole_lines and "\n" in text:
        text = text[: text.rfind("\n") + 1]
    return valid_text(text), len(text), more


def read_all_text(stream: IO[Any], cap: int, what: str, *, text_only: bool = False) -> str:
    """All of a stream as valid text; InvalidInput naming `what` when it is over `cap` bytes. `text_only`: also
    InvalidInput when the bytes are not UTF-8 text (`require_utf8_text`)."""
    raw = binary(stream) if text_only else None
    if raw is None:
        text, _size, more = read_text_upto(stream, cap)
    else:
        data, more = read_upto(raw, cap)
        if not more:
            require_utf8_text(data, what)
        text = decode(data)
    if more:
        raise InvalidInput(f"{what} is over the {size_text(cap)} limit")
    return text.removeprefix(BYTE_ORDER_MARK)


def require_utf8_text(data: bytes, what: str) -> None:
    """InvalidInput when `data` holds a NUL byte or is not UTF-8: a whole value someone chose to store (`store
    --file`, `store` from standard input) that is binary is refused, not kept as replacement characters (a stray
    byte in a transcript or a hook's JSON is still replaced: that text was not chosen as a whole)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # PowerShell 5's `>` and Notepad's "Unicode": NUL every other byte
        raise InvalidInput(f"{what} is UTF-16 text, not UTF-8; convert it first, e.g. iconv -f utf-16 -t utf-8")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InvalidInput(f"{what} is binary data, not text (a NUL byte at offset {nul:,})")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # cp1252, not latin1: Windows' files hold curly quotes and dashes at 0x80-0x9f, which Latin-1 reads as
        # control characters; Latin-1's printable characters are the same bytes in cp1252
        raise InvalidInput(
            f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start:,}); "
            "convert it first, e.g. iconv -f cp1252 -t utf-8"
        ) from None


def read_file_text(path: Any, cap: int, what: str, *, text_only: bool = False) -> str:
    """A file's text (valid text, at most `cap` bytes); InvalidInput for a missing, unreadable or oversized
    file (and with `text_only`, for one that is not UTF-8 text). Reads at most `cap` + 1 bytes whatever the file's
    size."""
    try:
        with open(path, "rb") as f:
            return read_all_text(f, cap, what, text_only=text_only)
    except FileNotFoundError:
        raise InvalidInput(f"no such file: {path}") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a directory, not a file") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None


class LineTooLong:
    """A line longer than its reader's cap: skipped (its bytes were read past, never kept)."""

    def __init__(self, size: int, cap: int) -> None:
        self.size = size  # bytes counted (the line may be longer when the read stopped first)
        self.cap = cap

    def __str__(self) -> str:
        return f"longer than the {size_text(self.cap)} limit"


def capped_lines(stream: IO[Any], line_cap: int, total_cap: int, what: str) -> Iterator[str | LineTooLong]:
    """The lines of a stream as valid text (newline kept); a line over `line_cap` bytes comes as a
    LineTooLong (its bytes are skipped in chunks, never held); InvalidInput once more than `total_cap`
    bytes have been read."""
    raw = binary(stream)
    total = 0
    first = True
    while True:
        line: bytes | str = raw.readline(line_cap + 1) if raw is not None else stream.readline(line_cap + 1)
        if not line:
            return
        size = len(line)
        too_long = size > line_cap
        while too_long and not (line.endswith(b"\n") if isinstance(line, bytes) else line.endswith("\n")):
            line = raw.readline(_CHUNK) if raw is not None else stream.readline(_CHUNK)
            if not line:
                break
            size += len(line)
            if total + size > total_cap:
                break
        total += size
        if total > total_cap:
            raise InvalidInput(f"{what} is over the {size_text(total_cap)} limit")
        if too_long:
            yield LineTooLong(size, line_cap)
        else:
            text = decode(line) if isinstance(line, bytes) else valid_text(line)
            yield text.removeprefix(BYTE_ORDER_MARK) if first else text
        first = False
