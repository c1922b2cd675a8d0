"""Extraction through an agent CLI: what a session's extraction asks a model, and what each CLI adds to it
(benchmarks/README.md, "Extraction with an agent CLI"; the figures behind `codememory init --extract-with`).

    .venv/bin/python benchmarks/bench_cli_extraction.py            # ~3 min
    .venv/bin/python benchmarks/bench_cli_extraction.py --only py-linkshort

1. Prompt sizes: bench_extraction.py's corpus (`--set main`, the set the rules were tuned on) replayed with
   `[llm] provider = "openai"` pointed at a scripted server on 127.0.0.1 that answers "no memories". Every extraction
   request it receives is measured: our system prompt, and the user prompt (the transcript with tool calls in a
   sentence each, and the stored memories shown).
2. Each agent CLI (`opencode run`, `claude -p`, `codex exec`: the binaries pinned in integrations/opencode and
   tests/clis) asked the median session's prompt once, through codememory's provider, against a scripted server:
   what its model was shown beyond our prompt (the CLI's own preamble, environment block and tool definitions), and
   the wall time of the call (the CLI's start-up included; the scripted model answers at once).

Tokens are codememory's estimate (codememory.text.tokens, the one the budget checks with), applied to the text each
request shows its model and to the JSON of the tools it offers. Writes benchmarks/results-cli-extraction.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests"))

import extraction_corpus as corpus  # noqa: E402
from codememory.extract.agent_cli import AgentCLI  # noqa: E402
from codememory.text.tokens import estimate_tokens  # noqa: E402
from support import scripted_anthropic as anthropic  # noqa: E402
from support import scripted_responses as responses  # noqa: E402
from support.agent_cli import isolated_env  # noqa: E402
from support.scripted_llm import Reply, ScriptedLLM, message_text  # noqa: E402

WORK = HERE / ".work" / "cli-extraction"
RESULTS = HERE / "results-cli-extraction.json"
NOTHING = json.dumps({"memories": [], "already_known": []})
MARKER = "Extract the durable memories"  # the end of our user prompt: tells our request from a CLI's side requests


def chat_shown(body: dict[str, Any]) -> str:
    return "\n".join(message_text(m) for m in body.get("messages") or []) + json.dumps(body.get("tools") or [])


def anthropic_shown(body: dict[str, Any]) -> str:
    parts = [anthropic.block_text(body.get("system"))]
    parts += [anthropic.block_text(m.get("content")) for m in body.get("messages") or []]
    return "\n".join(parts) + json.dumps(body.get("tools") or [])


def responses_shown(body: dict[str, Any]) -> str:
    return responses.input_text(body) + json.dumps(body.get("tools") or [])


# ----------------------------------------------------------------------------------------- 1. prompt sizes
def prompt_sizes(only: list[str] | None) -> list[dict[str, Any]]:
    """One row per extraction request the corpus's sessions made: the system and user prompts' tokens."""
    requests: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> Reply:
        requests.append(body)
        return Reply(NOTHING)

    items = corpus.load_items(only, corpus.SETS["main"])
    with ScriptedLLM(answer) as llm:
        # The model is the user's choice (a project's own config may not pick one until trusted): it goes in the
        # environment of the replay's user, which the corpus builds.
        model = {"CODEMEMORY_LLM_PROVIDER": "openai", "CODEMEMORY_LLM_BASE_URL": llm.base_url,
                 "CODEMEMORY_LLM_MODEL": "scripted"}  # fmt: skip
        users_env = corpus.isolated_env
        corpus.isolated_env = lambda home: {**users_env(home), **model}
        try:
            corpus.replay(items, WORK / "replay", None)
        finally:
            corpus.isolated_env = users_env
    rows = []
    for body in requests:
        messages = body.get("messages") or []
        system = next((message_text(m) for m in messages if m.get("role") == "system"), "")
        user = next((message_text(m) for m in messages if m.get("role") == "user"), "")
        if MARKER in user:
            rows.append({"system": estimate_tokens(system), "user": estimate_tokens(user), "text": (system, user)})
    return rows


# ------------------------------------------------------------------------------------- 2. each CLI's additions
@contextmanager
def opencode_cli(home: Path, seen: list[dict[str, Any]]) -> Iterator[tuple[AgentCLI, Callable[[dict[str, Any]], str]]]:
    from codememory.extract.cli_opencode import OpenCodeCLI

    with ScriptedLLM(lambda body: (seen.append(body), Reply(NOTHING))[1]) as llm:
        config = home / ".config" / "opencode" / "opencode.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        provider = {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": llm.base_url, "apiKey": "scripted"},
                    "models": {"scripted-model": {}}}  # fmt: skip
        config.write_text(json.dumps({"provider": {"scripted": provider}, "model": "scripted/scripted-model"}))
        binary = REPO / "integrations" / "opencode" / "node_modules" / ".bin" / "opencode"
        yield OpenCodeCLI(str(binary), timeout=300), chat_shown


@contextmanager
def claude_cli(home: Path, seen: list[dict[str, Any]]) -> Iterator[tuple[AgentCLI, Callable[[dict[str, Any]], str]]]:
    from codememory.extract.cli_claude import ClaudeCLI

    with anthropic.ScriptedAnthropic(lambda body: (seen.append(body), anthropic.Reply(NOTHING))[1]) as api:
        os.environ.update(ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY="scripted")
        binary = REPO / "tests" / "clis" / "node_modules" / ".bin" / "claude"
        yield ClaudeCLI(str(binary), timeout=300), anthropic_shown


@contextmanager
def codex_cli(home: Path, seen: list[dict[str, Any]]) -> Iterator[tuple[AgentCLI, Callable[[dict[str, Any]], str]]]:
    from codememory.extract.cli_codex import CodexCLI

    with responses.ScriptedResponses(lambda body: (seen.append(body), Reply(NOTHING))[1]) as api:
        os.environ["SCRIPTED_API_KEY"] = "scripted"
        config = home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            'model = "scripted-model"\nmodel_provider = "scripted"\n'
            f'[model_providers.scripted]\nname = "Scripted"\nbase_url = {json.dumps(api.base_url)}\n'
            'env_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n'
        )
        binary = REPO / "tests" / "clis" / "node_modules" / ".bin" / "codex"
        yield CodexCLI(str(binary), timeout=300), responses_shown


CLIS = {"opencode": opencode_cli, "claude": claude_cli, "codex": codex_cli}


def cli_additions(system: str, user: str) -> dict[str, Any]:
    """Per CLI: our prompt's tokens, what its model was shown, the difference, the requests and the call's seconds."""
    ours = estimate_tokens(system) + estimate_tokens(user)
    out: dict[str, Any] = {}
    saved = dict(os.environ)
    for name, serve in CLIS.items():
        home = Path(tempfile.mkdtemp(prefix=f"cm-bench-{name}-", dir=WORK))
        users_env = isolated_env(home)
        os.environ.clear()
        os.environ.update(users_env)
        seen: list[dict[str, Any]] = []
        try:
            with serve(home, seen) as (provider, shown):
                started = time.perf_counter()
                provider.complete(system, user, purpose="extract", max_tokens=2048)
                seconds = time.perf_counter() - started
        finally:
            os.environ.clear()
            os.environ.update(saved)
        asked = [b for b in seen if MARKER in shown(b)]
        total = sum(estimate_tokens(shown(b)) for b in asked)
        side = sum(estimate_tokens(shown(b)) for b in seen if b not in asked)
        out[name] = {"our_prompt": ours, "shown": total, "added": total - ours, "side_requests": len(seen) - len(asked),
                     "side_tokens": side, "seconds": round(seconds, 1)}  # fmt: skip
        corpus.log(f"{name}: {out[name]}")
    return out


def git_commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="replay only these corpus items (file stems)")
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    rows = prompt_sizes(args.only)
    if not rows:
        sys.exit("no extraction request was made (is the corpus there?)")
    users = sorted(r["user"] for r in rows)
    median_row = sorted(rows, key=lambda r: r["user"])[len(rows) // 2]
    sizes = {
        "requests": len(rows),
        "system": rows[0]["system"],
        "user_median": statistics.median(users),
        "user_max": users[-1],
        "user_min": users[0],
    }
    corpus.log(f"prompt sizes: {sizes}")
    additions = cli_additions(*median_row["text"])
    results = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "commit": git_commit(),
        "command": "python benchmarks/bench_cli_extraction.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "prompt_sizes": sizes,
        "clis": additions,
    }
    RESULTS.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print("| CLI | our prompt | shown to its model | added by the CLI | side requests | seconds a call |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, r in additions.items():
        print(f"| {name} | {r['our_prompt']} | {r['shown']} | {r['added']} | {r['side_requests']} | {r['seconds']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
