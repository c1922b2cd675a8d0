"""Privacy filter: what must never reach the store, a log file or a model (docs/architecture.md, principle 1).

`scrub(text)` runs two stages, in this order, on every text before it is written anywhere:

1. `scrub_private`: `<private>…</private>` spans are removed (tags are case-insensitive and may
   contain spaces, e.g. `< PRIVATE >`; spans may span lines, nest and repeat). An unclosed
   `<private>` removes everything after it (fail closed); a stray `</private>` is just removed.
2. `redact_secrets`: secrets are replaced with `[REDACTED:<kind>]`:
   - provider tokens recognised by their published prefixes: Anthropic `sk-ant-`, OpenAI `sk-`,
     `sk-proj-`, Groq `gsk_`, Google `AIza…`/`ya29.`/`GOCSPX-`, GitHub `ghp_ gho_ ghu_ ghs_ ghr_
     github_pat_`, GitLab `glpat-` (and `gldt- glrt- glptt- glft- glcbt- gloas-`), Slack `xox?-`
     and webhook URLs, Stripe `sk_/rk_ live|test`, `whsec_`, AWS access key ids `AKIA/ASIA…`,
     npm `npm_`, PyPI `pypi-`, Hugging Face `hf_`; JWTs (`eyJ….eyJ….sig`);
   - `-----BEGIN … PRIVATE KEY-----` blocks (an unterminated block removes the rest of the text);
   - secrets known by their context (privacy_context.py): passwords in any URL (`redis://:pw@host`),
     `Authorization`/`Bearer`/`Cookie` values, password flags of command lines (`mysql -pPW`,
     `sshpass -p PW`, `curl -u user:PW`, `--password PW`, …), `.netrc` lines, `<password>` elements
     and prose ("the wifi password is PW");
   - key-named values: `KEY=value`, `KEY: value`, `"key": "value"` (also `:=`, `=>`, and a quoted key
     with spaces such as `"API Key"`), quoted or not, in any JSON-ish text, also when the text was cut
     off inside the value (an unclosed quote redacts to the end of the line). A key names a secret when
     a word of it (split on `_ - .` spaces and camelCase, any case) is password/passwd/pwd/passphrase/
     secret(s)/token/auth/credential(s)/apikey/pat, or ends in password/passwd/passphrase/secret/token
     (`PGPASSWORD`, `authtoken`), or its last word ends in "pass" (`DB_PASS`, `dbpass`; not "pass"
     alone, nor bypass/compass…), or it holds the pairs api+key, access+key, private+key, secret+key,
     client+secret, e.g. `aws_secret_access_key`, `DB_PASSWORD`, `authToken`;
   - generic high-entropy strings: a run of >= 32 characters of `[A-Za-z0-9+/=_-]` with Shannon
     entropy >= 4.0 bits/char that holds at least 2 digits, 2 upper-case and 2 lower-case letters.

False-positive trade-offs (we prefer redacting a little too much over leaking):
- KEY/value: a value is kept when it is empty, a number shorter than 6 digits, a literal such as
  true/false/null/None, a type name (`password: str`, but a default after it, `password: str = "x"`,
  is redacted), a placeholder (`$VAR`, `${…}`, `<…>`, `{…}`, `***`, `xxx`, `...`), a path of
  lower-case words (`/run/secrets/db`), a function word ("Password: see the vault": the, a, see, use,
  …), or looks like code (`os.environ[...]`, `get_token()`, a dotted or lower-case name that itself
  names the secret: `args.password`, `token=token`; `password=Super_Secret1` is redacted).
  Comparisons (`token == x`) and paths (`Token::new`) are not assignments. Keys that name something
  about a secret rather than the secret are kept: any word among count, max, min, limit, size,
  len(gth), type, file, path, url, uri, endpoint, name, id, env, var, header, ttl, expiry, usage,
  budget, prefix, dir, length, kind, field, stdin, prompt, command, helper, policy (`max_tokens=4096`,
  `token_url=…`, `SECRET_KEY_FILE=…`, `--password-stdin`). Prose such as "Password: vault entry 7"
  loses its next word. An unquoted value stops at whitespace, a quote, `,` or `;`; trailing
  `)]}>.,:!?` are kept outside the redaction. Where the context says it is a password (a URL's,
  `mysql -p`, `.netrc`), only a whole placeholder is kept (`$VAR`, `${VAR}`, `%VAR%`, `<…>`, `{…}`),
  even a short number goes.
- High entropy: lower-case hex (git SHAs, sha256 digests) and UUIDs never qualify (no upper-case),
  so a hex-only secret is only caught through its key name or prefix; identifiers such as
  `test_scrub_keeps_paths` fail the mixed-class rule. Slash-separated runs whose segments are all
  lower-case words (paths) are kept; ids `mem_xxxxxxxx`, 40/64-char hex and UUIDs are kept
  explicitly. About 2.6% of random 32-character base62 strings hold fewer than 2 digits and are
  missed (less for longer strings); long CamelCase identifiers with 2+ digits may be redacted.

`scrub_label` is `scrub` for a label (a tag, an `entered_by`): a label is a word or a name, so a bare token of 8 or
more letters and digits (not hex) that switches between letters and digits, or lower and upper case, at least every
other character (`Pw07x7Kq2Lm`: nine switches in eleven; `pw07x7kq2lm`, as a stored tag is, six) is taken for a
secret even without a context or 32 characters (`Python311`, `iOS17Beta2`, `OAuth2Client` switch too seldom), and
so is one of 16 or more, of both cases and digits, that switches at least every third character with an entropy of
3.5 bits per character (a long CamelCase tag with digits, such as `AwsS3BucketPolicyV2`, is dropped too). About 3 in
5 random 12-character tokens of both cases and digits are caught this way, and nearly every one of 16 or more.

`scrub` is idempotent (`scrub(scrub(x)) == scrub(x)`), uses regular expressions compiled on first use, the
standard library and one small compiled scanner (`core.literal_scan`, hooks import it), and never raises: on an
internal error it returns "" (fail closed). Each pattern starts with a literal, so the regex engine jumps from one
occurrence of it to the next, and a text is first scanned once for all of those literals: only the patterns of the
ones it holds are tried, and ordinary text costs little: `benchmarks/bench_scrub.py` measures the throughput on
transcript-like text.
`scrub_message` is `scrub` for an error message that may echo what the user typed: also one line, long
echoed arguments cut short.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter
from typing import Any

from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.literal_scan import LiteralScan
from codememory.core.safe_text import printable_line
from codememory.text.privacy_context import STAND_INS, lower, redact_context, redacted, rule_patterns, val

__all__ = ["redact_secrets", "scrub", "scrub_json", "scrub_label", "scrub_message", "scrub_private"]

_TAG_RE = lazy_pattern(r"<\s*(/?)\s*private\s*>", re.IGNORECASE)

_PRIVATE_KEY_RE = lazy_pattern(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)


def _lit(prefix: str, before: str = "A-Za-z0-9_-") -> str:
    """`prefix` not continuing a token on its left; the check comes after the literal so that the regex
    engine can jump from one occurrence of the literal to the next."""
    return rf"{re.escape(prefix)}(?<![{before}]{re.escape(prefix)})"


_E = r"(?![A-Za-z0-9_-])"  # a token ends at a boundary
_TOKENS: list[tuple[str, re.Pattern[str]]] = [
    (kind, lazy_pattern(pattern))
    for kind, pattern in [
        ("anthropic", rf"{_lit('sk-ant-')}[A-Za-z0-9_-]{{20,}}"),
        ("openai", rf"{_lit('sk-')}(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{{20,}}"),
        ("groq", rf"{_lit('gsk_')}[A-Za-z0-9]{{20,}}"),
        ("google", rf"{_lit('AIza')}[0-9A-Za-z_-]{{35}}{_E}"),
        ("google", rf"{_lit('ya29.')}[0-9A-Za-z_-]{{20,}}{_E}"),
        ("google", rf"{_lit('GOCSPX-')}[0-9A-Za-z_-]{{20,}}{_E}"),
        ("github", rf"{_lit('gh')}[pousr]_[A-Za-z0-9]{{30,}}"),
        ("github", rf"{_lit('github_pat_')}[A-Za-z0-9_]{{22,}}"),
        ("gitlab", rf"{_lit('gl')}(?:pat|dt|rt|ptt|ft|cbt|oas)-[A-Za-z0-9_-]{{20,}}"),
        ("slack", rf"{_lit('xox')}[abposr]-[A-Za-z0-9-]{{10,}}"),
        ("slack", r"hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
        ("stripe", rf"{_lit('sk_')}(?:live|test)_[A-Za-z0-9]{{16,}}"),
        ("stripe", rf"{_lit('rk_')}(?:live|test)_[A-Za-z0-9]{{16,}}"),
        ("stripe", rf"{_lit('whsec_')}[A-Za-z0-9]{{20,}}"),
        ("aws", r"A(?<![A-Z0-9]A)(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Z0-9])"),
        ("npm", rf"{_lit('npm_')}[A-Za-z0-9]{{36,}}"),
        ("pypi", rf"{_lit('pypi-')}[A-Za-z0-9_-]{{50,}}"),
        ("huggingface", rf"{_lit('hf_')}[A-Za-z0-9]{{30,}}"),
        ("jwt", rf"{_lit('eyJ')}[A-Za-z0-9_-]{{8,}}\.eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]*"),
    ]
]

# A quote escaped n times (\\" inside a JSON string, \\\\\\" inside one inside another) stands in as the
# character U+0080+n (U+E000+n when the text holds C1 controls) while the patterns run, so they see it as
# one quote character.
_ESCAPED_QUOTE_RE = lazy_pattern(r'(\\{1,15})"')
_C1_RE = lazy_pattern("[\x80-\x9f]")
_STAND_IN_RES = {0x80: lazy_pattern("[\x81-\x8f]"), 0xE000: lazy_pattern("[\ue001-\ue00f]")}

# Key-named values: found from the key's hint word (on the lower-cased text), then the key is read back to
# its start and the value read after the separator. `==`, `!=`, `::` are not separators.
# One literal each (seven quick scans cost less than one scan for seven words); the rest of the key is
# bounded so that a long run of key characters costs a bounded scan per hint word in it.
_ASSIGN_HINT_RES = [
    lazy_pattern(rf"{hint}[a-z0-9_.-]{{0,80}}(?P<q>['\"`{STAND_INS}]?)[ \t]*(?::=|=>|:(?!:)|=(?!=))[ \t]*")
    for hint in ("pass", "pwd", "secret", "token", "key", "auth", "credential")
]
_VALUE_RE = lazy_pattern(val())
_TYPE_RE = lazy_pattern(r"[A-Za-z_][\w.]*(?:\[[\w., |]*\])?")
_DEFAULT_RE = lazy_pattern(r"(?:[ \t]*\|[ \t]*[A-Za-z_][\w.]*(?:\[[\w., |]*\])?)*[ \t]*=(?![=>])[ \t]*" + val())
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_KEY_WORD_RE = lazy_pattern(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS = {"password", "passwd", "pwd", "passphrase", "secret", "token", "auth", "credential", "credentials"}
_SECRET_WORDS |= {"apikey", "secrets", "pat"}
_SECRET_ENDINGS = ("password", "passwd", "passphrase", "secret", "token")
# "pass" alone is too common a word ("a second pass: the …"); it names a secret as the last word of a longer
# key (`DB_PASS`, `redisPass`) or glued to one (`dbpass`, but not `bypass`)
_PASS_WORDS = {"bypass", "compass", "surpass", "overpass", "underpass", "trespass", "encompass"}
_SECRET_PAIRS = [("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"), ("client", "secret")]
_NOT_SECRET_WORDS = {
    "count", "max", "min", "limit", "limits", "size", "len", "length", "type", "types", "file", "path",
    "url", "uri", "endpoint", "name", "id", "ids", "env", "var", "header", "ttl", "expiry", "expires",
    "usage", "budget", "prefix", "dir", "kind", "field", "tokens", "tokenizer", "stdin", "prompt",
    "command", "cmd", "helper", "policy",
}  # fmt: skip

_CANDIDATE_RE = lazy_pattern(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{32,}")
_KEEP_RE = lazy_pattern(
    r"(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
)
_PATH_SEGMENT_RE = lazy_pattern(r"[A-Za-z]?[a-z0-9_.-]*")


def scrub_private(text: str) -> str:
    """Remove `<private>…</private>` spans; an unclosed tag removes the rest, a stray close tag is dropped."""
    if "private" not in text.lower():
        return text
    out: list[str] = []
    depth = 0
    pos = 0
    for m in _TAG_RE.finditer(text):
        if depth == 0:
            out.append(text[pos : m.start()])
        if m.group(1):  # a closing tag
            depth = max(depth - 1, 0)
        else:
            depth += 1
        pos = m.end()
    if depth == 0:
        out.append(text[pos:])
    return "".join(out)


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _high_entropy(token: str) -> bool:
    if _KEEP_RE.fullmatch(token) or (token.startswith("mem_") and len(token) <= 12):
        return False
    if "/" in token and all(_PATH_SEGMENT_RE.fullmatch(seg) for seg in token.split("/")):
        return False  # a path: lower-case words
    digits = upper = lower = 0
    for ch in token:
        if ch.isdigit():
            digits += 1
        elif ch.isupper():
            upper += 1
        elif ch.islower():
            lower += 1
    if digits < 2 or upper < 2 or lower < 2:
        return False
    return _entropy(token) >= 4.0


def _entropy_sub(m: re.Match[str]) -> str:
    return "[REDACTED:high_entropy]" if _high_entropy(m.group(0)) else m.group(0)


@functools.lru_cache(maxsize=4096)  # the same names come back on every turn
def _secret_key(key: str) -> bool:
    """Whether a key (variable, field, flag or element name) names a secret (see the module docstring)."""
    words = [w.lower() for w in _KEY_WORD_RE.findall(key)]
    if not words or key.lower() in ("pwd", "oldpwd", "old_pwd"):  # the shell's working directory
        return False
    if any(w in _NOT_SECRET_WORDS for w in words):
        return False
    if any(w in _SECRET_WORDS or w.endswith(_SECRET_ENDINGS) for w in words):
        return True
    last = words[-1]
    if last.endswith("pass") and last not in _PASS_WORDS and (len(words) > 1 or last != "pass"):
        return True
    return any(a in words and b in words for a, b in _SECRET_PAIRS)


def _key_start(text: str, hint: int, quote: str) -> int:
    """Where the key holding the hint word at `hint` starts; a quoted key may hold spaces (`"API Key"`)."""
    start = hint
    while start and text[start - 1] in _KEY_CHARS:
        start -= 1
    if quote and start and text[start - 1] == " ":
        opening = text.rfind(quote, max(0, start - 40), start)
        if opening >= 0 and all(c in _KEY_CHARS or c == " " for c in text[opening + 1 : start]):
            return opening + 1
    return start


def _redact_assignments(text: str) -> str:
    """Key-named values, found from their key's hint word; a rejected match resumes after its separator,
    so a value that is itself an assignment (`note: DB_PASSWORD=x`) is still looked at."""
    low = lower(text)
    hints = sorted((m for pattern in _ASSIGN_HINT_RES for m in pattern.finditer(low)), key=lambda m: m.start())
    out: list[str] = []
    pos = done = 0
    for m in hints:
        if m.start() < pos:  # inside a key or value already looked at
            continue
        pos = m.end()
        start = _key_start(text, m.start(), m.group("q"))
        if not _secret_key(text[start : m.start("q")]):
            continue
        value = _VALUE_RE.match(text, m.end())
        if value is None:
            continue
        new = redacted(value.group("val"), "secret", _secret_key)
        if new is None:  # a type name may be followed by a default: `password: str = "hunter2"`
            if not _TYPE_RE.fullmatch(value.group("val")):
                continue
            value = _DEFAULT_RE.match(text, value.end())
            new = redacted(value.group("val"), "secret", _secret_key) if value else None
            if value is None or new is None:
                continue
        out += [text[done : value.start("val")], new]
        pos = done = value.end()
    return "".join(out) + text[done:] if out else text


REDACTION_RE = lazy_pattern(r"\[REDACTED:[a-z_]+\]")


def without_redactions(text: str) -> str:
    """The text without the markers of secrets taken out (for a query: a secret says nothing about what it is about)."""
    return REDACTION_RE.sub(" ", text)


def redact_secrets(text: str) -> str:
    """Replace secrets with `[REDACTED:<kind>]` (see the module docstring for the rules)."""
    if '\\"' in text:  # JSON inside a string: a tool's input, a prompt OpenCode stored quoted
        base = 0xE000 if _C1_RE.search(text) else 0x80
        hidden = _ESCAPED_QUOTE_RE.sub(lambda m: chr(base + len(m.group(1))), text)
        return _STAND_IN_RES[base].sub(lambda m: "\\" * (ord(m.group(0)) - base) + '"', _redact(hidden))
    return _redact(text)


_METACHARACTERS = frozenset(".^$*+?{}[]()|")


def _leading_literal(pattern: re.Pattern[str]) -> str:
    """The characters every match of `pattern` starts with ("" if none), read off its source without compiling it
    (a search compiles only the patterns whose literal its text holds; see `core.lazy_pattern`). It may say less
    than the regex parser would (a shorter literal only makes the gate try a pattern more often), never more:
    it stops at the first character that is not plainly literal, at a repeat, and says "" for a pattern that
    ignores case, holds a comment (`ab(?#…)?` makes the `b` optional, and a comment may hold a `(` or `|`) or
    alternates at its top level."""
    source = pattern.pattern
    if pattern.flags & (re.IGNORECASE | re.VERBOSE) or "(?#" in source or _alternates_at_top(source):
        return ""
    lead: list[str] = []
    at = 0
    while at < len(source):
        char = source[at]
        if char == "\\":
            char = source[at + 1 : at + 2]
            if not char or char.isalnum() or char == "_":  # a class, an anchor, a reference or a code: not literal
                break
            at += 1
        elif char in _METACHARACTERS:
            break
        at += 1
        if source[at : at + 1] in ("*", "+", "?", "{"):  # repeated or optional: the parser stops here too
            break
        lead.append(char)
    return "".join(lead)


def _alternates_at_top(source: str) -> bool:
    """Whether a `|` outside every group and character class splits the pattern."""
    depth = 0
    in_class = False
    at = 0
    while at < len(source):
        char = source[at]
        if char == "\\":
            at += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if source[at + 1 : at + 2] == "^":
                at += 1
            if source[at + 1 : at + 2] == "]":  # a `]` first in a class is literal
                at += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
        at += 1
    return False


class _Gate:
    """Patterns grouped by the literal they start with (a text without it cannot match them), and those without."""

    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        self.always: list[re.Pattern[str]] = []
        by_lead: dict[str, list[re.Pattern[str]]] = {}
        for pattern in patterns:
            lead = _leading_literal(pattern)
            (by_lead.setdefault(lead, []) if lead else self.always).append(pattern)
        self.groups = list(by_lead.values())
        self.leads = LiteralScan(list(by_lead))  # every literal in one pass (a regex alternation took 5-10 µs a text)

    def matches(self, text: str) -> bool:
        """Whether one of the patterns matches somewhere in the text: those of each literal the text holds."""
        if any(p.search(text) for p in self.always):
            return True
        groups = self.groups
        return any(p.search(text) for lead in self.leads.found(text) for p in groups[lead])


@functools.cache
def _quick_checks() -> tuple[_Gate, _Gate]:
    """Every pattern a stage of `_redact` looks for, on the text and on its lower-case copy: where none matches, no
    stage can change the text (each stage changes only what one of its patterns matched). A pattern is tried only
    where the literal it starts with occurs, so a text holding nothing secret-like costs a few scans instead of some
    fifty (an import of 100,000 memories scrubs every text)."""
    on_text, on_lower = rule_patterns()
    return _Gate([p for _, p in _TOKENS] + on_text + [_CANDIDATE_RE]), _Gate(on_lower + _ASSIGN_HINT_RES)


def _nothing_to_redact(text: str) -> bool:
    on_text, on_lower = _quick_checks()
    return "PRIVATE KEY" not in text and not on_text.matches(text) and not on_lower.matches(lower(text))


def _redact(text: str) -> str:
    return text if _nothing_to_redact(text) else _redact_stages(text)


def _redact_stages(text: str) -> str:
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY_RE.sub("[REDACTED:private_key]", text)
    for kind, pattern in _TOKENS:  # each starts with a literal: a text without it is skipped quickly
        text = pattern.sub(f"[REDACTED:{kind}]", text)
    text = redact_context(text, _secret_key)
    text = _redact_assignments(text)
    return _CANDIDATE_RE.sub(_entropy_sub, text)


def scrub(text: str) -> str:
    """`<private>` spans removed, then secrets redacted. Never raises ("" on an internal error)."""
    try:
        if not isinstance(text, str):
            text = str(text)
        return redact_secrets(scrub_private(text))
    except Exception:  # fail closed: nothing we could not check is written anywhere
        return ""


def scrub_start(text: str, limit: int) -> str:
    """`scrub` of the start of a long text, of at most `limit` characters of it. The text is cut before it is
    scrubbed (scrubbing all of a long text costs too much), and at a white space: a token the bound goes through
    (a secret among them, which would no longer have the shape its pattern knows) is left out whole."""
    if len(text) > limit and not text[limit].isspace():
        limit = max(text.rfind(ch, 0, limit) for ch in " \t\n\r") + 1
    return scrub(text[:limit])


_LABEL_TOKEN_RE = lazy_pattern(r"(?<![A-Za-z0-9])[A-Za-z0-9]{8,}(?![A-Za-z0-9])")


def _class(ch: str) -> int:
    return 0 if ch.isdigit() else 1 if ch.isupper() else 2


_HEX_RE = lazy_pattern(r"[0-9a-f]+|[0-9A-F]+")


def _random_token(token: str) -> bool:
    """Random-looking: digits and letters (not hex: a commit or a digest), the class switching at least every other
    character (every third one in a long token of both cases)."""
    classes = [_class(ch) for ch in token]
    if 0 not in classes or len(set(classes)) < 2 or _HEX_RE.fullmatch(token):
        return False
    switches = sum(1 for a, b in itertools.pairwise(classes) if a != b)
    if switches * 2 > len(token):
        return True
    return len(token) >= 16 and len(set(classes)) == 3 and switches * 3 > len(token) and _entropy(token) >= 3.5


def scrub_label(text: str) -> str:
    """`scrub` for a tag or an `entered_by` (see the module docstring): also short random-looking tokens."""
    text = scrub(text)
    if len(text) < 8:
        return text
    return _LABEL_TOKEN_RE.sub(lambda m: "[REDACTED:high_entropy]" if _random_token(m.group(0)) else m.group(0), text)


def scrub_json(value: Any) -> Any:
    """Every string inside a JSON-able value scrubbed, keys included (a secret can be a key too)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(str(k)): scrub_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_json(v) for v in value]
    return value


_LONG_ARG_RE = lazy_pattern(r"[^\s'\"(),;]{41,}")
_PATHLIKE_RE = lazy_pattern(r"(?:~|\.{1,2})?/[^=]*|[A-Za-z]:\\[^=]*")


def scrub_message(message: object, limit: int = 2000) -> str:
    """An error or log message that may echo user input (an argument, a payload field), made safe to show:
    scrubbed, on one printable line (`core.safe_text.printable_line`), every run of
    more than 40 characters without a space that is not a path (an echoed argument: an unrecognised key
    would show whole) cut to its first 12 characters, and at most `limit` characters."""
    text = scrub(str(message))
    text = printable_line(text)
    text = _LONG_ARG_RE.sub(lambda m: m.group(0) if _PATHLIKE_RE.fullmatch(m.group(0)) else m.group(0)[:12] + "…", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
