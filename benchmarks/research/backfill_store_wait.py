"""How long a request waits for a large store while the daemon's embedding backfill polls it after a write: a probe
thread takes the store (as `/retrieve` does, `state.stores.use`) every few milliseconds and records each wait while
the backfill task runs; each round first adds a memory (its text moves the store's counter, so the backfill counts
the memories needing a vector again). Run it with this tree's code and with main's (`PYTHONPATH=<main>/src`),
alternating, on copies of one store.

    cp -a benchmarks/.work/scale/store-100000 /tmp/s100k      # the rounds write: a copy
    python benchmarks/research/backfill_store_wait.py /tmp/s100k [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="codememory-backfill-wait-"))
    os.environ.update(XDG_STATE_HOME=str(base / "state"), XDG_CONFIG_HOME=str(base / "config"))
    for key in [k for k in os.environ if k.startswith("CODEMEMORY_")]:
        del os.environ[key]
    from codememory.core.config import load_config
    from codememory.core.project import db_path
    from codememory.core.registry import register
    from codememory.daemon.embedding_backfill import EmbeddingBackfill
    from codememory.daemon.state import DaemonState

    project = args.project.resolve()
    register(project, db_path(project), base / "config" / "codememory" / "registry.json")
    state = DaemonState(token="-", config=load_config(None))
    backfill = EmbeddingBackfill()
    backfill(state)  # the model loaded, the first count made
    for n in range(args.rounds):
        with state.stores.use(project) as store:
            store.add(f"Backfill probe {n}: the nightly export job {time.time_ns()} writes parquet files")
        waits: list[float] = []
        done = threading.Event()

        def probe(done: threading.Event = done, waits: list[float] = waits) -> None:
            while not done.is_set():
                t0 = time.perf_counter()
                with state.stores.use(project):
                    waits.append(time.perf_counter() - t0)
                time.sleep(0.005)

        thread = threading.Thread(target=probe)
        thread.start()
        t0, c0 = time.perf_counter(), time.thread_time()
        backfill(state)
        wall, cpu = (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000
        done.set()
        thread.join()
        print(
            f"round {n}: backfill wall {wall:7.1f} ms, cpu {cpu:6.1f} ms; probe's longest wait "
            f"{max(waits) * 1000:7.1f} ms over {len(waits)} takes"
        )
    state.stores.close_all()


if __name__ == "__main__":
    main()
