"""The vocabulary of task files: kinds, splits, checker types, expected verdicts,
the suite file's name, and language names as tasks give them (aliases resolved
through `codegym.core.languages`)."""

from __future__ import annotations

import functools
from typing import Literal, get_args

from codegym.core.languages import LanguageSpec, UnknownLanguageError, get_language, list_languages

# (each vocabulary a schema field takes is a Literal type, and its tuple of names read from it)
Kind = Literal["stdio", "function", "script", "repo"]
KINDS: tuple[str, ...] = get_args(Kind)
SPLITS = ("public", "hidden", "perf")
CheckerType = Literal["exact", "lines", "tokens", "float", "lines_unordered", "sets", "program", "decimal_lines",
                      "evalplus"]
CHECKER_TYPES: tuple[str, ...] = get_args(CheckerType)
#: verdicts a solution may be expected to get (`Solution.expect`); the judge's own
#: verdicts (`codegym.judge.report.VERDICTS`) add no_code and sandbox_error
ExpectedVerdict = Literal["accepted", "wrong_answer", "runtime_error", "timeout", "memory_limit",
                          "output_limit", "compile_error"]
EXPECTED_VERDICTS: tuple[str, ...] = get_args(ExpectedVerdict)
SUITE_FILE = "suite.yaml"
#: key of suite.yaml that describes the suite itself and is not merged into tasks
SUITE_META_KEY = "suite"


@functools.cache
def _lookup(name: str) -> LanguageSpec | None:
    try:
        return get_language(name)
    except UnknownLanguageError:
        return None


def canonical_language(name: str) -> str | None:
    """The table's name for `name` (an alias such as ``py`` gives ``python``), None if unknown."""
    spec = _lookup(name) if isinstance(name, str) else None
    return spec.name if spec else None


def language_main_file(name: str) -> str | None:
    """The main file of a language (``main.py``, ``main.c`` ...), None if unknown."""
    spec = _lookup(name) if isinstance(name, str) else None
    return spec.main_file if spec else None


def known_languages() -> list[str]:
    """Canonical names of every runnable language."""
    return [spec.name for spec in list_languages()]
