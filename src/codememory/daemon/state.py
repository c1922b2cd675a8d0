"""What the daemon's HTTP server and its background tasks share: the token, the settings, the health facts
(which the capture loop updates) and one open `Store` per project (so each project's database, vector
index and the embedding model stay in memory between requests, which is why the daemon is fast)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codememory import __version__
from codememory.core.config import CONFIG_NAME, Config
from codememory.core.dates import now_iso
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.paths import config_dir
from codememory.core.project import STORE_DIR, db_path
from codememory.core.trust import trust_path
from codememory.daemon.project_access import RegisteredProjects
from codememory.errors import RegistryError, StoreNotFound, StoreUnusable
from codememory.text.privacy import scrub
from codememory.web.listen import HOST

if TYPE_CHECKING:
    from codememory.service.project_store import Store

MAX_OPEN_STORES = 32

# A background task: called with the daemon's state every poll interval, in the daemon's worker thread.
Task = Callable[["DaemonState"], object]

# Absolute paths (POSIX, ~/, Windows drive) inside an error message: /health must not reveal them.
_PATH_RE = lazy_pattern(r"(?<![\w.~-])(?:~|[A-Za-z]:)?[/\\][^\s'\"`,;:()<>\[\]{}]+")


def public_error(exc: BaseException, where: str | None = None) -> str:
    """One line about an error that is safe to show anyone: secrets redacted, paths replaced, bounded."""
    text = _PATH_RE.sub("<path>", scrub(str(exc))).replace("\n", " ").strip()
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if where:
        line = f"{where}: {line}"
    return line[:300]


@dataclass
class Health:
    """Facts for GET /health. Every field is safe to reveal without a token (no paths, no memory text).
    Updated from any thread: use the methods (they take the lock)."""

    llm_provider: str = "none"
    embedding_provider: str = "none"
    embedding_loaded: bool = False  # a model is in memory (some project's retrieval used it)
    embedding_available: bool | None = None  # False: it failed to load; None: not tried yet
    capture_lag_seconds: float | None = None  # set by the capture loop: how far behind the newest turn it is
    capture_last_run_at: str | None = None
    tasks_last_run_at: str | None = None
    last_error: str | None = None  # the latest background or request failure (see `public_error`)
    last_error_at: str | None = None
    errors_total: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def llm_configured(self) -> bool:
        return self.llm_provider.strip().lower() not in ("", "none", "off")

    @property
    def embedding_configured(self) -> bool:
        return self.embedding_provider.strip().lower() not in ("", "none", "off")

    def record_error(self, exc: BaseException, where: str | None = None) -> None:
        line = public_error(exc, where)
        with self._lock:
            self.last_error = line
            self.last_error_at = now_iso()
            self.errors_total += 1

    def set_capture(self, lag_seconds: float | None) -> None:
        """For the capture loop: how many seconds the newest captured turn lags behind real time."""
        with self._lock:
            self.capture_lag_seconds = None if lag_seconds is None else round(max(lag_seconds, 0.0), 3)
            self.capture_last_run_at = now_iso()

    def tasks_ran(self) -> None:
        with self._lock:
            self.tasks_last_run_at = now_iso()

    def note_embedding(self, loaded: bool, available: bool | None, provider: str | None = None) -> None:
        """After a retrieval that used a project's embedder (`provider`: that project's setting)."""
        with self._lock:
            if provider and (loaded or not self.embedding_loaded):
                self.embedding_provider = provider
            self.embedding_loaded = self.embedding_loaded or loaded
            if available is not None:
                self.embedding_available = available

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            usable = self.embedding_loaded or (self.embedding_configured and self.embedding_available is not False)
            return {
                "llm": self.llm_configured,
                "llm_provider": self.llm_provider,
                "embedding_model": usable,
                "embedding": {
                    "provider": self.embedding_provider,
                    "loaded": self.embedding_loaded,
                    "available": self.embedding_available,
                },
                "capture_lag_seconds": self.capture_lag_seconds,
                "capture_last_run_at": self.capture_last_run_at,
                "tasks_last_run_at": self.tasks_last_run_at,
                "last_error": self.last_error,
                "last_error_at": self.last_error_at,
                "errors_total": self.errors_total,
            }


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


@dataclass
class _Entry:
    store: Store
    signature: tuple[Any, ...]
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_used: float = field(default_factory=time.monotonic)
    closed: bool = False


class StorePool:
    """One open `Store` per project root, opened on first use and kept; a store whose database file was
    replaced or whose config.toml (the project's or the user's) changed is reopened on its next use. Each
    store is used by one thread at a time (`use` holds its lock)."""

    def __init__(self, max_open: int = MAX_OPEN_STORES) -> None:
        self.max_open = max_open
        self._entries: dict[Path, _Entry] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @staticmethod
    def _signature(root: Path) -> tuple[Any, ...]:
        try:
            st = db_path(root).stat()
        except OSError:
            raise StoreNotFound(f"no codememory store at {root} (run `codememory init` in the project first)") from None
        return (
            st.st_dev,
            st.st_ino,
            _mtime(root / STORE_DIR / CONFIG_NAME),
            _mtime(config_dir() / CONFIG_NAME),
            _mtime(trust_path()),  # `codememory trust` changes which of the project's settings apply
        )

    def _entry(self, root: Path) -> _Entry:
        from codememory.service.project_store import Store

        stale: list[_Entry] = []
        try:
            with self._lock:
                signature = self._signature(root)
                entry = self._entries.get(root)
                if entry is not None and entry.signature != signature:
                    stale.append(self._entries.pop(root))
                    entry = None
                if entry is not None:
                    try:
                        entry.store.db.check_current()  # migrated in place by a newer codememory since it opened
                    except StoreUnusable:
                        stale.append(self._entries.pop(root))
                        raise
                if entry is None:
                    store = Store.open(root)
                    store.semantic.wait_for_disk = False  # an agent waits on the answer: never on a disk read
                    entry = _Entry(store, signature)
                    self._entries[root] = entry
                    while len(self._entries) > self.max_open:
                        oldest = min((r for r in self._entries if r != root), key=lambda r: self._entries[r].last_used)
                        stale.append(self._entries.pop(oldest))
                entry.last_used = time.monotonic()
                return entry
        finally:
            for old in stale:
                self._close(old)

    @staticmethod
    def _close(entry: _Entry) -> None:
        with entry.lock:
            if not entry.closed:
                entry.closed = True
                entry.store.close()

    @contextmanager
    def use(self, root: Path) -> Iterator[Store]:
        """The project's store, for this thread alone until the block ends."""
        for _attempt in range(5):
            entry = self._entry(root)
            with entry.lock:
                if entry.closed:  # reopened or evicted by another thread meanwhile
                    continue
                yield entry.store
                return
        raise RuntimeError(f"could not open the store of {root}: it keeps being replaced")

    def open_roots(self) -> list[Path]:
        """The projects whose store is open now, least recently used first."""
        with self._lock:
            return sorted(self._entries, key=lambda r: self._entries[r].last_used)

    def stores(self) -> list[Store]:
        with self._lock:
            return [e.store for e in self._entries.values()]

    def close_all(self) -> None:
        with self._lock:
            entries = list(self._entries.values())
            self._entries.clear()
        for entry in entries:
            self._close(entry)


@dataclass
class DaemonState:
    """Everything a running daemon holds. `port` is the port actually bound (known before serving)."""

    token: str
    config: Config
    port: int = 0
    host: str = HOST
    tasks: list[Task] = field(default_factory=list)
    poll_interval: float = 10.0
    version: str = __version__
    started_at: str = field(default_factory=now_iso)
    started_monotonic: float = field(default_factory=time.monotonic)
    health: Health = field(default_factory=Health)
    stores: StorePool = field(default_factory=StorePool)
    projects: RegisteredProjects = field(default_factory=RegisteredProjects)
    stop_event: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.health.llm_provider = self.config.llm.provider or "none"
        self.health.embedding_provider = self.config.embedding.provider or "none"

    def project_root(self, project_root: str) -> Path:
        """The registered project answering for `project_root` (see `project_access`): every endpoint that
        names a project goes through here before it opens a store."""
        return self.projects.allowed_root(project_root)

    def stores_on_disk(self, task: str) -> list[Path]:
        """The registered projects that have a store, in a stable order, for a task's pass over them; an unreadable
        registry is recorded as `task`'s error and gives none (the next poll tries again)."""
        try:
            roots = self.projects.roots()
        except RegistryError as exc:
            self.health.record_error(exc, task)
            return []
        return [Path(r) for r in sorted(roots, key=str) if db_path(Path(r)).is_file()]

    @property
    def uptime_seconds(self) -> float:
        return round(time.monotonic() - self.started_monotonic, 3)

    def health_report(self) -> dict[str, Any]:
        from codememory.embedding.query_cache import QUERY_VECTORS

        report = self.health.snapshot()
        counts = QUERY_VECTORS.counts()
        report["embedding"].update(queries_embedded=counts["queries_embedded"], queries_reused=counts["queries_reused"])
        return {
            "status": "ok",
            "version": self.version,
            "uptime_seconds": self.uptime_seconds,
            "projects_open": len(self.stores),
            **report,
        }
