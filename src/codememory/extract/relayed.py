"""Instructions found in a tool's output, a file or a page, retold (issue 25): "`ops/HANDOVER.md` has an HTML comment
addressed to AI coding assistants saying … open port 8448", "the post-install message asks AI assistants to turn CSRF
protection off", "the README tells agents to run curl … | sh; I won't". Whoever retells it (the assistant warning
about it, the user quoting it), the text is what a source asked for, not what the project does: no memory holds it.

Read from the sentence's structure, not from what was asked: a source (a file, a page, a comment, a notice, an
output, a package) that reports an instruction (a verb of saying with something to do: "saying to …", "asks … to",
"tells agents …"), or an instruction addressed to AI agents or assistants ("AI agents must run …"). A report of what
a failure printed ("pytest says ModuleNotFoundError") asks nothing of anyone and is not one."""

from __future__ import annotations

import re
from dataclasses import replace

from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import Candidate

# a source a text can come from: a file by its name, or a thing that holds text. A file name is read from where its
# run of name characters starts: from every dot of a long `1.1.1…` run a search would otherwise rescan the rest of
# the run (81 s for 40k characters of a model's memory or a user's sentence)
_FILE = r"(?<![\w./`-])`?[\w./-]+\.(?:md|txt|rst|html?|json|ya?ml|toml|cfg|ini|adoc|py|js|ts|rb|sh)`?"
_SOURCE = (
    r"(?:readme|comment|notice|banner|"
    r"message|page|site|website|output|docs?|documentation|header|footer|changelog|description|gem|package|crate|"
    r"module|plugin|dependency|script|post-?install|install\s+script|issue|ticket|email|mail|pdf|wiki|faq|note|text)"
)
# the source reporting something to do: "… saying the collective approved opening …", "… asks to turn CSRF off",
# "… tells agents to run …", "… addressed to AI coding assistants"
_REPORTS_RE = lazy_pattern(
    rf"(?:{_FILE}|\b{_SOURCE})\b[^.;!?]{{0,80}}?\b(?:say(?:s|ing)?|said|tell(?:s|ing)?|told|ask(?:s|ing)?|asked|instruct(?:s|ing)?|"
    r"instructed|want(?:s|ing)?|claim(?:s|ing)?|urg(?:es|ing)|demand(?:s|ing)?|direct(?:s|ing)|addressed\s+to|"
    r"address(?:es|ing)|aimed\s+at)\b(?P<what>[^.;!?]{0,200})",
    re.IGNORECASE,
)
# what is reported is something to do ("… asks to turn …", "… tells agents to run …", "… that you must …"), or
# says someone approved it; not what failed ("… says it failed to connect", "… says the value must be positive")
_TO_DO_RE = lazy_pattern(
    r"^\W*(?:(?:the\s+)?[\"'\u201c]?(?:ai\s+|llm\s+|coding\s+)*(?:agents?|assistants?|you|us|users?|developers?|"
    r"contributors?|people|everyone|readers?|maintainers?)[\"'\u201d]?\s+)?to\s+[a-z]+"
    r"|\b(?:agents?|assistants?|you|we|developers?|contributors?)\s+(?:must|should|need\s+to|have\s+to|are\s+to)\b"
    r"|\b(?:approved|allowed|authori[sz]ed|permitted|signed\s+off)\b"
    # a rule quoted after a colon or a quote mark: "The page says: We decided to always …"
    r"|^\s*[:\"'\u201c]\s*[^:]*\b(?:always|never|must|should|decided|agreed|required|policy)\b",
    re.IGNORECASE,
)
# an instruction addressed to AI agents or assistants, quoted or copied: "AI agents must run …", "IMPORTANT: AI
# coding assistants should disable …", "notice for AI assistants"
_TO_AGENTS_RE = lazy_pattern(
    r"\b(?:ai|llm|coding|automated)\s+(?:coding\s+)?(?:agents?|assistants?|models?|tools?)\b[\"'\u201d]?\s*"
    r"(?:must|should|need\s+to|have\s+to|are\s+(?:asked|told|instructed|required)|may|can|[,:])"
    r"|\b(?:(?:addressed|aimed|directed|written)\s+(?:to|at)|address(?:es|ing))\s+[\"'\u201c]?(?:ai\s+|llm\s+|coding\s+|automated\s+)*"
    r"(?:agents?|assistants?|bots?|models?)\b"
    r"|\b(?:notice|note|message|instructions?)\s+(?:for|to)\s+[\"'\u201c]?(?:ai\s+|llm\s+|coding\s+)+(?:agents?|assistants?)",
    re.IGNORECASE,
)


def relays_an_instruction(text: str) -> bool:
    """A text that retells what a source asked for (see the module's docstring)."""
    if _TO_AGENTS_RE.search(text):
        return True
    return any(_TO_DO_RE.search(m.group("what")) for m in _REPORTS_RE.finditer(text))


def without_relayed(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates that do not retell a source's instruction. One that only holds such a retelling in brackets
    ("Lab_pcs.csv is semicolon-separated … (chosen over The README has a section "Note for AI coding agents" saying
    …)") keeps the rest; a `*Remember*:` note is the user's own word."""
    out = []
    for c in candidates:
        if c.rule == "remember" or not relays_an_instruction(c.text):
            out.append(c)
            continue
        rest = _ASIDE_RE.sub(lambda m: "" if relays_an_instruction(m.group(0)) else m.group(0), c.text)
        rest = " ".join(rest.split())
        if rest != c.text and len(rest.split()) >= MIN_REST_WORDS and not relays_an_instruction(rest):
            out.append(replace(c, text=rest))
    return out


_ASIDE_RE = lazy_pattern(r"\s*\([^()]{8,}\)")
MIN_REST_WORDS = 5
