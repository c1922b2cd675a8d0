"""Secrets recognised by what surrounds them rather than by their shape; `privacy.redact_secrets` runs
`redact_context` after the provider-token patterns and before the key-named values.

- credentials in any URL: `scheme://user:pw@host`, `redis://:pw@host` (empty user), `p@ss` inside;
- `Authorization:`/`Proxy-Authorization:` values (`Basic …`, `Bearer …`, `token …`), `Bearer …` anywhere,
  `Cookie:`/`Set-Cookie:` header values;
- command lines: `mysql -pPW`/`-p'PW'`/`-p PW` (and mysqldump, mariadb…, mycli), `sshpass -p PW`,
  `<tool> login … -p PW` (docker, podman, oc, cf, …), `redis-cli -a PW`, `curl -u user:PW` (`--user`,
  `-U`, `--proxy-user`; wget and httpie `-a`), `zip/unzip -P PW`, `7z -pPW`, `openssl -pass pass:PW`,
  `ldapsearch -w PW`, `sqlcmd -P PW`, `mongosh -p PW`, and any long flag named like a secret
  (`--password PW`, `--api-key PW`, `--token PW`; `--flag=PW` is a key-named value);
- `.netrc` lines (`machine h login u password PW`, or `password PW` alone on a line);
- XML elements named like a secret (`<password>PW</password>`, also when the closing tag was cut off);
- prose: "the wifi password is PW", "my token was 'PW'", "the password for the db is PW", and with a clause
  between the noun and the value: "the password for prod is in 1password, it is PW";
- short forms: `pass: PW` (`pass` alone as a key), `pwd PW`, and "login with admin / PW" ("log in as", "sign in").

False positives avoided for the short forms: what follows `pass:`/`pwd`/a login's slash stays when it is an
ordinary or function word ("a second pass: the same rules"), has no letter or digit (`pwd && ls`), is a name in
capitals ("login with Google / GitHub", and a list of such alternatives), or, after `pwd` (the shell's command too),
a plain lower-case word ("pwd output"); a plain lower-case password after `pass:` or a login's slash goes.
False positives avoided: `ssh -p 2222`, `psql -p 5432`, `redis-cli -p 6379` and `mysql -P 3306` are
ports (only the tools above, with their own flag, count); "the password field is validated" has no
"is" right after the noun; "the token is expired"/"the password is required" keep an ordinary word
(a list of common words and the endings -ed -ing -ly -able …). Trade-off: `mysql -p mydb` (which
prompts, then opens mydb) loses the database name; a plain lower-case password that happens to be such
an ordinary word ("the password is secret") is kept.

Every pattern starts with a literal, so that the regex engine jumps from one occurrence of it to the next
(a text without it costs one fast scan); case-insensitive ones run on a lower-cased copy of the same
length.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass

from codememory.core.lazy_pattern import lazy_pattern

# Escaped quotes stand in as one character each while the patterns run (see privacy.redact_secrets):
# U+0081… (C1 controls, which keep a Latin-1 text compact and fast) or U+E001… when the text holds C1s.
STAND_INS = "\x81-\x8f\ue001-\ue00f"
QUOTES = "\"'`" + "".join(map(chr, range(0x81, 0x90))) + "".join(map(chr, range(0xE001, 0xE010)))
_Q = "'\"`" + STAND_INS  # QUOTES as a character-class body
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def lower(text: str) -> str:
    """Lower case of the same length, so that spans carry over (str.lower lengthens only U+0130)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


def val(stops: str = ",;") -> str:
    """A value: quoted (the closing quote may be missing: a payload cut short) or a run up to whitespace,
    a quote or one of `stops`."""
    return (
        rf'(?P<val>"[^"\n]*"?|\'[^\'\n]*\'?|`[^`\n]*`?|(?P<eq>[{STAND_INS}])[^{STAND_INS}\n]*(?P=eq)?'
        rf"|[^\s{_Q}{stops}]+)"
    )


# ------------------------------------------------------------------------------------ which values stay
_LITERALS = {"true", "false", "null", "none", "nil", "undefined", "required", "optional", "str", "string", "bool"}
_LITERALS |= {"int", "bytes", "any", "secretstr", "redacted", "number", "boolean", "object"}
_CODE_RE = lazy_pattern(r"[A-Za-z_][\w.]*[(\[]|(?:self|os|process|env|config|settings|cls|this|args|opts)\.")
_PLACEHOLDER_RE = lazy_pattern(r"[$<{%]|\*{3}|x{3}|\.\.\.|…|\[REDACTED", re.IGNORECASE)
_WHOLE_PLACEHOLDER_RE = lazy_pattern(  # where a value is surely a secret, only a whole placeholder stays
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%|<[^<>]*>?|\{[^{}]*\}?|\*+|x{3,}|\.\.\.|…|\[REDACTED:[a-z_]+\]?",
    re.IGNORECASE,
)
_PATH_RE = lazy_pattern(r"(?:~|\.{1,2})?(?:/[A-Z]?+[a-z0-9_.-]*+)+/?")  # possessive: no backtracking
# code that refers to the secret instead of holding it: `args.password`, `self.token`, `token=token`
_REFERENCE_RE = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|[a-z_][a-z0-9_]*")
_FUNCTION_WORDS = set(
    """a an the this that these those it its is are was were be been to of in on at for with by from as and or
    not no see use what which where how when if then your my our their""".split()
)
_TRAILING = ")]}>.,:!?"


def keep_value(
    plain: str, quoted: bool, names_secret: Callable[[str], bool] | None = None, strict: bool = False
) -> bool:
    """True when a value next to a secret's name is not a secret: empty, a placeholder (`$VAR…`, `<…`,
    `{…`, `***`, an earlier redaction), a literal or type name, a short number, a path of lower-case words,
    or (unquoted) code such as `get_token()`, `os.environ[...]` or an identifier that itself names the
    secret (`password=password`, `args.token`). Where the context leaves no doubt (`strict`: a URL's
    password, `mysql -p`), only an empty value or a whole placeholder (`$VAR`, `${VAR}`, `%VAR%`, `<…>`)."""
    if strict:
        return not plain or _WHOLE_PLACEHOLDER_RE.fullmatch(plain) is not None
    if not plain or _PLACEHOLDER_RE.match(plain):
        return True
    if plain.lower() in _LITERALS or (plain.isdigit() and len(plain) < 6):
        return True
    if "/" in plain and _PATH_RE.fullmatch(plain):
        return True
    if quoted:
        return False
    if _CODE_RE.match(plain):
        return True
    if plain.lower() in _FUNCTION_WORDS:  # prose after a colon: "Password: see the vault"
        return True
    return names_secret is not None and _REFERENCE_RE.fullmatch(plain) is not None and names_secret(plain)


def redacted(
    raw: str, kind: str = "secret", names_secret: Callable[[str], bool] | None = None, strict: bool = False
) -> str | None:
    """`raw` (a value, with its quotes) with the secret replaced, or None to keep it. Quotes stay, and so
    do closing brackets and sentence punctuation after an unquoted value."""
    if raw[:1] in QUOTES:
        closed = len(raw) > 1 and raw[-1] == raw[0]
        inner, head, tail = (raw[1:-1] if closed else raw[1:]), raw[0], (raw[0] if closed else "")
        quoted = True
    else:
        inner = raw.rstrip(_TRAILING)
        head, tail, quoted = "", raw[len(inner) :], False
    if keep_value(inner.strip(), quoted, names_secret, strict):
        return None
    return f"{head}[REDACTED:{kind}]{tail}"


# ------------------------------------------------------------------------------------------------ prose
_ORDINARY = set(
    """a an the not no now still also only just never always already being been be too very so set unset same
    different required optional invalid valid wrong correct incorrect missing empty blank there here in on at
    from for to of with by into inside under as like what which where how why when that this it its ok okay
    fine good bad weak strong secure insecure safe unsafe old new short long stale fresh known unknown hidden
    given shown taken written broken stolen forgotten sent kept stored read case sensitive random unique static
    temporary permanent one two part due then exactly either neither both more less longer shorter your my our
    their his her whatever something anything nothing somewhere elsewhere needed necessary mandatory plain
    plaintext clear cleartext free public private secret hard easy simple complex correct same default right
    gone back out up off over ready enough live dead full""".split()
)
_ORDINARY_ENDINGS = ("ed", "ing", "ly", "able", "ible", "ive", "ful", "less", "ous", "ent", "ant", "al", "ic", "ary")


def _ordinary_word(word: str) -> bool:
    w = word.lower()
    return w.isalpha() and (w in _ORDINARY or (len(w) > 3 and w.endswith(_ORDINARY_ENDINGS)))


# ---------------------------------------------------------------------------------------------- rules
@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]  # with a `val` group (and a `key` group when check is "named")
    on_lower: bool = False  # run on the lower-cased copy (case-insensitive words)
    kind: str = "secret"
    check: str = "strict"  # how the value is judged: see _accept
    boundary: bool = True  # the match must not continue a word on its left


_WORD_CHARS = frozenset(string.ascii_letters + string.digits + "_")
# the rest of one shell command up to a flag (lazily: the first such flag; bounded, so that a long line
# naming the command many times costs a bounded scan per mention, not one to the end of the line)
_CLI = r"[^\n;|&]{0,300}?[ \t]"
_CLI_VAL = val(";|&<>")
_VERBS = r"(?:'s|[ \t]+(?:is|was|are|were|will[ \t]+be|should[ \t]+be|became|becomes|remains))"
_FILLERS = r"(?:[ \t]+(?:now|still|just|simply|actually|currently|set[ \t]+to))*"
_SCHEMES = "bearer|basic|token|bot|digest|negotiate"

_PROSE_NOUNS = [
    "pass(?:word|wd|phrase|code)",
    "pw",
    "token",
    "secret(?:[ _-]?key)?",
    "api[ _-]?key",
    "access[ _-]?key",
    "credentials?",
]
_LOGIN_USER = r"(?:[ \t]+(?:with|as|using|via))?[ \t]*:?[ \t]+[\w.@+-]{1,64}"  # "login with admin", "sign in: ops"
_PROSE_OBJECT = r"(?:[ \t]+(?:for|of|to|on|at)(?:[ \t]+[\w.@:/-]{1,64}){1,3}?)?"  # "for the staging db"


def _cli(command: str, flag: str) -> _Rule:
    """`command …` then, in the same shell command, `flag` and its value."""
    return _Rule(lazy_pattern(rf"{command}{_CLI}{flag}{_CLI_VAL}"))


_RULES = [
    _Rule(
        lazy_pattern(rf"://[^\s:/@{_Q}<>]{{0,256}}:(?P<val>[^\s/?#{_Q}<>]{{1,256}})@"),
        kind="url_password",
        boundary=False,
    ),
    _Rule(
        lazy_pattern(
            rf"authorization[{_Q}]?[ \t]*[:=][ \t]*[{_Q}]?(?:(?:{_SCHEMES})[ \t]+)?"
            rf"(?!(?:{_SCHEMES})\b)(?P<val>[^\s{_Q},;]+)"
        ),
        on_lower=True,
        kind="authorization",
        check="value",  # code stays: `{"Authorization": self.token}`, `Bearer ${token}`
    ),
    _Rule(lazy_pattern(r"bearer[ \t]+(?P<val>[a-z0-9._~+/=-]{8,})"), True, "bearer", "token"),
    _Rule(lazy_pattern(rf"cookie[{_Q}]?[ \t]*:[ \t]*[{_Q}]?(?P<val>[^\n{_Q}]+)"), True, "cookie", "header"),
    *[_cli(rf"{cmd}[\w-]*", r"-p(?:[ \t]+(?!-))?") for cmd in ("mysql", "mariadb", "mycli")],
    _Rule(lazy_pattern(rf"sshpass(?:[ \t]+-[efdP][ \t]*\S+|[ \t]+-v)*[ \t]+-p[ \t]*{_CLI_VAL}")),
    _Rule(lazy_pattern(rf"login(?<=[A-Za-z0-9]{{2}} login){_CLI}-p[ \t]*{_CLI_VAL}"), check="value", boundary=False),
    _cli("redis-cli", r"-a[ \t]+"),
    *[  # curl and wget anywhere; httpie's `http`/`https` and xh only as a command, not in every URL
        _cli(cmd, rf"(?:-u|-U|-a|--user|--proxy-user|--auth)(?:[ \t]+|=)?[{_Q}]?[^\s:{_Q}]*:")
        for cmd in (r"curl(?![\w-])", r"wget(?![\w-])", r"https?(?=[ \t])", r"xh(?=[ \t])")
    ],
    _cli("zip", r"-P[ \t]+"),
    _cli("unzip", r"-P[ \t]+"),
    _cli("7z[a-z]?", "-p"),
    _Rule(lazy_pattern(rf"-pass(?:in|out)?[ \t]+pass:{_CLI_VAL}"), boundary=False),
    _cli("ldap[a-z]+", r"-w[ \t]+"),
    *[_cli(cmd, r"-P[ \t]*") for cmd in ("sqlcmd", "bcp", "osql")],
    _cli("mongo[a-z]*", r"-p[ \t]+"),
    _Rule(
        lazy_pattern(
            rf"--(?P<key>[a-z0-9-]{{0,40}}(?:pass|pwd|secret|token|key|auth|credential)[a-z0-9-]{{0,40}})"
            rf"[ \t]+(?!-){_CLI_VAL}"
        ),
        on_lower=True,
        check="named",
        boundary=False,
    ),
    _Rule(lazy_pattern(rf"password[ \t]+{val('')}"), on_lower=True, check="netrc"),
    _Rule(
        # closed on its line, or cut off at the end of the text (then one word)
        lazy_pattern(
            rf"<(?P<key>[A-Za-z_][\w.:-]{{0,60}})>(?P<val>[^<\s{_Q}][^<\n]{{0,499}}(?=</(?P=key)>)|[^<\s]+\Z)"
        ),
        check="named",
        boundary=False,
    ),
    *[  # prose, one noun (a literal first) at a time
        _Rule(
            lazy_pattern(rf"{noun}s?{_PROSE_OBJECT}{_VERBS}{_FILLERS}[ \t]*:?[ \t]+" + val("")),
            on_lower=True,
            check="prose",
        )
        for noun in _PROSE_NOUNS
    ],
    *[  # prose with a clause first: "the password for prod is in 1password, it is PW" (bounded: one sentence)
        _Rule(
            lazy_pattern(
                rf"{noun}s?[^.\n;]{{0,120}}?,[ \t]*(?:it|which)(?:'s|[ \t]+(?:is|was))[ \t]*:?[ \t]+" + val("")
            ),
            on_lower=True,
            check="prose",
        )
        for noun in _PROSE_NOUNS
    ],
    _Rule(lazy_pattern(rf"pass[ \t]*[:=][ \t]*{val()}"), on_lower=True, check="credential"),  # `pass` alone as a key
    _Rule(lazy_pattern(rf"pwd[ \t]+{val()}"), on_lower=True, check="abbreviation"),
    *[  # "login with admin / PW", "log in as deploy/PW", "sign in: ops / PW"
        _Rule(
            lazy_pattern(rf"{verb}[ \t]?in{_LOGIN_USER}[ \t]*/[ \t]*{val(',;/')}"),
            on_lower=True,
            check="login",
        )
        for verb in ("log", "sign")
    ],
]
_NETRC_HEAD_RE = lazy_pattern(  # what comes before `password` in a .netrc entry on one line
    r"(?:(?:^|[ \t])(?:machine[ \t]+\S+|default)|(?:^|[ \t])login[ \t]+\S+)(?:[ \t]+(?:login|account)[ \t]+\S+)*[ \t]+$"
)
_HEADER_LEADS = ("", "<", ">", "-h", "--header", "set-")


def _accept(rule: _Rule, m: re.Match[str], text: str, low: str, names_secret: Callable[[str], bool]) -> str | None:
    """The replacement for the match's value, or None when this match is not a secret. Checks: "strict"
    (the context says it is a password: only placeholders stay), "value" (also literals, short numbers,
    paths, code), "named" (the flag or element name must name a secret), "token" (a bearer token: not a
    short plain word), "header" (a Cookie header at the start of a line, after a quote or `-H`), "netrc"
    (see _netrc_line), "prose" (an ordinary word after "is" stays)."""
    start = m.start()
    if rule.boundary and start and text[start - 1] in _WORD_CHARS:
        return None
    raw = text[m.start("val") : m.end("val")]
    if not _CHECKS[rule.check](m, raw, text, low, names_secret):
        return None
    return redacted(raw, rule.kind, names_secret, strict=rule.check in ("strict", "netrc"))


def _named(m: re.Match[str], raw: str, text: str, low: str, names_secret: Callable[[str], bool]) -> bool:
    key = text[m.start("key") : m.end("key")]
    key = key.split(":")[-1]  # `ns:password` -> password
    if key.startswith("no-"):  # a negated flag takes no value: `--no-auth deploy`
        return False
    return names_secret(key) or key.lower() == "pass"  # `redis-cli --pass PW`


def _header(m: re.Match[str], raw: str, text: str, low: str, names_secret: Callable[[str], bool]) -> bool:
    """`Cookie:` as a header is written with a capital; a lower-case one must start a line or a string."""
    if text.startswith("Cookie", m.start()):
        return True
    line_start = text.rfind("\n", 0, m.start()) + 1
    lead = low[line_start : m.start()].strip()
    return lead in _HEADER_LEADS or lead.endswith(_HEADER_LEADS[3:]) or lead[-1:] in QUOTES


def _credential(raw: str) -> bool:
    """A value after `pass:`, `pwd` or a login's slash is a secret unless it has no letter or digit (`&&`), is an
    ordinary or function word, or a name in capitals (GitHub, Okta)."""
    word = raw.rstrip(_TRAILING)
    if raw[:1] in QUOTES:
        return True
    if not any(ch.isalnum() for ch in word) or word.lower() in _FUNCTION_WORDS or _ordinary_word(word):
        return False
    return not (word.isalpha() and word[:1].isupper())


def _login(m: re.Match[str], raw: str, text: str) -> bool:
    """A login's `user / value`; not one of a list of alternatives ("Google / GitHub / GitLab")."""
    return _credential(raw) and not text[m.end("val") :].lstrip(" \t").startswith("/")


_Check = Callable[[re.Match[str], str, str, str, Callable[[str], bool]], bool]
_CHECKS: dict[str, _Check] = {
    "strict": lambda *_: True,
    "value": lambda *_: True,
    "named": _named,
    "token": lambda m, raw, *_: not (raw.isalpha() and len(raw) < 24),
    "header": _header,
    "netrc": lambda m, raw, text, low, _: _netrc_line(m, text, low),
    "prose": lambda m, raw, *_: raw[:1] in QUOTES or not _ordinary_word(raw.rstrip(_TRAILING)),
    "credential": lambda m, raw, *_: _credential(raw),
    "abbreviation": lambda m, raw, *_: _credential(raw) and not (raw.isalpha() and raw.islower()),
    "login": lambda m, raw, text, *_: _login(m, raw, text),
}


_LINE_BREAK_RE = lazy_pattern(rf"\n|\\n|[{_Q}]")  # a line ends at a newline, an escaped one, or a quote


def _netrc_line(m: re.Match[str], text: str, low: str) -> bool:
    """`password X` counts in a .netrc entry: after `machine h login u` (or `login u`), or alone on a line
    (a line of a JSON string counts too: it is bounded by an escaped newline or a quote)."""
    breaks = [b.end() for b in _LINE_BREAK_RE.finditer(text, max(0, m.start() - 300), m.start())]
    head = low[breaks[-1] if breaks else max(0, m.start() - 300) : m.start()]
    if _NETRC_HEAD_RE.search(head):
        return True
    end = _LINE_BREAK_RE.search(text, m.end(), m.end() + 300)
    rest = text[m.end() : end.start() if end else m.end() + 300]
    return not head.strip() and not rest.strip() and not _ordinary_word(m.group("val"))


def rule_patterns() -> tuple[list[re.Pattern[str]], list[re.Pattern[str]]]:
    """The rules' patterns: those run on the text, and those run on its lower-case copy (privacy.py's quick check
    that a text holds nothing any rule could take)."""
    return [r.pattern for r in _RULES if not r.on_lower], [r.pattern for r in _RULES if r.on_lower]


def redact_context(text: str, names_secret: Callable[[str], bool]) -> str:
    """Every rule above, in order; `names_secret(key)` says whether a flag or element name names a secret."""
    low = lower(text)
    for rule in _RULES:  # each starts with a literal: a text without it is skipped quickly
        pieces: list[str] = []
        done = 0
        for m in rule.pattern.finditer(low if rule.on_lower else text):
            new = _accept(rule, m, text, low, names_secret)
            if new is not None:
                pieces += [text[done : m.start("val")], new]
                done = m.end("val")
        if pieces:
            text = "".join(pieces) + text[done:]
            low = lower(text)
    return text
