"""The installed `codememory` console script: stdin, pipes, ttys and exit codes, as a shell sees them."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from support.cli import (
    run_script,
    write_jsonl,
)


# ------------------------------------------------------------------- the installed console script
def test_script_store_from_piped_stdin_in_subdirectory(console_script: Path, project: Path) -> None:
    sub = project / "pkg"
    sub.mkdir()
    stored = run_script(console_script, "store", "--tags", "Shell", input="echoed into codememory store\n", cwd=sub)
    assert stored.returncode == 0, stored.stderr
    assert re.fullmatch(r"Stored mem_[0-9a-f]{8}\n", stored.stdout)
    found = run_script(console_script, "--project", project, "search", "echoed", "--json")
    assert found.returncode == 0, found.stderr
    data = json.loads(found.stdout)
    assert data["count"] == 1 and data["results"][0]["tags"] == ["shell"]
    assert data["results"][0]["id"] == stored.stdout.split()[1]


@pytest.mark.slow
def test_script_export_pipe_import(console_script: Path, make_project: Callable[[str], Path]) -> None:
    src, dst = make_project("pipe-src"), make_project("pipe-dst")
    for text in ("first piped memory", "second piped memory", "third — ünïcode"):
        assert run_script(console_script, "--project", src, "store", text).returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "CODEMEMORY_PROJECT"}
    exporter = subprocess.Popen(
        [str(console_script), "--project", str(src), "export", "-"], stdout=subprocess.PIPE, env=env
    )
    importer = subprocess.run(
        [str(console_script), "--project", str(dst), "import", "-", "--json"],
        stdin=exporter.stdout,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert exporter.stdout is not None
    exporter.stdout.close()
    assert exporter.wait(timeout=60) == 0
    assert importer.returncode == 0, importer.stderr
    assert json.loads(importer.stdout) == {"added": 3, "skipped_existing": 0, "invalid": []}
    a = [json.loads(line) for line in run_script(console_script, "--project", src, "export", "-").stdout.splitlines()]
    b = [json.loads(line) for line in run_script(console_script, "--project", dst, "export", "-").stdout.splitlines()]
    # the same memories, byte for byte but for where they came from: written here there, imported here
    assert {m.pop("provenance")["origin"] for m in a} == {"local"}
    assert {m.pop("provenance")["origin"] for m in b} == {"import"}
    assert sorted(a, key=lambda m: m["id"]) == sorted(b, key=lambda m: m["id"])


def test_script_missing_store(console_script: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_script(console_script, "search", "anything", cwd=empty, env={"CODEMEMORY_PROJECT": str(empty)})
    assert result.returncode == 1
    assert result.stdout == ""
    assert "run `codememory init`" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_script_bad_input_exit_code(console_script: Path, project: Path) -> None:
    result = run_script(console_script, "--project", project, "store", "x" * 10_001)
    assert result.returncode == 2
    assert "10,000" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_script_prune_refuses_without_tty(console_script: Path, project: Path, tmp_path: Path) -> None:
    record = {"id": "mem_dead0002", "text": "expired", "created_at": "2024-01-01", "expires_at": "2024-02-01"}
    assert run_script(console_script, "--project", project, "import", write_jsonl(tmp_path / "e.jsonl", [record]))
    refused = run_script(console_script, "--project", project, "prune", stdin=subprocess.DEVNULL)
    assert refused.returncode == 2 and "--force" in refused.stderr and "Traceback" not in refused.stderr
    forced = run_script(console_script, "--project", project, "prune", "--force", stdin=subprocess.DEVNULL)
    assert forced.returncode == 0 and "Deleted 1 memories." in forced.stdout


@pytest.mark.parametrize(("answer", "deleted"), [("n", False), ("y", True)])
def test_script_prune_asks_on_a_tty(
    console_script: Path, project: Path, tmp_path: Path, answer: str, deleted: bool
) -> None:
    pty = pytest.importorskip("pty")
    record = {"id": "mem_dead0003", "text": "expired", "created_at": "2024-01-01", "expires_at": "2024-02-01"}
    assert run_script(console_script, "--project", project, "import", write_jsonl(tmp_path / "e.jsonl", [record]))
    master, slave = pty.openpty()
    try:
        os.write(master, answer.encode() + b"\n")
        result = run_script(console_script, "--project", project, "prune", stdin=slave)
    finally:
        os.close(slave)
        os.close(master)
    assert "Delete 1 memories?" in result.stdout
    assert "Traceback" not in result.stderr
    assert (result.returncode == 0) is deleted
    remaining = run_script(console_script, "--project", project, "list", "--include-expired", "--json")
    assert json.loads(remaining.stdout)["total"] == (0 if deleted else 1)


def test_script_output_into_closed_pipe(console_script: Path, project: Path, tmp_path: Path) -> None:
    """`codememory list | head -1`: the reader going away early is not an error worth a traceback."""
    records = [{"id": f"mem_{i:08x}", "text": f"memory {i} " + "padding " * 100} for i in range(600)]
    assert run_script(console_script, "--project", project, "import", write_jsonl(tmp_path / "many.jsonl", records))
    env = {k: v for k, v in os.environ.items() if k != "CODEMEMORY_PROJECT"}
    proc = subprocess.Popen(
        [str(console_script), "--project", str(project), "list", "--limit", "600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert first.startswith(b"mem_")
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert proc.returncode == 0


@pytest.mark.parametrize(
    "args",
    [("daemon", "status"), ("daemon", "status", "--json"), ("list",), ("share", "status"), ("stats",), ("--help",)],
)
def test_script_output_into_a_pipe_nobody_reads_ends_quietly_for_every_kind_of_command(
    console_script: Path, project: Path, args: tuple[str, ...]
) -> None:
    """`codememory daemon status | head -1` printed "codememory: error: Broken pipe" and exited 1 (the daemon
    group took the closed pipe for an OSError of its state folder); every group ends quietly, exit 0."""
    assert run_script(console_script, "--project", project, "store", "the pool holds 20").returncode == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    env = {k: v for k, v in os.environ.items() if k != "CODEMEMORY_PROJECT"}
    try:
        done = subprocess.run(
            [str(console_script), "--project", str(project), *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env=env,
        )
    finally:
        os.close(write_end)
    assert done.stderr == "" and done.returncode == 0, (done.returncode, done.stderr)


@pytest.mark.slow
def test_an_import_whose_progress_nobody_reads_is_still_done(
    console_script: Path, project: Path, tmp_path: Path
) -> None:
    """`codememory import big.jsonl 2>&1 | head -c 5`: the progress line on standard error met the closed pipe in
    the middle of the import, which was rolled back, and the command still exited 0. Progress is best effort; the
    import is done (a file large enough to take more than the second after which progress is shown)."""
    lines = 20_000
    path = tmp_path / "big.jsonl"
    path.write_text(
        "".join(json.dumps({"text": f"note {i}: the cache holds {i * 3} entries"}) + "\n" for i in range(lines))
    )
    read_end, write_end = os.pipe()
    os.close(read_end)  # whoever read standard error is gone before the first progress line
    env = {k: v for k, v in os.environ.items() if k != "CODEMEMORY_PROJECT"}
    try:
        done = subprocess.run(
            [str(console_script), "--project", str(project), "import", str(path)],
            stdout=subprocess.PIPE,
            stderr=write_end,
            text=True,
            timeout=300,
            env=env,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0 and f"Imported {lines} memories" in done.stdout, done
    listed = run_script(console_script, "--project", project, "list", "--json")
    assert json.loads(listed.stdout)["total"] == lines
