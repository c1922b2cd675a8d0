"""Helpers for the CLI tests: run a command and check its result, make memories, read the store file."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from click.testing import Result

Invoke = Callable[..., Result]

ID = re.compile(r"mem_[0-9a-f]{8}")


def ok(result: Result) -> Result:
    assert result.exit_code == 0, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert result.exception is None, result.exception
    assert "Traceback" not in result.output
    return result


def ok_json(result: Result) -> Any:
    return json.loads(ok(result).stdout)


def assert_error(result: Result, *fragments: str, code: int | None = None) -> str:
    """A user error: non-zero exit, one clear line on stderr, nothing on stdout, never a traceback."""
    assert result.exit_code != 0, f"expected failure, got exit 0\nstdout: {result.stdout}"
    if code is not None:
        assert result.exit_code == code, f"exit {result.exit_code}, stderr: {result.stderr}"
    # Anything other than SystemExit means an exception escaped the CLI (a traceback for a real user).
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    err = result.stderr.strip()
    assert err.startswith("codememory: error: "), err
    assert len(err.splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"
    assert result.stdout == ""
    return err


def store(cm: Invoke, text: str, *opts: Any) -> str:
    """Store through the CLI and return the new memory's id (via --quiet)."""
    out = ok(cm("store", text, "--quiet", *opts)).stdout.strip()
    assert ID.fullmatch(out), out
    return out


def search_ids(cm: Invoke, *args: Any) -> list[str]:
    return [r["id"] for r in ok_json(cm("search", *args, "--json"))["results"]]


def list_ids(cm: Invoke, *args: Any) -> list[str]:
    return [m["id"] for m in ok_json(cm("list", *args, "--json"))["memories"]]


def show(cm: Invoke, memory_id: str) -> dict[str, Any]:
    data = ok_json(cm("show", memory_id, "--json"))
    assert isinstance(data, dict)
    return data


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def db_file(root: Path) -> Path:
    return root / ".codememory" / "memory.db"


def parse_ts(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def run_script(script: Path, *args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CODEMEMORY_PROJECT"}
    env.update(kwargs.pop("env", {}))
    return subprocess.run([str(script), *map(str, args)], capture_output=True, text=True, timeout=60, env=env, **kwargs)


# Three memories whose six sort keys each put them in a different order (see test_list_sort_keys).
SORTABLE = [
    {
        "id": "mem_0000000a",
        "text": "charlie fruit cherry",
        "category": "fact",
        "importance": 0.1,
        "tags": ["red"],
        "entered_by": "alice",
        "created_at": "2025-01-01T00:00:00.000Z",
        "updated_at": "2025-06-01T00:00:00.000Z",
        "expires_at": "2099-02-01T00:00:00.000Z",
        "last_accessed_at": "2025-02-10T00:00:00.000Z",
        "access_count": 3,
    },
    {
        "id": "mem_0000000b",
        "text": "bravo fruit banana",
        "category": "decision",
        "importance": 0.9,
        "tags": ["yellow"],
        "entered_by": "bob",
        "created_at": "2025-02-01T00:00:00.000Z",
        "updated_at": "2025-04-01T00:00:00.000Z",
        "expires_at": "2099-03-01T00:00:00.000Z",
        "last_accessed_at": "2025-01-10T00:00:00.000Z",
        "access_count": 1,
    },
    {
        "id": "mem_0000000c",
        "text": "alpha fruit apple",
        "category": "gotcha",
        "importance": 0.5,
        "tags": ["red", "green"],
        "entered_by": "alice",
        "created_at": "2025-03-01T00:00:00.000Z",
        "updated_at": "2025-05-01T00:00:00.000Z",
        "expires_at": "2099-01-01T00:00:00.000Z",
        "last_accessed_at": "2025-03-10T00:00:00.000Z",
        "access_count": 2,
    },
]
A, B, C = (m["id"] for m in SORTABLE)


def import_expired(cm: Invoke, tmp_path: Path, text: str = "stale expired staging token note") -> str:
    """An already-expired memory can only come from an import (store refuses a past expiry)."""
    record = {
        "id": "mem_dead0001",
        "text": text,
        "created_at": "2024-01-01T00:00:00.000Z",
        "expires_at": "2024-02-01T00:00:00.000Z",
    }
    ok(cm("import", write_jsonl(tmp_path / "expired.jsonl", [record])))
    return "mem_dead0001"
