"""Time per session of `codememory import-history`: a HOME holding N past sessions of Claude Code, Codex and Gemini
CLI (the transcripts the real CLIs wrote, tests/fixtures/transcripts, placed where each CLI keeps them:
tests/support/history_home.py) is imported into a fresh project's store by the real `codememory` command, then
imported again (which must add nothing). Extraction runs with the rules (no model configured).

    .venv/bin/python benchmarks/bench_history_import.py [--sessions 50] [--out results-history-import.json]

Work files go to benchmarks/.work/history-import/ (gitignored).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from support.history_home import env_for, fill_home  # noqa: E402

WORK = HERE / ".work" / "history-import"
CODEMEMORY = str(Path(sys.executable).with_name("codememory"))


def run(project: Path, env: dict[str, str], *args: str) -> tuple[dict[str, object], float]:
    started = time.monotonic()
    done = subprocess.run(
        [CODEMEMORY, *args, "--json"], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"codememory {' '.join(args)} failed:\n{done.stderr}")
    return json.loads(done.stdout), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    home, project = WORK / "home", WORK / "app"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    env = env_for(home)
    (home / ".config" / "codememory").mkdir(parents=True)
    (home / ".config" / "codememory" / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    made = fill_home(home, project, args.sessions)
    run(project, env, "init", "--assistants", "none")
    dry, dry_seconds = run(project, env, "import-history", "--dry-run")
    first, first_seconds = run(project, env, "import-history")
    again, again_seconds = run(project, env, "import-history")
    result = {
        "sessions": len(made),
        "by_assistant": first["by_assistant"],
        "turns_captured": first["turns_captured"],
        "memories_created": first["memories_created"],
        "dry_run_seconds": round(dry_seconds, 2),
        "import_seconds": round(first_seconds, 2),
        "seconds_per_session": round(first_seconds / max(1, int(str(first["to_import"]))), 3),
        "again_to_import": again["to_import"],
        "again_turns_captured": again["turns_captured"],
        "again_memories_created": again["memories_created"],
        "again_seconds": round(again_seconds, 2),
        "dry_found": dry["found"],
    }
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
