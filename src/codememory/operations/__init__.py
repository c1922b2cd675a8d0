"""One module per agent or user operation, each a function over the project's store (`codememory.open_store`)
returning a typed result (codememory.core.result) whose `to_dict()` is the JSON every entry point prints. The CLI,
the MCP tools, the daemon's endpoints and the hooks are thin adapters over these:

- memories: search (and global_search over every registered project), get (show), store_memory (store,
  remember-scan), link, forget (forget, archive, prune), listing (list), transfer (export, import), embed, stats;
- an agent's context: retrieve (each step; the hooks' per-prompt block), cold_start (a session's first block),
  explain (the ledger of what was injected), transcript (the captured turns behind a memory);
- sessions: checkpoint, sessions (list, search, files, show, rebuild);
- the assistants' hooks: hook_events (what each lifecycle event does), hook_journal, hook_payloads;
- projects (the global registry); trust (trusting a project's committed config.toml).
"""
