"""How alike two line lists are, with layout ignored: `normalise_lines`
(trailing whitespace, blank lines and common indentation removed) and
`line_similarity` (difflib's ratio of the normalised lists). Light on
purpose: `codegym.rollout.advantages` imports it without the rest of the layer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher

from codegym.edits.text import common_indent


def normalise_lines(lines: Iterable[str]) -> list[str]:
    """Strip trailing whitespace, drop blank lines, remove common indentation."""
    out = [l.rstrip() for l in lines]
    out = [l for l in out if l]
    m = len(common_indent(out))
    return [l[m:] for l in out] if m else out


def line_similarity(a_lines: Sequence[str], b_lines: Sequence[str]) -> float:
    """difflib ratio of the normalised line lists (1.0 when both are empty)."""
    a, b = normalise_lines(a_lines), normalise_lines(b_lines)
    if not a and not b:
        return 1.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()
