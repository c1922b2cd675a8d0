"""The coding assistants' lifecycle hooks (`codememory-hook`): lean, run on every prompt and edit."""
