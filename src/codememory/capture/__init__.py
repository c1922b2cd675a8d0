"""Capture pipelines: read coding sessions (OpenCode's database, Claude Code / Codex transcripts, raw
plugin events) into `Turn`s, log each completed turn to the daily markdown, and hand idle sessions to
extraction."""
