"""`RangeSet`: a set of integers stored as sorted, disjoint ranges."""

from __future__ import annotations

import bisect
from typing import Iterable, Iterator

from tinyranges.range import Range


def _normalise(ranges: Iterable[Range]) -> list[Range]:
    """Sort the ranges and merge the ones that can be merged; drop empty ones."""
    out: list[Range] = []
    for r in sorted((r for r in ranges if not r.is_empty()), key=lambda r: r.start):
        if out and r.start < out[-1].end:
            out[-1] = out[-1].hull(r)
        else:
            out.append(r)
    return out


class RangeSet:
    """An immutable set of integers held as a normalised list of `Range`s."""

    def __init__(self, ranges: Iterable[Range] = ()):
        self._ranges = _normalise(ranges)
        self._starts = [r.start for r in self._ranges]

    @property
    def ranges(self) -> tuple[Range, ...]:
        return tuple(self._ranges)

    def __iter__(self) -> Iterator[int]:
        for r in self._ranges:
            yield from range(r.start, r.end)

    def __len__(self) -> int:
        return sum(len(r) for r in self._ranges)

    def __contains__(self, x: int) -> bool:
        i = bisect.bisect_right(self._starts, x) - 1
        return i >= 0 and x in self._ranges[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RangeSet):
            return NotImplemented
        return self._ranges == other._ranges

    def __repr__(self) -> str:
        return f"RangeSet({self._ranges!r})"

    def union(self, other: "RangeSet") -> "RangeSet":
        return RangeSet([*self._ranges, *other._ranges])

    def add(self, r: Range) -> "RangeSet":
        return RangeSet([*self._ranges, r])

    def intersection(self, other: "RangeSet") -> "RangeSet":
        out = []
        for a in self._ranges:
            for b in other._ranges:
                c = a.intersection(b)
                if c is not None:
                    out.append(c)
        return RangeSet(out)
