"""The OpenCode plugin's build: the TypeScript sources (integrations/opencode/src/) type-check, their unit tests pass,
and the bundle committed as package data (src/codememory/data/opencode/codememory.js, the file `codememory init`
copies into a project's .opencode/plugin/) is exactly what they build to.

Why the bundle is committed rather than built with the wheel: `pip install` must not need Node, and `codememory
init` (the README's quick start) installs the plugin from the package. So there is one generated copy, and
`test_the_committed_bundle_is_what_the_sources_build` keeps it from drifting from its sources.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from support.opencode import OPENCODE_DIR, REPO

BUNDLE = REPO / "src" / "codememory" / "data" / "opencode" / "codememory.js"
REBUILD = "run `npm --prefix integrations/opencode run build`"
INIT_MARK = 'PLUGIN_ID = "codememory"'  # install/plan.py's _PLUGIN_MARK: how init knows a plugin file is ours
# What the bundle exports: OpenCode uses the default export {id, server}; the named ones are for the tests
# (tests/security/test_context_injection.py, the benchmarks' drivers), the same as the hand-written plugin had.
EXPORTS = sorted(
    """COLD_TAG DaemonError HUD_MESSAGE_ID HUD_TAG Health NEUTRAL_LT OLLAMA_BASE_URL PLUGIN_ID PREAMBLE RawBuffer
    RawStream SUBCORTICAL_PROMPT Sessions TOOLS_LINE askSubcortical batches clip clipDeep createHooks createSubcortical
    default deriveQuery endpoint extractEntities flushReason formatColdStart formatHud hudInput hudMessage isNewBoundary
    keyArgs latestUserText memoryLines mergeDerived neutraliseTags parseSubcortical recentToolCalls request
    resolveConfig resolveSubcortical safeLine server sessionOf stripInjected subcorticalMessage
    TURN_MESSAGE_ID""".split()
)


def tool(name: str) -> str:
    found = shutil.which(name)
    assert found, f"{name} (Node.js 20+) is needed to build and test the OpenCode plugin"
    return found


def npm(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    installed = OPENCODE_DIR / "node_modules" / ".package-lock.json"
    assert installed.exists(), f"the plugin's npm tools are not installed: run `npm ci --prefix {OPENCODE_DIR}`"
    command = [tool("npm"), "--prefix", str(OPENCODE_DIR), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.slow
def test_the_committed_bundle_is_what_the_sources_build(tmp_path: Path) -> None:
    out = tmp_path / "codememory.js"
    done = npm("run", "build", "--", "--outfile", str(out))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    built, committed = out.read_text(encoding="utf-8"), BUNDLE.read_text(encoding="utf-8")
    if built != committed:
        lines = zip(built.splitlines(), committed.splitlines(), strict=False)
        where = next((i for i, (a, b) in enumerate(lines, 1) if a != b), min(len(built), len(committed)))
        stale = BUNDLE.relative_to(REPO)
        pytest.fail(f"{stale} is not what integrations/opencode/src builds (first difference: line {where}): {REBUILD}")


def test_the_bundle_says_it_is_generated_and_keeps_inits_marker() -> None:
    text = BUNDLE.read_text(encoding="utf-8")
    first = text.splitlines()[0]
    assert first.startswith("// Generated from integrations/opencode/src by `npm run build`"), first
    assert "do not edit" in first
    assert INIT_MARK in text
    # Deterministic: nothing of the machine or the moment it was built on.
    assert str(REPO) not in text and "/home/" not in text and "/tmp/" not in text


def test_the_bundle_exports_what_opencode_and_the_tests_use() -> None:
    script = (
        f"const m = await import({json.dumps(BUNDLE.as_uri())})\n"
        "console.log(JSON.stringify({names: Object.keys(m).sort(), id: m.default.id,"
        " server: typeof m.default.server, same: m.default.server === m.server}))\n"
    )
    done = subprocess.run(
        [tool("node"), "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found == {"names": EXPORTS, "id": "codememory", "server": "function", "same": True}


@pytest.mark.slow
def test_node_unit_tests_pass() -> None:
    """`npm test`: the unit tests (integrations/opencode/test/), bundled with the sources they import, under node."""
    done = npm("test")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout


@pytest.mark.slow
def test_plugin_typechecks_against_opencode_plugin_types() -> None:
    tsc = OPENCODE_DIR / "node_modules" / ".bin" / "tsc"
    assert tsc.exists(), f"TypeScript is not installed: run `npm ci --prefix {OPENCODE_DIR}`"
    done = subprocess.run(
        [str(tsc), "-p", str(OPENCODE_DIR / "tsconfig.json")], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
