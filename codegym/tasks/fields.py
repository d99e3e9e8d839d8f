"""The vocabulary of task files: kinds, splits, checker types, expected verdicts,
the suite file's name, and language names as tasks give them (aliases resolved
through `codegym.core.languages`)."""

from __future__ import annotations

import functools

from codegym.core.languages import LanguageSpec, UnknownLanguageError, get_language, list_languages

KINDS = ("stdio", "function", "script", "repo")
SPLITS = ("public", "hidden", "perf")
CHECKER_TYPES = ("exact", "lines", "tokens", "float", "lines_unordered", "sets", "program", "decimal_lines",
                 "evalplus")
#: verdicts a solution may be expected to get (`Solution.expect`); the judge's own
#: verdicts (`codegym.judge.report.VERDICTS`) add no_code and sandbox_error
EXPECTED_VERDICTS = ("accepted", "wrong_answer", "runtime_error", "timeout", "memory_limit",
                     "output_limit", "compile_error")
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
