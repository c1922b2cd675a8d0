"""Coding sessions: checkpoints, their markdown files, git state, session search."""
