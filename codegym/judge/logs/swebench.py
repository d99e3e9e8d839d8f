"""The official SWE-bench log parsers (the ``swebench`` package), where a task names one.

SWE-bench reads each repository's test log with its own parser (`REPO_PARSERS`: Django's
runner, SymPy's, pytest variants); an imported instance of those repositories names it
(``metadata.extra.swe.log_parser``) and `official_statuses` runs it, mapping SWE-bench's
statuses to the judge's (XFAIL counts as a pass, as in SWE-bench's grading). The package
is the ``[swebench]`` extra, imported on first use only.

`harness_key` is the id SWE-bench's parser records for a test: ``parse_log_pytest`` keeps
a pytest id up to its first space, so published FAIL_TO_PASS / PASS_TO_PASS lists hold ids
like ``tests/test_x.py::test_y[required-Missing``; `codegym.judge.logs.pytest.TestResults`
matches a listed id against the tests whose key it is. `harness_statuses` is the whole map
the harness reads from a text log, for the ids its parser takes from lines that report no
test (``PASSED [100%]`` of a nested run's live log gives the id ``[100%]``) -- docs/swe.md,
"Test ids as SWE-bench writes them".
"""

from __future__ import annotations

import functools
from collections.abc import Callable

#: SWE-bench's parser of each repository it knows (swebench.harness.log_parsers.python);
#: any other repository's pytest log is read by SWE-bench with ``parse_log_pytest``
REPO_PARSERS = {
    "astropy/astropy": "parse_log_astropy", "django/django": "parse_log_django",
    "marshmallow-code/marshmallow": "parse_log_marshmallow", "matplotlib/matplotlib": "parse_log_matplotlib",
    "mwaskom/seaborn": "parse_log_seaborn", "pallets/flask": "parse_log_flask",
    "psf/requests": "parse_log_requests", "pvlib/pvlib-python": "parse_log_pvlib",
    "pydata/xarray": "parse_log_xarray", "pydicom/pydicom": "parse_log_pydicom",
    "pylint-dev/astroid": "parse_log_astroid", "pylint-dev/pylint": "parse_log_pylint",
    "pytest-dev/pytest": "parse_log_pytest", "pyvista/pyvista": "parse_log_pyvista",
    "scikit-learn/scikit-learn": "parse_log_scikit", "sqlfluff/sqlfluff": "parse_log_sqlfluff",
    "sphinx-doc/sphinx": "parse_log_sphinx", "sympy/sympy": "parse_log_sympy",
}
_STATUS = {"PASSED": "passed", "XFAIL": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped"}


class OfficialParserMissing(RuntimeError):
    """The named parser needs the ``swebench`` package, which is not installed."""


def parser_for_repo(repo: str) -> str | None:
    """The official parser of a repository SWE-bench runs with a runner of its own
    (Django, SymPy, ...); None where the judge's own readers apply (junit XML, pytest text)."""
    name = REPO_PARSERS.get(repo)
    return name if name not in (None, "parse_log_pytest") else None


@functools.cache
def _parser(name: str) -> Callable:
    # swebench 5.x names its parsers in PARSER_REGISTRY; 4.x (the pinned range: it has the
    # per-version environment specs, codegym.importers.swespecs) has them as module functions
    try:
        from swebench.harness import log_parsers  # noqa: PLC0415 -- the [swebench] extra
    except ImportError as e:
        raise OfficialParserMissing(f"the task's log parser {name} is SWE-bench's: pip install "
                                    f"'codegym[swebench]' ({e})") from None
    registry = getattr(log_parsers, "PARSER_REGISTRY", None)
    if registry is None:
        import swebench.harness.log_parsers.python as python_parsers  # noqa: PLC0415 -- 4.x
        registry = {k: v for k, v in vars(python_parsers).items() if k.startswith("parse_log_") and callable(v)}
    if name not in registry:
        raise OfficialParserMissing(f"swebench has no log parser {name!r}")
    return registry[name]


def official_parser(name: str) -> Callable:
    """SWE-bench's log parser `name` itself (``parse_log_pytest`` ...): ``parser(log, None)``
    -> {test id: SWE-bench's status}. `OfficialParserMissing` without the package."""
    return _parser(name)


def official_statuses(name: str, log: str) -> dict[str, str]:
    """{test id: passed | failed | error | skipped} read by SWE-bench's parser `name`."""
    raw = _parser(name)(log, None)
    return {tid: _STATUS.get(str(getattr(st, "value", st)), "failed") for tid, st in raw.items()}


#: SWE-bench's parsers of runners whose ids are not pytest's
_NOT_PYTEST = frozenset({"parse_log_django", "parse_log_sympy"})


def harness_key(test_id: str, parser: str | None = None) -> str | None:
    """The id under which SWE-bench's parser `parser` (default ``parse_log_pytest``, what
    SWE-bench reads any other pytest log with) records the test `test_id`: the parser
    itself run on the ``PASSED <id>`` line of pytest's ``-rA`` summary (so the trimmed
    paths of ``parse_log_pytest_options`` and matplotlib's renamed buttons are as the
    harness has them); ``parse_log_pytest``'s own rule -- the id up to its first
    whitespace -- without the ``swebench`` package. None for the runners that are not
    pytest (Django's, SymPy's)."""
    name = parser or "parse_log_pytest"
    if name in _NOT_PYTEST:
        return None
    try:
        fn = _parser(name)
    except OfficialParserMissing:
        words = test_id.split()
        return words[0] if words else None
    keys = list(fn("PASSED " + " ".join(test_id.split()), None))
    return keys[0] if len(keys) == 1 else None


#: the line heads ``parse_log_pytest`` reads (SWE-bench's ``TestStatus`` values)
_HEADS = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")


def _parse_log_pytest(log: str) -> dict[str, str]:
    """``parse_log_pytest``'s rule, for when the ``swebench`` package is absent: every line that
    begins with a status word gives {its second word: that word} (a FAILED line's `` - `` taken
    out first); the last line of an id wins."""
    out: dict[str, str] = {}
    for line in log.split("\n"):
        if line.startswith(_HEADS):
            if line.startswith("FAILED"):
                line = line.replace(" - ", " ")
            words = line.split()
            if len(words) > 1:
                out[words[1]] = words[0]
    return out


def harness_statuses(log: str, parser: str | None = None) -> dict[str, str]:
    """{id: passed | failed | error | skipped}: what SWE-bench's harness reads from the text
    log `log` with the task's parser `parser` (default ``parse_log_pytest``) -- every line
    that begins with a status word, whatever printed it. None of Django's or SymPy's runners
    (their parser is the task's report already). Without the ``swebench`` package:
    ``parse_log_pytest``'s rule."""
    name = parser or "parse_log_pytest"
    if name in _NOT_PYTEST:
        return {}
    try:
        return official_statuses(name, log)
    except OfficialParserMissing:
        return {tid: _STATUS.get(st, "failed") for tid, st in _parse_log_pytest(log).items()}
