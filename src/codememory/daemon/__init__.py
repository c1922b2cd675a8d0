"""The background daemon: one process per user that keeps each project's store (and the embedding model)
in memory, answers the plugin's HTTP bridge on 127.0.0.1 (`GET /health`, `POST /retrieve`) and runs
background tasks (capture, extraction) on a schedule.

Modules: `state` (what the server and the tasks share), `server` (the FastAPI app; its security middleware is
`web.security`, shared with `mcp --http`), the `*_api` routers, `tasks`, `run_loop` (serve in this process),
`lifecycle` (start/stop/status from another process), `files` (PID, lock and info files), `log_file` (the
rotating scrubbed log), `service_install` (systemd/launchd), `commands` (the click group), `client` (a
stdlib-only client for hooks and tests). Importing this package imports none of them.
"""
