"""One module per agent or user operation, returning typed results; the CLI, MCP server, daemon and hooks are thin
adapters over these.
"""
