"""Semantic versions and version constraints."""

from verspec.constraint import Constraint, ConstraintError
from verspec.version import Version, VersionError

__all__ = ["Version", "VersionError", "Constraint", "ConstraintError", "latest"]


def latest(versions, constraint=None):
    """The highest of `versions` (strings or Versions) that `constraint` allows, or None."""
    c = Constraint.parse(constraint) if isinstance(constraint, str) else constraint
    best = None
    for v in versions:
        v = Version.parse(v) if isinstance(v, str) else v
        if c is not None and not c.allows(v):
            continue
        if best is None or v > best:
            best = v
    return best
