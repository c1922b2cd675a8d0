"""Finding memories: keyword and fuzzy search, fusion with meaning, proactive retrieval for the agent's current step."""
