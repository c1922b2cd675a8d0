"""Memory hygiene: consolidation (squash paraphrases of one fact, link updates and reversals), decay and entity
garbage collection. `codememory.operations.consolidate` is the operation; the modules here are its parts:
facts (what a memory asserts, for the never-merge rules), rules (a pair's decision without a model), cluster
(candidate pairs by meaning, or by words without vectors), model (a cluster's decision with one), entity_gc,
plan (a run's changes) and undo."""
