"""JSON read from data other programs wrote (OpenCode's database, a hook's payload, the raw-event queue a
plugin filled): there, anything that is not a JSON object means "no fields", never an error, so one odd row
or payload cannot stop a capture pass or a hook."""

from __future__ import annotations

import json
from typing import Any


def json_object(text: object) -> dict[str, Any]:
    """The JSON object in `text` (str or bytes); {} for anything else (not text, not JSON, not an object)."""
    if not isinstance(text, str | bytes):
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, bytes in no UTF encoding, arrays nested past the C stack
        return {}
    return value if isinstance(value, dict) else {}
