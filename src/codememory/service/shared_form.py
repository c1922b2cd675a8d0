"""The text form of a shared memory: one small JSON file per memory, `.codememory/memories/<shard>/<id>.json`,
where <shard> is the first two hex digits of the id (`mem_3f2a91c0` -> `memories/3f/mem_3f2a91c0.json`).

One file per memory, so two contributors adding memories never touch the same file and git merges their work
without a conflict. The JSON is written with sorted keys, one key (and one tag, entity or link) per line, so an
edit of the same memory on both sides is a small, readable git conflict over the lines that differ. A file with
conflict markers does not parse: it is reported and skipped, and the store keeps its version until the file is
resolved (see service/sharing.py). A forgotten memory leaves a tombstone — its id and when it was forgotten,
never its text — so a pull deletes it everywhere, and an edit on the other side meets it as a conflict.

Every file is untrusted input (it arrives with `git pull`): its size is capped, no key appears twice in an object
(a reviewer would read one value and the store take another), its id must be the one its name says, and every field
passes the rules `import` applies (text scrubbed and bounded, categories known, tags and labels cleaned, timestamps
parsed, links typed). A link to a memory this store holds but never shared (a personal or local-only one) refuses the
file (service/sharing.py): a teammate cannot know such an id.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from codememory.core.bounded_input import valid_json_text
from codememory.core.dates import canonical_iso
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.model import ID_RE, Memory
from codememory.core.provenance import Provenance
from codememory.errors import InvalidInput
from codememory.service.memory_entities import entities_in
from codememory.store.shared import SharedMemory
from codememory.text.privacy import scrub_message

FORMAT = 1
FOLDER = "memories"
MAX_FILE_BYTES = 128 * 1024  # a memory's text is at most 10,000 characters
MAX_ENTITIES = 100
MAX_LINKS = 100
MAX_LABEL = 1000
FILE_RE = lazy_pattern(r"^mem_[0-9a-f]{8}\.json$")
_CONFLICT_RE = lazy_pattern(r"^(<{7}|={7}|>{7}|\|{7})(\s|$)", re.MULTILINE)
# Kept in the store only: how often this clone showed a memory is nobody else's business (and would conflict), and
# where it came from is this clone's own knowledge (a file that said so would only be making a claim).
_LOCAL_KEYS = ("access_count", "last_accessed_at", "provenance")
_KNOWN_KEYS = {
    "format",
    "id",
    "text",
    "category",
    "importance",
    "tags",
    "entered_by",
    "source",
    "created_at",
    "updated_at",
    "expires_at",
    "archived",
    "superseded_by",
    "entities",
    "links",
    "forgotten_at",
}


def shard_of(memory_id: str) -> str:
    return memory_id[4:6]


def relative_path(memory_id: str) -> str:
    """The file's path inside `.codememory/memories/` (the id is checked: the path never leaves the folder)."""
    if not ID_RE.match(memory_id):
        raise InvalidInput(f"not a memory id: {memory_id!r}")
    return f"{shard_of(memory_id)}/{memory_id}.json"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dump(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")


def memory_bytes(mem: Memory, entities: list[str], links: list[tuple[str, str, float | None]]) -> bytes:
    """The file of a live memory (entity names and outgoing links sorted, so the same memory is the same bytes)."""
    obj = {k: v for k, v in mem.to_dict().items() if k not in _LOCAL_KEYS}
    obj["format"] = FORMAT
    obj["entities"] = sorted(set(entities))
    obj["links"] = [
        {"to": to, "type": kind, "score": None if score is None else round(float(score), 4)}
        for to, kind, score in sorted(links, key=lambda x: (x[0], x[1]))
    ]
    return _dump(obj)


def tombstone_bytes(memory_id: str, forgotten_at: str) -> bytes:
    return _dump({"format": FORMAT, "id": memory_id, "forgotten_at": forgotten_at})


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different. JSON allows a repeated key and parsers disagree on which value
    wins (Python's keeps the last, a diff viewer shows both, a reviewer reads the first): a file that means two
    things is refused."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


@dataclass
class ParsedFile:
    """A file that parsed: a memory to apply, or a tombstone (`memory` None)."""

    memory_id: str
    shared: SharedMemory | None
    forgotten_at: str | None = None


def parse_file(data: bytes, memory_id: str) -> ParsedFile:
    """Validate one file of the text form (named after `memory_id`). InvalidInput says why it is refused, in one
    line with no secret in it."""
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(f"larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("not UTF-8 text") from None
    if _CONFLICT_RE.search(text):
        raise InvalidInput("unresolved git conflict (<<<<<<< markers): resolve it, then run `codememory sync`")
    try:
        obj = json.loads(valid_json_text(text), object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:  # arrays or objects nested past the interpreter's limit, well within the size cap
        raise InvalidInput("not valid JSON (nested too deeply)") from None
    except _DuplicateKey as exc:
        said = f"the key {exc.key[:40]!r} appears twice (a reader sees one value, the store would take the other)"
        raise InvalidInput(scrub_message(said, limit=300)) from None
    if not isinstance(obj, dict):
        raise InvalidInput("expected a JSON object")
    if obj.get("format") != FORMAT:
        raise InvalidInput(f"unknown format {obj.get('format')!r} (this codememory reads format {FORMAT})")
    if obj.get("id") != memory_id:
        raise InvalidInput("its id is not the one its file name gives")
    unknown = sorted(str(k)[:40] for k in obj if k not in _KNOWN_KEYS)
    if unknown:
        raise InvalidInput(f"unknown key(s): {', '.join(unknown[:5])}")
    try:
        if "forgotten_at" in obj:
            if set(obj) != {"format", "id", "forgotten_at"}:
                raise InvalidInput("a tombstone holds only format, id and forgotten_at")
            stamp = obj["forgotten_at"]
            if not isinstance(stamp, str):
                raise InvalidInput("forgotten_at must be an ISO 8601 string")
            try:
                return ParsedFile(memory_id, None, canonical_iso(stamp))
            except ValueError:
                raise InvalidInput("forgotten_at is not an ISO 8601 timestamp") from None
        for key in ("created_at", "updated_at", "text"):
            if key not in obj:
                raise InvalidInput(f"missing {key!r}")
        for key in ("entered_by", "source"):
            if isinstance(obj.get(key), str) and len(obj[key]) > MAX_LABEL:
                raise InvalidInput(f"{key} is longer than {MAX_LABEL} characters")
        from codememory.service.transfer import _links, memory_from_dict  # the record checks import uses too

        mem, _ = memory_from_dict({k: v for k, v in obj.items() if k not in _LOCAL_KEYS})
        mem.provenance = Provenance("git")  # whoever committed it, which only git can tell (service/sharing.py)
        names = obj.get("entities") or []
        if not isinstance(names, list) or len(names) > MAX_ENTITIES or not all(isinstance(n, str) for n in names):
            raise InvalidInput(f"entities must be a list of at most {MAX_ENTITIES} strings")
        links = obj.get("links") or []
        if isinstance(links, list) and len(links) > MAX_LINKS:
            raise InvalidInput(f"more than {MAX_LINKS} links")
        parsed_links = [(to, kind, score) for _, to, kind, score in _links(obj, mem.id)]
    except InvalidInput as exc:  # its message may quote a field, which may hold a secret
        raise InvalidInput(scrub_message(exc, limit=300)) from None
    return ParsedFile(memory_id, SharedMemory(mem, entities_in(mem.text, names), parsed_links))
