"""The OpenCode plugin's tool definitions as OpenCode hands them to its model: the committed bundle
(src/codememory/data/opencode/codememory.js) imported by Node, its tools' zod arguments turned into JSON Schema the
way OpenCode does (`toJSONSchema(z.object(args), {io: "input"})`, with the zod of @opencode-ai/plugin, pinned in
integrations/opencode). The bundle is copied next to a link to that node_modules, as OpenCode installs it next to
its own."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO / "src" / "codememory" / "data" / "opencode" / "codememory.js"
NODE_MODULES = REPO / "integrations" / "opencode" / "node_modules"
_DUMP = """
import { TOOLS_LINE, createHooks } from "./codememory.mjs"
const { tool } = await import("@opencode-ai/plugin")
const z = tool.schema
const options = { stateDir: "/nonexistent", hud: false, coldStart: false, rawEvents: false }
const hooks = await createHooks({ directory: "/nowhere" }, options, { log: () => {} })
const out = {}
for (const [name, t] of Object.entries(hooks.tool ?? {}))
  out[name] = { description: t.description, parameters: z.toJSONSchema(z.object(t.args), { io: "input" }) }
process.stdout.write(JSON.stringify({ tools: out, texts: { TOOLS_LINE } }))
process.exit(0)
"""


def plugin_tools() -> dict[str, dict[str, Any]]:
    """{name: {description, parameters}} of every tool the plugin registers."""
    return _dump()["tools"]  # type: ignore[no-any-return]


def plugin_texts() -> dict[str, str]:
    """The plugin's own words that name its tools (the cold-start block's tools line)."""
    return _dump()["texts"]  # type: ignore[no-any-return]


def _dump() -> dict[str, Any]:
    node = shutil.which("node")
    if node is None or not (NODE_MODULES / "@opencode-ai" / "plugin").exists():
        pytest.fail("node and integrations/opencode/node_modules are needed (npm ci --prefix integrations/opencode)")
    with tempfile.TemporaryDirectory(prefix="cm-plugin-") as tmp:
        folder = Path(tmp)
        shutil.copyfile(BUNDLE, folder / "codememory.mjs")
        (folder / "node_modules").symlink_to(NODE_MODULES)
        (folder / "dump.mjs").write_text(_DUMP, encoding="utf-8")
        done = subprocess.run([node, "dump.mjs"], cwd=folder, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]
