# ruff: noqa: E501
"""Build a second agent-view judge scenario: memories.jsonl, project.json and steps.json.

One made-up project, `brisk` (a Rust command-line task runner for monorepos with a content-addressed local and
remote cache), with 53 memories of the kind a team records (decisions, rejected alternatives, conventions,
gotchas, facts, preferences, todos), the project's source files, and five scripted coding sessions whose steps
are each labelled with the memories that matter for that step; about half of all steps need no memory at all.
Written by hand for codememory, blind: without reading how codememory chooses what to show.

    python benchmarks/data/agent_view_judge2/build.py          # rewrite the three files (and validate)
    python benchmarks/data/agent_view_judge2/build.py --check  # validate only: the files are up to date

Memories are keyed by a readable name; the file ids are `mem_` + the first 8 hex digits of
sha1("agent_view:" + key), so they stay the same when entries are added or reordered (no key is shared with
benchmarks/data/agent_view/, and the build checks that no id is). Tool-call arguments may hold `{root}`, which
the benchmark replaces with the project's absolute path. The build replays every scripted `edit` on the files
(each edit's oldString must occur exactly once at that point) and checks that a file is read in a turn before
it is edited there (OpenCode and Claude Code refuse to edit a file their process has not read, and each turn is
a new process).

Labelling rule: a step's `relevant` memories are the ones a careful teammate would want the agent to have
in mind while taking that step (for the final answer: the ones the answer should respect), judged from the
user's request and the tool calls made so far in the turn, not from the tool call itself alone.

A tool-call step's `uses` (a subset of `relevant`) are the memories its own tool call relies on: the call
applies something the memory states (a value, name, path or command it gives: CACHE_FORMAT, killpg,
.hidden(false), `cargo deny check`, exit code 130), reads or edits the file the memory points to for this
task, or does what the memory prescribes where neither the user's request nor the file being edited would
have told it to. A memory the call merely agrees with (a pattern the file already follows, a warning heeded
by not doing something) is relevant, not used. Final answers have no `uses`: use detection watches what the
agent does (tool calls and edits) and the ids it cites. These labels score use detection
(bench_agent_view.py: which shown memories the session went on to use).
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CATEGORIES = ("decision", "rejected_alternative", "convention", "preference", "gotcha", "fact", "todo", "note")
AGENTS = ("claude", "opencode", "codex", "dev", "claude", "opencode")
FIRST, LAST = datetime(2025, 3, 3, 9, 0, tzinfo=UTC), datetime(2026, 10, 28, 16, 0, tzinfo=UTC)
PROJECT = "brisk"


def mem_id(key: str) -> str:
    return "mem_" + hashlib.sha1(f"agent_view:{key}".encode()).hexdigest()[:8]


# ------------------------------------------------------------------------------------------- memories
# Listed oldest first: created_at grows with the position, so brisk_jobs_default_old is older than
# brisk_jobs_default_new (the same setting, changed in 0.9).
MEMS: list[tuple[str, str, float, str, str]] = [
    # key, category, importance, tags, text
    # --- cache keys
    (
        "brisk_blake3_keys",
        "decision",
        0.6,
        "cache,hashing,blake3",
        "Task cache keys are BLAKE3 hashes (blake3 crate, hash::task_key) of CACHE_FORMAT, the brisk version, the task's name and command, its env vars and its input files (path and content). Chosen over SHA-256: hashing a 40k-file workspace went from 2.1 s to 0.7 s.",
    ),
    (
        "brisk_mtime_rejected",
        "rejected_alternative",
        0.5,
        "cache,hashing",
        "Rejected mtime-based change detection (tried in 0.4, removed in 0.5): git checkout and CI cache restores reset mtimes, so a changed file could keep its old key. Keys hash file contents.",
    ),
    (
        "brisk_path_keys",
        "gotcha",
        0.7,
        "cache,windows,remote-cache",
        "Input paths go into the key as forward-slash paths relative to the workspace root (hash::normalize_path); hashing OS paths gave Windows and Linux different keys for the same tree, and the shared remote cache never hit across them.",
    ),
    (
        "brisk_env_keys",
        "convention",
        0.7,
        "cache,env",
        "Only the env vars a task lists under `env = [...]` go into its cache key, by name and value; never hash the whole environment (PATH and CI's per-run variables would make every key unique).",
    ),
    (
        "brisk_cache_layout",
        "fact",
        0.4,
        "cache",
        "The local cache is .brisk/cache/<first 2 hex of the key>/<key>.tar.zst under the workspace root, each entry with a <key>.tar.last-used sidecar; BRISK_CACHE_DIR overrides the directory.",
    ),
    (
        "brisk_zstd_level",
        "fact",
        0.3,
        "cache,zstd,performance",
        "Cache archives are zstd level 3 (ZSTD_LEVEL in src/cache.rs); level 19 was tried and made storing slower than re-running most tasks.",
    ),
    (
        "brisk_atomic_store",
        "gotcha",
        0.6,
        "cache,concurrency",
        "Cache entries are written to a NamedTempFile in the entry's own directory and renamed into place (persist): two parallel brisk processes once left truncated archives that failed with 'Unknown frame descriptor'. The temp file must not go to /tmp: a rename across filesystems fails with 'Invalid cross-device link (os error 18)'.",
    ),
    (
        "brisk_symlink_outputs",
        "gotcha",
        0.5,
        "cache,tar,symlinks",
        "Outputs may contain symlinks (node_modules/.bin): the tar builder runs with follow_symlinks(false) and stores them as links; following them looped forever on pnpm's node_modules.",
    ),
    (
        "brisk_cache_format",
        "convention",
        0.8,
        "cache,compatibility",
        "Bump CACHE_FORMAT in src/cache.rs whenever the recipe of a key changes (what is hashed or how: a new field, a value now hashed, another encoding) or the archive layout changes: it is hashed into every key, so old local and remote entries are missed instead of restored wrongly. A change in which files are a task's inputs needs no bump: their paths are in the key.",
    ),
    # --- remote cache
    (
        "brisk_ureq",
        "decision",
        0.6,
        "remote-cache,http,dependencies",
        "The remote cache client uses ureq (blocking, rustls); no tokio or reqwest in the binary: brisk is synchronous, and reqwest with tokio doubled the build time and added 2 MB to the binary.",
    ),
    (
        "brisk_remote_writes",
        "convention",
        0.5,
        "remote-cache,ci,security",
        "Only CI writes to the remote cache (BRISK_REMOTE_TOKEN with the write scope); developer machines only read, so a dirty local tree cannot poison the shared cache.",
    ),
    (
        "brisk_remote_timeouts",
        "gotcha",
        0.7,
        "remote-cache,ci,timeouts",
        "Remote cache failures must never fail or stall a build: RemoteCache::new in src/remote.rs sets a 2 s connect timeout and 30 s read and write timeouts, and a timeout or 5xx only logs a warning before the task runs normally.",
    ),
    (
        "brisk_remote_tests",
        "gotcha",
        0.5,
        "tests,remote-cache,docker",
        "The remote cache tests (tests/remote.rs) are #[ignore]d because they need MinIO: start it with `docker compose up -d minio` (localhost:9000), then run `cargo test --test remote -- --ignored`.",
    ),
    # --- config
    (
        "brisk_workspace_root",
        "convention",
        0.6,
        "config,paths",
        "brisk.toml is found by walking up from the current directory (Workspace::discover); the directory holding it is the workspace root, and every path in the file (dir, inputs, outputs) is relative to that root, never to the cwd.",
    ),
    (
        "brisk_jobs_default_old",
        "decision",
        0.5,
        "runner,parallelism,cli",
        "`brisk run` runs as many tasks at once as there are logical CPUs (std::thread::available_parallelism) unless --jobs is given.",
    ),
    (
        "brisk_deny_unknown",
        "convention",
        0.5,
        "config,serde",
        "Config structs use #[serde(deny_unknown_fields)]: a typo such as `input = [...]` for `inputs` must be an error naming the key, not a silently ignored setting.",
    ),
    (
        "brisk_toml_edit",
        "decision",
        0.5,
        "config,cli",
        "`brisk init` and `brisk add` change brisk.toml through toml_edit, which keeps the user's comments and key order; writing it back through the toml crate's serializer dropped comments (bug reports against 0.3).",
    ),
    (
        "brisk_todo_schema",
        "todo",
        0.3,
        "config,editors",
        "TODO: publish a JSON schema for brisk.toml (schemars) so editors can complete and check it.",
    ),
    # --- command line and output
    (
        "brisk_exit_codes",
        "convention",
        0.8,
        "cli,exit-codes,ci",
        "Exit codes: 0 success, 1 a task failed, 2 usage or config error (clap also exits 2 on bad arguments), 3 internal error, 130 after Ctrl-C. CI scripts depend on them; they are decided only in exit_code() in src/main.rs.",
    ),
    (
        "brisk_color",
        "convention",
        0.5,
        "cli,output,color",
        "Colour follows NO_COLOR and CLICOLOR_FORCE and is off when the stream is not a terminal; anstream's println!/eprintln! handle all of it, so never write raw ANSI escapes or use std's print macros for user output.",
    ),
    (
        "brisk_streams",
        "convention",
        0.7,
        "cli,output",
        "stdout carries only machine output (`brisk list --json`, `brisk hash`) so it can be piped; task output, progress, warnings and brisk's own messages all go to stderr.",
    ),
    (
        "brisk_prefixes",
        "fact",
        0.4,
        "output,runner",
        "Task output is forwarded line by line, each line prefixed with the task name padded to the longest name in the run (`build | ...`).",
    ),
    (
        "brisk_help_snapshots",
        "convention",
        0.6,
        "cli,clap,tests,insta",
        "CLI parsing is clap 4 derive in src/cli.rs. The output of `brisk --help` and `brisk run --help` is snapshot-tested (tests/snapshots/cli__help.snap and cli__run_help.snap): changing their flags or doc comments changes a snapshot.",
    ),
    (
        "brisk_insta",
        "convention",
        0.6,
        "tests,insta",
        "Snapshot tests use insta: after an intended output change run `cargo insta test`, look at the diff, then `cargo insta accept` (or `cargo insta review`); never edit .snap files by hand.",
    ),
    # --- errors
    (
        "brisk_errors",
        "convention",
        0.6,
        "errors,rust",
        "Library code returns brisk::Error (thiserror, src/error.rs) with one variant per kind of failure; anyhow only in main.rs and tests. No unwrap() outside tests; expect() only on invariants, with the invariant as its message.",
    ),
    (
        "brisk_error_text",
        "convention",
        0.5,
        "errors,cli",
        "User-facing error messages are lowercase, without a trailing period, and name the file and key when there is one: `brisk.toml: task 'build': unknown dependency 'lint'`.",
    ),
    # --- running tasks
    (
        "brisk_shell",
        "decision",
        0.5,
        "runner,windows",
        "Task commands run through `sh -c` on Unix and `cmd /C` on Windows (runner::shell_command); splitting them ourselves (shell-words) was rejected because users write pipes, && and redirects in commands.",
    ),
    (
        "brisk_process_group",
        "gotcha",
        0.7,
        "runner,signals,unix",
        "Each task must be spawned in its own process group (CommandExt::process_group(0)) and stopped with libc::killpg on that group: signalling only the pid stops the `sh -c` wrapper and leaves its children (dev servers, watchers) running after brisk exits.",
    ),
    (
        "brisk_threads",
        "rejected_alternative",
        0.4,
        "runner,async,tokio",
        "Rejected an async runner on tokio::process: a run has a few long-running tasks, and a scoped thread per running task needs no runtime.",
    ),
    (
        "brisk_cycles",
        "gotcha",
        0.4,
        "graph,errors",
        "graph::plan detects dependency cycles with petgraph's toposort, whose error names only one node; the message must list the whole cycle ('cycle: build -> test -> build').",
    ),
    # --- tests, tooling, workflow
    (
        "brisk_test_workspaces",
        "convention",
        0.6,
        "tests,assert_cmd",
        "Integration tests run the real binary with assert_cmd in a temporary workspace: `workspace(toml)` from tests/common/mod.rs writes brisk.toml into a TempDir and `ws.brisk()` runs there. Never run brisk in the repository itself from a test.",
    ),
    (
        "brisk_msrv",
        "fact",
        0.6,
        "rust,msrv,ci",
        "MSRV is Rust 1.74 (rust-version in Cargo.toml, checked by the msrv CI job): std APIs stabilized later are out (no LazyLock, use once_cell::sync::Lazy), and new dependencies must build on 1.74.",
    ),
    (
        "brisk_clippy",
        "convention",
        0.6,
        "ci,clippy,rustfmt",
        "CI runs `cargo fmt --check` and `cargo clippy --all-targets -- -D warnings` before the tests; any clippy warning fails the build.",
    ),
    (
        "brisk_cargo_deny",
        "gotcha",
        0.6,
        "dependencies,licenses,ci",
        "CI runs `cargo deny check` (deny.toml): GPL/AGPL licences, crates with advisories and duplicate major versions fail it. Run it locally after adding a dependency.",
    ),
    (
        "brisk_conventional_commits",
        "preference",
        0.7,
        "git,release",
        "Commit messages follow Conventional Commits with the module as scope (`fix(cache): ...`, `feat(cli): ...`, `perf(hash): ...`): release-plz derives the version bump and the changelog from them.",
    ),
    (
        "brisk_changelog",
        "gotcha",
        0.6,
        "release,changelog",
        "Never edit CHANGELOG.md by hand: release-plz regenerates it from commit messages, and a manual edit makes its release PR conflict. A fix gets into the changelog through its `fix:` commit message.",
    ),
    (
        "brisk_release_flow",
        "fact",
        0.4,
        "release,ci",
        "Releases: merging release-plz's PR tags vX.Y.Z and publishes to crates.io; cargo-dist then builds the binaries (Linux musl x86_64/aarch64, macOS, Windows MSVC) and the shell and PowerShell installers from the tag.",
    ),
    (
        "brisk_musl_tls",
        "gotcha",
        0.5,
        "release,musl,tls,dependencies",
        "The musl release builds fail with 'failed to run custom build command for openssl-sys' as soon as a dependency pulls in native-tls; keep TLS on rustls and check that `cargo tree -i openssl-sys` prints nothing.",
    ),
    # --- everything else (true, but for none of the scripted steps)
    (
        "brisk_homebrew",
        "fact",
        0.3,
        "release,homebrew",
        "The Homebrew formula in brisk-dev/homebrew-tap is regenerated by cargo-dist on every release; never edit it by hand.",
    ),
    (
        "brisk_no_telemetry",
        "rejected_alternative",
        0.4,
        "privacy,network",
        "Rejected opt-out usage telemetry (2025): a build tool must make no network calls the user did not configure. The remote cache is the only outbound traffic.",
    ),
    (
        "brisk_docs_deploy",
        "fact",
        0.3,
        "docs,deploy",
        "The user guide (docs/, mdBook) deploys to GitHub Pages from main on every push (.github/workflows/docs.yml); preview it with `mdbook serve docs`.",
    ),
    (
        "brisk_windows_flaky",
        "gotcha",
        0.4,
        "tests,windows,ci",
        "On the Windows CI runner, deleting a test workspace sometimes fails with 'The process cannot access the file because it is being used by another process. (os error 32)' while Defender scans it; tests/common ignores TempDir cleanup errors rather than retrying in a loop.",
    ),
    (
        "brisk_watch_events",
        "decision",
        0.5,
        "watch,notify",
        "`brisk watch` uses notify with notify-debouncer-full (200 ms) on the workspace root and re-runs only when a changed path is one of the task's inputs (inputs::collect), so writes into .brisk/ and .git/ never retrigger it.",
    ),
    (
        "brisk_input_walk",
        "decision",
        0.5,
        "inputs,globs",
        "Input files are listed by inputs::collect with the ignore crate's WalkBuilder (it honours .gitignore) and matched with globset: a file git ignores is never an input.",
    ),
    (
        "brisk_dotfile_inputs",
        "gotcha",
        0.6,
        "inputs,globs,dotfiles",
        "The ignore crate's WalkBuilder skips hidden files by default, so dotfiles such as .eslintrc.json or .env.example are silently not inputs; build it with .hidden(false) plus a filter_entry that skips .git and .brisk (otherwise every commit and every cache write changes the key).",
    ),
    (
        "brisk_todo_remote_gc",
        "todo",
        0.3,
        "remote-cache,s3",
        "TODO: garbage-collect the remote cache; the bucket grows about 40 GB a month, and until then an S3 lifecycle rule deletes objects after 30 days.",
    ),
    (
        "brisk_prune_lru",
        "fact",
        0.5,
        "cache,prune",
        "`brisk cache prune` evicts entries by last use down to cache.max_size (default 5 GiB). Last use is the mtime of the entry's .last-used sidecar, touched on every hit: atime is useless on noatime and relatime mounts.",
    ),
    (
        "brisk_bench_method",
        "convention",
        0.5,
        "performance,benchmarks,criterion",
        "Speed claims come from the criterion benches (`cargo bench --bench hash`) compared against a baseline saved on the same machine (`--save-baseline before`, then `--baseline before`); no figures from a single timing run in PRs.",
    ),
    (
        "brisk_tracing",
        "convention",
        0.4,
        "logging,tracing",
        "Diagnostics use tracing (BRISK_LOG=debug or -v, written to stderr by tracing-subscriber); no debugging println!/eprintln! left in code.",
    ),
    (
        "brisk_small_prs",
        "preference",
        0.4,
        "workflow,review",
        "Maintainers want small PRs: one fix or feature per PR, and a refactor that a feature needs goes in its own PR first.",
    ),
    (
        "brisk_jobs_default_new",
        "decision",
        0.7,
        "runner,parallelism,cli,ci",
        "Since 0.9 the default --jobs is the number of logical CPUs minus one, at most 8 (runner::default_jobs): one task per CPU ran CI's 32-core runners out of memory while linking. This replaces the earlier one-task-per-CPU default.",
    ),
    (
        "brisk_dry_run",
        "decision",
        0.4,
        "cli,runner",
        "`brisk run --dry-run` prints the plan (the waves of tasks in order) without running anything or writing to the cache.",
    ),
    (
        "brisk_default_inputs",
        "fact",
        0.5,
        "inputs,config",
        "A task without `inputs` hashes every file under its dir that git does not ignore; `inputs = []` means no file inputs at all (the task stays cached until its command or env changes).",
    ),
]

# ------------------------------------------------------------------------------------------ project
FILES: dict[str, str] = {
    "README.md": """# brisk

A task runner for monorepos that skips the tasks whose inputs have not changed: each task's outputs are kept
in a content-addressed cache, on disk and optionally on a shared HTTP remote.

```toml
# brisk.toml, at the root of your repository
[tasks.build]
command = "npm run build"
inputs = ["src/**", "package.json"]
outputs = ["dist"]
env = ["NODE_ENV"]
deps = ["codegen"]
```

    brisk run build       # run build and its deps, restoring cached outputs
    brisk watch build     # run it again whenever one of its inputs changes
    brisk cache prune     # shrink the local cache

Building from source: `cargo build --release`. Licensed MIT OR Apache-2.0.
""",
    "Cargo.toml": """[package]
name = "brisk"
version = "0.11.2"
edition = "2021"
rust-version = "1.74"
description = "A task runner with a content-addressed cache for monorepos"
license = "MIT OR Apache-2.0"
repository = "https://github.com/brisk-dev/brisk"

[dependencies]
anstream = "0.6"
anstyle = "1"
anyhow = "1"
blake3 = "1.5"
clap = { version = "4.5", features = ["derive"] }
ctrlc = "3.4"
globset = "0.4"
ignore = "0.4"
libc = "0.2"
notify = "6.1"
notify-debouncer-full = "0.3"
once_cell = "1.19"
petgraph = "0.6"
serde = { version = "1", features = ["derive"] }
serde_json = "1"
tar = "0.4"
tempfile = "3.10"
thiserror = "1"
toml = "0.8"
toml_edit = "0.22"
tracing = "0.1"
tracing-subscriber = { version = "0.3", features = ["env-filter"] }
ureq = { version = "2.9", default-features = false, features = ["tls"] }
zstd = "0.13"

[dev-dependencies]
assert_cmd = "2"
criterion = "0.5"
insta = "1.39"
predicates = "3"

[[bench]]
name = "hash"
harness = false

[profile.release]
lto = "thin"
strip = true
""",
    "CHANGELOG.md": """# Changelog

All notable changes to this project will be documented in this file.

## [0.11.2](https://github.com/brisk-dev/brisk/compare/v0.11.1...v0.11.2) - 2026-10-14

### Fixed

- *(cache)* never restore an entry whose archive is still being written

## [0.11.1](https://github.com/brisk-dev/brisk/compare/v0.11.0...v0.11.1) - 2026-09-30

### Fixed

- *(graph)* name every task of a dependency cycle in the error

## [0.11.0](https://github.com/brisk-dev/brisk/compare/v0.10.3...v0.11.0) - 2026-09-02

### Added

- *(cli)* `brisk list --json`
- *(watch)* debounce file events (200 ms)
""",
    "deny.toml": """[licenses]
allow = ["MIT", "Apache-2.0", "Apache-2.0 WITH LLVM-exception", "BSD-2-Clause", "BSD-3-Clause", "ISC", "Unicode-3.0", "Zlib"]

[advisories]
version = 2

[bans]
multiple-versions = "deny"
""",
    "docker-compose.yml": """services:
  minio:
    image: minio/minio:RELEASE.2025-04-22T22-12-26Z
    command: server /data
    ports: ["9000:9000"]
    environment:
      MINIO_ROOT_USER: brisk
      MINIO_ROOT_PASSWORD: brisk-dev-only
""",
    "src/lib.rs": """//! brisk: run a monorepo's tasks and skip the ones whose inputs have not changed.

pub mod cache;
pub mod cli;
pub mod config;
pub mod error;
pub mod graph;
pub mod hash;
pub mod inputs;
pub mod output;
pub mod remote;
pub mod runner;
pub mod watch;

pub use error::{Error, Result};

use config::Workspace;

/// `brisk list`: one task name per line, or a JSON array.
pub fn list(workspace: &Workspace, json: bool) -> Result<()> {
    let names: Vec<&String> = workspace.config.tasks.keys().collect();
    if json {
        anstream::println!("{}", serde_json::to_string(&names).expect("a list of strings always serializes"));
    } else {
        for name in names {
            anstream::println!("{name}");
        }
    }
    Ok(())
}
""",
    "src/main.rs": """use std::process::ExitCode;

use anstream::eprintln;
use clap::Parser;
use tracing_subscriber::EnvFilter;

use brisk::cli::{CacheCommand, Cli, Command};
use brisk::config::Workspace;
use brisk::{cache, runner, watch, Error};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("brisk: {err:#}");
            ExitCode::from(exit_code(&err))
        }
    }
}

/// The documented exit codes: scripts depend on them.
fn exit_code(err: &anyhow::Error) -> u8 {
    match err.downcast_ref::<Error>() {
        Some(Error::TaskFailed { .. }) => 1,
        Some(Error::Config { .. } | Error::NoWorkspace(_) | Error::UnknownTask(_) | Error::Cycle(_)) => 2,
        _ => 3,
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let workspace = Workspace::discover(&std::env::current_dir()?)?;
    match cli.command {
        Command::Run { tasks, jobs, dry_run } => runner::run(&workspace, &tasks, jobs, dry_run)?,
        Command::Watch { task } => watch::watch(&workspace, &task)?,
        Command::List { json } => brisk::list(&workspace, json)?,
        Command::Cache { command: CacheCommand::Prune { max_size } } => cache::prune(&workspace, max_size)?,
        Command::Cache { command: CacheCommand::Clear } => cache::clear(&workspace)?,
    }
    Ok(())
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_env("BRISK_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter).init();
}
""",
    "src/cli.rs": """use clap::{Parser, Subcommand};

/// A task runner with a content-addressed cache for monorepos.
#[derive(Debug, Parser)]
#[command(name = "brisk", version, about)]
pub struct Cli {
    /// More log output (-v: debug, -vv: trace)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run tasks and their dependencies, restoring cached outputs when the inputs are unchanged
    Run {
        /// The tasks to run
        #[arg(required = true)]
        tasks: Vec<String>,
        /// How many tasks run at once
        #[arg(short, long)]
        jobs: Option<usize>,
        /// Print the plan without running anything
        #[arg(long)]
        dry_run: bool,
    },
    /// Run a task again whenever one of its inputs changes
    Watch { task: String },
    /// List the workspace's tasks
    List {
        /// Print a JSON array on stdout
        #[arg(long)]
        json: bool,
    },
    /// Manage the local cache
    Cache {
        #[command(subcommand)]
        command: CacheCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Evict the least recently used entries until the cache fits in max_size
    Prune {
        /// Size to prune down to, in bytes (default: the config's cache.max_size)
        #[arg(long)]
        max_size: Option<u64>,
    },
    /// Delete every local cache entry
    Clear,
}
""",
    "src/error.rs": """use std::path::PathBuf;
use std::process::ExitStatus;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {message}", path.display())]
    Config { path: PathBuf, message: String },
    #[error("no brisk.toml in {} or any parent directory", .0.display())]
    NoWorkspace(PathBuf),
    #[error("unknown task '{0}'")]
    UnknownTask(String),
    #[error("cycle: {0}")]
    Cycle(String),
    #[error("task '{task}' failed ({status})")]
    TaskFailed { task: String, status: ExitStatus },
    #[error("cache: {0}")]
    Cache(#[source] std::io::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub type Result<T> = std::result::Result<T, Error>;
""",
    "src/config.rs": """use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::{Error, Result};

pub const FILE_NAME: &str = "brisk.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub cache: CacheConfig,
    #[serde(default)]
    pub tasks: BTreeMap<String, TaskConfig>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Bytes; `brisk cache prune` shrinks the local cache to this.
    #[serde(default = "default_max_size")]
    pub max_size: u64,
    /// Base URL of the shared HTTP cache.
    pub remote: Option<String>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig { max_size: default_max_size(), remote: None }
    }
}

fn default_max_size() -> u64 {
    5 * 1024 * 1024 * 1024
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskConfig {
    pub command: String,
    #[serde(default)]
    pub dir: PathBuf,
    pub inputs: Option<Vec<String>>,
    #[serde(default)]
    pub outputs: Vec<String>,
    #[serde(default)]
    pub env: Vec<String>,
    #[serde(default)]
    pub deps: Vec<String>,
}

pub struct Workspace {
    pub root: PathBuf,
    pub config: Config,
}

impl Workspace {
    /// Walks up from `start` to the first directory holding brisk.toml: that directory is the root.
    pub fn discover(start: &Path) -> Result<Workspace> {
        for dir in start.ancestors() {
            let path = dir.join(FILE_NAME);
            if path.is_file() {
                let text = std::fs::read_to_string(&path)?;
                let config = toml::from_str(&text)
                    .map_err(|err| Error::Config { path: path.clone(), message: err.message().to_owned() })?;
                return Ok(Workspace { root: dir.to_path_buf(), config });
            }
        }
        Err(Error::NoWorkspace(start.to_path_buf()))
    }

    pub fn cache_dir(&self) -> PathBuf {
        std::env::var_os("BRISK_CACHE_DIR").map_or_else(|| self.root.join(".brisk/cache"), PathBuf::from)
    }
}
""",
    "src/graph.rs": """use petgraph::algo::toposort;
use petgraph::graphmap::DiGraphMap;

use crate::config::Config;
use crate::{Error, Result};

/// The tasks to run in waves: every task's dependencies are in earlier waves.
pub struct Plan {
    pub waves: Vec<Vec<String>>,
}

pub fn plan(config: &Config, targets: &[String]) -> Result<Plan> {
    let mut graph = DiGraphMap::<&str, ()>::new();
    let mut todo: Vec<&str> = targets.iter().map(String::as_str).collect();
    while let Some(name) = todo.pop() {
        let task = config.tasks.get(name).ok_or_else(|| Error::UnknownTask(name.to_owned()))?;
        graph.add_node(name);
        for dep in &task.deps {
            if !graph.contains_node(dep) {
                todo.push(dep);
            }
            graph.add_edge(dep.as_str(), name, ());
        }
    }
    let order = toposort(&graph, None).map_err(|cycle| Error::Cycle(describe_cycle(&graph, cycle.node_id())))?;
    let mut depth = std::collections::HashMap::new();
    let mut waves: Vec<Vec<String>> = Vec::new();
    for name in order {
        let level = graph
            .neighbors_directed(name, petgraph::Direction::Incoming)
            .map(|dep| depth[dep] + 1)
            .max()
            .unwrap_or(0);
        depth.insert(name, level);
        if waves.len() <= level {
            waves.resize_with(level + 1, Vec::new);
        }
        waves[level].push(name.to_owned());
    }
    Ok(Plan { waves })
}

/// "build -> test -> build": toposort's error names a single node of the cycle.
fn describe_cycle(graph: &DiGraphMap<&str, ()>, start: &str) -> String {
    let mut path = vec![start];
    let mut node = start;
    while let Some(next) = graph.neighbors(node).find(|next| petgraph::algo::has_path_connecting(graph, next, start, None)) {
        path.push(next);
        if next == start {
            break;
        }
        node = next;
    }
    path.join(" -> ")
}
""",
    "src/hash.rs": """use std::path::Path;

use crate::cache::CACHE_FORMAT;
use crate::config::TaskConfig;
use crate::{inputs, Result};

/// The cache key of a task: everything that can change its outputs.
pub fn task_key(root: &Path, name: &str, task: &TaskConfig) -> Result<blake3::Hash> {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&CACHE_FORMAT.to_le_bytes());
    hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
    for part in [name, task.command.as_str()] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    for var in &task.env {
        hasher.update(var.as_bytes());
    }
    for file in inputs::collect(root, task)? {
        let path = normalize_path(root, &file);
        hasher.update(&(path.len() as u64).to_le_bytes());
        hasher.update(path.as_bytes());
        hasher.update(blake3::hash(&std::fs::read(&file)?).as_bytes());
    }
    Ok(hasher.finalize())
}

/// Forward-slash path relative to the workspace root, the same on every OS.
pub fn normalize_path(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file);
    relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}
""",
    "src/inputs.rs": """use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use ignore::WalkBuilder;

use crate::config::{TaskConfig, FILE_NAME};
use crate::{Error, Result};

/// A task's input files, sorted: the files under its dir that git does not ignore, only those matching its
/// `inputs` globs when it has them (`inputs = []`: none).
pub fn collect(root: &Path, task: &TaskConfig) -> Result<Vec<PathBuf>> {
    let dir = root.join(&task.dir);
    let globs = task.inputs.as_deref().map(|patterns| glob_set(root, patterns)).transpose()?;
    let mut files = Vec::new();
    for entry in WalkBuilder::new(&dir).build() {
        let entry = entry.map_err(std::io::Error::other)?;
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let relative = entry.path().strip_prefix(&dir).unwrap_or(entry.path());
        if globs.as_ref().map_or(true, |globs| globs.is_match(relative)) {
            files.push(entry.into_path());
        }
    }
    files.sort();
    Ok(files)
}

fn glob_set(root: &Path, patterns: &[String]) -> Result<GlobSet> {
    let config_error = |message: String| Error::Config { path: root.join(FILE_NAME), message };
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        builder.add(Glob::new(pattern).map_err(|err| config_error(format!("bad input glob '{pattern}': {err}")))?);
    }
    builder.build().map_err(|err| config_error(err.to_string()))
}
""",
    "src/cache.rs": """use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::config::Workspace;
use crate::{Error, Result};

/// Hashed into every key: bump it when a key's recipe or the archive layout changes.
pub const CACHE_FORMAT: u32 = 3;
const ZSTD_LEVEL: i32 = 3;

pub fn entry_path(cache_dir: &Path, key: &blake3::Hash) -> PathBuf {
    let hex = key.to_hex();
    cache_dir.join(&hex[..2]).join(format!("{hex}.tar.zst"))
}

fn sidecar(entry: &Path) -> PathBuf {
    entry.with_extension("last-used")
}

fn touch(path: &Path) -> Result<()> {
    fs::File::create(path).map(drop).map_err(Error::Cache)
}

/// Restores a task's outputs from the local cache; false on a miss.
pub fn restore(workspace: &Workspace, key: &blake3::Hash) -> Result<bool> {
    let path = entry_path(&workspace.cache_dir(), key);
    let file = match fs::File::open(&path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(Error::Cache(err)),
    };
    let decoder = zstd::Decoder::new(file).map_err(Error::Cache)?;
    tar::Archive::new(decoder).unpack(&workspace.root).map_err(Error::Cache)?;
    touch(&sidecar(&path))?;
    Ok(true)
}

/// Archives a task's outputs under its key.
pub fn store(workspace: &Workspace, key: &blake3::Hash, outputs: &[String]) -> Result<()> {
    let path = entry_path(&workspace.cache_dir(), key);
    let dir = path.parent().expect("entry paths have a parent");
    fs::create_dir_all(dir).map_err(Error::Cache)?;
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(Error::Cache)?;
    let encoder = zstd::Encoder::new(tmp.as_file(), ZSTD_LEVEL).map_err(Error::Cache)?.auto_finish();
    let mut archive = tar::Builder::new(encoder);
    archive.follow_symlinks(false);
    for output in outputs {
        let source = workspace.root.join(output);
        if source.is_dir() {
            archive.append_dir_all(output, &source)
        } else {
            archive.append_path_with_name(&source, output)
        }
        .map_err(Error::Cache)?;
    }
    archive.into_inner().map_err(Error::Cache)?;
    tmp.persist(&path).map_err(|err| Error::Cache(err.error))?;
    touch(&sidecar(&path))
}

/// Writes an archive downloaded from the remote cache into the local cache.
pub fn store_archive(workspace: &Workspace, key: &blake3::Hash, archive: &[u8]) -> Result<()> {
    let path = entry_path(&workspace.cache_dir(), key);
    let dir = path.parent().expect("entry paths have a parent");
    fs::create_dir_all(dir).map_err(Error::Cache)?;
    let mut partial = tempfile::NamedTempFile::new_in(dir).map_err(Error::Cache)?;
    partial.write_all(archive).map_err(Error::Cache)?;
    partial.persist(&path).map_err(|err| Error::Cache(err.error))?;
    touch(&sidecar(&path))
}

struct Entry {
    path: PathBuf,
    size: u64,
    last_used: SystemTime,
}

fn entries(cache_dir: &Path) -> Result<Vec<Entry>> {
    let shards = match fs::read_dir(cache_dir) {
        Ok(shards) => shards,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::Cache(err)),
    };
    let mut out = Vec::new();
    for shard in shards {
        for file in fs::read_dir(shard.map_err(Error::Cache)?.path()).map_err(Error::Cache)? {
            let path = file.map_err(Error::Cache)?.path();
            if path.extension().is_some_and(|ext| ext == "zst") {
                let size = fs::metadata(&path).map_err(Error::Cache)?.len();
                let last_used = fs::metadata(sidecar(&path))
                    .and_then(|meta| meta.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                out.push(Entry { path, size, last_used });
            }
        }
    }
    Ok(out)
}

fn remove(entry: &Entry) -> Result<()> {
    fs::remove_file(&entry.path).map_err(Error::Cache)?;
    let _ = fs::remove_file(sidecar(&entry.path));
    Ok(())
}

/// Evicts the least recently used entries until the cache fits in max_size.
pub fn prune(workspace: &Workspace, max_size: Option<u64>) -> Result<()> {
    let max_size = max_size.unwrap_or(workspace.config.cache.max_size);
    let mut entries = entries(&workspace.cache_dir())?;
    entries.sort_by_key(|entry| entry.last_used);
    let mut total: u64 = entries.iter().map(|entry| entry.size).sum();
    for entry in &entries {
        if total <= max_size {
            break;
        }
        remove(entry)?;
        total -= entry.size;
    }
    Ok(())
}

pub fn clear(workspace: &Workspace) -> Result<()> {
    match fs::remove_dir_all(workspace.cache_dir()) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => Err(Error::Cache(err)),
        _ => Ok(()),
    }
}
""",
    "src/remote.rs": """use std::io::Read;
use std::time::Duration;

use crate::cache;
use crate::config::Workspace;

/// The shared HTTP cache: GET and PUT {base}/{key}.tar.zst. It only ever speeds a run up: every failure is a
/// warning, and the task runs (or its result stays local).
pub struct RemoteCache {
    agent: ureq::Agent,
    base: String,
    token: Option<String>,
}

impl RemoteCache {
    pub fn new(base: &str) -> RemoteCache {
        let agent = ureq::AgentBuilder::new().timeout_connect(Duration::from_secs(2)).build();
        RemoteCache {
            agent,
            base: base.trim_end_matches('/').to_owned(),
            token: std::env::var("BRISK_REMOTE_TOKEN").ok(),
        }
    }

    fn url(&self, key: &blake3::Hash) -> String {
        format!("{}/{}.tar.zst", self.base, key.to_hex())
    }

    /// Downloads an entry into the local cache; false on a miss or any failure.
    pub fn fetch(&self, workspace: &Workspace, key: &blake3::Hash) -> bool {
        let response = match self.agent.get(&self.url(key)).call() {
            Ok(response) => response,
            Err(ureq::Error::Status(404, _)) => return false,
            Err(err) => {
                tracing::warn!(%err, "remote cache unavailable, running the task");
                return false;
            }
        };
        let mut archive = Vec::new();
        if let Err(err) = response.into_reader().read_to_end(&mut archive) {
            tracing::warn!(%err, "remote cache download failed, running the task");
            return false;
        }
        cache::store_archive(workspace, key, &archive).is_ok()
    }

    /// Uploads an entry; only CI's token may write.
    pub fn upload(&self, workspace: &Workspace, key: &blake3::Hash) {
        let Some(token) = &self.token else { return };
        let Ok(archive) = std::fs::read(cache::entry_path(&workspace.cache_dir(), key)) else { return };
        let request = self.agent.put(&self.url(key)).set("Authorization", &format!("Bearer {token}"));
        if let Err(err) = request.send_bytes(&archive) {
            tracing::warn!(%err, "remote cache upload failed");
        }
    }
}
""",
    "src/runner.rs": """use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

use crate::config::{TaskConfig, Workspace};
use crate::remote::RemoteCache;
use crate::{cache, graph, hash, output, Error, Result};

/// Logical CPUs minus one, at most 8: one task per CPU ran CI's 32-core runners out of memory.
pub fn default_jobs() -> usize {
    let cpus = thread::available_parallelism().map_or(1, |n| n.get());
    cpus.saturating_sub(1).clamp(1, 8)
}

/// Runs `targets` and their dependencies wave by wave, at most `jobs` tasks at once.
pub fn run(workspace: &Workspace, targets: &[String], jobs: Option<usize>, dry_run: bool) -> Result<()> {
    let plan = graph::plan(&workspace.config, targets)?;
    if dry_run {
        output::print_plan(&plan);
        return Ok(());
    }
    let jobs = jobs.unwrap_or_else(default_jobs);
    let remote = workspace.config.cache.remote.as_deref().map(RemoteCache::new);
    let running: Arc<Mutex<Vec<u32>>> = Arc::default();
    let on_interrupt = Arc::clone(&running);
    ctrlc::set_handler(move || {
        for pid in on_interrupt.lock().expect("the pid list lock is never poisoned").iter() {
            stop(*pid);
        }
    })
    .map_err(std::io::Error::other)?;
    let width = plan.waves.iter().flatten().map(String::len).max().unwrap_or(0);
    for wave in &plan.waves {
        for batch in wave.chunks(jobs) {
            thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|name| scope.spawn(|| run_task(workspace, name, width, remote.as_ref(), &running)))
                    .collect();
                handles.into_iter().try_for_each(|handle| handle.join().expect("task threads do not panic"))
            })?;
        }
    }
    Ok(())
}

fn run_task(
    workspace: &Workspace,
    name: &str,
    width: usize,
    remote: Option<&RemoteCache>,
    running: &Mutex<Vec<u32>>,
) -> Result<()> {
    let task = &workspace.config.tasks[name];
    let key = hash::task_key(&workspace.root, name, task)?;
    let hit = cache::restore(workspace, &key)?
        || (remote.is_some_and(|remote| remote.fetch(workspace, &key)) && cache::restore(workspace, &key)?);
    if hit {
        output::cached(name);
        return Ok(());
    }
    let mut child = spawn(workspace, task)?;
    let pid = child.id();
    running.lock().expect("the pid list lock is never poisoned").push(pid);
    output::forward(name, width, &mut child)?;
    let status = child.wait()?;
    running.lock().expect("the pid list lock is never poisoned").retain(|p| *p != pid);
    if !status.success() {
        return Err(Error::TaskFailed { task: name.to_owned(), status });
    }
    cache::store(workspace, &key, &task.outputs)?;
    if let Some(remote) = remote {
        remote.upload(workspace, &key);
    }
    Ok(())
}

fn spawn(workspace: &Workspace, task: &TaskConfig) -> Result<Child> {
    let mut command = shell_command(&task.command);
    command
        .current_dir(workspace.root.join(&task.dir))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Ok(command.spawn()?)
}

/// `sh -c` on Unix, `cmd /C` on Windows: commands may use pipes, && and redirects.
pub fn shell_command(script: &str) -> Command {
    let (shell, flag) = if cfg!(windows) { ("cmd", "/C") } else { ("sh", "-c") };
    let mut command = Command::new(shell);
    command.args([flag, script]);
    command
}

/// Ctrl-C: stops a running task.
#[cfg(unix)]
fn stop(pid: u32) {
    // SAFETY: kill only sends a signal.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGTERM);
    }
}

/// Ctrl-C: stops a running task (/T: with every process it started).
#[cfg(windows)]
fn stop(pid: u32) {
    let _ = Command::new("taskkill").args(["/T", "/F", "/PID", &pid.to_string()]).status();
}
""",
    "src/output.rs": """use std::io::{self, BufRead, BufReader, Read};
use std::process::Child;
use std::thread;

use anstream::eprintln;
use anstyle::{AnsiColor, Style};

use crate::graph::Plan;

const NAME: Style = AnsiColor::Cyan.on_default().bold();

/// Forwards a task's stdout and stderr to our stderr line by line, each line prefixed with the task name
/// padded to `width`. Lines recieve the prefix even when the task writes them in several pieces.
pub fn forward(name: &str, width: usize, child: &mut Child) -> io::Result<()> {
    let stdout = child.stdout.take().expect("spawn pipes stdout");
    let stderr = child.stderr.take().expect("spawn pipes stderr");
    thread::scope(|scope| {
        let out = scope.spawn(|| prefix_lines(name, width, stdout));
        prefix_lines(name, width, stderr)?;
        out.join().expect("the forwarding thread does not panic")
    })
}

fn prefix_lines(name: &str, width: usize, stream: impl Read) -> io::Result<()> {
    for line in BufReader::new(stream).lines() {
        eprintln!("{NAME}{name:<width$}{NAME:#} | {}", line?);
    }
    Ok(())
}

/// A task whose outputs were restored from the cache.
pub fn cached(name: &str) {
    eprintln!("{NAME}{name}{NAME:#}: cached");
}

/// `brisk run --dry-run`: the waves, in order.
pub fn print_plan(plan: &Plan) {
    for (i, wave) in plan.waves.iter().enumerate() {
        eprintln!("{}: {}", i + 1, wave.join(", "));
    }
}
""",
    "src/watch.rs": """use std::sync::mpsc;
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_full::new_debouncer;

use crate::config::Workspace;
use crate::{inputs, runner, Error, Result};

/// Runs the task, then again whenever one of its input files changes.
pub fn watch(workspace: &Workspace, name: &str) -> Result<()> {
    let task = workspace.config.tasks.get(name).ok_or_else(|| Error::UnknownTask(name.to_owned()))?;
    let (tx, rx) = mpsc::channel();
    let mut debouncer = new_debouncer(Duration::from_millis(200), None, tx).map_err(std::io::Error::other)?;
    debouncer.watcher().watch(&workspace.root, RecursiveMode::Recursive).map_err(std::io::Error::other)?;
    let targets = [name.to_owned()];
    runner::run(workspace, &targets, None, false)?;
    for events in rx {
        let Ok(events) = events else { continue };
        // only the task's inputs count: writes to .brisk/ (the cache) or .git/ must not retrigger it
        let watched = inputs::collect(&workspace.root, task)?;
        if events.iter().flat_map(|event| &event.paths).any(|path| watched.binary_search(path).is_ok()) {
            runner::run(workspace, &targets, None, false)?;
        }
    }
    Ok(())
}
""",
    "tests/common/mod.rs": """use std::fs;
use std::path::Path;

use assert_cmd::Command;
use tempfile::TempDir;

/// A throwaway workspace with `config` as its brisk.toml.
pub fn workspace(config: &str) -> Workspace {
    let dir = TempDir::new().expect("a temp dir");
    fs::write(dir.path().join("brisk.toml"), config).expect("brisk.toml written");
    Workspace { dir }
}

pub struct Workspace {
    // dropped without checking: on Windows CI, Defender can still hold a file (os error 32)
    dir: TempDir,
}

impl Workspace {
    /// The brisk binary, run in this workspace with a private cache and no colour.
    pub fn brisk(&self) -> Command {
        let mut command = Command::cargo_bin("brisk").expect("the brisk binary is built");
        command.current_dir(self.dir.path()).env_remove("BRISK_CACHE_DIR").env("NO_COLOR", "1");
        command
    }

    pub fn write(&self, path: &str, text: &str) {
        let path = self.dir.path().join(path);
        fs::create_dir_all(path.parent().expect("a file has a parent")).expect("dir created");
        fs::write(path, text).expect("file written");
    }

    pub fn read(&self, path: &str) -> String {
        fs::read_to_string(self.dir.path().join(path)).expect("file read")
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}
""",
    "tests/cli.rs": """mod common;

use assert_cmd::Command;
use predicates::prelude::*;

use common::workspace;

const BUILD: &str = r#"
[tasks.build]
command = "echo built > out.txt"
inputs = ["src/**"]
outputs = ["out.txt"]
"#;

#[test]
fn second_run_is_cached() {
    let ws = workspace(BUILD);
    ws.write("src/a.txt", "a");
    ws.brisk().args(["run", "build"]).assert().success();
    ws.brisk().args(["run", "build"]).assert().success().stderr(predicate::str::contains("build: cached"));
}

#[test]
fn failing_task_exits_with_1() {
    let ws = workspace(
        r#"
[tasks.fail]
command = "exit 7"
"#,
    );
    ws.brisk().args(["run", "fail"]).assert().code(1).stderr(predicate::str::contains("task 'fail' failed"));
}

#[test]
fn unknown_key_is_a_config_error() {
    let ws = workspace(
        r#"
[tasks.build]
command = "true"
input = ["src/**"]
"#,
    );
    ws.brisk().args(["run", "build"]).assert().code(2).stderr(predicate::str::contains("unknown field `input`"));
}

#[test]
fn help() {
    let output = Command::cargo_bin("brisk").unwrap().arg("--help").output().unwrap();
    insta::assert_snapshot!("help", String::from_utf8(output.stdout).unwrap());
}

#[test]
fn run_help() {
    let output = Command::cargo_bin("brisk").unwrap().args(["run", "--help"]).output().unwrap();
    insta::assert_snapshot!("run_help", String::from_utf8(output.stdout).unwrap());
}
""",
    "tests/remote.rs": """//! Against a real S3-compatible server: `docker compose up -d minio`, then
//! `cargo test --test remote -- --ignored`.

mod common;

use common::workspace;

#[test]
#[ignore = "needs MinIO on localhost:9000"]
fn a_second_workspace_restores_from_the_remote() {
    let config = r#"
[cache]
remote = "http://localhost:9000/brisk-test"

[tasks.build]
command = "echo built > out.txt"
inputs = []
outputs = ["out.txt"]
"#;
    let first = workspace(config);
    first.brisk().env("BRISK_REMOTE_TOKEN", "brisk:brisk-dev-only").args(["run", "build"]).assert().success();
    let second = workspace(config);
    second.brisk().args(["run", "build"]).assert().success();
    assert_eq!(second.read("out.txt").trim(), "built");
}
""",
    "benches/hash.rs": """use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};

fn hash_fixture(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/fixture");
    let task = toml::from_str(r#"command = "true""#).expect("a task");
    c.bench_function("task_key/fixture", |b| b.iter(|| brisk::hash::task_key(&root, "bench", &task).unwrap()));
}

criterion_group!(benches, hash_fixture);
criterion_main!(benches);
""",
    ".github/workflows/ci.yml": """name: ci
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@stable
        with:
          components: rustfmt, clippy
      - run: cargo fmt --check
      - run: cargo clippy --all-targets -- -D warnings
      - uses: EmbarkStudios/cargo-deny-action@v2
  test:
    needs: lint
    strategy:
      matrix:
        os: [ubuntu-latest, macos-latest, windows-latest]
    runs-on: ${{ matrix.os }}
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@stable
      - run: cargo test
  msrv:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@1.74
      - run: cargo check --all-targets
""",
}

# ----------------------------------------------------------------------------------------- sessions
SESSIONS: list[dict[str, Any]] = []


def session(name: str) -> None:
    SESSIONS.append({"name": name, "turns": []})


def user(text: str) -> None:
    SESSIONS[-1]["turns"].append({"user": text, "steps": []})


def call(tool: str, args: dict[str, Any], *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    """A step whose reply is one tool call; `uses`: the relevant memories the call relies on (see the docstring)."""
    SESSIONS[-1]["turns"][-1]["steps"].append(
        {"tool_calls": [{"tool": tool, "args": args}], "relevant": list(relevant), "uses": list(uses), "note": note}
    )


def answer(text: str, *relevant: str) -> None:
    """The turn's last step: a final answer."""
    SESSIONS[-1]["turns"][-1]["steps"].append({"answer": text, "relevant": list(relevant), "note": "final answer"})


def read(path: str, *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    call("read", {"filePath": "{root}/" + path}, *relevant, note=note, uses=uses)


def edit(path: str, old: str, new: str, *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    call("edit", {"filePath": "{root}/" + path, "oldString": old, "newString": new}, *relevant, note=note, uses=uses)


def bash(command: str, description: str, *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    call("bash", {"command": command, "description": description}, *relevant, note=note, uses=uses)


# Session 1: env vars in cache keys, then a new prune option. The CACHE_FORMAT bump, the MSRV of a std API and
# cargo deny come from the code being changed, not from the user's words.
session("env-keys")
user(
    'The build task lists `env = ["NODE_ENV"]`, but switching NODE_ENV from development to production still gives a '
    "cache hit and restores the dev bundle. Find out why, fix it and add a regression test."
)
bash("git status --short", "Check the working tree", note="routine: a clean tree?")
read("src/hash.rs", "brisk_env_keys", "brisk_cache_format", note="where keys are computed")
edit(
    "src/hash.rs",
    """    for var in &task.env {
        hasher.update(var.as_bytes());
    }
""",
    """    for var in &task.env {
        hasher.update(&(var.len() as u64).to_le_bytes());
        hasher.update(var.as_bytes());
        match std::env::var_os(var) {
            // unset and empty must not share a key
            None => hasher.update(&[0]),
            Some(value) => {
                hasher.update(&[1]);
                hasher.update(&(value.len() as u64).to_le_bytes());
                hasher.update(value.as_encoded_bytes())
            }
        };
    }
""",
    "brisk_env_keys",
    "brisk_cache_format",
    "brisk_msrv",
    note="hash the values; as_encoded_bytes is stable since 1.74, the MSRV",
    uses=("brisk_env_keys",),
)
read(
    "src/cache.rs",
    "brisk_cache_format",
    note="the key recipe changed: find CACHE_FORMAT",
    uses=("brisk_cache_format",),
)
edit(
    "src/cache.rs",
    "pub const CACHE_FORMAT: u32 = 3;",
    "pub const CACHE_FORMAT: u32 = 4;",
    "brisk_cache_format",
    note="bump the format so old entries are missed",
    uses=("brisk_cache_format",),
)
read("tests/cli.rs", "brisk_test_workspaces", note="the integration tests")
edit(
    "tests/cli.rs",
    """    insta::assert_snapshot!("run_help", String::from_utf8(output.stdout).unwrap());
}
""",
    """    insta::assert_snapshot!("run_help", String::from_utf8(output.stdout).unwrap());
}

#[test]
fn env_values_are_part_of_the_key() {
    let ws = workspace(
        r#"
[tasks.build]
command = "echo $NODE_ENV > out.txt"
env = ["NODE_ENV"]
inputs = []
outputs = ["out.txt"]
"#,
    );
    ws.brisk().env("NODE_ENV", "development").args(["run", "build"]).assert().success();
    ws.brisk().env("NODE_ENV", "production").args(["run", "build"]).assert().success();
    assert_eq!(ws.read("out.txt").trim(), "production");
}
""",
    "brisk_test_workspaces",
    note="regression test in a temporary workspace, as the file's tests do",
)
bash("cargo fmt", "Format the code", note="routine")
bash("cargo test", "Run the tests", note="routine: the plain test suite")
answer(
    "hash::task_key hashed the names listed in `env` but not their values, so NODE_ENV=development and "
    "NODE_ENV=production gave the same key. It now hashes each listed variable's name and value (unset and empty "
    "differ). I bumped CACHE_FORMAT to 4 so entries keyed the old way are never restored, and added "
    "env_values_are_part_of_the_key to tests/cli.rs; the tests pass.",
    "brisk_env_keys",
    "brisk_cache_format",
)
user("Run clippy the way CI does, then commit.")
bash(
    "cargo clippy --all-targets -- -D warnings",
    "Run clippy as CI does",
    "brisk_clippy",
    note="the CI command comes from the memory",
    uses=("brisk_clippy",),
)
bash("git diff --stat", "See what will be committed", note="routine")
bash(
    "git add -A && git commit -q -m 'fix(hash): include env var values in task keys' && git log --oneline -1",
    "Commit the fix",
    "brisk_conventional_commits",
    note="conventional commit with the module as scope",
    uses=("brisk_conventional_commits",),
)
answer(
    "Clippy is clean with -D warnings; committed as `fix(hash): include env var values in task keys`.",
    "brisk_conventional_commits",
)
user(
    "Add `--older-than <duration>` to `brisk cache prune` (e.g. `--older-than 7d`): it removes the entries not used "
    "for that long, before the size-based pruning."
)
read("src/cli.rs", note="the prune subcommand (its help is not snapshot-tested)")
read("Cargo.toml", "brisk_cargo_deny", "brisk_msrv", note="about to add humantime for the duration")
edit(
    "Cargo.toml",
    'globset = "0.4"\n',
    'globset = "0.4"\nhumantime = "2.1"\n',
    "brisk_cargo_deny",
    "brisk_msrv",
    note="a new dependency: licence, advisories, MSRV",
)
edit(
    "src/cli.rs",
    """        /// Size to prune down to, in bytes (default: the config's cache.max_size)
        #[arg(long)]
        max_size: Option<u64>,
""",
    """        /// Size to prune down to, in bytes (default: the config's cache.max_size)
        #[arg(long)]
        max_size: Option<u64>,
        /// First remove the entries not used for this long (e.g. 7d, 12h)
        #[arg(long)]
        older_than: Option<humantime::Duration>,
""",
    note="the flag",
)
read("src/cache.rs", "brisk_prune_lru", note="prune and its entries")
edit(
    "src/cache.rs",
    """/// Evicts the least recently used entries until the cache fits in max_size.
pub fn prune(workspace: &Workspace, max_size: Option<u64>) -> Result<()> {
    let max_size = max_size.unwrap_or(workspace.config.cache.max_size);
    let mut entries = entries(&workspace.cache_dir())?;
""",
    """/// Removes the entries not used for `older_than`, then evicts the least recently used ones until the cache
/// fits in max_size.
pub fn prune(workspace: &Workspace, max_size: Option<u64>, older_than: Option<std::time::Duration>) -> Result<()> {
    let max_size = max_size.unwrap_or(workspace.config.cache.max_size);
    let mut entries = entries(&workspace.cache_dir())?;
    if let Some(limit) = older_than {
        let now = SystemTime::now();
        let (stale, fresh): (Vec<Entry>, Vec<Entry>) =
            entries.into_iter().partition(|entry| now.duration_since(entry.last_used).unwrap_or_default() > limit);
        for entry in &stale {
            remove(entry)?;
        }
        entries = fresh;
    }
""",
    "brisk_prune_lru",
    note="age from last_used, the sidecar's mtime the file already reads",
)
read("src/main.rs", note="the dispatch")
edit(
    "src/main.rs",
    "        Command::Cache { command: CacheCommand::Prune { max_size } } => cache::prune(&workspace, max_size)?,",
    "        Command::Cache { command: CacheCommand::Prune { max_size, older_than } } => {\n"
    "            cache::prune(&workspace, max_size, older_than.map(Into::into))?\n"
    "        }",
    note="pass the flag on",
)
bash(
    "cargo deny check",
    "Check the new dependency's licence and advisories",
    "brisk_cargo_deny",
    note="the memory says to run it after adding a dependency",
    uses=("brisk_cargo_deny",),
)
read("tests/cli.rs", "brisk_test_workspaces", note="where the prune tests go")
edit(
    "tests/cli.rs",
    """    assert_eq!(ws.read("out.txt").trim(), "production");
}
""",
    """    assert_eq!(ws.read("out.txt").trim(), "production");
}

#[test]
fn prune_older_than_removes_stale_entries() {
    let ws = workspace(BUILD);
    ws.write("src/a.txt", "a");
    ws.brisk().args(["run", "build"]).assert().success();
    ws.brisk().args(["cache", "prune", "--older-than", "0s"]).assert().success();
    ws.brisk().args(["run", "build"]).assert().success().stderr(predicate::str::contains("build: cached").not());
}

#[test]
fn prune_rejects_a_bad_duration() {
    let ws = workspace(BUILD);
    ws.brisk().args(["cache", "prune", "--older-than", "7x"]).assert().code(2);
}
""",
    "brisk_test_workspaces",
    "brisk_exit_codes",
    note="a bad duration is a usage error: exit code 2",
    uses=("brisk_exit_codes",),
)
bash("cargo test", "Run the tests", note="routine")
answer(
    "`brisk cache prune --older-than 7d` now first removes every entry whose last use (the .last-used sidecar, "
    "touched on each hit) is older than that, then prunes by size as before. The duration is parsed by humantime "
    "(added to Cargo.toml; `cargo deny check` passes); a bad value such as `7x` is a usage error with exit code 2. "
    "Two tests added.",
    "brisk_prune_lru",
    "brisk_cargo_deny",
    "brisk_exit_codes",
)

# Session 2: orphaned processes after Ctrl-C, the exit code of an interrupt, then a rename that needs nothing
# (it opens src/runner.rs, the file the process-group gotcha is about, and needs none of it).
session("interrupts")
user(
    "When I press Ctrl-C during `brisk run dev`, brisk exits but the webpack dev server it started keeps running "
    "and holds port 3000. Fix that."
)
bash(
    "grep -rn 'spawn\\|fn stop' src/",
    "Find where tasks are started and stopped",
    "brisk_process_group",
    note="look for the spawn and the Ctrl-C stop",
)
read("src/runner.rs", "brisk_process_group", "brisk_shell", note="spawn goes through sh -c")
edit(
    "src/runner.rs",
    """        .stderr(Stdio::piped());
    Ok(command.spawn()?)
""",
    """        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0); // stop() signals the whole group
    Ok(command.spawn()?)
""",
    "brisk_process_group",
    "brisk_shell",
    note="own process group",
    uses=("brisk_process_group",),
)
edit(
    "src/runner.rs",
    """    // SAFETY: kill only sends a signal.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGTERM);
    }
""",
    """    // SAFETY: killpg only sends a signal; spawn made the task's pid its process group id.
    unsafe {
        libc::killpg(pid as libc::pid_t, libc::SIGTERM);
    }
""",
    "brisk_process_group",
    note="signal the group, not only sh",
    uses=("brisk_process_group",),
)
bash("cargo build", "Build", note="routine")
answer(
    "Tasks run through `sh -c`, and Ctrl-C only signalled that shell, so the dev server it started kept running. "
    "Each task now gets its own process group (process_group(0)) and Ctrl-C sends SIGTERM to the whole group with "
    "killpg, so webpack stops with brisk.",
    "brisk_process_group",
)
user(
    "Also: after Ctrl-C brisk should say it was interrupted and exit with the usual code for that, not report "
    "'task dev failed' and exit 1."
)
read("src/main.rs", "brisk_exit_codes", note="exit codes are decided here", uses=("brisk_exit_codes",))
read("src/error.rs", "brisk_errors", "brisk_error_text", note="the error enum", uses=("brisk_errors",))
edit(
    "src/error.rs",
    """    #[error("task '{task}' failed ({status})")]
    TaskFailed { task: String, status: ExitStatus },
""",
    """    #[error("task '{task}' failed ({status})")]
    TaskFailed { task: String, status: ExitStatus },
    #[error("interrupted")]
    Interrupted,
""",
    "brisk_errors",
    "brisk_error_text",
    note="a variant, lowercase message",
)
edit(
    "src/main.rs",
    "        Some(Error::TaskFailed { .. }) => 1,\n",
    "        Some(Error::TaskFailed { .. }) => 1,\n        Some(Error::Interrupted) => 130,\n",
    "brisk_exit_codes",
    note="130 after Ctrl-C",
    uses=("brisk_exit_codes",),
)
read("src/runner.rs", "brisk_process_group", note="the Ctrl-C handler")
edit(
    "src/runner.rs",
    """    ctrlc::set_handler(move || {
        for pid in on_interrupt.lock().expect("the pid list lock is never poisoned").iter() {
            stop(*pid);
        }
    })
    .map_err(std::io::Error::other)?;
    let width = plan.waves.iter().flatten().map(String::len).max().unwrap_or(0);
    for wave in &plan.waves {
        for batch in wave.chunks(jobs) {
            thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|name| scope.spawn(|| run_task(workspace, name, width, remote.as_ref(), &running)))
                    .collect();
                handles.into_iter().try_for_each(|handle| handle.join().expect("task threads do not panic"))
            })?;
        }
    }
""",
    """    static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    ctrlc::set_handler(move || {
        INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
        for pid in on_interrupt.lock().expect("the pid list lock is never poisoned").iter() {
            stop(*pid);
        }
    })
    .map_err(std::io::Error::other)?;
    let width = plan.waves.iter().flatten().map(String::len).max().unwrap_or(0);
    for wave in &plan.waves {
        for batch in wave.chunks(jobs) {
            let result = thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|name| scope.spawn(|| run_task(workspace, name, width, remote.as_ref(), &running)))
                    .collect();
                handles.into_iter().try_for_each(|handle| handle.join().expect("task threads do not panic"))
            });
            // the tasks we stopped fail too: report the interrupt, not their failure
            if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(Error::Interrupted);
            }
            result?;
        }
    }
""",
    "brisk_process_group",
    "brisk_errors",
    note="remember the interrupt and return it",
)
bash("cargo test", "Run the tests", note="routine")
answer(
    "On Ctrl-C brisk now stops the running tasks' process groups as before, then prints `brisk: interrupted` on "
    "stderr and exits with 130 (128 + SIGINT, the code shells and CI expect), instead of reporting the stopped "
    "task as failed with 1.",
    "brisk_exit_codes",
)
user("Rename `output::cached` to `output::cache_hit`: `cached` reads like a boolean.")
bash("grep -rn 'cached(' src/ tests/", "Find the callers", note="routine")
read("src/output.rs", note="the function")
edit(
    "src/output.rs",
    "pub fn cached(name: &str) {",
    "pub fn cache_hit(name: &str) {",
    note="rename",
)
read("src/runner.rs", note="the only caller; the process-group code here is not touched")
edit("src/runner.rs", "        output::cached(name);", "        output::cache_hit(name);", note="rename the call")
bash("cargo build", "Build", note="routine")
bash("cargo test", "Run the tests", note="routine")
answer("Renamed to `output::cache_hit`; its one caller in src/runner.rs is updated, and it builds and the tests pass.")

# Session 3: the remote cache hangs CI. The MinIO step comes from memory, not from the user's words.
session("remote-timeouts")
user(
    "CI sat for 20 minutes in `brisk run build` yesterday while the remote cache server was down, and it blocked "
    "a deploy. Make brisk give up on the remote cache quickly in that case."
)
call(
    "memory_search",
    {"query": "remote cache timeout"},
    "brisk_remote_timeouts",
    "brisk_ureq",
    note="ask the memory first",
)
read(
    "src/remote.rs",
    "brisk_remote_timeouts",
    "brisk_ureq",
    note="the client the memory names",
    uses=("brisk_remote_timeouts",),
)
edit(
    "src/remote.rs",
    "        let agent = ureq::AgentBuilder::new().timeout_connect(Duration::from_secs(2)).build();",
    """        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(2))
            .timeout_read(Duration::from_secs(30))
            .timeout_write(Duration::from_secs(30))
            .build();""",
    "brisk_remote_timeouts",
    "brisk_ureq",
    note="restore the read and write timeouts",
    uses=("brisk_remote_timeouts",),
)
bash("cargo build", "Build", note="routine")
bash(
    "docker compose up -d minio",
    "Start MinIO for the remote cache tests",
    "brisk_remote_tests",
    note="the ignored tests need it",
    uses=("brisk_remote_tests",),
)
bash(
    "cargo test --test remote -- --ignored",
    "Run the remote cache tests",
    "brisk_remote_tests",
    note="the command from the memory",
    uses=("brisk_remote_tests",),
)
bash("docker compose stop minio", "Stop MinIO", note="routine cleanup")
answer(
    "The ureq agent only had a connect timeout, so a server that accepted the connection and then stalled held "
    "the run forever. RemoteCache::new now also sets 30 s read and write timeouts; a timeout is logged as a "
    "warning and the task runs without the remote cache. The remote tests pass against MinIO.",
    "brisk_remote_timeouts",
)
user("Commit that.")
bash("git status --short", "See what changed", note="routine")
bash(
    "git add src/remote.rs && git commit -q -m 'fix(remote): time out reads and writes after 30 s' && git log --oneline -1",
    "Commit the timeout fix",
    "brisk_conventional_commits",
    note="conventional commit",
    uses=("brisk_conventional_commits",),
)
answer("Committed as `fix(remote): time out reads and writes after 30 s`.", "brisk_conventional_commits")

# Session 4: dotfiles as inputs (the walker's default), a changelog request the memory redirects, and the --jobs
# help text (the newer of two memories on the default; the help snapshot changes).
session("dotfiles-and-help")
user(
    "`brisk watch lint` does not re-run when I edit .eslintrc.json, and `brisk run lint` stays cached after I change it. Why?"
)
bash("ls src", "List the modules", note="routine")
read("src/inputs.rs", "brisk_dotfile_inputs", "brisk_input_walk", note="how inputs are listed")
edit(
    "src/inputs.rs",
    "    for entry in WalkBuilder::new(&dir).build() {\n",
    """    let walker = WalkBuilder::new(&dir)
        .hidden(false) // dotfiles (.eslintrc.json, .env.example) are inputs too
        .filter_entry(|entry| !matches!(entry.file_name().to_str(), Some(".git" | ".brisk")))
        .build();
    for entry in walker {
""",
    "brisk_dotfile_inputs",
    "brisk_input_walk",
    note="hidden(false), skipping .git and .brisk",
    uses=("brisk_dotfile_inputs",),
)
read("src/watch.rs", "brisk_watch_events", note="does watch use the same list?")
bash("cargo test", "Run the tests", note="routine")
bash("git diff", "Review the change", note="routine")
answer(
    "The ignore crate's walker skips hidden files by default, so .eslintrc.json was never one of lint's inputs: "
    "it was not in the key, and watch (which only reacts to paths inputs::collect returns) ignored it too. "
    "inputs::collect now walks with .hidden(false) and skips .git and .brisk, which fixes both.",
    "brisk_dotfile_inputs",
    "brisk_watch_events",
)
user("Add an entry for this fix to the changelog and commit.")
read("CHANGELOG.md", "brisk_changelog", "brisk_conventional_commits", note="the changelog is generated")
bash("git status --short", "See what changed", note="routine")
bash(
    "git add src/inputs.rs && git commit -q -m 'fix(inputs): treat dotfiles as inputs, skip .git and .brisk' && git log --oneline -1",
    "Commit with a fix: message instead of editing the changelog",
    "brisk_changelog",
    "brisk_conventional_commits",
    note="the changelog entry comes from the commit message",
    uses=("brisk_changelog", "brisk_conventional_commits"),
)
answer(
    "I did not edit CHANGELOG.md: release-plz generates it from the commit messages, and a hand edit would "
    "conflict with its release PR. The fix is committed as `fix(inputs): treat dotfiles as inputs, skip .git and "
    ".brisk`, which becomes its changelog entry under Fixed in the next release.",
    "brisk_changelog",
    "brisk_conventional_commits",
)
user("`brisk run --help` does not say what --jobs defaults to. Add it to the help text.")
read("src/cli.rs", "brisk_help_snapshots", "brisk_jobs_default_new", note="the run subcommand")
bash(
    "grep -rn available_parallelism src/",
    "Find how the default is computed",
    "brisk_jobs_default_new",
    note="the function the memory names",
    uses=("brisk_jobs_default_new",),
)
edit(
    "src/cli.rs",
    "        /// How many tasks run at once\n",
    "        /// How many tasks run at once [default: logical CPUs minus one, at most 8]\n",
    "brisk_jobs_default_new",
    "brisk_help_snapshots",
    note="the current default, not the old one-per-CPU",
    uses=("brisk_jobs_default_new",),
)
bash(
    "cargo insta test",
    "Run the tests and collect snapshot changes",
    "brisk_insta",
    "brisk_help_snapshots",
    note="run_help's snapshot changes",
    uses=("brisk_insta",),
)
bash(
    "cargo insta accept",
    "Accept the new run --help snapshot",
    "brisk_insta",
    note="accept the intended change",
    uses=("brisk_insta",),
)
bash("git diff tests/snapshots/", "Look at the snapshot change", note="routine")
answer(
    "`brisk run --help` now says `How many tasks run at once [default: logical CPUs minus one, at most 8]`, "
    "matching runner::default_jobs; I accepted the changed tests/snapshots/cli__run_help.snap with cargo insta.",
    "brisk_jobs_default_new",
    "brisk_help_snapshots",
)


# Session 5: small requests that need no memory at all (every step's `relevant` is empty: a HUD or cold-start
# block here is noise). Several open a file or share a word with memories that do not matter to them.
session("chores")
user("What version of brisk does Cargo.toml say?")
read("Cargo.toml", note="look it up")
answer("0.11.2.")
user("Fix the typo 'recieve' in src/output.rs.")
read("src/output.rs", note="the comment")
edit(
    "src/output.rs",
    "/// padded to `width`. Lines recieve the prefix",
    "/// padded to `width`. Lines receive the prefix",
    note="the typo",
)
answer("Fixed: 'receive' in the doc comment of output::forward.")
user("How many tests are in tests/cli.rs?")
bash("grep -c '#\\[test\\]' tests/cli.rs", "Count the tests", note="count")
answer("8.")
user("Add #[must_use] to hash::normalize_path.")
read("src/hash.rs", note="the function (the path gotcha is not at stake)")
edit(
    "src/hash.rs",
    "/// Forward-slash path relative to the workspace root, the same on every OS.\npub fn normalize_path",
    "/// Forward-slash path relative to the workspace root, the same on every OS.\n#[must_use]\npub fn normalize_path",
    note="the attribute",
)
answer("Done.")
user("In cache::store, rename the local `tmp` to `partial`, as store_archive calls it.")
read("src/cache.rs", note="the function (where its temp file lives does not change)")
edit(
    "src/cache.rs",
    """    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(Error::Cache)?;
    let encoder = zstd::Encoder::new(tmp.as_file(), ZSTD_LEVEL).map_err(Error::Cache)?.auto_finish();
""",
    """    let partial = tempfile::NamedTempFile::new_in(dir).map_err(Error::Cache)?;
    let encoder = zstd::Encoder::new(partial.as_file(), ZSTD_LEVEL).map_err(Error::Cache)?.auto_finish();
""",
    note="rename the binding and its first use",
)
edit(
    "src/cache.rs",
    "    tmp.persist(&path).map_err(|err| Error::Cache(err.error))?;",
    "    partial.persist(&path).map_err(|err| Error::Cache(err.error))?;",
    note="and its last use",
)
answer("Renamed: store now calls its temp file `partial`, like store_archive.")
user("Show me the last three commits.")
bash("git log --oneline -3", "Show recent commits", note="read the log")
answer(
    "The last three commits are `fix(inputs): treat dotfiles as inputs, skip .git and .brisk`, "
    "`fix(remote): time out reads and writes after 30 s` and `fix(hash): include env var values in task keys`."
)
user("Does TaskConfig derive Clone? If not, add it.")
read("src/config.rs", note="the struct")
edit(
    "src/config.rs",
    "#[derive(Debug, Deserialize)]\n#[serde(deny_unknown_fields)]\npub struct TaskConfig {",
    "#[derive(Debug, Clone, Deserialize)]\n#[serde(deny_unknown_fields)]\npub struct TaskConfig {",
    note="add the derive",
)
answer("It did not; TaskConfig now derives Clone.")
user("How big is the release binary?")
bash(
    "cargo build --release -q && ls -lh target/release/brisk",
    "Build in release mode and check the size",
    note="measure",
)
answer("target/release/brisk is 4.3 MB (stripped, thin LTO).")


# ------------------------------------------------------------------------------------------- output
def memories() -> list[dict[str, Any]]:
    out = []
    span = (LAST - FIRST) / (len(MEMS) - 1)
    for i, (key, category, importance, tags, text) in enumerate(MEMS):
        assert category in CATEGORIES, key
        digest = int(hashlib.sha1(key.encode()).hexdigest(), 16)
        at = FIRST + span * i + timedelta(minutes=digest % 600)
        by = AGENTS[digest % len(AGENTS)]
        out.append(
            {
                "id": mem_id(key),
                "text": text,
                "category": category,
                "importance": importance,
                "tags": [PROJECT, *tags.split(",")],
                "entered_by": by,
                "source": f"session:ses_{hashlib.sha1(('s' + key).encode()).hexdigest()[:6]} turn:{digest % 90 + 1}",
                "created_at": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            }
        )
    return out


def steps() -> dict[str, Any]:
    keys = {key for key, *_ in MEMS}
    files = dict(FILES)
    sessions = []
    for s in SESSIONS:
        turns = []
        for t in s["turns"]:
            read_here: set[str] = set()  # each turn is a new process (`opencode run`, `claude -p --resume`)
            assert t["steps"] and "answer" in t["steps"][-1], f"{s['name']}: a turn ends with an answer"
            assert all("tool_calls" in st for st in t["steps"][:-1]), f"{s['name']}: only the last step answers"
            out_steps = []
            for st in t["steps"]:
                assert set(st["relevant"]) <= keys, set(st["relevant"]) - keys
                for tc in st.get("tool_calls", []):
                    path = str(tc["args"].get("filePath", "")).removeprefix("{root}/")
                    if tc["tool"] == "read":
                        assert path in files, path
                        read_here.add(path)
                    elif tc["tool"] == "edit":
                        assert path in read_here, f"{path} edited before it was read in this turn of {s['name']}"
                        old, new = tc["args"]["oldString"], tc["args"]["newString"]
                        assert files[path].count(old) == 1, f"{path}: oldString found {files[path].count(old)} times"
                        files[path] = files[path].replace(old, new)
                if "tool_calls" in st:
                    assert set(st["uses"]) <= set(st["relevant"]), f"{s['name']}: uses beyond relevant: {st['uses']}"
                    st = {**st, "uses": [mem_id(k) for k in st["uses"]]}
                out_steps.append({**st, "relevant": [mem_id(k) for k in st["relevant"]]})
            turns.append({"user": t["user"], "steps": out_steps})
        sessions.append({"name": s["name"], "turns": turns})
    n_steps = sum(len(t["steps"]) for s in sessions for t in s["turns"])
    assert len(sessions) >= 3 and n_steps >= 20, (len(sessions), n_steps)
    return {
        "project": PROJECT,
        "about": "Scripted agent sessions for benchmarks/bench_agent_view.py; generated by build.py (edit that).",
        "sessions": sessions,
    }


def original_ids() -> set[str]:
    """The ids of benchmarks/data/agent_view/: this scenario shares no key (so no id) with it."""
    original = HERE.parent / "agent_view" / "memories.jsonl"
    return {json.loads(line)["id"] for line in original.read_text(encoding="utf-8").splitlines() if line.strip()}


def render() -> dict[str, str]:
    mems = memories()
    assert len(mems) >= 40 and len({m["id"] for m in mems}) == len(mems)
    shared = {m["id"] for m in mems} & original_ids()
    assert not shared, f"ids shared with agent_view: {shared}"
    return {
        "memories.jsonl": "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in mems),
        "project.json": json.dumps(FILES, indent=1, ensure_ascii=False) + "\n",
        "steps.json": json.dumps(steps(), indent=1, ensure_ascii=False) + "\n",
    }


def main() -> None:
    rendered = render()
    if "--check" in sys.argv:
        stale = [name for name, text in rendered.items() if (HERE / name).read_text(encoding="utf-8") != text]
        sys.exit(f"out of date (run build.py): {', '.join(stale)}" if stale else 0)
    for name, text in rendered.items():
        (HERE / name).write_text(text, encoding="utf-8")
    data = json.loads(rendered["steps.json"])
    n_turns = sum(len(s["turns"]) for s in data["sessions"])
    n_steps = sum(len(t["steps"]) for s in data["sessions"] for t in s["turns"])
    all_steps = [st for s in data["sessions"] for t in s["turns"] for st in t["steps"]]
    used = {i for st in all_steps for i in st["relevant"]}
    tool_steps = [st for st in all_steps if "tool_calls" in st]
    empty = sum(1 for st in all_steps if not st["relevant"])
    empty_tool = sum(1 for st in tool_steps if not st["relevant"])
    n_relevant = sum(len(st["relevant"]) for st in all_steps)
    n_uses = sum(len(st["uses"]) for st in tool_steps)
    with_uses = sum(1 for st in tool_steps if st["uses"])
    print(
        f"{len(MEMS)} memories ({len(used)} relevant to some step), {len(data['sessions'])} sessions, {n_turns} turns, {n_steps} steps"
    )
    print(
        f"{len(tool_steps)} tool-call steps ({empty_tool} need no memory), {n_steps - len(tool_steps)} final answers; "
        f"{empty} of {n_steps} steps need no memory; {n_relevant} relevant labels, {n_uses} uses labels on {with_uses} steps"
    )


if __name__ == "__main__":
    main()
