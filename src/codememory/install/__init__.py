"""`codememory init`: wiring codememory into each coding assistant, planned then applied idempotently."""
