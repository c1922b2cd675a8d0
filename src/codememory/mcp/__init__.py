"""The MCP server (stdio, and streamable HTTP with `--http`): one adapter per tool over the operations."""
