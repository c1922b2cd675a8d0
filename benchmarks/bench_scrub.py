"""Throughput of `privacy.scrub` on transcript-like text (it runs on every captured turn).

Builds a deterministic ~1 MB text shaped like a coding session's transcript: prompts and answers in prose,
markdown with code blocks, tool calls as JSON (shell commands, edits), tool outputs (pytest runs, git logs,
diffs, tracebacks, npm logs, config files), with words that open the scrubber's gates (password, token, key,
auth, `://`) as real code does, and a secret about every 20 KB. Reports MB/s for the whole text in one call
and for the same text in 4 KB chunks (one call per turn-sized piece), best of `--repeat` runs.

    .venv/bin/python benchmarks/bench_scrub.py [--size 1000000] [--repeat 5] [--baseline GIT_REF]

`--baseline REF` also loads the filter as it was at REF (text/privacy.py and privacy_context.py from git) and times
both in this process, alternating, in CPU time (less exposed to a shared machine's load than wall time): the ratio
is the figure; it also says whether both give the same output.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from codememory.text.privacy import scrub

WORDS = (
    "the cache layer retries the request after a timeout because the upstream service drops idle connections "
    "we decided to keep the token refresh in the middleware and validate the password field on the server "
    "the auth module reads its settings from config and the key rotation job runs nightly in staging "
    "tests fail when the fixture leaves a temporary folder behind so the teardown removes it explicitly"
).split()
PATHS = ["src/app/auth/session.py", "src/app/db/pool.ts", "tests/test_login.py", "web/components/Form.tsx"]
CODE = [
    "def refresh_token(session: Session, *, max_tokens: int = 4096) -> str:\n"
    '    """Ask the auth server for a new access token."""\n'
    "    response = session.post(settings.token_url, data={'grant_type': 'refresh_token'})\n"
    "    response.raise_for_status()\n    return response.json()['access_token']\n",
    "export async function login(user: string, password: string): Promise<Token> {\n"
    "  const res = await fetch(`${API}/login`, { method: 'POST', body: JSON.stringify({ user, password }) });\n"
    "  if (!res.ok) throw new AuthError(res.status);\n  return res.json();\n}\n",
    "class KeyStore:\n    def __init__(self, path: Path) -> None:\n        self.path = path\n"
    "        self.keys: dict[str, bytes] = {}\n\n    def get(self, key_id: str) -> bytes | None:\n"
    "        return self.keys.get(key_id)\n",
]
OUTPUTS = [
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0\nrootdir: /home/dev/app\ncollected 42 items\n\n"
    "tests/test_login.py ........F.....                                        [ 35%]\n"
    "tests/test_session.py ...........................                         [100%]\n\n"
    "FAILED tests/test_login.py::test_wrong_password_is_rejected - AssertionError: assert 200 == 401\n",
    "commit 3f2a9c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291\nAuthor: Dev Ops <dev@example.com>\n"
    "Date:   Mon Nov 2 10:12:44 2026 +0100\n\n    Move token refresh into the middleware\n",
    "diff --git a/src/app/auth/session.py b/src/app/auth/session.py\nindex 1a2b3c4..5d6e7f8 100644\n"
    "--- a/src/app/auth/session.py\n+++ b/src/app/auth/session.py\n@@ -10,7 +10,7 @@ class Session:\n"
    "-        self.timeout = 5\n+        self.timeout = 30\n",
    'Traceback (most recent call last):\n  File "/home/dev/app/src/app/db/pool.py", line 88, in acquire\n'
    "    conn = self._queue.get(timeout=self.timeout)\nqueue.Empty\n",
    "npm WARN deprecated inflight@1.0.6: This module is not supported\nadded 312 packages, and audited 313 "
    "packages in 9s\nfound 0 vulnerabilities\n",
    '{\n  "name": "web",\n  "version": "1.4.2",\n  "scripts": {"build": "vite build", "test": "vitest"},\n'
    '  "dependencies": {"react": "^18.3.1", "zod": "^3.23.8"}\n}\n',
    "[server]\nhost = 0.0.0.0\nport = 8080\nmax_connections = 100\n[auth]\ntoken_ttl = 3600\n"
    "issuer = https://auth.example.com\n",
]


def _secret(rng: random.Random) -> str:
    body = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(24))
    return rng.choice(
        [
            f"export GITHUB_TOKEN=ghp_{body}{body[:12]}",
            f"DATABASE_URL=postgres://app:{body[:14]}@db.internal:5432/app",
            f'{{"password": "{body[:16]}", "user": "admin"}}',
            f"curl -H 'Authorization: Bearer {body}' https://api.example.com/v1/items",
        ]
    )


def transcript(size: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    total = next_secret = 0
    while total < size:
        kind = rng.randrange(6)
        if kind == 0:
            piece = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 80))).capitalize() + ".\n"
        elif kind == 1:
            piece = f"I changed `{rng.choice(PATHS)}`:\n\n```python\n{rng.choice(CODE)}```\n"
        elif kind == 2:
            cmd = rng.choice(["pytest -q tests/", "git log -3", "npm install", f"cat {rng.choice(PATHS)}"])
            piece = json.dumps({"tool": "bash", "input": {"command": cmd, "description": "run it"}}) + "\n"
        elif kind == 3:
            piece = json.dumps({"tool": "edit", "input": {"filePath": rng.choice(PATHS), "new": rng.choice(CODE)}})
            piece += "\n"
        else:
            piece = rng.choice(OUTPUTS)
        if total >= next_secret:
            piece += _secret(rng) + "\n"
            next_secret += 20_000
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size]


def _best(fn: object, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def _filter_at(ref: str, folder: Path) -> ModuleType:
    """privacy.py as it was at git `ref` (with its privacy_context.py), imported under other names."""
    repo = Path(__file__).resolve().parents[1]
    for name in ("privacy", "privacy_context"):
        source = subprocess.run(
            ["git", "-C", str(repo), "show", f"{ref}:src/codememory/text/{name}.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        source = source.replace("from codememory.text.privacy_context import", "from baseline_privacy_context import")
        (folder / f"baseline_{name}.py").write_text(source)
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location("baseline_privacy", folder / "baseline_privacy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compare(ref: str, text: str, chunks: list[str], repeat: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        old = _filter_at(ref, Path(folder))
        best = {"baseline": [float("inf")] * 2, "now": [float("inf")] * 2}
        for _ in range(repeat):
            for name, run in (("baseline", old.scrub), ("now", scrub)):
                start = time.process_time()
                run(text)
                best[name][0] = min(best[name][0], time.process_time() - start)
                start = time.process_time()
                for chunk in chunks:
                    run(chunk)
                best[name][1] = min(best[name][1], time.process_time() - start)
        same = old.scrub(text) == scrub(text)
    for name, (whole, pieces) in best.items():
        print(f"{name}: whole text {whole * 1000:.0f} ms CPU, 4 KB chunks {pieces * 1000:.0f} ms CPU")
    ratio = (best["now"][0] / best["baseline"][0], best["now"][1] / best["baseline"][1])
    print(f"now / {ref}: whole {ratio[0]:.2f}, chunks {ratio[1]:.2f}; same output: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", help="a git ref: time the filter as it was there too, alternating")
    args = parser.parse_args()
    text = transcript(args.size)
    chunks = [text[i : i + 4096] for i in range(0, len(text), 4096)]
    if args.baseline:
        _compare(args.baseline, text, chunks, args.repeat)
        return
    whole = _best(lambda: scrub(text), args.repeat)
    pieces = _best(lambda: [scrub(c) for c in chunks], args.repeat)
    mb = len(text.encode()) / 1e6
    print(f"text: {mb:.2f} MB, {scrub(text).count('[REDACTED:')} redactions")
    print(f"whole text: {whole * 1000:.0f} ms = {mb / whole:.1f} MB/s")
    print(f"4 KB chunks: {pieces * 1000:.0f} ms = {mb / pieces:.1f} MB/s ({len(chunks)} calls)")


if __name__ == "__main__":
    main()
