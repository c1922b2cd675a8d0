"""The two written forms of "now": the store's (milliseconds, `Z`) and the user's JSON files' (seconds)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from codememory.core import registry
from codememory.core.dates import from_iso, now_iso, now_iso_seconds


def test_the_json_files_form_is_utc_to_the_second() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    stamp = now_iso_seconds()
    assert stamp.endswith("+00:00") and "." not in stamp and len(stamp) == len("2026-11-22T02:24:36+00:00")
    assert before <= datetime.fromisoformat(stamp) <= before + timedelta(seconds=2)
    assert now_iso().endswith("Z") and abs(from_iso(now_iso()) - from_iso(stamp)) < timedelta(seconds=2)


def test_the_registry_records_when_a_project_was_added(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    root = tmp_path / "shop"
    assert registry.register(root, root / ".codememory", path) == "added"
    [entry] = json.loads(path.read_text(encoding="utf-8"))["projects"]
    assert datetime.fromisoformat(entry["registered_at"]).utcoffset() == timedelta(0)
    assert entry["registered_at"] == entry["registered_at"][:19] + "+00:00"
