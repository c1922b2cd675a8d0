"""How a sentence states a fact about the project or its environment, or a platform constraint: a version the
build, host or CI runs ("CI runs Python 3.9"), a port, the command that builds or runs something, where a thing
is mounted, a fact given in passing ("for the record, …"), a terse "label: values" the user gives. Used by
`extract.rules`, which decides who may state them."""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern

PLATFORM = (
    r"(?:python|node(?:\.?js)?|go|java|ruby|rust|php|deno|bun|postgres(?:ql)?|mysql|sqlite|redis|ubuntu|debian|"
    r"alpine|windows|macos|linux|ios|android|typescript|react|django|flask|rails|\.net|jdk|gcc|clang|es\d{4}|"
    r"ecmascript|pg|msrv|rustc)"
)
VERSION_RE = lazy_pattern(rf"\b{PLATFORM}\s*v?\d+(?:\.\d+)*\b|\b{PLATFORM}\b", re.IGNORECASE)
CONSTRAINT_RE = lazy_pattern(
    r",?\s*so\s+(?:no|don'?t|do\s+not|avoid|never|we\s+(?:can'?t|cannot|must|need|have)|nothing|only)\b"
    r"|\b(?:must|has\s+to|have\s+to|needs\s+to|need\s+to)\s+(?:support|run\s+on|work\s+on|be\s+compatible|stay\s+on|"
    r"target)\b|\b(?:can'?t|cannot|can\s+not)\s+use\b|\b(?:only|still)\s+(?:supports?|runs?)\b|\bstuck\s+on\b",
    re.IGNORECASE,
)
PORT_RE = lazy_pattern(
    r"\b(?:runs?|running|listens?|listening|serves?|served|is|are|bound|binds?|exposed?|available|lives?|starts?)\s+"
    r"(?:\w+\s+){0,4}on\s+(?:port\s+\d{2,5}|(?:https?://)?(?:localhost|127\.0\.0\.1|0\.0\.0\.0)?:\d{2,5})\b"
    r"|\bport\s+(?:is\s+)?\d{2,5}\b|\b(?:the\s+)?(?:\w+\s+)?port\s+(?:is|=)\s+\d{2,5}",
    re.IGNORECASE,
)
ENV_VERSION_RE = lazy_pattern(
    r"\b(?:ci|production|prod|staging|the\s+(?:server|build|image|container|runtime|project|app|repo|codebase|"
    r"deploy(?:ment)?|pipeline|ci)|we|our\s+\w+|it)\s+(?:runs?|uses?|is\s+on|are\s+on|'re\s+on|targets?|"
    r"requires?|needs?|is\s+pinned\s+to|pins?|ships?\s+with|supports?)\s+(?:only\s+)?(?:\w+\s+)?"
    rf"{PLATFORM}\s*v?\d+(?:\.\d+)*"
    rf"|\b{PLATFORM}\s*v?\d+(?:\.\d+)*\s+(?:in|on)\s+(?:ci|production|prod|staging)\b"
    rf"|\b(?:requires?|needs?)\s+{PLATFORM}\s*(?:>=?\s*)?v?\d+(?:\.\d+)*",
    re.IGNORECASE,
)
BARE_COMMAND = (
    r"(?:cargo|npm|pnpm|yarn|bun|make|go|uv|pytest|poetry|docker(?:\s+compose)?|kubectl|python3?\s+-m|mvn|gradle|"
    r"bundle|rake|mix|dotnet|golangci-lint|ruff|tox|nox)\s+[\w-]+"
)
CODE_SPAN_RE = lazy_pattern(r"`[^`]*`")
FAILURE_TALK_RE = lazy_pattern(r"\b(?:fail(?:s|ed|ing|ure)?|error|because|broke|broken|crash(?:es|ed)?)\b", re.I)
COMMAND_RE = lazy_pattern(
    r"\b(?:run|start|launch|build|test|lint|format|deploy|migrate|serve|seed|check|type-?check|release)\w*\s+"
    r"(?:the\s+|all\s+)?(?:[\w-]+\s+){0,2}(?:with|using|via|by\s+running)\s+`[^`]+`"
    r"|`[^`]{2,80}`\s+(?:runs|starts|builds|lints|formats|deploys|migrates|seeds|serves|runs\s+the)\b"
    r"|\b(?:test|build|dev|start|lint|format|deploy|migration|run)\s+command\s+is\s+`[^`]+`"
    r"|^to\s+(?:run|start|build|test|lint|format|deploy|migrate|serve|seed)\b[^,]*,\s*(?:run|use|type)\s+`[^`]+`"
    r"|^to\s+(?:run|start|build|test|lint|format|deploy|migrate|serve|seed)(?:\s+(?:and|&)\s+\w+)?(?:\s+[\w-]+){0,3}"
    r"\s*:\s*`[^`]+`"
    r"|\b(?:tests?|the\s+server|the\s+app|migrations?|the\s+linter)\s+(?:run|runs|start|starts)\s+with\s+`[^`]+`"
    rf"|\b(?:lint(?:er|ing)?|tests?|builds?|formatter|format(?:ting)?|dev\s+server|migrations?|deploy(?:s|ment)?|"
    rf"releases?|type-?check(?:s|ing)?)\b[^.`]{{0,30}}(?:\b(?:is|it'?s|are|with|using|via|run)\s*:?|:)\s*"
    rf"(?:`[^`]+`|{BARE_COMMAND})"
    r"|\b(?:runs?|run\s+by)\s+(?:from|via|in|on|as\s+a)\s+(?:a\s+)?(?:cron(?:job)?|systemd|a\s+timer)\b"
    r"|\b(?:nightly|daily|hourly|weekly|every\s+\w+)\b[^.]*\bat\s+\d{1,2}:\d{2}\b",
    re.IGNORECASE,
)


# Facts given in passing: "For the record, the box has CUDA 12.1", "the dataset is mounted at /mnt/data".
ASIDE_RE = lazy_pattern(r"^\W*(?:for\s+the\s+record|for\s+reference|fyi|heads[- ]up|just\s+so\s+you\s+know)\b", re.I)
# The user's own setup, with a version: "My switch is logq-5.1, on OCaml 5.1.1."
MINE_RE = lazy_pattern(r"\b(?:my|our)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:is|are|runs?|uses?|has|have)\b", re.IGNORECASE)
# A terse "label: values" the user gives: "measured: air 26100, glass of water 12400", "UA: bot/1.0 (+mailto:…)".
SPEC_RE = lazy_pattern(
    r"^(?!(?:problem|question|bug|issue|note|todo|next|also|btw|ps|update|edit|other\s+thing|last\s+thing|one\s+more|"
    r"reminder|plan|context|background|summary|hint|tip)\b)[A-Za-z][\w -]{0,20}:\s+"
    r"(?=.*(?:\d{3,}|[\w-]+/\d|\+mailto:|@[\w.-]+\.\w+)).{6,160}$",
    re.IGNORECASE,
)
GENERIC_VERSION_RE = lazy_pattern(r"\b[A-Za-z][\w+-]*\s*v?\d+\.\d+(?:\.\d+)*\b")
HOST_VERSION_RE = lazy_pattern(
    r"\b(?:box|machine|server|host|cluster|runners?|builders?|build\s+(?:farm|machine|box)|image|container|vm|"
    r"ci|prod(?:uction)?|staging|mac|laptop|workstation|desktop|device|board|pi)(?:\s+(?:box|machine|server|host|"
    r"runners?|image|mac|laptop|vm|node))?\s+(?:has|have|runs?|uses?|is\s+on|are\s+on|ships?\s+with|comes\s+with)\s+"
    r"(?:[\w.+-]+\s+){0,2}?[A-Za-z][\w+-]*\s*v?\d+\.\d+",
    re.IGNORECASE,
)
LOCATION_RE = lazy_pattern(
    r"\b(?:is|are|lives?)\s+(?:mounted|located|stored|installed|kept|checked\s+out)?\s*(?:at|in|under)\s+"
    r"(?:`)?(?:~|/(?!tmp/|var/tmp/))[\w.-]+/[\w./-]+",
    re.IGNORECASE,
)
WITHOUT_COMMAND_RE = lazy_pattern(
    r"\b(?:without|if\s+you\s+(?:don'?t|do\s+not)\s+have)\b[^.`]{0,60}?\b(?:run|use)\s+`[^`]{3,}`", re.IGNORECASE
)
# The assistant reporting what it just changed ("The PDF now formats …") states no fact of its own.
RESULT_NOW_RE = lazy_pattern(r"^(?:the\s+|a\s+|an\s+)?[\w.`-]+(?:\s+[\w.`-]+){0,3}\s+now\s+\w+", re.IGNORECASE)
