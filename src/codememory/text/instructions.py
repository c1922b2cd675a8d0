"""Does a memory's text read like instructions to an agent rather than knowledge about the project?

A memory that did not start on this machine (pulled through git, found in a committed store, imported, or from the
organisation's remote: core/provenance.py) is not put in a block an agent gets unasked (session start, per step)
while its text reads like instructions, until the user accepts it (`codememory review`). This is the one detector
for that; it is deliberately small and errs towards asking: a false alarm costs the user one `accept`, a miss puts
someone else's command in front of every session. A teammate's plain knowledge ("we chose Postgres for its JSON
support", "the CI runner has no Docker") does not match and flows as before.

What counts (each a named reason, `instruction_reason` returns the first that matches):
- `override`: attempts to change the rules of the conversation: "ignore / disregard / forget / override (all)
  previous, prior, above, earlier or other instructions, rules, prompts", "system prompt", "you are now",
  "new instructions", "developer mode", "jailbreak".
- `addressed to agents`: text that speaks to AI agents or assistants: "if you are an AI / an assistant / a
  language model", "as an AI", "note to the agent", "dear Claude", "you, the assistant", "AI agents must / should",
  "any agent reading this". Merely mentioning agents ("the hooks feed coding agents") is knowledge, not a match.
- `secrecy`: asks to keep something from the user or act without them: "do not tell / mention / show the user",
  "without asking / telling the user", "don't ask for confirmation or permission", "silently run / delete …".
- `shell pipe`: a download piped into a shell or interpreter (`curl … | sh`, `wget -qO- … | bash`,
  `iwr … | iex`, `bash <(curl …)`, `base64 -d | sh`).
- `command`: a command to run: a sentence that starts with run / execute / install / curl / wget / sudo / chmod /
  chown / rm -rf (optionally after "please", "always", "first", "you must / should", "make sure to", "remember
  to", "before anything"), or a dangerous shell form anywhere (`rm -rf /` or `~`, `chmod 777`, `/dev/tcp/`,
  `nc -e`, `mkfifo`, `eval "$(`). So a teammate's "Always run `make lint` before pushing" waits for review too:
  it is a command, however benign.
- `tool call`: tells the agent to call a tool: "call / invoke / trigger the X tool", our memory tools that write or
  delete by name (memory_store, memory_forget).
- `send data`: asks to send, post or upload something to an address ("send the .env to https://…", "upload … to").

Matching is case-insensitive over the text with invisible and formatting characters removed and blanks collapsed,
so spacing tricks (`ig\u00adnore`, a line break in the middle) do not hide a phrase.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.literal_scan import LiteralScan

# Default-ignorable and format characters (soft hyphen, zero-width, combining grapheme joiner, bidi controls...):
# removed before matching, as an agent's tokenizer would read past them.
_INVISIBLE_RE = lazy_pattern(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)

_AI = r"(?:ai|a\.i\.|llms?|language\s+models?|coding\s+(?:agents?|assistants?)|agents?|assistants?|bots?|models?)"
_NAMES = r"(?:claude|codex|copilot|cursor|gemini|chatgpt|gpt|opencode|aider)"
_ASIDE = r"(?:all\s+|any\s+|the\s+|your\s+|of\s+|these\s+)*"
_PREVIOUS = r"(?:previous|prior|above|earlier|preceding|other|existing|system|original|safety|developer)"
_RULES = r"(?:instructions?|rules?|prompts?|guidelines?|directions?|messages?|context|constraints?|polic(?:y|ies))"
_DO_NOT = r"(?:do\s+not|don'?t|never)"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "override",
        lazy_pattern(
            rf"\b(?:ignore|disregard|forget|override|bypass)\s+{_ASIDE}{_PREVIOUS}\s+{_RULES}\b"
            rf"|\b(?:ignore|disregard|forget|override|bypass)\s+{_ASIDE}(?:instructions?|prompts?|guidelines?)\b"
            r"|\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:you|above|before|else|that)\b"
            r"|\bsystem\s+prompt\b|\byou\s+are\s+now\b|\bnew\s+instructions?\b|\bdeveloper\s+mode\b|\bjailbreak"
            r"|\bact\s+as\s+(?:if|though)\s+you\b",
        ),
    ),
    (
        "addressed to agents",
        lazy_pattern(
            rf"\b(?:if|when)\s+you\s+are\s+(?:an?\s+|the\s+)?(?:{_AI}|{_NAMES})\b"
            r"|\bas\s+an?\s+(?:ai|llm|language\s+model)\b"
            rf"|\b(?:note|message|instructions?|attention)\s+(?:to|for)\s+(?:the\s+|all\s+|any\s+)?(?:{_AI}|{_NAMES})\b"
            rf"|\b(?:dear|hey|hello|hi)\s*,?\s+(?:the\s+)?(?:{_AI}|{_NAMES})\b"
            rf"|\byou\s*,?\s+the\s+(?:{_AI}|{_NAMES})\b"
            r"|\b(?:ai|llm|coding)\s+(?:agents?|assistants?|models?)\s+(?:must|should|shall|need\s+to|have\s+to|"
            r"are\s+to|reading|that\s+reads?)\b"
            r"|\b(?:any|every|all)\s+(?:ai|agents?|assistants?|models?|llms?)\s+(?:reading|that\s+reads?|must|should)\b"
            r"|\b(?:agents?|assistants?|models?)\s+reading\s+this\b",
        ),
    ),
    (
        "secrecy",
        lazy_pattern(
            rf"\b{_DO_NOT}\s+(?:tell|inform|mention|show|reveal|alert|notify|ask)\b[^.]{{0,30}}\buser\b"
            r"|\bwithout\s+(?:asking|telling|informing|notifying|confirming\s+with)\s+(?:the\s+)?(?:user|anyone|them)\b"
            rf"|\b{_DO_NOT}\s+ask\s+(?:the\s+user\s+)?(?:for\s+)?(?:confirmation|permission|approval)\b"
            r"|\bsilently\s+(?:run|execute|install|delete|remove|send|upload|push)\b",
        ),
    ),
    (
        "shell pipe",
        lazy_pattern(
            r"\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|]{0,300}\|\s*(?:sudo\s+)?"
            r"(?:ba|z|da|k|fi)?sh\b"
            r"|\b(?:curl|wget|iwr|irm)\b[^|]{0,300}\|\s*(?:python3?|perl|ruby|node|iex|invoke-expression)\b"
            r"|\b(?:ba)?sh\s+(?:-c\s+)?[\"']?\s*(?:<\(|\$\()\s*(?:curl|wget)\b"
            r"|\bbase64\s+(?:-d|--decode)\b[^|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b",
        ),
    ),
    (
        "command",
        lazy_pattern(
            r"(?:^|[.!?:;]\s+)(?:please\s+|always\s+|first,?\s+|now\s+|then\s+|also\s+|immediately\s+|"
            r"(?:you\s+)?(?:must|should|need\s+to|have\s+to)\s+(?:always\s+)?|make\s+sure\s+(?:to|you)\s+|"
            r"be\s+sure\s+to\s+|remember\s+to\s+|don'?t\s+forget\s+to\s+|before\s+(?:anything|doing\s+anything|"
            r"you\s+start|starting)\s*,?\s+)*"
            r"`?(?:run|execute|install|curl|wget|sudo|chmod|chown|rm\s+-[a-z]*[rf])\b"
            r"|\brm\s+-[a-z]*(?:rf|fr)[a-z]*\s+(?:--no-preserve-root\s+)?[/~*]"
            r"|\bchmod\s+(?:-r\s+)?0?777\b|/dev/tcp/|\bnc\s+(?:-\w+\s+)*-e\b|\bmkfifo\b|\beval\s+[\"']?\$\(",
        ),
    ),
    (
        "tool call",
        lazy_pattern(r"\b(?:call|invoke|trigger)\s+(?:the\s+)?[\w.-]{1,40}\s+tool\b|\bmemory_(?:forget|store)\b"),
    ),
    (
        "send data",
        lazy_pattern(
            r"\b(?:send|post|upload|exfiltrate|forward|email|paste|transmit)\b.{0,80}?\bto\s+"
            r"(?:https?://|ftp://|\S+@\S+\.\w+|[\w-]+\.(?:com|net|org|io|xyz|ru|cn|site|app)\b)",
        ),
    ),
)


# For each reason, substrings of which its pattern cannot match without one (every alternative contains one of them
# literally, blanks being single spaces after `normalised`): most texts hold none, and a substring test costs a
# fraction of a pattern's search. Loosening a pattern means adding its new literal here (a test checks that the
# detector with and without this filter agrees on every text it has).
_NEEDED: dict[str, list[str]] = {
    "override": "ignor|disregard|forget|overrid|bypass|system|you are now|new instruction|developer mode|jailbreak|"
    "act as".split("|"),
    "addressed to agents": "ai|a.i.|llm|language model|coding|agent|assistant|bot|model|claude|codex|copilot|cursor|"
    "gemini|chatgpt|gpt|opencode|aider".split("|"),
    "secrecy": "do not|don't|dont|never|without|silently".split("|"),
    "shell pipe": "curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|base64".split("|"),
    "command": "run|execute|install|curl|wget|sudo|chmod|chown|rm -|/dev/tcp/|nc -|mkfifo|eval ".split("|"),
    "tool call": "call|invoke|trigger|memory_".split("|"),
    "send data": "send|post|upload|exfiltrate|forward|email|paste|transmit".split("|"),
}


def normalised(text: str) -> str:
    """The text as the detector reads it: compatibility-folded, invisible characters removed, blanks collapsed."""
    # NFKC leaves ASCII as it is, and every invisible character is outside it. Blanks: `str.split` splits on exactly
    # the characters `\s` matches (str.isspace), so joining its words is the `\s+` -> " " of a stripped text.
    if not text.isascii():
        text = _INVISIBLE_RE.sub("", unicodedata.normalize("NFKC", text))
    return " ".join(text.split()).lower()


@functools.cache
def _needles() -> tuple[LiteralScan, list[frozenset[str]]]:
    """Every needed substring in one scanner, and the reasons each one lets through."""
    needles = sorted({needle for needed in _NEEDED.values() for needle in needed})
    return LiteralScan(needles), [frozenset(r for r, needed in _NEEDED.items() if n in needed) for n in needles]


def instruction_reason(text: str) -> str | None:
    """Why `text` reads like instructions to an agent (one of the reasons in the module docstring), or None."""
    plain = normalised(text[:20_000])
    scan, reasons_of = _needles()
    found = scan.found(plain)  # every needle in one pass (asked one by one, 70 of them took 10 µs a text)
    if not found:
        return None
    possible = frozenset().union(*(reasons_of[i] for i in found))
    for reason, pattern in _PATTERNS:
        if reason in possible and pattern.search(plain):
            return reason
    return None


def unfiltered_reason(text: str) -> str | None:
    """`instruction_reason` without the substring filter: the reference the filter is tested against."""
    plain = normalised(text[:20_000])
    return next((reason for reason, pattern in _PATTERNS if pattern.search(plain)), None)


def is_instruction_like(text: str) -> bool:
    return instruction_reason(text) is not None
