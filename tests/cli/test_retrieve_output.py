"""`codememory retrieve` in a terminal: each memory's reasons as one readable line, never a Python dict; `--json`
keeps the structured `why`."""

from __future__ import annotations

import re

from support.cli import Invoke, ok, ok_json, store


def test_retrieve_prints_a_readable_why_line(cm: Invoke) -> None:
    webhook = store(cm, "The webhook worker calls the payment provider with httpx and retries three times")
    store(cm, "Docs are built with mkdocs and published on every tag")
    out = ok(cm("retrieve", "-q", "httpx webhook retries", "--pinned", webhook)).stdout
    first = out.splitlines()[0]
    assert first.startswith(f"{webhook}  note  [by the user]  bm25 "), out  # where it came from, then why
    tail = r"· matched: [a-z, ]*httpx[a-z, ]* · entities: httpx · pinned · via lexical \((exact|partial)\)$"
    assert re.search(tail, first), first
    assert "{" not in out and "'retriever'" not in out
    why = ok_json(cm("retrieve", "-q", "httpx webhook retries", "--json"))["memories"][0]["why"]
    assert why["retriever"] == "lexical" and "httpx" in why["words"] and isinstance(why["bm25"], float)
