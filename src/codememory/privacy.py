"""Privacy filter: what must never reach the store, a log file or a model (DESIGN.md principle 1).

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
   - `Authorization: <scheme> <value>` headers and `Bearer <value>` (the value only);
   - passwords in URLs: `scheme://user:pass@host` -> `scheme://user:[REDACTED:url_password]@host`;
   - `KEY=value`, `KEY: value`, `"key": "value"` (also `:=`, `=>`) where a word of the key name is
     password/passwd/pwd/passphrase/secret/token/auth/credential(s)/apikey or the pairs api+key,
     access+key, private+key, secret+key, client+secret (split on `_ - .` and camelCase, any case),
     e.g. `aws_secret_access_key`, `DB_PASSWORD`, `authToken`;
   - generic high-entropy strings: a run of >= 32 characters of `[A-Za-z0-9+/=_-]` with Shannon
     entropy >= 4.0 bits/char that holds at least 2 digits, 2 upper-case and 2 lower-case letters.

False-positive trade-offs (we prefer redacting a little too much over leaking):
- KEY/value: a value is kept when it is empty, a number shorter than 6 digits, a literal such as
  true/false/null/None, a type name (`password: str`), a placeholder (`$VAR`, `${…}`, `<…>`,
  `{…}`, `***`, `xxx`, `...`) or looks like code (`os.environ[...]`, `get_token()`). Keys that name
  something about a secret rather than the secret are kept: any word among count, max, min, limit,
  size, len(gth), type, file, path, url, uri, endpoint, name, id, env, var, header, ttl, expiry,
  usage, budget, prefix, dir, length, kind, field (`max_tokens=4096`, `token_url=…`,
  `SECRET_KEY_FILE=…`). Prose such as "Password: see the vault" loses its next word. An unquoted
  value stops at whitespace, a quote, `,` or `;`; trailing `)]}>` are kept outside the redaction.
- High entropy: lower-case hex (git SHAs, sha256 digests) and UUIDs never qualify (no upper-case),
  so a hex-only secret is only caught through its key name or prefix; identifiers such as
  `test_scrub_keeps_paths` fail the mixed-class rule. Slash-separated runs whose segments are all
  lower-case words (paths) are kept; ids `mem_xxxxxxxx`, 40/64-char hex and UUIDs are kept
  explicitly. About 2.6% of random 32-character base62 strings hold fewer than 2 digits and are
  missed (less for longer strings); long CamelCase identifiers with 2+ digits may be redacted.

`scrub` is idempotent (`scrub(scrub(x)) == scrub(x)`), uses only precompiled regular expressions and
the standard library (hooks import it), and never raises: on an internal error it returns "" (fail
closed). It takes well under a millisecond for a 10,000-character text of ordinary prose and code.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

__all__ = ["redact_secrets", "scrub", "scrub_private"]

_TAG_RE = re.compile(r"<\s*(/?)\s*private\s*>", re.IGNORECASE)

_PRIVATE_KEY_RE = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)

_B = r"(?<![A-Za-z0-9_-])"  # a token starts at a boundary
_E = r"(?![A-Za-z0-9_-])"  # and ends at one
# (kind, substrings one of which the text must hold, pattern): the substring test skips most patterns cheaply
_TOKENS: list[tuple[str, tuple[str, ...], re.Pattern[str]]] = [
    (kind, triggers, re.compile(pattern))
    for kind, triggers, pattern in [
        ("anthropic", ("sk-ant-",), rf"{_B}sk-ant-[A-Za-z0-9_-]{{20,}}"),
        ("openai", ("sk-",), rf"{_B}sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{{20,}}"),
        ("groq", ("gsk_",), rf"{_B}gsk_[A-Za-z0-9]{{20,}}"),
        (
            "google",
            ("AIza", "ya29.", "GOCSPX-"),
            rf"{_B}(?:AIza[0-9A-Za-z_-]{{35}}|ya29\.[0-9A-Za-z_-]{{20,}}|GOCSPX-[0-9A-Za-z_-]{{20,}}){_E}",
        ),
        (
            "github",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
            rf"{_B}(?:gh[pousr]_[A-Za-z0-9]{{30,}}|github_pat_[A-Za-z0-9_]{{22,}})",
        ),
        ("gitlab", ("gl",), rf"{_B}gl(?:pat|dt|rt|ptt|ft|cbt|oas)-[A-Za-z0-9_-]{{20,}}"),
        (
            "slack",
            ("xox", "hooks.slack.com"),
            rf"{_B}xox[abposr]-[A-Za-z0-9-]{{10,}}|hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
        ),
        (
            "stripe",
            ("_live_", "_test_", "whsec_"),
            rf"{_B}(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}|whsec_[A-Za-z0-9]{{20,}})",
        ),
        ("aws", ("AKIA", "ASIA", "ABIA", "ACCA"), r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
        ("npm", ("npm_",), rf"{_B}npm_[A-Za-z0-9]{{36,}}"),
        ("pypi", ("pypi-",), rf"{_B}pypi-[A-Za-z0-9_-]{{50,}}"),
        ("huggingface", ("hf_",), rf"{_B}hf_[A-Za-z0-9]{{30,}}"),
        ("jwt", ("eyJ",), rf"{_B}eyJ[A-Za-z0-9_-]{{8,}}\.eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]*"),
    ]
]

# A quote escaped n times (\\" inside a JSON string, \\\\\\" inside one inside another) stands in as the
# private-use character U+E000+n while the patterns run, so they see it as one quote character.
_ESCAPED_QUOTE_RE = re.compile(r'(\\{1,15})"')
_STAND_IN_RE = re.compile("[\ue001-\ue00f]")
QUOTES = "\"'\ue001\ue002\ue003\ue004\ue005\ue006\ue007\ue008\ue009\ue00a\ue00b\ue00c\ue00d\ue00e\ue00f"

_URL_PASSWORD_RE = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:)(?!\[REDACTED)[^\s/@]+(@)")
_AUTH_HEADER_RE = re.compile(
    r"(\b(?:proxy-)?authorization[\"'\ue001-\ue00f]?[ \t]*[:=][ \t]*[\"'\ue001-\ue00f]?"
    r"(?:(?:bearer|basic|token|bot|digest|negotiate)[ \t]+)?)"
    r"(?!\[REDACTED|(?:bearer|basic|token|bot|digest|negotiate)\b)[^\s'\",;\ue001-\ue00f]+",
    re.IGNORECASE,
)
_BEARER_RE = re.compile(r"(\bbearer[ \t]+)(?!\[REDACTED)[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)

_ASSIGN_RE = re.compile(
    r"(?P<q>[\"'\ue001-\ue00f]?)(?<![A-Za-z0-9_.-])"
    r"(?P<key>(?=[A-Za-z0-9_.-]*?(?i:pass|pwd|secret|token|key|auth|credential))[A-Za-z0-9_.-]++)(?P=q)"
    r"(?P<sep>[ \t]*(?::=|=>|[:=])[ \t]*)"
    r"(?P<val>\"[^\"\n]*\"|'[^'\n]*'|(?P<eq>[\ue001-\ue00f])[^\ue001-\ue00f\n]*(?P=eq)|[^\s'\",;\ue001-\ue00f]++)"
)
_KEY_HINTS = ("pass", "pwd", "secret", "token", "key", "auth", "credential")
_KEY_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS = {"password", "passwd", "pwd", "passphrase", "secret", "token", "auth", "credential", "credentials"}
_SECRET_WORDS |= {"apikey", "secrets", "pat"}
_SECRET_PAIRS = [("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"), ("client", "secret")]
_NOT_SECRET_WORDS = {
    "count", "max", "min", "limit", "limits", "size", "len", "length", "type", "types", "file", "path",
    "url", "uri", "endpoint", "name", "id", "ids", "env", "var", "header", "ttl", "expiry", "expires",
    "usage", "budget", "prefix", "dir", "kind", "field", "tokens", "tokenizer",
}  # fmt: skip
_LITERALS = {"true", "false", "null", "none", "nil", "undefined", "required", "optional", "str", "string", "bool"}
_LITERALS |= {"int", "bytes", "any", "secretstr", "redacted"}
_CODE_RE = re.compile(r"[A-Za-z_][\w.]*[(\[]|(?:self|os|process|env|config|settings|cls)\.")
_PLACEHOLDER_RE = re.compile(r"[$<{%]|\*{3}|x{3}|\.\.\.|\[REDACTED", re.IGNORECASE)

_CANDIDATE_RE = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{32,}")
_KEEP_RE = re.compile(
    r"(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
)
_PATH_SEGMENT_RE = re.compile(r"[A-Za-z]?[a-z0-9_.-]*")


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


def _secret_key(key: str) -> bool:
    words = [w.lower() for w in _KEY_WORD_RE.findall(key)]
    if not words or key.lower() in ("pwd", "oldpwd", "old_pwd"):  # the shell's working directory
        return False
    if any(w in _NOT_SECRET_WORDS for w in words):
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(a in words and b in words for a, b in _SECRET_PAIRS)


def _redact_assignments(text: str) -> str:
    """`_ASSIGN_RE` matches one after another; a rejected match resumes at its value, which may itself
    be an assignment (`note: DB_PASSWORD=x`)."""
    out: list[str] = []
    pos = done = 0
    while m := _ASSIGN_RE.search(text, pos):
        replaced = _assign_sub(m)
        if replaced is None:
            pos = m.start("val")
            continue
        out += [text[done : m.start()], replaced]
        pos = done = m.end()
    return "".join(out) + text[done:] if out else text


def _assign_sub(m: re.Match[str]) -> str | None:
    """The redacted assignment, or None when the key or value does not look like a secret."""
    if not _secret_key(m.group("key")):
        return None
    val = m.group("val")
    head = m.group(0)[: m.start("val") - m.start()]
    if val[:1] in QUOTES:
        inner, quote, tail = val[1:-1], val[0], ""
    else:
        inner = val.rstrip(")]}>")
        quote, tail = "", val[len(inner) :]
    plain = inner.strip()
    if (
        not plain
        or plain.lower() in _LITERALS
        or (plain.isdigit() and len(plain) < 6)
        or _PLACEHOLDER_RE.match(plain)
        or (not quote and _CODE_RE.match(plain))
    ):
        return None
    return f"{head}{quote}[REDACTED:secret]{quote}{tail}"


_STEPS: list[tuple[str, re.Pattern[str], str]] = [  # (substring the lower-cased text must hold, pattern, replacement)
    ("://", _URL_PASSWORD_RE, r"\1[REDACTED:url_password]\2"),
    ("authorization", _AUTH_HEADER_RE, r"\1[REDACTED:authorization]"),
    ("bearer", _BEARER_RE, r"\1[REDACTED:bearer]"),
]


def redact_secrets(text: str) -> str:
    """Replace secrets with `[REDACTED:<kind>]` (see the module docstring for the rules)."""
    if '\\"' in text:  # JSON inside a string: a tool's input, a prompt OpenCode stored quoted
        hidden = _ESCAPED_QUOTE_RE.sub(lambda m: chr(0xE000 + len(m.group(1))), text)
        return _STAND_IN_RE.sub(lambda m: "\\" * (ord(m.group(0)) - 0xE000) + '"', _redact(hidden))
    return _redact(text)


def _redact(text: str) -> str:
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY_RE.sub("[REDACTED:private_key]", text)
    for kind, triggers, pattern in _TOKENS:
        if any(t in text for t in triggers):
            text = pattern.sub(f"[REDACTED:{kind}]", text)
    lower = text.lower()
    for gate, step, replacement in _STEPS:
        if gate in lower:
            text = step.sub(replacement, text)
    lower = text.lower()
    if any(hint in lower for hint in _KEY_HINTS):
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


def scrub_json(value: Any) -> Any:
    """Every string inside a JSON-able value scrubbed, keys included (a secret can be a key too)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(str(k)): scrub_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_json(v) for v in value]
    return value
