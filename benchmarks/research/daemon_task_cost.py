"""What each of the daemon's background tasks costs at every poll on a given store (a large one: its CPU is spent
beside the requests, and a task holding the store makes them wait), and what one full collection of the cycle
collector costs in a process holding the daemon's modules and the warm store, before and after the warm-up's
`settle` (daemon/warm_up.py).

    cp -a benchmarks/.work/scale/store-100000 /tmp/s100k      # the tasks may write: a copy
    python benchmarks/research/daemon_task_cost.py /tmp/s100k [--polls 3]

The tasks run in this process, one after the other as the daemon's worker thread runs them, against a registry
holding only this project (in a temporary XDG folder); each line is a task's wall and thread CPU milliseconds.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--polls", type=int, default=3)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="codememory-task-cost-"))
    os.environ.update(XDG_STATE_HOME=str(base / "state"), XDG_CONFIG_HOME=str(base / "config"))
    for key in [k for k in os.environ if k.startswith("CODEMEMORY_")]:
        del os.environ[key]
    from codememory.core.config import load_config
    from codememory.core.project import db_path
    from codememory.core.registry import register
    from codememory.daemon.run_loop import default_tasks
    from codememory.daemon.state import DaemonState
    from codememory.daemon.warm_up import settle

    project = args.project.resolve()
    register(project, db_path(project), base / "config" / "codememory" / "registry.json")
    state = DaemonState(token="-", config=load_config(None), tasks=default_tasks())
    for poll in range(args.polls):
        for task in state.tasks:
            name = getattr(task, "__name__", type(task).__name__)
            t0, c0 = time.perf_counter(), time.thread_time()
            task(state)
            wall, cpu = (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000
            print(f"poll {poll} {name:20} wall {wall:8.1f} ms, cpu {cpu:7.1f} ms")
    gc.unfreeze()  # the warm-up (the first task) froze what it held: measure both ways
    for label in ("every object walked", "after settle()"):
        if label != "every object walked":
            settle()
        tracked = len(gc.get_objects())
        c0 = time.process_time()
        gc.collect()
        print(f"full collection, {label}: {tracked:,} objects tracked, {(time.process_time() - c0) * 1000:.1f} ms CPU")


if __name__ == "__main__":
    main()
