"""`Version`: a semantic version ``MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]``."""

from __future__ import annotations

import functools
import re

_VERSION_RE = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


class VersionError(ValueError):
    """Text that is not a semantic version."""


@functools.total_ordering
class Version:
    """An immutable semantic version. Build metadata is kept but ignored by comparisons."""

    __slots__ = ("major", "minor", "patch", "prerelease", "build")

    def __init__(self, major: int, minor: int = 0, patch: int = 0,
                 prerelease: tuple[str, ...] = (), build: tuple[str, ...] = ()):
        self.major, self.minor, self.patch = major, minor, patch
        self.prerelease = tuple(prerelease)
        self.build = tuple(build)

    @classmethod
    def parse(cls, text: str) -> "Version":
        m = _VERSION_RE.match(text.strip())
        if not m:
            raise VersionError(f"not a semantic version: {text!r}")
        major, minor, patch, pre, build = m.groups()
        return cls(int(major), int(minor), int(patch),
                   tuple(pre.split(".")) if pre else (), tuple(build.split(".")) if build else ())

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)

    def _key(self):
        # A version without a prerelease ranks above all its prereleases.
        pre = (1,) if not self.prerelease else (0, self.prerelease)
        return (self.major, self.minor, self.patch, pre)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: "Version") -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            s += "-" + ".".join(self.prerelease)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self) -> str:
        return f"Version.parse({str(self)!r})"

    def bump(self, part: str) -> "Version":
        """The next release: ``bump("minor")`` of 1.4.2 is 1.5.0 (prerelease and build dropped)."""
        if part == "major":
            return Version(self.major + 1)
        if part == "minor":
            return Version(self.major, self.minor + 1)
        if part == "patch":
            return Version(self.major, self.minor, self.patch + (0 if self.prerelease else 1))
        raise ValueError(f"part must be major, minor or patch, not {part!r}")
