"""`POST /hook`: the hook entry point run inside the daemon, whose imports, config and embedding model are
already loaded. `codememory-hook` forwards the events an assistant waits on (session start and every
prompt: they retrieve memories to inject) here when the daemon runs, which saves the ~60 ms a fresh
process spends importing codememory; when the daemon is down or slow the hook runs in its own process.
The record of what the assistant session was given (so nothing is injected twice) comes back with the output
and `codememory-hook` saves it: an answer it stopped waiting for leaves that record as it was.

The daemon runs a hook only for a project registered on this machine (`project_access`): for a folder with an
unregistered store it answers 403 (and `codememory-hook` then runs the hook in its own process, under that
process's own rules); for a folder without a store there is nothing to do and the output is empty.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from codememory import assistants
from codememory.core.lenient_json import json_object
from codememory.core.project import db_path
from codememory.daemon.state import DaemonState
from codememory.errors import InvalidInput, ProjectNotAllowed
from codememory.operations import hook_events
from codememory.web.request_body import RequestBody


class HookBody(RequestBody):
    model_config = ConfigDict(extra="forbid")

    assistant: Annotated[str, Field(max_length=20)]
    event: Annotated[str, Field(max_length=40)]
    payload: str = Field(description="The hook's stdin, as the assistant sent it (JSON text).")
    project: Annotated[str | None, Field(max_length=4096)] = None


class HookResult(BaseModel):
    output: str = Field(description="What the hook prints on stdout ('' for nothing).")
    injected: dict[str, Any] | None = Field(
        default=None,
        description="What the assistant session's context now holds from the hooks, for `codememory-hook` to "
        "save once it has the output (codememory.operations.hook_injected); absent when unchanged.",
    )


def _usable(path: str) -> bool:
    return os.path.isabs(path) and "\x00" not in path and os.path.isdir(path)


def hook_root(project: str | None, payload_text: str) -> Path | None:
    """The folder the hook would act on, found as `hook_events.project_dir` does (--project as given, else the
    payload's cwd or first workspace root, then the nearest folder with a store) but from the request alone:
    never the daemon's own working folder or environment. None when the request names no existing folder.
    Only existence is looked at: nothing is opened here."""
    if project:
        if not os.path.isabs(project) or "\x00" in project:
            raise InvalidInput("project must be an absolute path")
        return Path(project).resolve()
    payload = json_object(payload_text)
    roots = payload.get("workspace_roots")
    candidates = [payload.get("cwd"), roots[0] if isinstance(roots, list) and roots else None]
    usable = [c for c in candidates if isinstance(c, str) and _usable(c)]
    if not usable:
        return None
    start = Path(usable[0]).resolve()
    return next((folder for folder in (start, *start.parents) if os.path.lexists(db_path(folder))), start)


def create_router(state: DaemonState) -> APIRouter:
    router = APIRouter()

    @router.post("/hook", response_model=HookResult, response_model_exclude_none=True)
    def run_hook(body: HookBody) -> HookResult:
        """Run one hook exactly as `codememory-hook ASSISTANT EVENT` would (fail-open: errors are logged
        in the project's hooks.log and give no output), for a registered project only (else 403)."""
        if not hook_events.waits_before_model(body.assistant, body.event):  # the only ones codememory-hook forwards
            spec = assistants.find(body.assistant)
            named = [spec] if spec is not None else list(assistants.REGISTRY)
            events = sorted({e.name for a in named for e in a.events if e.before_model})
            raise InvalidInput(
                f"the daemon runs only these hook events: {', '.join(events)} (the ones an assistant waits on before "
                "its model runs)"
            )
        root = hook_root(body.project, body.payload)
        if root is None:  # the hook's own process knows its folder (its cwd, CLAUDE_PROJECT_DIR): it runs there
            raise InvalidInput("name the project: send project, or a payload whose cwd is an existing folder")
        if not state.projects.allows(root):
            if os.path.lexists(db_path(root)):
                raise ProjectNotAllowed(
                    f"{json.dumps(str(root)[:300])} is not a project registered on this machine: the daemon runs "
                    "hooks only for projects added by `codememory init`"
                )
            return HookResult(output="")  # no store here: the hook would do nothing either
        output, injected = hook_events.run_deferred(body.assistant, body.event, body.payload, str(root))
        return HookResult(output=output, injected=injected)

    return router
