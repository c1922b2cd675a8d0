"""Technical entities in a memory's text (libraries, tools, files, errors, identifiers), without any LLM.

`extract_entities` runs a fixed pipeline of regexes (compiled once, on first use) over the text, masking what
each stage claims so later stages do not see it again:

1. URLs and e-mail addresses are masked and never reported.
2. Errors: `IntegrityError`, `TimeoutException`, errno names (`ECONNREFUSED`), `ERR_REQUIRE_ESM`,
   signals, Kubernetes pod failures, and HTTP statuses ("429 Too Many Requests", "HTTP 503" -> "http 503").
3. File paths: `src/auth/oauth.py`, `./scripts/test`, `Cargo.toml`, `.github/workflows/ci.yml`, `Dockerfile`;
   `tests/test_x.py:42` loses its line number. Versions (`1.2.3`), fractions (`2/3`) and prose with a slash
   (`and/or`, `TCP/IP`) are not paths.
4. Vocabulary terms from `data/tech_vocabulary.txt`, looked up token by token in a dict (no big alternation).
5. Identifiers: camelCase, PascalCase with 2+ humps, snake_case, dotted calls (`session.commit()`),
   `--flags`, and anything alone in backticks.

Results are ordered by salience: vocabulary terms and errors, then files, then identifiers; within a group,
by first appearance. Every name is already in `normalize_entity_name` form, and names are unique.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["Entity", "extract_entities", "normalize_entity_name"]

_ENTITY_TYPES = frozenset(
    {"library", "framework", "tool", "language", "database", "service", "protocol", "file", "error", "identifier"}
)
_VOCABULARY_TYPES = _ENTITY_TYPES - {"file", "error", "identifier"}


class _LazyPattern:
    """A regex compiled on first use, so importing this module stays cheap for the CLI's start-up."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def search(self, string: str) -> re.Match[str] | None:
        return self.compiled.search(string)

    def match(self, string: str) -> re.Match[str] | None:
        return self.compiled.match(string)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string)

    def sub(self, replacement: str, string: str) -> str:
        return self.compiled.sub(replacement, string)

    def split(self, string: str) -> list[str]:
        return self.compiled.split(string)


@dataclass(frozen=True)
class Entity:
    name: str  # canonical: lower-case vocabulary term, path as written, identifier/error name as written
    type: str  # one of: library framework tool language database service protocol file error identifier


# --- Vocabulary --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Term:
    canonical: str
    type: str


@dataclass(frozen=True)
class _Vocabulary:
    aliases: dict[str, _Term]  # lower-case surface form (canonical, alias, or compact form) -> term
    compact: dict[str, _Term]  # surface form without spaces, dots, hyphens, underscores -> term
    first_words: frozenset[str]  # first word of every multi-word surface form
    max_words: int

    def lookup(self, key: str) -> _Term | None:
        """Exact lower-case key first, then its compact form ("Node JS" -> "nodejs")."""
        term = self.aliases.get(key)
        if term is None and len(key) >= 4:
            term = self.compact.get(_compact(key))
        return term


def _compact(key: str) -> str:
    return _COMPACT_RE.sub("", key)


_COMPACT_RE = _LazyPattern(r"[\s._-]+")


def _parse_vocabulary(text: str) -> _Vocabulary:
    """Parse `canonical<TAB>type<TAB>alias,alias`; blank lines and `#` comments are skipped."""
    aliases: dict[str, _Term] = {}
    canonicals: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [field.strip() for field in raw.split("\t")]
        if len(fields) not in (2, 3):
            raise ValueError(f"vocabulary line {number}: expected 2 or 3 tab-separated fields: {raw!r}")
        canonical, kind = fields[0], fields[1]
        if kind not in _VOCABULARY_TYPES:
            raise ValueError(f"vocabulary line {number}: unknown type {kind!r}")
        if canonical in canonicals:
            raise ValueError(f"vocabulary line {number}: duplicate canonical name {canonical!r}")
        canonicals.add(canonical)
        term = _Term(canonical, kind)
        names = [canonical] + [alias.strip() for alias in (fields[2] if len(fields) == 3 else "").split(",")]
        for name in names:
            if not name:
                continue
            if name != " ".join(name.lower().split()):
                raise ValueError(f"vocabulary line {number}: {name!r} must be lower-case with single spaces")
            if name in aliases and aliases[name] != term:
                raise ValueError(f"vocabulary line {number}: {name!r} already names {aliases[name].canonical!r}")
            aliases[name] = term
    compact: dict[str, _Term] = {}
    for name, term in aliases.items():
        key = _compact(name)
        if len(key) >= 4:
            compact.setdefault(key, term)
    # Compact spellings of multi-part names are matched in text too ("nodejs", "springboot", "githubactions").
    # Not for leading-dot names: ".net" must never make the English word "net" a match.
    for key, term in compact.items():
        if key not in aliases and not term.canonical.startswith("."):
            aliases[key] = term
    multi = [name.split(" ") for name in aliases if " " in name]
    return _Vocabulary(
        aliases=aliases,
        compact=compact,
        first_words=frozenset(words[0] for words in multi),
        max_words=max((len(words) for words in multi), default=1),
    )


@cache
def _vocabulary() -> _Vocabulary:
    resource = resources.files("codememory") / "data" / "tech_vocabulary.txt"
    return _parse_vocabulary(resource.read_text(encoding="utf-8"))


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- Ambiguity rule ----------------------------------------------------------------------------------
#
# Vocabulary matching is case-insensitive and respects token boundaries ("go" never matches inside "gopher",
# "mongo" never inside "mongo_client", "react" never inside "src/react/app.py"). Surface forms that are also
# ordinary English fall in one of four tiers; every other surface form matches in any case.
#
# * _STRICT (go, make, next, express, spring, click, rich, black, requests, node, cursor, windows, ...):
#   common English words. Matched only
#     - capitalised as a name ("Go", not "GO") and NOT at the start of a sentence, line or list item
#       ("written in Go" yes; "Go ahead and merge" no, "Make sure ..." no), or
#     - in a clear technical context, whatever the case (see _strong_context): in backticks or after a shell
#       prompt (`make test`); after import/install commands (`pip install rich`, `from click import`); before
#       a version ("go 1.22", "express@4") or a noun like library/formatter/compiler ("black formatter");
#       as a module prefix (`click.echo`, `clap::Parser`); after a choice verb (use/prefer/replace/switch
#       to/instead of: "httpx instead of requests"); next to another tech term in a list ("black and ruff");
#       a language after in/using/into ("in go"); a tool after run/via ("run make").
#   Never when immediately followed by "(" (a call: next(), make()), never as the head of a hyphenated word
#   ("go-to", "Next-gen"). Manifests imply the word: go.mod/go.sum -> go, Cargo.toml/.lock -> rust, Makefile -> make.
# * _NAME_CASE (rust, react, swift, helm, poetry, yarn, cargo, slack, stripe, ...): rarer as English in a
#   coding memory. Matched when capitalised anywhere (sentence starts included) or in a technical context.
# * _UPPER_ONLY (rest, soap): only in capitals ("REST API" yes, "the rest of" no).
# * _SINGLE_LETTER (c): only "C" after in/using ("written in C"), before a noun like code/library/extension,
#   or in "C/C++". Never on its own ("Plan C", "option C").

_STRICT = frozenset(
    {
        "go",
        "make",
        "next",
        "express",
        "spring",
        "click",
        "rich",
        "black",
        "requests",
        "node",
        "kind",
        "cursor",
        "windows",
        "echo",
        "gin",
        "fiber",
        "chi",
        "bootstrap",
        "prettier",
        "parcel",
        "hatch",
        "hypothesis",
        "transformers",
        "drizzle",
        "hibernate",
        "remix",
        "twisted",
        "textual",
        "pyramid",
        "groovy",
        "rocket",
        "hyper",
        "clap",
        "anyhow",
        "turbo",
        "passport",
        "brew",
        "apt",
        "fish",
        "oracle",
        "apache",
        "unity",
        "chroma",
        "timescale",
        "cockroach",
        "alpine",
        "sublime",
        "composer",
        "delve",
        "testify",
        "bedrock",
        "notion",
        "vault",
        "airflow",
        "mermaid",
        "renovate",
        "husky",
    }
)
_NAME_CASE = frozenset(
    {
        "rust",
        "react",
        "swift",
        "ruby",
        "perl",
        "dart",
        "julia",
        "elm",
        "elixir",
        "zig",
        "nix",
        "solidity",
        "ts",
        "poetry",
        "cargo",
        "yarn",
        "helm",
        "jenkins",
        "consul",
        "nomad",
        "packer",
        "vagrant",
        "envoy",
        "caddy",
        "prometheus",
        "loki",
        "jaeger",
        "sentry",
        "cypress",
        "playwright",
        "puppeteer",
        "selenium",
        "storybook",
        "mocha",
        "chai",
        "jasmine",
        "babel",
        "rollup",
        "gatsby",
        "angular",
        "ember",
        "astro",
        "biome",
        "bun",
        "apollo",
        "mongoose",
        "prisma",
        "electron",
        "joi",
        "tornado",
        "trio",
        "quart",
        "marshmallow",
        "bandit",
        "sphinx",
        "prefect",
        "tailwind",
        "clippy",
        "rayon",
        "cobra",
        "viper",
        "jackson",
        "jetty",
        "tomcat",
        "maven",
        "sinatra",
        "rails",
        "puma",
        "flutter",
        "expo",
        "nats",
        "cassandra",
        "snowflake",
        "pinecone",
        "aurora",
        "railway",
        "discord",
        "clerk",
        "slack",
        "stripe",
        "postman",
        "ninja",
        "locust",
        "codex",
        "gemini",
        "copilot",
        "windsurf",
        "zed",
        "mise",
        "fedora",
        "twine",
        "mamba",
        "pillow",
        "cheerio",
        "tonic",
        "diesel",
        "bevy",
        "ginkgo",
        "unreal",
        "azure",
        "travis",
        "pulsar",
        "nx",
        "cloud run",
        "cloud functions",
        "app engine",
        "testing library",
        "red hat",
        "luxon",
        "fastlane",
        "kerberos",
    }
)
_UPPER_ONLY = frozenset({"rest", "soap"})
_SINGLE_LETTER = frozenset({"c"})
_AMBIGUOUS = _STRICT | _NAME_CASE | _UPPER_ONLY | _SINGLE_LETTER

_SENTENCE_END = frozenset(".!?:•>#|")
_OPENERS = " \t\"'(“‘[*_"
# Words just before a term that make it technical, whatever its case (see _strong_context).
_CHOICE_WORDS = _words(
    """use uses used using prefer prefers preferred replace replaces replaced replacing upgrade upgrades upgraded
    downgrade downgrades downgraded bump bumped pin pinned install installed uninstall uninstalled import"""
)
_CHOICE_PAIRS = frozenset(
    {("instead", "of"), ("rather", "than")}
    | {(verb, "to") for verb in _words("switch switched switching migrate migrated migrating move moved moving")}
    | {(verb, "from") for verb in _words("switch switched switching migrate migrated migrating move moved moving")}
)
_PACKAGE_MANAGERS = _words("pip pip3 pipx uv poetry pdm npm pnpm yarn bun cargo gem go composer brew apt apt-get conda")
_INSTALL_VERBS = _words("install add i get require")
_LANGUAGE_PREPOSITIONS = _words("in using into")
_COMMAND_WORDS = _words("run runs ran running via invoke invoked")
_LIST_WORDS = _words("and or vs vs. versus than not")
_NEIGHBOUR_PUNCTUATION = "()[]{},;:'\"`/"
_AFTER_IMPORT_RE = _LazyPattern(r"\s+import\b")
_AFTER_VERSION_RE = _LazyPattern(r"(?:\s*v?\d+\.\d+|@[\^~]?\d)")
_AFTER_MODULE_RE = _LazyPattern(r"(?:\.|::)[A-Za-z_]")
_AFTER_NOUN_RE = _LazyPattern(
    r"\s+(?:library|libraries|lib|package|packages|framework|crate|crates|formatter|linter|compiler|toolchain"
    r"|runtime|cli|sdk|bindings|plugin|plugins|target|targets|binary|binaries|language|lang|programming)\b",
    re.IGNORECASE,
)
# Strict words that are also adjectives ("the next library", "a rich framework") only take tool-ish nouns.
_ADJECTIVES = frozenset(
    {"next", "rich", "black", "express", "groovy", "hyper", "twisted", "textual", "sublime", "alpine"}
)
_AFTER_TOOL_NOUN_RE = _LazyPattern(r"\s+(?:formatter|linter|cli|sdk|crate|bindings)\b", re.IGNORECASE)
_AFTER_NOUN_C_RE = _LazyPattern(
    r"\s+(?:code|library|libraries|extension|extensions|header|headers|api|abi|compiler|bindings|program|programs"
    r"|source|toolchain)\b|/c\+\+",
    re.IGNORECASE,
)
# Lists of tech terms: "black and ruff", "ruff, black, isort", "flask vs express". A neighbour before the word
# counts only if the word also ends the list item, so "restart nginx and make sure" stays English.
_AFTER_LIST_RE = _LazyPattern(r"\s*(?:,|/|\band\b|\bor\b|\bvs\.?|\bversus\b)\s*([\w.+#-]+)", re.IGNORECASE)
_ITEM_END_RE = _LazyPattern(r"\s*(?:[,.;:!?)]|\band\b|\bor\b|$)", re.IGNORECASE)


def _sentence_initial(before: str) -> bool:
    """True when the text just before a word ends a sentence, a line, or is a list marker."""
    stripped = before.rstrip(_OPENERS)
    if not stripped or "\n" in before[len(stripped) :]:
        return True
    last = stripped[-1]
    if last in _SENTENCE_END or last == "\n":
        return True
    if last in "-*+" and (len(stripped) == 1 or stripped[-2].isspace()):
        return True
    word = stripped.rsplit(None, 1)[-1]
    return last == ")" and word[:-1].isdigit()  # "1) Go ..." numbered list item


def _safe_neighbour(word: str) -> bool:
    """A neighbouring word that is itself an unambiguous vocabulary term."""
    key = word.lower().rstrip(".-/")
    term = _vocabulary().aliases.get(key)
    return term is not None and key not in _STRICT and key not in _UPPER_ONLY and key not in _SINGLE_LETTER


def _strong_context(key: str, before: str, after: str, term: _Term) -> bool:
    """Context that makes an ambiguous word technical whatever its case (see the ambiguity rule above)."""
    tail = before.rstrip(" \t")
    if tail.endswith("`") or (tail.endswith("$") and (len(tail) == 1 or tail[-2].isspace())):  # `make`, $ make
        return True
    if tail.endswith(("'", '"')):  # from 'express', require("express"), import 'react'
        head = tail[:-1].rstrip().lower()
        if head.endswith(("require(", " from", " import")) or head in ("from", "import"):
            return True
    if _AFTER_VERSION_RE.match(after) or _AFTER_MODULE_RE.match(after):
        return True
    if (_AFTER_TOOL_NOUN_RE if key in _ADJECTIVES else _AFTER_NOUN_RE).match(after):
        return True
    match = _AFTER_LIST_RE.match(after)
    if match and _safe_neighbour(match.group(1)):
        return True
    words = tail[-48:].lower().split()
    if not words:
        return False
    last = words[-1]
    if last in _CHOICE_WORDS or (len(words) > 1 and (words[-2], last) in _CHOICE_PAIRS):
        return True
    if last == "from" and _AFTER_IMPORT_RE.match(after):  # from click import echo
        return True
    if term.type == "language" and last in _LANGUAGE_PREPOSITIONS:
        return True
    if term.type == "tool" and last in _COMMAND_WORDS:
        return True
    position = len(words) - 1
    while position > 0 and words[position].startswith("-"):  # pip install -U rich
        position -= 1
    if position > 0 and words[position] in _INSTALL_VERBS and words[position - 1] in _PACKAGE_MANAGERS:
        return True
    if last.endswith((",", "/")):
        neighbour = last
    elif last in _LIST_WORDS and len(words) > 1:
        neighbour = words[-2]
    else:
        return False
    return _safe_neighbour(neighbour.strip(_NEIGHBOUR_PUNCTUATION)) and bool(_ITEM_END_RE.match(after))


def _accepted(key: str, term: _Term, text: str, start: int, end: int) -> bool:
    """Whether the surface form `key` found at text[start:end] names `term` here (the ambiguity rule)."""
    if key in _UPPER_ONLY:
        return text[start:end].isupper()
    strict = key in _STRICT
    if not strict and key not in _NAME_CASE and key not in _SINGLE_LETTER:
        return True
    surface = text[start:end]
    before = text[max(0, start - 48) : start]
    after = text[end : end + 48]
    if after.startswith("("):  # next(), make(): a call, not the tool
        return False
    capitalised = surface[:1].isupper()
    if key in _SINGLE_LETTER:
        words = before.split()
        language_before = bool(words) and words[-1].lower() in _LANGUAGE_PREPOSITIONS  # "written in C"
        return surface.isupper() and (language_before or bool(_AFTER_NOUN_C_RE.match(after)))
    if _strong_context(key, before, after, term):
        return True
    if not capitalised:
        return False
    if not strict:
        return True
    if len(surface) > 1 and surface.isupper():  # "GO AHEAD" is shouting, not the language
        return False
    return not _sentence_initial(before)


# --- Stage regexes -----------------------------------------------------------------------------------

_URL_RE = _LazyPattern(r"\b(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)\S+")
_EMAIL_RE = _LazyPattern(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b(?::\S*)?")
_ERROR_RE = _LazyPattern(
    r"\b(?:[A-Z][A-Za-z0-9]*?(?:Error|Exception|Warning)"
    r"|E[A-Z][A-Z0-9_]{2,}|ERR_[A-Z0-9_]+|SIG[A-Z0-9]{3,}|ORA-\d{5}"
    r"|OOMKilled|CrashLoopBackOff|ImagePullBackOff|ErrImagePull|[Ss]egfault|[Ss]egmentation fault)\b"
)
_ERRNO = _words(
    """EACCES EADDRINUSE EADDRNOTAVAIL EAGAIN EAI_AGAIN EBADF EBUSY ECHILD ECONNABORTED ECONNREFUSED ECONNRESET
    EDEADLK EEXIST EHOSTDOWN EHOSTUNREACH EINTR EINVAL EIO EISDIR ELOOP EMFILE EMLINK ENAMETOOLONG ENETDOWN
    ENETRESET ENETUNREACH ENFILE ENOBUFS ENODEV ENOENT ENOEXEC ENOLCK ENOMEM ENOSPC ENOSYS ENOTCONN ENOTDIR
    ENOTEMPTY ENOTFOUND ENOTSOCK ENOTSUP ENXIO EOPNOTSUPP EPERM EPIPE EPROTO ERANGE EROFS ESPIPE ESRCH ETIMEDOUT
    ETXTBSY EWOULDBLOCK EXDEV"""
)
_SIGNALS = _words("SIGABRT SIGALRM SIGBUS SIGCHLD SIGFPE SIGHUP SIGILL SIGINT SIGKILL SIGPIPE SIGQUIT")
_SIGNALS |= _words("SIGSEGV SIGSTOP SIGTERM SIGTRAP SIGTSTP SIGUSR1 SIGUSR2")
_HTTP_PHRASES = (
    "Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed|Not Acceptable"
    "|Request Timeout|Conflict|Gone|Length Required|Precondition Failed|Payload Too Large|Content Too Large"
    "|URI Too Long|Unsupported Media Type|I'm a teapot|Misdirected Request|Unprocessable (?:Entity|Content)"
    "|Too Early|Upgrade Required|Precondition Required|Too Many Requests|Request Header Fields Too Large"
    "|Unavailable For Legal Reasons|Internal Server Error|Not Implemented|Bad Gateway|Service Unavailable"
    "|Gateway Timeout|HTTP Version Not Supported|Insufficient Storage|Network Authentication Required"
)
_HTTP_STATUS_RE = _LazyPattern(
    rf"\b(?:HTTP(?:/[\d.]+)?|status(?:\s+code)?)\s*:?\s*([45]\d\d)\b|\b([45]\d\d)\s+(?:{_HTTP_PHRASES})\b",
    re.IGNORECASE,
)
_HTTP_NAME_RE = _LazyPattern(r"(?:http|status)(?:\s*code)?\s*:?\s*([1-5]\d\d)")

_PATH_RE = _LazyPattern(
    r"(?<![\w/.~@\\-])(?=[\w.@+\[\]/~-]*[./]|(?i:dockerfile|containerfile|makefile|gnumakefile|justfile|procfile"
    r"|gemfile|rakefile|vagrantfile|jenkinsfile|brewfile|pipfile|tiltfile|earthfile|codeowners)\b)"
    r"(?:~/|\.\.?/|/)?[\w.@+\[\]-]+(?:/[\w.@+\[\]-]+)*/?"
    r"(?P<line>(?::\d+){1,2}|#L\d+(?:-L?\d+)?)?"
)
_LINE_SUFFIX_RE = _LazyPattern(r"(?::\d+)+$|#L\d+(?:-L?\d+)?$")
_EXTENSION_RE = _LazyPattern(r"\.([A-Za-z][A-Za-z0-9]{0,11})$")
_KNOWN_EXTENSIONS = _words(
    """py pyi pyx pxd ipynb js mjs cjs jsx ts mts cts tsx json jsonc json5 toml yaml yml md mdx rst txt adoc cfg
    ini conf lock lockb sh bash zsh fish ps1 bat rs go java kt kts scala groovy gradle rb gemspec podspec php
    c h cc cpp cxx hh hpp hxx cs csproj fsproj vbproj sln swift dart ex exs erl hrl hs cabal jl zig nim lua vim
    clj cljs cljc edn sql proto graphql gql tf tfvars hcl nix bzl bazel mk cmake html htm css scss sass less vue
    svelte astro xml xsd plist svg png jpg jpeg gif webp ico pdf csv tsv parquet wasm whl tar gz tgz zip patch
    diff j2 jinja jinja2 tmpl tpl ejs hbs pem crt properties sqlite sqlite3 dockerfile rmd sbt xcodeproj
    storyboard"""
)
# Not extensions on their own (np.sum, console.log, process.env are code), but these names are files.
_KNOWN_FILENAMES = frozenset({"go.mod", "go.sum", "go.work", "npm-debug.log"})
_SPECIAL_FILES = _words(
    """dockerfile containerfile makefile gnumakefile justfile procfile gemfile rakefile vagrantfile jenkinsfile
    brewfile pipfile tiltfile earthfile codeowners license readme changelog"""
)
_DOTFILE_RE = _LazyPattern(
    r"\.(?:env(?:\.[\w-]+)*|[\w-]*ignore|[\w-]+rc|gitattributes|gitmodules|gitkeep|editorconfig|python-version"
    r"|node-version|tool-versions|venv|github|gitlab|vscode|idea|devcontainer|husky|circleci|cargo|cursor"
    r"|cursorrules|windsurfrules|clinerules|aider[\w.-]*|claude|codex|opencode)"
)
# First directories that make a single-slash path unambiguous ("src/auth" yes, "client/server" no).
_PATH_ROOTS = _words(
    """src lib libs test tests spec specs pkg cmd internal scripts script docs doc config configs bin dist public
    static assets vendor migrations crates packages apps app node_modules .github .gitlab .vscode .venv venv
    fixtures benchmarks examples tools utils components deploy infra charts templates .circleci .devcontainer
    target build out tmp etc usr var opt home"""
)
_IMPLIED_BY_FILE = {
    "go.mod": "go",
    "go.sum": "go",
    "cargo.toml": "rust",
    "cargo.lock": "rust",
    "makefile": "make",
    "gnumakefile": "make",
}

_TOKEN_RE = _LazyPattern(r"(?<![\w@#+./-])[@.]?[A-Za-z0-9][\w+#./@-]*")
_TOKEN_TRAILING = ".-/:@"
_GAP_RE = _LazyPattern(r"[ \t]+")

_FLAG_RE = _LazyPattern(r"(?<![\w-])--[A-Za-z0-9][\w-]*")
_BACKTICK_RE = _LazyPattern(r"`([^`\n]+)`")
_IDENT_RE = _LazyPattern(r"(?<![\w.@#$-])[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_IDENT_FULL_RE = _LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_CALL_SUFFIX_RE = _LazyPattern(r"\((?:[^()]*)\)$")
_HUMP_RE = _LazyPattern(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_PLURAL_ACRONYM_RE = _LazyPattern(r"[A-Z]{2,}s")
_MEMBER_SEPARATOR_RE = _LazyPattern(r"\.|::")
_NOT_IDENTIFIERS = _words(
    """SaaS PaaS IaaS PhD DevOps MLOps DevEx iPhone iPad iPod eBay YouTube LinkedIn PowerPoint JavaScript
    TypeScript McDonald WiFi"""
)


# --- Stages ------------------------------------------------------------------------------------------

_Found = tuple[int, int, str, str]  # (group, position, name, type); group 0 terms+errors, 1 files, 2 identifiers


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    pieces: list[str] = []
    last = 0
    for start, end in sorted(spans):
        if start < last:
            start = last
        if end <= start:
            continue
        pieces.append(text[last:start])
        pieces.append(" " * (end - start))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _find_errors(work: str, found: list[_Found]) -> str:
    spans: list[tuple[int, int]] = []
    for match in _HTTP_STATUS_RE.finditer(work):
        found.append((0, match.start(), f"http {match.group(1) or match.group(2)}", "error"))
        spans.append(match.span())
    if spans:
        work = _mask(work, spans)
        spans = []
    for match in _ERROR_RE.finditer(work):
        name = match.group()
        if _valid_error(name):
            found.append((0, match.start(), name, "error"))
        spans.append(match.span())
    return _mask(work, spans)


def _valid_error(name: str) -> bool:
    if name.endswith(("Error", "Exception", "Warning")) or name.startswith("ERR_"):
        return True
    if name.startswith("SIG"):
        return name in _SIGNALS
    if name.startswith("E") and name.isupper():  # ECONNREFUSED yes, ERROR / EXPLAIN / ENOUGH no
        return name in _ERRNO or name.startswith(("ECONN", "EADDR"))
    return True


def _is_path(candidate: str, vocab: _Vocabulary) -> bool:
    lower = candidate.lower()
    if lower in vocab.aliases:  # node.js, socket.io, coverage.py, http/2, pub/sub are vocabulary terms
        return False
    if not any(char.isalpha() for char in candidate):  # 2/3, 1.2.3, 2024/01/31
        return False
    if "/" in candidate:
        if candidate.startswith(("./", "../", "~/")):
            return True
        segments = [segment for segment in candidate.split("/") if segment]
        if not segments:
            return False
        if candidate.startswith("/"):
            return len(segments) >= 2 or bool(_EXTENSION_RE.search(segments[-1]))
        if _EXTENSION_RE.search(segments[-1]) or segments[0] in _PATH_ROOTS:
            return True
        if len(segments) >= 3 and any(("." in s or "_" in s) for s in segments):
            return True
        return candidate.endswith("/") and len(segments) >= 2
    base = lower.split(".", 1)[0] if not lower.startswith(".") else lower
    if base in _SPECIAL_FILES or lower in _KNOWN_FILENAMES:
        return True
    if lower.startswith("."):
        return bool(_DOTFILE_RE.fullmatch(lower)) or (lower.count(".") >= 2 and _extension(lower) in _KNOWN_EXTENSIONS)
    return _extension(lower) in _KNOWN_EXTENSIONS and not lower.startswith(".")


def _extension(name: str) -> str:
    match = _EXTENSION_RE.search(name)
    return match.group(1) if match else ""


def _strip_brackets(candidate: str, start: int) -> tuple[str, int]:
    """`[src/x.py]` (a Markdown link label) -> `src/x.py`, but `app/[slug]/page.tsx` stays whole."""
    if candidate.startswith("[") and "]" not in candidate[1:-1]:
        candidate, start = candidate[1:], start + 1
    if candidate.endswith("]") and "[" not in candidate:
        candidate = candidate[:-1]
    return candidate, start


def _find_files(text: str, work: str, vocab: _Vocabulary, found: list[_Found]) -> str:
    spans: list[tuple[int, int]] = []
    for match in _PATH_RE.finditer(work):
        raw = match.group()
        line = match.group("line")
        if line:
            raw = raw[: -len(line)]
        if "/" not in raw and "." not in raw and raw.lower() not in _SPECIAL_FILES:
            continue
        if not line:
            raw = raw.rstrip(".-+@")
        candidate, start = _strip_brackets(raw, match.start())
        if not candidate or text[start + len(candidate) : start + len(candidate) + 1] == "(":  # res.json()
            continue
        if not _is_path(candidate, vocab):
            continue
        name = _clean_path(candidate)
        found.append((1, start, name, "file"))
        spans.append((match.start(), match.end()))
        implied = _IMPLIED_BY_FILE.get(name.rsplit("/", 1)[-1].lower())
        if implied is not None:
            term = vocab.aliases[implied]
            found.append((0, start, term.canonical, term.type))
    return _mask(work, spans)


def _clean_path(path: str) -> str:
    path = _LINE_SUFFIX_RE.sub("", path.strip().rstrip(".,;:!?)'\"`"))
    while path.startswith("./"):
        path = path[2:]
    if len(path) > 1:
        path = path.rstrip("/")
    return path


def _find_terms(text: str, work: str, vocab: _Vocabulary, found: list[_Found]) -> str:
    tokens = list(_TOKEN_RE.finditer(work))
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        raw = token.group()
        word = raw.rstrip(_TOKEN_TRAILING)
        start = token.start()
        if not word:
            index += 1
            continue
        lower = word.lower()
        # 1. Multi-word names ("claude code", "ruby on rails"), longest first; words separated by blanks only.
        if lower in vocab.first_words:
            consumed = _match_phrase(text, work, tokens, index, vocab, found, spans)
            if consumed:
                index += consumed
                continue
        # 2. The whole token ("PostgreSQL", "node.js", "c++", "http/2").
        term = vocab.aliases.get(lower)
        if term is not None:
            if _accepted(lower, term, text, start, start + len(word)):
                found.append((0, start, term.canonical, term.type))
                spans.append((start, start + len(word)))
            index += 1
            continue
        # 3. Parts: "C/C++", "react/jsx-runtime", "express@4", "postgres-backed", "sqlalchemy.orm".
        if word.isalnum():
            index += 1
            continue
        offset = 0
        for part in word.split("/"):
            if part:
                _match_part(text, part.rstrip(_TOKEN_TRAILING), start + offset, vocab, found, spans, whole=part == word)
            offset += len(part) + 1
        index += 1
    return _mask(work, spans)


def _match_phrase(
    text: str,
    work: str,
    tokens: list[re.Match[str]],
    index: int,
    vocab: _Vocabulary,
    found: list[_Found],
    spans: list[tuple[int, int]],
) -> int:
    words = [tokens[index].group()]
    for following in tokens[index + 1 : index + vocab.max_words]:
        previous_end = tokens[index + len(words) - 1].end()
        if words[-1] != words[-1].rstrip(_TOKEN_TRAILING) or not _GAP_RE.fullmatch(
            work, previous_end, following.start()
        ):
            break
        words.append(following.group())
    for count in range(len(words), 1, -1):
        last = words[count - 1].rstrip(_TOKEN_TRAILING)
        key = " ".join([*(word.lower() for word in words[: count - 1]), last.lower()])
        term = vocab.aliases.get(key)
        if term is None:
            continue
        start = tokens[index].start()
        end = tokens[index + count - 1].start() + len(last)
        if not _accepted(key, term, text, start, end):
            return 0
        found.append((0, start, term.canonical, term.type))
        spans.append((start, end))
        return count
    return 0


def _match_part(
    text: str,
    part: str,
    start: int,
    vocab: _Vocabulary,
    found: list[_Found],
    spans: list[tuple[int, int]],
    *,
    whole: bool,
) -> None:
    if not part:
        return
    lower = part.lower()
    if not whole:
        term = vocab.aliases.get(lower)
        if term is not None:
            if _accepted(lower, term, text, start, start + len(part)):
                found.append((0, start, term.canonical, term.type))
                spans.append((start, start + len(part)))
            return
    at = lower.find("@", 1)  # express@4.18 / react@^18
    if at > 0:
        key = lower[:at]
        term = vocab.aliases.get(key)
        if term is not None and _accepted(key, term, text, start, start + at):
            found.append((0, start, term.canonical, term.type))
            spans.append((start, start + at))
        return
    position = lower.rfind("-")
    while position > 0:  # longest hyphenated prefix first: "react-query-devtools" -> "react-query"
        key = lower[:position]
        term = vocab.aliases.get(key)
        if term is not None:
            # The head of a hyphenated word is English more often than not for strict words (go-to, next-gen).
            if key not in _STRICT and _accepted(key, term, text, start, start + position):
                found.append((0, start, term.canonical, term.type))
            return
        position = lower.rfind("-", 0, position)
    position = lower.rfind(".")
    while position > 0:  # module paths: "sqlalchemy.orm", "python3.11", "React.useState"
        key = lower[:position]
        term = vocab.aliases.get(key)
        if term is not None:
            if _accepted(key, term, text, start, start + position):
                found.append((0, start, term.canonical, term.type))
            return
        position = lower.rfind(".", 0, position)


def _find_identifiers(text: str, work: str, vocab: _Vocabulary, found: list[_Found]) -> None:
    def add(position: int, name: str, *, call: bool) -> None:
        key = name.lower()
        term = vocab.lookup(key)
        if term is None:
            found.append((2, position, name, "identifier"))
        elif not call and key not in _AMBIGUOUS:  # "nodeJS": a vocabulary term spelled like an identifier
            found.append((0, position, term.canonical, term.type))
        # else a call such as next(it) or make([]int, 3): a builtin, neither the tool nor a useful identifier

    for match in _FLAG_RE.finditer(work):
        found.append((2, match.start(), match.group(), "identifier"))
    for match in _BACKTICK_RE.finditer(text):
        if work[match.start(1) : match.end(1)] != match.group(1):  # partly claimed already: `make test`
            continue
        stripped = match.group(1).strip()
        inner = _CALL_SUFFIX_RE.sub("", stripped)
        if inner and _IDENT_FULL_RE.fullmatch(inner):
            add(match.start(1) + match.group(1).index(inner[0]), inner, call=inner != stripped)
    for match in _IDENT_RE.finditer(work):
        name = match.group()
        end = match.end()
        following = work[end : end + 1]
        if following and (following.isalnum() or following == "_"):  # stopped at a non-ASCII letter
            continue
        is_call = following == "("
        if not is_call and "_" not in name and "." not in name and ":" not in name:
            tail = name[1:]
            if tail.islower() or tail.isupper() or not tail:  # plain words: "loop", "The", "API", "a"
                continue
        if name in _NOT_IDENTIFIERS or _PLURAL_ACRONYM_RE.fullmatch(name):
            continue
        is_call = is_call and not work.startswith(("(s)", "(es)"), end)
        if "." in name or "::" in name:
            parts = _MEMBER_SEPARATOR_RE.split(name)
            if not (is_call or "::" in name or any(_code_like(part) for part in parts)):
                continue
        elif not (is_call or _code_like(name)):
            continue
        add(match.start(), name, call=is_call)


def _code_like(word: str) -> bool:
    if "_" in word.strip("_") or (word.startswith("_") and any(char.isalpha() for char in word)):
        return any(char.isalpha() for char in word)
    return bool(_HUMP_RE.search(word))


# --- Public API --------------------------------------------------------------------------------------


def extract_entities(text: str, *, limit: int = 20) -> list[Entity]:
    """Technical entities in text, most salient first, deduplicated by name, without any LLM."""
    if limit <= 0 or not text or text.isspace():
        return []
    vocab = _vocabulary()
    found: list[_Found] = []
    spans: list[tuple[int, int]] = []
    if "://" in text or "www." in text:
        spans.extend(match.span() for match in _URL_RE.finditer(text))
    if "@" in text:
        spans.extend(match.span() for match in _EMAIL_RE.finditer(text))
    work = _mask(text, spans)
    work = _find_errors(work, found)
    work = _find_files(text, work, vocab, found)
    work = _find_terms(text, work, vocab, found)
    _find_identifiers(text, work, vocab, found)
    found.sort(key=lambda item: (item[0], item[1]))
    entities: list[Entity] = []
    seen: set[str] = set()
    for _group, _position, name, kind in found:
        if name in seen or not name:
            continue
        seen.add(name)
        entities.append(Entity(name, kind))
        if len(entities) >= limit:
            break
    return entities


def normalize_entity_name(name: str) -> str:
    """Canonical form for lookups (e.g. "Postgres", "postgres", "PostgreSQL" -> "postgresql"; "K8s" -> "kubernetes";
    paths keep case but strip "./" and trailing punctuation)."""
    cleaned = name.strip().strip("`'\"")
    if not cleaned:
        return ""
    vocabulary = _vocabulary()
    key = " ".join(cleaned.lower().split()).rstrip(".,;:!?")
    term = vocabulary.aliases.get(key)  # exact names first: "node.js" and "http/2" look like paths
    if term is not None:
        return term.canonical
    status = _HTTP_NAME_RE.fullmatch(key)
    if status:
        return f"http {status.group(1)}"
    cleaned = _CALL_SUFFIX_RE.sub("", cleaned)
    if "/" in cleaned or _looks_like_file(cleaned.rstrip(".,;:!?)")):
        return _clean_path(cleaned)  # no compact-form lookup: "go.mod" is a file, not "go mod"
    term = vocabulary.lookup(key)  # compact spellings: "Node JS", "spring-boot"
    if term is not None:
        return term.canonical
    return cleaned.rstrip(".,;:!?")


def _looks_like_file(name: str) -> bool:
    base = _LINE_SUFFIX_RE.sub("", name)
    lower = base.lower()
    return (
        lower in _KNOWN_FILENAMES
        or lower.split(".", 1)[0] in _SPECIAL_FILES
        or bool(_DOTFILE_RE.fullmatch(lower))
        or _extension(lower) in _KNOWN_EXTENSIONS
    )
