"""The Commands page's table (docs/commands.md) and `codememory --help` say the same thing: every command and
subcommand the help lists has a row, every row names a real command, and every option a row mentions is one its
command takes."""

from __future__ import annotations

import re
from pathlib import Path

from support.cli import Invoke, ok

COMMANDS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
_OPTION = re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*)")
_PLACEHOLDER = re.compile(r"^[A-Z\[]")  # TEXT, [TEXT], ID…, QUERY, FROM, …


def table_rows() -> list[tuple[str, str]]:
    """(command cell, description cell) of each row of the Commands page's table."""
    text = COMMANDS_PAGE.read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 2 and cells[0] not in ("command", "---"):
            rows.append((cells[0], cells[1]))
    assert rows, "no table in docs/commands.md"
    return rows


def code_spans(cell: str) -> list[str]:
    return [span.replace("\\|", "|") for span in re.findall(r"`([^`]+)`", cell)]


def row_commands(cell: str) -> list[tuple[str, ...]]:
    """The command paths a row's first cell names: `store [TEXT]` -> [("store",)], `sessions list` ->
    [("sessions", "list")], `daemon run|start` -> [("daemon", "run"), ("daemon", "start")], `export FILE` /
    `import FILE` -> [("export",), ("import",)]; a global option (`--agent-context`) -> [()]."""
    paths: list[tuple[str, ...]] = []
    for span in code_spans(cell):
        words = span.split()
        if words[0].startswith("-"):
            paths.append(())
            continue
        subcommands = [w for w in words[1:2] if not w.startswith("-") and not _PLACEHOLDER.match(w)]
        if subcommands:
            paths += [(words[0], sub) for sub in subcommands[0].split("|")]
        else:
            paths.append((words[0],))
    return paths


def row_options(cell: str) -> set[str]:
    """The options written in a cell's code spans (`--limit`/`--offset`, `-q PHRASE`, `--sort created|…`)."""
    return {m.group(1) for span in code_spans(cell) for m in _OPTION.finditer(span)}


def help_text(invoke: Invoke, path: tuple[str, ...]) -> str:
    return ok(invoke(*path, "--help")).stdout


def section(help_: str, title: str) -> list[str]:
    """The lines of a help section ("Options:", "Commands:")."""
    lines = help_.split(f"\n{title}\n", 1)[1].split("\n\n", 1)[0].splitlines() if f"\n{title}\n" in help_ else []
    return [line for line in lines if line.strip()]


def listed_commands(help_: str) -> list[str]:
    return [line.split()[0] for line in section(help_, "Commands:") if line.startswith("  ") and line[2] != " "]


def listed_options(help_: str) -> set[str]:
    """`-q, --quiet`, `--fuzzy / --no-fuzzy`, `--tags TEXT`: every option name in the Options section."""
    names: set[str] = set()
    for line in section(help_, "Options:"):
        declaration = line.strip().split("  ", 1)[0]
        if declaration.startswith("-"):
            names.update(m.group(1) for m in _OPTION.finditer(declaration))
    return names


def help_commands(invoke: Invoke) -> set[tuple[str, ...]]:
    """Every command `codememory --help` lists, a group as its subcommands."""
    found: set[tuple[str, ...]] = set()
    for name in listed_commands(help_text(invoke, ())):
        subcommands = listed_commands(help_text(invoke, (name,)))
        found.update({(name, sub) for sub in subcommands} if subcommands else {(name,)})
    return found


def test_every_command_in_help_has_a_row_and_every_row_is_a_command(invoke: Invoke) -> None:
    documented = {path for cell, _ in table_rows() for path in row_commands(cell) if path}
    real = help_commands(invoke)
    assert real - documented == set(), "commands missing from the table in docs/commands.md"
    assert documented - real == set(), "rows of the table in docs/commands.md that are not commands"


def test_the_options_a_row_mentions_exist(invoke: Invoke) -> None:
    unknown = []
    for cell, description in table_rows():
        paths = row_commands(cell)
        offered = set().union(*(listed_options(help_text(invoke, path)) for path in paths))
        unknown += [f"{cell}: {option}" for option in sorted((row_options(cell) | row_options(description)) - offered)]
    assert unknown == [], "options in docs/commands.md's table that the command's --help does not list"


def test_the_table_parser_reads_what_it_checks() -> None:
    """The checks above must not pass by reading nothing."""
    assert row_commands("`export FILE` / `import FILE`") == [("export",), ("import",)]
    assert row_commands("`daemon run\\|start`") == [("daemon", "run"), ("daemon", "start")]
    assert row_commands("`link FROM TO --type T`") == [("link",)]
    assert row_commands("`--agent-context`") == [()]
    assert row_options("`-q PHRASE` (repeatable), `--sort created\\|updated`, `-` is stdout") == {"-q", "--sort"}
    assert ("sessions", "list") in {path for cell, _ in table_rows() for path in row_commands(cell)}
    help_ = "Usage: x\n\nOptions:\n  -q, --quiet        Only the id.\n  --fuzzy / --no-fuzzy  Typos.\n"
    assert listed_options(help_) == {"-q", "--quiet", "--fuzzy", "--no-fuzzy"}


def test_every_option_a_command_takes_is_in_its_row(invoke: Invoke) -> None:
    """The other direction: an option added to a command reaches the table (a user trial found `init --assistants`
    without gemini and copilot and `search` without `--all`, `--mode`, `--entity`, `--include-superseded`). A flag's
    `--no-` form, `-h`/`--help` and `--json` (the page says once that every command printing results takes it) need
    no mention; one of an option's names is enough."""
    mentioned: dict[tuple[str, ...], set[str]] = {}
    for cell, description in table_rows():
        for path in row_commands(cell):  # a path in two rows (the global options) is documented by both
            mentioned.setdefault(path, set()).update(row_options(cell) | row_options(description))
    missing = []
    for path, documented in mentioned.items():
        for line in section(help_text(invoke, path), "Options:"):
            declaration = line.strip().split("  ", 1)[0]
            names = {m.group(1) for m in _OPTION.finditer(declaration)} if declaration.startswith("-") else set()
            names -= {"-h", "--help", "--json"}
            names = {n for n in names if not n.startswith("--no-") or n.replace("--no-", "--") not in names}
            if names and not names & documented:
                missing.append(f"{' '.join(path)}: {' / '.join(sorted(names))}")
    assert missing == [], "options missing from docs/commands.md's table:\n" + "\n".join(missing)
