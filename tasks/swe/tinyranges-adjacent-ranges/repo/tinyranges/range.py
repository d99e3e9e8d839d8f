"""`Range`: the integers ``start <= x < end``."""

from __future__ import annotations


class Range:
    """A half-open range of integers. Empty when ``start == end``."""

    __slots__ = ("start", "end")

    def __init__(self, start: int, end: int):
        if end < start:
            raise ValueError(f"end ({end}) is before start ({start})")
        self.start = start
        self.end = end

    def __len__(self) -> int:
        return self.end - self.start

    def __contains__(self, x: int) -> bool:
        return self.start <= x < self.end

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Range):
            return NotImplemented
        return (self.start, self.end) == (other.start, other.end)

    def __hash__(self) -> int:
        return hash((self.start, self.end))

    def __repr__(self) -> str:
        return f"Range({self.start}, {self.end})"

    def is_empty(self) -> bool:
        return self.start == self.end

    def overlaps(self, other: "Range") -> bool:
        """True when the two ranges share at least one integer."""
        return self.start < other.end and other.start < self.end

    def hull(self, other: "Range") -> "Range":
        """The smallest range holding both."""
        return Range(min(self.start, other.start), max(self.end, other.end))

    def intersection(self, other: "Range") -> "Range | None":
        if not self.overlaps(other):
            return None
        return Range(max(self.start, other.start), min(self.end, other.end))
