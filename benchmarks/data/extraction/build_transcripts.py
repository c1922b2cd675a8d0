"""Write the Claude Code and Codex transcripts of the corpus (sessions/<name>.jsonl) from their session files'
scripted turns, in each CLI's JSONL format as recorded in tests/fixtures/transcripts/ (Claude Code 2.1.197,
Codex 0.169.0), with the project folder as `__PROJECT__`.

    .venv/bin/python benchmarks/data/extraction/build_transcripts.py

A turn is the same as an OpenCode script's: `user`, then `steps` of assistant `text` and `tools` (`bash` with
`out` and `exit`, `write`); each bash call becomes Bash / exec_command with its output and exit status.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SESSIONS = HERE / "sessions"
P = "__PROJECT__"


def _stamp(n: int) -> str:
    return f"2026-11-20T10:{n // 60:02d}:{n % 60:02d}.000Z"


def _uid(seed: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, seed))


def claude(item: dict[str, Any]) -> list[dict[str, Any]]:
    sid, out, n = item["session_id"], [], 0
    common = {"isSidechain": False, "userType": "external", "cwd": P, "sessionId": sid, "version": "2.1.197"}
    parent = None

    def add(line: dict[str, Any]) -> None:
        nonlocal parent, n
        n += 1
        line = {"parentUuid": parent, **line, "uuid": _uid(f"{sid}-{n}"), "timestamp": _stamp(n), **common}
        parent = line["uuid"]
        out.append(line)

    for t, turn in enumerate(item["turns"]):
        add({"promptId": _uid(f"{sid}-p{t}"), "type": "user", "message": {"role": "user", "content": turn["user"]}})
        for s, step in enumerate(turn["steps"]):
            tools = step.get("tools", [])
            msg = {"id": f"msg_{t}_{s}", "type": "message", "role": "assistant", "model": "claude-opus-4-8"}
            stop = "tool_use" if tools else "end_turn"
            if step.get("text"):
                add({"type": "assistant", "message": {**msg, "content": [{"type": "text", "text": step["text"]}],
                                                      "stop_reason": stop}})  # fmt: skip
            for c, tool in enumerate(tools):
                tid = f"toolu_{t}_{s}_{c}"
                if "bash" in tool:
                    use = {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": tool["bash"]}}
                    exit_ = int(tool.get("exit", 0))
                    text = tool.get("out", "") + (f"\nExit code {exit_}" if exit_ else "")
                    result = {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": bool(exit_)}
                else:
                    use = {"type": "tool_use", "id": tid, "name": "Write",
                           "input": {"file_path": f"{P}/{tool['write']}", "content": tool["content"]}}  # fmt: skip
                    result = {"type": "tool_result", "tool_use_id": tid,
                              "content": f"File created successfully at: {P}/{tool['write']}"}  # fmt: skip
                add({"type": "assistant", "message": {**msg, "content": [use], "stop_reason": "tool_use"}})
                add({"type": "user", "message": {"role": "user", "content": [result]}})
    return out


def codex(item: dict[str, Any]) -> list[dict[str, Any]]:
    sid, out = item["session_id"], []

    def add(kind: str, payload: dict[str, Any]) -> None:
        out.append({"timestamp": _stamp(len(out)), "ordinal": len(out), "type": kind, "payload": payload})

    add("session_meta", {"session_id": sid, "id": sid, "timestamp": _stamp(0), "cwd": P, "originator": "codex_exec",
                         "cli_version": "0.169.0", "source": "exec"})  # fmt: skip
    for t, turn in enumerate(item["turns"]):
        tid = _uid(f"{sid}-turn{t}")
        meta = {"internal_chat_message_metadata_passthrough": {"turn_id": tid}}
        add("event_msg", {"type": "task_started", "turn_id": tid})
        add("response_item", {"type": "message", "id": f"msg_u{t}", "role": "user",
                              "content": [{"type": "input_text", "text": turn["user"]}], **meta})  # fmt: skip
        last = ""
        for s, step in enumerate(turn["steps"]):
            if step.get("text"):
                last = step["text"]
                add("response_item", {"type": "message", "status": "completed", "id": f"msg_{t}_{s}",
                                      "role": "assistant", "content": [{"type": "output_text", "text": last}],
                                      **meta})  # fmt: skip
            for c, tool in enumerate(step.get("tools", [])):
                call = f"call_{t}_{s}_{c}"
                exit_ = int(tool.get("exit", 0))
                args = json.dumps({"cmd": tool["bash"]})
                add("response_item", {"type": "function_call", "status": "completed", "name": "exec_command",
                                      "arguments": args, "call_id": call, **meta})  # fmt: skip
                add("event_msg", {"type": "item_completed", "turn_id": tid, "item": {
                    "type": "CommandExecution", "id": call, "command": ["/bin/bash", "-lc", tool["bash"]],
                    "status": "failed" if exit_ else "completed", "exit_code": exit_}})  # fmt: skip
                output = f"Wall time: 0.4 seconds\nProcess exited with code {exit_}\nOutput:\n{tool.get('out', '')}\n"
                add("response_item", {"type": "function_call_output", "call_id": call, "output": output, **meta})
        add("event_msg", {"type": "task_complete", "turn_id": tid, "last_agent_message": last})
    return out


def main() -> None:
    for path in sorted(SESSIONS.glob("*.json")):
        item = json.loads(path.read_text(encoding="utf-8"))
        if item["source"] not in ("claude-code", "codex"):
            continue
        lines = claude(item) if item["source"] == "claude-code" else codex(item)
        target = SESSIONS / item["transcript"]
        target.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
        print(f"wrote {target.name}: {len(lines)} lines")


if __name__ == "__main__":
    main()
