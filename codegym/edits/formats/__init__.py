"""The edit formats: one module per format (`code_block`, `unified_diff`,
`search_replace`, `tool_call`), each recognising its constructs in the action
text and applying them; `context` is the state they share while one action is
read. docs/edits.md describes every format and its tolerance rules."""

from __future__ import annotations

from collections.abc import Sequence

#: every action format, in the order used in messages
FORMATS: tuple[str, ...] = ("code_block", "unified_diff", "search_replace", "tool_call", "submit")
#: the formats that can change files
EDIT_FORMATS: tuple[str, ...] = FORMATS[:4]


def check_formats(formats: Sequence[str] | set[str] | None) -> frozenset[str]:
    """The accepted formats as a set (None: all). An unknown name is a programming
    error of the caller, not model text: ValueError."""
    if formats is None:
        return frozenset(FORMATS)
    if isinstance(formats, str):
        formats = [formats]
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ValueError(f"unknown action format(s) {bad}; known: {', '.join(FORMATS)}")
    return frozenset(formats)
