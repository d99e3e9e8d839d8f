"""What every checker shares: the `CheckResult` record, rule versions, and text clipping.

Every checker has a ``name`` and a ``version`` (`CHECKER_VERSION[name]`); the judge puts
``checker.tag`` (``"tokens@1"``) in its reports, so a change of rules is visible in
recorded results. Bump the version when a rule changes.
"""

from __future__ import annotations

from typing import Any, NamedTuple

#: version of each checker's rules; reports carry ``name@version``
CHECKER_VERSION: dict[str, int] = {
    "exact": 1,
    "lines": 1,
    "tokens": 1,
    "float": 1,
    "lines_unordered": 1,
    "sets": 1,
    "program": 1,
    "values": 1,
    "decimal_lines": 1,
    "evalplus": 1,
}

#: how long a `diff` may get (characters)
DIFF_MAX = 400


class CheckResult(NamedTuple):
    """Outcome of one comparison.

    ok       the output is accepted
    score    in [0, 1]: 1.0 when ok, partial credit from program checkers, else 0.0
    message  human-readable verdict detail ("" when ok)
    diff     short description of the first difference (truncated)
    failed   the checker itself failed (a program checker crashed / exit 3): the
             judge reports sandbox_error, not wrong_answer
    """

    ok: bool
    score: float
    message: str = ""
    diff: str = ""
    failed: bool = False


OK = CheckResult(True, 1.0)


class Tagged:
    """A checker's identity: ``name``, its rules' ``version`` and ``tag`` (``name@version``)."""

    name = "base"

    @property
    def version(self) -> int:
        return CHECKER_VERSION[self.name]

    @property
    def tag(self) -> str:
        return f"{self.name}@{self.version}"


def clip(s: str, n: int = DIFF_MAX) -> str:
    """`s` cut to `n` characters (with "..." when cut)."""
    return s if len(s) <= n else s[: n - 3] + "..."


def show(s: str, n: int = 60) -> str:
    """repr of a (possibly long) snippet, clipped."""
    if len(s) > n:
        s = s[: n - 3] + "..."
    return repr(s)


def spec_get(spec: Any, key: str, default: Any = None) -> Any:
    """A field of a checker spec: a CheckerSpec, a dict, or None."""
    if spec is None:
        return default
    if isinstance(spec, dict):
        return spec.get(key, default)
    return getattr(spec, key, default)


