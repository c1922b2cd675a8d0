"""The background daemon: one process per user that keeps each project's store (and the embedding model)
in memory, answers the plugin's HTTP bridge on 127.0.0.1 (`GET /health`, `POST /retrieve`) and runs
background tasks (capture, extraction) on a schedule.

Modules: `state` (what the server and the tasks share), `server` (the FastAPI app and its security
middleware), `lifecycle` (run/start/stop/status, token, PID file, log, service install), `client` (a
stdlib-only client for hooks and tests). Importing this package imports none of them.
"""
