"""Benchmark of what the Claude Code hooks put into a conversation over several prompts (issue 14, item 4):
injected tokens per prompt and memories re-injected within one session.

The real `claude` CLI (pinned in tests/clis) runs against the scripted Anthropic API of the tests, in a project
set up with `codememory init --assistants claude` and 42 hand-written memories of one imaginary service. Three
sessions of seven prompts each; consecutive prompts stay on a topic for a while, as real work does. Every prompt
is one `claude -p` (the first with `--session-id`, the others `--resume` it), so the hooks run as Claude Code
runs them: SessionStart (source startup, then resume) and UserPromptSubmit. After each prompt the transcript
Claude Code sends to the model is read back: every `<project_memory>` block it carries (SessionStart's and each
UserPromptSubmit's additional context, kept in the transcript), with the memory lines in it.

Reported per prompt: the tokens of the blocks this prompt added (⌈characters / 4⌉, codememory.text.tokens), the
memory lines in them, and how many of those lines the transcript already held word for word (a re-injection).
Per session: the tokens and the re-injections summed. A memory whose text changed is not counted as a
re-injection (it is new text); none changes here.

    .venv/bin/python benchmarks/bench_hook_repeats.py [--daemon] [--out results.json]

`--daemon` runs a codememory daemon first, so the prompt hooks are answered through its POST /hook. Work files
go to benchmarks/.work/hook-repeats/ (gitignored).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from codememory.text.tokens import estimate_tokens  # noqa: E402
from support.opencode import make_git_project  # noqa: E402
from support.scripted_anthropic import Reply, Script, ScriptedAnthropic, block_text  # noqa: E402

CLAUDE = HERE.parent / "tests" / "clis" / "node_modules" / ".bin" / "claude"
CODEMEMORY = str(Path(sys.executable).with_name("codememory"))
BLOCK_RE = re.compile(r"(\w+) hook additional context: (<project_memory>\n.*?\n</project_memory>)", re.S)
LINE_RE = re.compile(r"^- `(mem_[0-9a-f]{8})`.*$", re.M)

# One service's memory, several facts per topic: `category importance text`, one a line.
MEMORIES_TEXT = """
convention 0.9 Staging deploys run `make deploy-staging`; it builds the image and rolls the atlas-api pods.
fact 0.6 The staging cluster is on Kubernetes 1.31 in eu-west-1; production is in us-east-1.
gotcha 0.8 Deploys to production need the release tag vX.Y.Z pushed first; the deploy job refuses untagged commits.
fact 0.6 Rollbacks: `make rollback ENV=staging` restores the previous image tag from the deploy history.
convention 0.7 Helm chart values for atlas-api live in deploy/helm/values-<env>.yaml; never edit the rendered manifests.
fact 0.7 Postgres 16 is the only database; local development uses the docker compose service on port 5433.
convention 0.8 Migrations use alembic; generate with `make migration NAME=...` and review the generated diff by hand.
gotcha 0.9 Never run alembic downgrade in production: the migrations drop columns and data is lost.
gotcha 0.7 The orders table is partitioned by month; queries without a created_at range scan every partition.
convention 0.6 Use SQLAlchemy 2.0 style select() everywhere; the legacy Query API is banned by the linter config.
gotcha 0.8 Database connections go through pgbouncer in transaction mode, so session-level advisory locks do not work.
fact 0.7 Authentication uses short-lived JWTs signed with RS256; the public keys are served at /.well-known/jwks.json.
decision 0.7 Refresh tokens are stored hashed in the refresh_tokens table and rotate on every use.
decision 0.6 We chose Keycloak over Auth0 because customers need on-premises single sign-on.
convention 0.6 Service-to-service calls authenticate with mTLS certificates from the internal CA, not JWTs.
decision 0.8 Rate limits are counted per API key, never per client IP address: customers sit behind shared NAT.
decision 0.7 The rate limiter keeps its counters in Redis with INCR and a 60 second expiry.
convention 0.6 Rate limit responses are 429 with a Retry-After header in seconds; the SDKs rely on it.
gotcha 0.7 Redis runs as a single primary with one replica; the limiter must fail open when Redis is down.
convention 0.7 Tests run with pytest; `make test` starts the docker compose Postgres and Redis first.
convention 0.8 Integration tests use a real Postgres per worker (pytest-xdist); never mock the database layer.
gotcha 0.5 Flaky test: test_webhook_retry depends on wall-clock time; it uses freezegun now, keep it that way.
fact 0.5 Test fixtures for orders live in tests/factories.py (factory_boy); add new models there.
convention 0.5 Coverage must stay above 85 percent; the CI job fails below it.
fact 0.5 The frontend is React with Vite; `pnpm dev` proxies /api to localhost:8000.
decision 0.6 Use TanStack Query for server state in the frontend; Redux was removed in 2025.
convention 0.5 Frontend builds fail on TypeScript strict errors; do not add ts-ignore comments, fix the types.
convention 0.7 Logging is structured JSON through structlog; include request_id in every log line.
fact 0.5 Traces go to OpenTelemetry collector on port 4317; sampling is 10 percent in production.
fact 0.5 Alerts page on p95 latency over 800 ms for five minutes on the orders endpoints.
gotcha 0.6 Sentry captures unhandled exceptions; scrub customer emails with the before_send hook.
fact 0.6 CI runs on GitHub Actions; the main workflow is .github/workflows/ci.yml with lint, test and build jobs.
gotcha 0.5 CI caches the uv virtualenv keyed on uv.lock; bump the cache key when the Python version changes.
convention 0.7 Dependencies are managed with uv; never pip install into the project environment.
convention 0.7 Background jobs use Celery with RabbitMQ; tasks must be idempotent because of retries.
fact 0.5 The email task retries five times with exponential backoff, then writes to the dead letter queue.
gotcha 0.8 Webhooks are signed with HMAC-SHA256 over the raw body; verify before parsing the JSON.
convention 0.7 The public API is versioned in the URL (/v1, /v2); breaking changes need a new version.
decision 0.6 Pagination uses opaque cursors, not offsets: offset pagination timed out on the orders table.
fact 0.5 Caching of GET /v2/catalog is done at the CDN with a 5 minute TTL; purge it after catalog imports.
todo 0.5 TODO: move the invoice PDF rendering out of the request path into a Celery task.
convention 0.5 Feature flags come from Unleash; remove a flag within two sprints of full rollout.
"""
MEMORIES = [
    (text, category, float(importance))
    for category, importance, text in (line.split(" ", 2) for line in MEMORIES_TEXT.strip().splitlines())
]

SESSIONS: list[list[str]] = [
    [
        "How do we deploy atlas-api to staging?",
        "The staging deploy failed on the helm values, where do they live?",
        "Can we roll back staging to the previous image?",
        "What do I need before a production deploy?",
        "Add a migration for a new discount column on the orders table.",
        "Is it safe to downgrade that alembic migration in production?",
        "Run the tests for the orders migration.",
    ],
    [
        "Add rate limiting to the public API.",
        "Where should the rate limiter keep its counters?",
        "What should the API return when a client is rate limited?",
        "What happens to the rate limiter when Redis is down?",
        "Write integration tests for the rate limiter.",
        "Count rate limits per IP address instead of per API key?",
        "Log rate limit rejections with the request id.",
    ],
    [
        "Refresh tokens: how are they stored and rotated?",
        "Add a new service that calls atlas-api; how does it authenticate?",
        "Verify the signature of incoming webhooks.",
        "Retry failed webhook deliveries in a background job with Celery.",
        "The webhook retry test is flaky, what do we know?",
        "Paginate the webhook deliveries list in the v2 API.",
        "Deploy the webhook changes to staging.",
    ],
]


@dataclass
class PromptRow:
    session: int
    prompt: int
    start_tokens: int  # the SessionStart block(s) this prompt's run added to the transcript
    prompt_tokens: int  # the UserPromptSubmit block(s)
    lines: int  # memory lines in them
    repeated: int  # of those, lines the transcript already held word for word


@dataclass
class SessionRow:
    session: int
    prompts: int
    tokens: int
    lines: int
    distinct: int  # distinct memories the session's transcript holds
    repeated: int  # memory lines injected again, word for word
    copies_max: int  # the most copies of one memory line in the transcript


@dataclass
class Results:
    label: str
    daemon: bool
    rows: list[PromptRow] = field(default_factory=list)
    sessions: list[SessionRow] = field(default_factory=list)


def claude_env(home: Path) -> dict[str, str]:
    sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))
    from test_e2e_claude import isolated_env

    env = isolated_env(home)
    env["CODEMEMORY_NO_CAPTURE"] = "1"  # the daemon's capture passes are not what is measured
    return env


def cm(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run([CODEMEMORY, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"codememory {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def blocks(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(hook event, block) for every hook context block in the request, in transcript order."""
    text = "\n".join(block_text(m.get("content")) for m in body.get("messages") or [])
    return BLOCK_RE.findall(text)


def run_prompt(env: dict[str, str], project: Path, prompt: str, session: str, first: bool) -> dict[str, Any]:
    """One `claude -p` turn of the session; the last conversation request the model received."""
    resume = ["--session-id", session] if first else ["--resume", session]
    with ScriptedAnthropic(Script([Reply("Noted.")])) as api:
        done = subprocess.run(
            [str(CLAUDE), "-p", prompt, *resume, "--output-format", "json"],
            cwd=project,
            env={**env, "ANTHROPIC_BASE_URL": api.base_url},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        requests = api.conversation_requests()
    if done.returncode != 0 or not requests:
        raise SystemExit(f"claude -p failed ({done.returncode}): {done.stdout[-2000:]} {done.stderr[-2000:]}")
    return requests[-1]


@contextmanager
def maybe_daemon(env: dict[str, str], project: Path, on: bool) -> Iterator[dict[str, str]]:
    """The environment to run `claude` in. With the daemon: the hook processes get a user config that
    codememory refuses, so a hook that does its work in process (instead of through the daemon) injects nothing
    and the figures would show it."""
    if not on:
        yield env
        return
    from support.daemon import spawn

    daemon = spawn(env)
    broken = Path(env["HOME"]) / "broken-config"
    (broken / "codememory").mkdir(parents=True, exist_ok=True)
    (broken / "codememory" / "config.toml").write_text("[no_such_section]\n")
    hook_env = {**env, "XDG_CONFIG_HOME": str(broken)}
    try:
        _warm_up(hook_env, project)
        yield hook_env
    finally:
        daemon.terminate()


def _warm_up(env: dict[str, str], project: Path) -> None:
    """A first prompt hook in a session of its own, until the daemon answers it within the hook's wait (its
    first retrieval loads the embedding model, which can take longer; the hook then runs in process)."""
    hook = Path(sys.executable).with_name("codememory-hook")
    prompt = "How do we deploy atlas-api to staging?"
    for attempt in range(20):
        payload = {"session_id": f"warm-up-{attempt}", "cwd": str(project), "prompt": prompt}
        argv = [str(hook), "codex", "UserPromptSubmit"]  # not a claude-code session: no "last session" line
        done = subprocess.run(argv, input=json.dumps(payload), env=env, capture_output=True, text=True)
        if done.stdout.strip():
            return
    raise SystemExit("the daemon did not answer the prompt hook")


def measure(work: Path, label: str, daemon: bool) -> Results:
    shutil.rmtree(work, ignore_errors=True)
    project = make_git_project(work / "atlas")
    env = claude_env(work / "home")
    cm(env, project, "init", "--assistants", "claude")
    for text, category, importance in MEMORIES:
        cm(env, project, "store", text, "--category", category, "--importance", str(importance), "--quiet")
    results = Results(label, daemon)
    with maybe_daemon(env, project, daemon) as run_env:
        for s, prompts in enumerate(SESSIONS, 1):
            session = str(uuid.uuid4())
            seen: list[tuple[str, str]] = []
            for p, prompt in enumerate(prompts, 1):
                now = blocks(run_prompt(run_env, project, prompt, session, p == 1))
                added = now[len(seen) :]
                held = {m.group(0) for _e, b in seen for m in LINE_RE.finditer(b)}
                new_lines = [m.group(0) for _e, b in added for m in LINE_RE.finditer(b)]
                repeated = 0
                for line in new_lines:  # the start block and the first prompt's block may repeat each other
                    repeated += line in held
                    held.add(line)
                results.rows.append(
                    PromptRow(
                        session=s,
                        prompt=p,
                        start_tokens=sum(estimate_tokens(b) for e, b in added if e == "SessionStart"),
                        prompt_tokens=sum(estimate_tokens(b) for e, b in added if e != "SessionStart"),
                        lines=len(new_lines),
                        repeated=repeated,
                    )
                )
                seen = now
            every = [m.group(0) for _e, b in seen for m in LINE_RE.finditer(b)]
            mine = [r for r in results.rows if r.session == s]
            results.sessions.append(
                SessionRow(
                    session=s,
                    prompts=len(prompts),
                    tokens=sum(r.start_tokens + r.prompt_tokens for r in mine),
                    lines=len(every),
                    distinct=len(set(every)),
                    repeated=len(every) - len(set(every)),
                    copies_max=max((every.count(line) for line in set(every)), default=0),
                )
            )
    return results


def report(res: Results) -> None:
    print(f"\n### {res.label}{' (daemon running)' if res.daemon else ''}\n")
    print("| session | prompt | start-block tokens | prompt-block tokens | memory lines | of them repeated |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in res.rows:
        print(f"| {r.session} | {r.prompt} | {r.start_tokens} | {r.prompt_tokens} | {r.lines} | {r.repeated} |")
    print("\n| session | prompts | injected tokens | memory lines | distinct memories | re-injections | most copies |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for x in res.sessions:
        print(f"| {x.session} | {x.prompts} | {x.tokens} | {x.lines} | {x.distinct} | {x.repeated} | {x.copies_max} |")
    per_prompt = [r.start_tokens + r.prompt_tokens for r in res.rows]
    later = [r.prompt_tokens for r in res.rows if r.prompt > 1]
    print(
        f"\ninjected tokens per prompt: p50 {statistics.median(per_prompt):.0f}, mean {statistics.mean(per_prompt):.0f}"
        f"; prompts 2+ p50 {statistics.median(later):.0f}; prompts that injected nothing: "
        f"{sum(1 for t in per_prompt if t == 0)} of {len(per_prompt)}; "
        f"re-injections per session: {[x.repeated for x in res.sessions]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--daemon", action="store_true", help="run a codememory daemon (prompt hooks go through it)")
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    if not CLAUDE.exists():
        raise SystemExit(f"no claude binary at {CLAUDE}: run `npm ci --prefix tests/clis`")
    started = time.monotonic()
    res = measure(HERE / ".work" / "hook-repeats", args.label, args.daemon)
    report(res)
    print(f"\n({len(res.rows)} prompts in {time.monotonic() - started:.0f} s)")
    if args.out:
        args.out.write_text(json.dumps(asdict(res), indent=1) + "\n")


if __name__ == "__main__":
    main()
