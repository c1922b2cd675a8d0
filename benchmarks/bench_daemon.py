"""Benchmark of the daemon's HTTP bridge: `POST /retrieve` latency (p50/p95) on a 10k-memory synthetic store,
with the embedding model (all-MiniLM-L6-v2) and without it (keywords + entities only), the cost of HTTP alone
(`GET /health`), and the daemon's resident memory (VmRSS from /proc/<pid>/status) at idle.

    python benchmarks/bench_daemon.py [--size 10000] [--calls 200] [--reuse] [--out results.json]

The store is built under benchmarks/.work/daemon/ (gitignored) from benchmarks/synthetic.py, with the model
configured, so every memory is embedded (about 70 s for 10k on 2 cores; `--reuse` keeps a store built by an
earlier run from the same data). Each arm starts a real daemon (`python -m codememory.daemon run --port 0`)
with its own XDG state folder; the "no model" arm sets CODEMEMORY_EMBEDDING_PROVIDER=none, which overrides
the store's setting. Requests are the proactive-retrieval requests of bench_retrieval.py (2-3 fresh phrases
and 1-2 entities each), sent over one keep-alive connection as the OpenCode plugin does; the same requests
are then sent again (query vectors cached), and 50 more over a new connection each (the urllib client).

`--evict` pushes the store's files out of the page cache before each arm's daemon starts (as a reboot or other work
would): the first call and the 60 after it then show what a cold start costs, with the daemon's major page faults
and disk reads before and after its first answer. `--src` runs the daemons from another tree's sources.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic
from bench_core import log, machine, summary
from bench_retrieval import build_store, make_requests
from codememory import Store
from codememory.core.project import db_path
from codememory.daemon.client import Client

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "daemon"
WARMUP = 5
EARLY_CALLS = 60  # the calls after the first reported on their own ("next calls")
START_DEADLINE = 120.0


def rss_kib(pid: int) -> dict[str, int]:
    """VmRSS (resident now) and VmHWM (peak resident) of a process, in KiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0])
    return out


def disk_reads(pid: int) -> dict[str, int]:
    """The process's major page faults (pages of a mapped file brought in from disk while a thread waited) and the
    bytes it has read from disk so far (/proc/<pid>/stat and /proc/<pid>/io)."""
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    io = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return {"major_faults": int(stat[9]), "read_bytes": int(io["read_bytes"])}


class Daemon:
    def __init__(self, name: str, extra_env: dict[str, str], project: Path | None = None) -> None:
        base = WORK / f"daemon-{name}"
        shutil.rmtree(base, ignore_errors=True)
        (base / "config").mkdir(parents=True)
        if project is not None:  # the daemon serves registered projects only: this one, in its own registry
            from codememory.core.registry import register

            register(project.resolve(), db_path(project), base / "config" / "codememory" / "registry.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("CODEMEMORY_")}
        env.update(XDG_STATE_HOME=str(base / "state"), XDG_CONFIG_HOME=str(base / "config"), **extra_env)
        self.state = base / "state" / "codememory"
        self.out = open(base / "stderr.txt", "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "codememory.daemon", "run", "--port", "0", "--background"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.out,
            stderr=self.out,
        )
        deadline = time.monotonic() + START_DEADLINE
        t0 = time.perf_counter()
        while True:
            if self.proc.poll() is not None:
                sys.exit(f"daemon exited: {(base / 'stderr.txt').read_text()[-2000:]}")
            try:
                info = json.loads((self.state / "daemon.json").read_text())
                if info["pid"] == self.proc.pid:
                    Client(port=info["port"], token="", timeout=1).health()
                    break
            except Exception:
                pass
            if time.monotonic() > deadline:
                self.proc.kill()
                sys.exit("the daemon did not answer /health in time")
            time.sleep(0.02)
        self.start_s = time.perf_counter() - t0
        self.port = int(info["port"])
        self.token = (self.state / "token").read_text().strip()
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[float, dict[str, Any]]:
        """One request on the keep-alive connection; (milliseconds, JSON answer)."""
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Host": f"127.0.0.1:{self.port}", "Authorization": f"Bearer {self.token}"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        t0 = time.perf_counter()
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        raw = resp.read()
        ms = (time.perf_counter() - t0) * 1000
        if resp.status != 200:
            sys.exit(f"{method} {path} answered {resp.status}: {raw[:500]!r}")
        return ms, json.loads(raw)

    def stop(self) -> None:
        self.conn.close()
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.out.close()


def store_files(project: Path) -> list[Path]:
    return sorted(p for p in (project / ".codememory").rglob("*") if p.is_file() and not p.is_symlink())


def evict(project: Path) -> dict[str, float | None]:
    """Push the store's files out of the page cache (written pages are flushed first: only clean pages can be
    dropped) and return the share of each large file's pages still cached, sampled (core/page_cache.py)."""
    from codememory.core.page_cache import drop

    for path in store_files(project):
        drop(path)
    return cached_shares(project)


def cached_shares(project: Path) -> dict[str, float | None]:
    from codememory.core.page_cache import resident_share

    out: dict[str, float | None] = {}
    for path in store_files(project):
        if path.stat().st_size >= 1 << 20:
            fd = os.open(path, os.O_RDONLY)
            try:
                out[path.name] = resident_share(fd, os.fstat(fd).st_size)
            finally:
                os.close(fd)
    return out


def retrieve_arm(
    name: str, extra_env: dict[str, str], project: Path, calls: int, seed: int, cold: bool = False
) -> dict[str, Any]:
    page_cache_at_start = evict(project) if cold else cached_shares(project)
    log(f"[{name}] page cache at start: {page_cache_at_start}")
    daemon = Daemon(name, extra_env, project)
    try:
        idle_start = rss_kib(daemon.proc.pid)
        rng = random.Random(seed)
        used: set[str] = set()
        bodies = [
            {"query_expansion": phrases, "entities": entities, "project_root": str(project)}
            for phrases, entities in make_requests(WARMUP + calls, rng, used)
        ]
        reads = [disk_reads(daemon.proc.pid)]
        first_ms, first = daemon.call("POST", "/retrieve", bodies[0])  # opens the store (and loads the model)
        reads.append(disk_reads(daemon.proc.pid))
        early: list[tuple[float, str | None]] = []  # the calls right after the first (a cold page cache shows here)
        for body in bodies[1:WARMUP]:
            ms, res = daemon.call("POST", "/retrieve", body)
            early.append((ms, res["degraded_reason"]))
        fresh, degraded, returned = [], 0, 0
        for body in bodies[WARMUP:]:
            ms, res = daemon.call("POST", "/retrieve", body)
            early.append((ms, res["degraded_reason"]))
            fresh.append(ms)
            degraded += bool(res["degraded"])
            returned += len(res["memories"])
        reads.append(disk_reads(daemon.proc.pid))
        next_calls = early[:EARLY_CALLS]
        reasons: dict[str, int] = {}
        for _, reason in next_calls:
            if reason:
                reasons[reason] = reasons.get(reason, 0) + 1
        cached = [daemon.call("POST", "/retrieve", body)[0] for body in bodies[WARMUP:]]
        health = [daemon.call("GET", "/health")[0] for _ in range(calls)]
        client = Client(port=daemon.port, token=daemon.token, timeout=300)
        new_conn = []
        for body in bodies[WARMUP : WARMUP + 50]:
            t0 = time.perf_counter()
            client.retrieve(body["query_expansion"], project, entities=body["entities"])
            new_conn.append((time.perf_counter() - t0) * 1000)
        settle = time.monotonic() + 2.0
        while time.monotonic() < settle:  # let worker threads go quiet before reading "idle" memory
            time.sleep(0.1)
        idle_after = rss_kib(daemon.proc.pid)
        result = {
            "arm": name,
            "start_s": round(daemon.start_s, 3),
            "first_call_ms": round(first_ms, 1),
            "first_call_degraded_reason": first.get("degraded_reason"),
            "next_calls": summary([ms for ms, _ in next_calls]),
            "next_calls_degraded": reasons,
            "page_cache_at_start": page_cache_at_start,
            # from the daemon's start to the first answer, and over the calls after it to the end of the fresh ones
            "disk_reads_to_first_answer": reads[1],
            "disk_reads_after_first_answer": {k: reads[2][k] - reads[1][k] for k in reads[1]},
            "retrieve_fresh": summary(fresh),
            "retrieve_cached": summary(cached),
            "retrieve_new_connection": summary(new_conn),
            "health": summary(health),
            "degraded_calls": degraded,
            "mean_memories": round(returned / max(len(fresh), 1), 2),
            "rss_idle_start_mib": round(idle_start["VmRSS"] / 1024, 1),
            "rss_idle_after_mib": round(idle_after["VmRSS"] / 1024, 1),
            "rss_idle_after_anon_mib": round(idle_after.get("RssAnon", 0) / 1024, 1),
            "rss_idle_after_file_mib": round(idle_after.get("RssFile", 0) / 1024, 1),
            "rss_peak_mib": round(idle_after["VmHWM"] / 1024, 1),
        }
    finally:
        daemon.stop()
    log(
        f"[{name}] /retrieve p50 {result['retrieve_fresh']['p50_ms']:.1f} ms, p95 "
        f"{result['retrieve_fresh']['p95_ms']:.1f} ms; RSS idle {result['rss_idle_after_mib']:.0f} MiB"
    )
    return result


def ab_arms(project: Path, base_project: Path, base_src: Path, calls: int, seed: int) -> dict[str, Any]:
    """The default model's `/retrieve` in two daemons at once, this tree's and `base_src`'s, each serving its own
    copy of the store: every request goes to both, in alternating order, so load moves both alike. Three passes:
    fresh requests (every phrase new to the daemon), the same requests again (every phrase embedded before), and
    a turn's later steps (the request again with one new tool phrase, as the plugin asks at each tool call)."""
    daemons = {
        "now": Daemon("ab-now", {}, project),
        "base": Daemon("ab-base", {"PYTHONPATH": str(base_src.resolve())}, base_project),
    }
    roots = {"now": project, "base": base_project}
    try:
        rng = random.Random(seed)
        used: set[str] = set()
        requests = make_requests(WARMUP + calls, rng, used)
        steps = make_requests(calls, rng, used)  # their first phrase is the new tool call of a later step
        passes: dict[str, list[tuple[list[str], list[str]]]] = {
            "fresh": requests[WARMUP:],
            "repeated": requests[WARMUP:],
            "later step": [([p[0], s[0]], e) for (p, e), (s, _) in zip(requests[WARMUP:], steps, strict=True)],
        }
        times: dict[tuple[str, str], list[float]] = {}
        for phrases, entities in requests[:WARMUP]:
            for name, daemon in daemons.items():
                body = {"query_expansion": phrases, "entities": entities, "project_root": str(roots[name])}
                daemon.call("POST", "/retrieve", body)
        for pass_name, bodies in passes.items():
            for i, (phrases, entities) in enumerate(bodies):
                order = list(daemons) if i % 2 == 0 else list(reversed(daemons))
                for name in order:
                    body = {"query_expansion": phrases, "entities": entities, "project_root": str(roots[name])}
                    ms, _ = daemons[name].call("POST", "/retrieve", body)
                    times.setdefault((pass_name, name), []).append(ms)
        rss = {name: rss_kib(daemon.proc.pid) for name, daemon in daemons.items()}
    finally:
        for daemon in daemons.values():
            daemon.stop()
    out: dict[str, Any] = {"passes": {}, "rss_after_mib": {n: round(r["VmRSS"] / 1024, 1) for n, r in rss.items()}}
    log(f"[a/b] RSS after the requests: now {out['rss_after_mib']['now']} MiB, base {out['rss_after_mib']['base']} MiB")
    for pass_name in passes:
        now, base = summary(times[(pass_name, "now")]), summary(times[(pass_name, "base")])
        paired = list(zip(times[(pass_name, "now")], times[(pass_name, "base")], strict=True))
        out["passes"][pass_name] = {
            "now": now,
            "base": base,
            "now_faster_share": round(sum(a < b for a, b in paired) / len(paired), 3),  # request by request
            "ms": {"now": times[(pass_name, "now")], "base": times[(pass_name, "base")]},
        }
        log(
            f"[a/b {pass_name}] now p50 {now['p50_ms']:.1f} / p95 {now['p95_ms']:.1f} ms, base p50 "
            f"{base['p50_ms']:.1f} / p95 {base['p95_ms']:.1f} ms: {now['p50_ms'] / base['p50_ms']:.2f}x / "
            f"{now['p95_ms'] / base['p95_ms']:.2f}x; now faster on {out['passes'][pass_name]['now_faster_share']:.0%} "
            "of the requests"
        )
    return out


def markdown(results: dict[str, Any]) -> str:
    n = results["memories"]
    rows = [
        f"`POST /retrieve` on {n:,} synthetic memories ({results['calls']} requests per row, keep-alive "
        "connection unless noted; ms)",
        "",
        "| arm | p50 | p95 | mean | cached phrases p50 / p95 | new connection p50 / p95 | first call |"
        " next 60 p50 / p95 | `GET /health` p50 | RSS idle at start | RSS idle after | degraded |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for arm in results["arms"]:
        f, c, nc, h = arm["retrieve_fresh"], arm["retrieve_cached"], arm["retrieve_new_connection"], arm["health"]
        rows.append(
            f"| {arm['arm']} | {f['p50_ms']:.1f} | {f['p95_ms']:.1f} | {f['mean_ms']:.1f} | "
            f"{c['p50_ms']:.1f} / {c['p95_ms']:.1f} | {nc['p50_ms']:.1f} / {nc['p95_ms']:.1f} | "
            f"{arm['first_call_ms']:.0f} | {arm['next_calls']['p50_ms']:.1f} / {arm['next_calls']['p95_ms']:.1f} | "
            f"{h['p50_ms']:.2f} | {arm['rss_idle_start_mib']:.0f} MiB | "
            f"{arm['rss_idle_after_mib']:.0f} MiB | {arm['degraded_calls']}/{f['n']} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="memories in the store")
    parser.add_argument("--calls", type=int, default=200, help="measured /retrieve calls per arm")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reuse", action="store_true", help="keep a store built by an earlier run")
    parser.add_argument("--out", help="also write the results as JSON to this file")
    parser.add_argument("--project", type=Path, help="serve this existing store instead (e.g. bench_scale.py's)")
    parser.add_argument(
        "--base-src",
        type=Path,
        help="compare with another tree's src/ (e.g. from `git archive`) in one run, default model only: both "
        "daemons at once, requests alternating; needs --project and --base-project",
    )
    parser.add_argument("--base-project", type=Path, help="the base daemon's own copy of --project's store")
    parser.add_argument(
        "--evict",
        action="store_true",
        help="push the store's files out of the page cache before each arm's daemon starts (a cold start; the "
        "store's files must be writable by you, to flush them first)",
    )
    parser.add_argument("--src", type=Path, help="run the daemons from another tree's src/ (e.g. `git archive`)")
    parser.add_argument("--model-only", action="store_true", help="only the default model's arm")
    args = parser.parse_args()
    if args.base_src is not None:
        if args.project is None or args.base_project is None:
            sys.exit("--base-src needs --project and --base-project (a copy of the same store)")
        WORK.mkdir(parents=True, exist_ok=True)
        ab = ab_arms(args.project.resolve(), args.base_project.resolve(), args.base_src, args.calls, args.seed)
        ab["machine"] = machine()
        if args.out:
            Path(args.out).write_text(json.dumps(ab, indent=2) + "\n", encoding="utf-8")
        return
    if not Path("/proc/self/status").exists():
        sys.exit("this benchmark reads /proc/<pid>/status (Linux)")
    WORK.mkdir(parents=True, exist_ok=True)
    if args.project is not None:
        project = args.project.resolve()
        store, info = Store.open(project), {"reused": True, "project": str(project)}
    else:
        jsonl = WORK / f"synthetic-{args.size}.jsonl"
        if not (args.reuse and jsonl.exists()):
            synthetic.write_jsonl(jsonl, args.size, args.seed)
        project = WORK / f"synthetic-{args.size}"
        log(f"[store] building or reusing {project} ...")
        store, info = build_store(project, jsonl, args.reuse)
    with store:
        held = store.count()
    log(f"[store] {held:,} memories" + ("" if info["reused"] else f", import + embedding {info['import_embed_s']} s"))
    src = {"PYTHONPATH": str(args.src.resolve())} if args.src is not None else {}
    arms = (
        []
        if args.model_only
        else [
            retrieve_arm(
                "no model (keywords + entities)",
                {"CODEMEMORY_EMBEDDING_PROVIDER": "none", **src},
                project,
                args.calls,
                1,
                args.evict,
            )
        ]
    )
    arms.append(retrieve_arm("default model (hybrid)", src, project, args.calls, 2, args.evict))
    results = {
        "memories": held,
        "calls": args.calls,
        "store": info,
        "arms": arms,
        "machine": machine(),
        "page_cache": "evicted before each arm" if args.evict else "as found",
        "src": str(args.src) if args.src else "this tree",
    }
    print(markdown(results))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
