"""Patterns compiled on first use behave as the compiled pattern, and a module's import compiles none of them."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys

from codememory.core.lazy_pattern import lazy_pattern


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    lazy = lazy_pattern(r"(?P<word>b\w+)", re.IGNORECASE)
    compiled = re.compile(r"(?P<word>b\w+)", re.IGNORECASE)
    text = "Billing and BATCH jobs, backups"
    assert lazy.pattern == compiled.pattern and lazy.flags == re.IGNORECASE  # both readable before compiling
    assert "_pattern" not in vars(lazy)
    assert lazy.findall(text) == compiled.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.sub("x", text) == compiled.sub("x", text) and lazy.split(text) == compiled.split(text)
    assert lazy.groupindex == compiled.groupindex and lazy.groups == 1
    assert (m := lazy.search(text, 5)) is not None and m.group("word") == "BATCH"
    assert lazy.fullmatch("bob") is not None and lazy.match("a b") is None
    assert vars(lazy)["_pattern"] == compiled  # compiled once, kept
    assert copy.deepcopy({"p": lazy})["p"].findall(text) == compiled.findall(text)


def test_importing_the_text_and_extraction_modules_compiles_no_pattern() -> None:
    """Every module of the layers that hold patterns: a new module-level `re.compile` fails here."""
    probe = (
        "import json, re, sys\n"
        "compiled = []\n"
        "real = re._compile\n"
        "def spy(pattern, flags):\n"
        "    frame = sys._getframe(1)\n"  # re.compile, re.sub…, or the caller itself
        "    if frame.f_code.co_filename == re.__file__:\n"
        "        frame = frame.f_back\n"
        "    code = frame.f_code\n"
        "    if 'codememory' in code.co_filename and code.co_name in ('<module>', '<listcomp>', '<genexpr>'):\n"
        "        compiled.append(f'{code.co_filename}:{frame.f_lineno}')\n"
        "    return real(pattern, flags)\n"
        "re._compile = spy\n"
        "import importlib, pkgutil, codememory\n"
        "for package in ('core', 'text', 'store', 'retrieval', 'capture', 'extract', 'service', 'sessions'):\n"
        "    folder = importlib.import_module('codememory.' + package)\n"
        "    for module in pkgutil.walk_packages(folder.__path__, folder.__name__ + '.'):\n"
        "        importlib.import_module(module.name)\n"
        "print(json.dumps(compiled))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
