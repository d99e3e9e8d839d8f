"""`Constraint`: comma-separated comparisons such as ``">=1.2, <2"``."""

from __future__ import annotations

import operator
import re

from verspec.version import Version, VersionError

_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
        "==": operator.eq, "!=": operator.ne}
_CLAUSE_RE = re.compile(r"^\s*(>=|<=|>|<|==|!=)\s*(\S+)\s*$")


class ConstraintError(ValueError):
    """Text that is not a constraint."""


def _loose(text: str) -> Version:
    """A version where minor and patch may be left out: ``2`` is 2.0.0, ``1.2`` is 1.2.0."""
    parts = text.split("-", 1)[0].split("+", 1)[0].split(".")
    if len(parts) < 3 and all(p.isdigit() for p in parts):
        text = ".".join(parts + ["0"] * (3 - len(parts))) + text[len(".".join(parts)):]
    return Version.parse(text)


class Constraint:
    def __init__(self, clauses: list[tuple[str, Version]]):
        self.clauses = clauses

    @classmethod
    def parse(cls, text: str) -> "Constraint":
        clauses = []
        for part in text.split(","):
            m = _CLAUSE_RE.match(part)
            if not m:
                raise ConstraintError(f"bad clause {part!r} in {text!r}")
            try:
                clauses.append((m.group(1), _loose(m.group(2))))
            except VersionError as e:
                raise ConstraintError(str(e)) from None
        return cls(clauses)

    def allows(self, version: Version) -> bool:
        return all(_OPS[op](version, v) for op, v in self.clauses)

    def __str__(self) -> str:
        return ", ".join(f"{op}{v}" for op, v in self.clauses)
