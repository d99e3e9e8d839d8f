"""The records the edits layer hands out.

`ParsedAction` (what `codegym.edits.parse.parse_action` returns) with its
`EditSpan` (one exact piece of written content), `EditBlock` (one block of the
action that wrote to a file: what `codegym.edits.spans.attach_spans` reads)
and `ToolCall`; `DiffUnit` (one sub-diff of a step, from
`codegym.edits.units.split_units`). docs/edits.md describes spans and units.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass(slots=True)
class EditSpan:
    """One piece of written content and where it came from.

    ``text[start:end]`` (the action text) is exactly the piece, and it sits at
    ``content[file_start:file_end]`` of the new content of ``path``.
    ``source_start:source_end`` is the whole construct that wrote it (code
    block, diff change group, SEARCH/REPLACE block, tool call string).
    Iterating gives ``(path, start, end)``. It reads like an `EditBlock` of
    verbatim, non-diff content, so `attach_spans` takes it too.
    """

    path: str
    start: int
    end: int
    format: str = ""
    file_start: int = 0
    file_end: int = 0
    source_start: int = 0
    source_end: int = 0

    def __iter__(self) -> Iterator[Any]:
        # lets callers unpack `path, start, end = span` like a plain tuple
        return iter((self.path, self.start, self.end))

    @property
    def text(self) -> None:
        return None

    @property
    def text_offset_map(self) -> None:
        return None

    @property
    def diff(self) -> bool:
        return False


@dataclass(frozen=True)
class EditBlock:
    """One block of the action that wrote to ``path``.

    ``text[start:end]`` is a code block body, a REPLACE section, or a diff
    hunk body with its ``+``/``-``/space markers (``diff=True``). When the
    content is encoded in the action (a JSON string of a tool call), ``text``
    is the decoded content and ``text_offset_map[i]`` the action-text offset of
    its character i (``len(text) + 1`` entries). ``diff=None``: unknown, read
    both ways and keep the reading that locates more lines.
    """

    path: str
    start: int
    end: int
    text_offset_map: Sequence[int] | None = None
    text: str | None = None
    diff: bool | None = None
    format: str = ""

    def diff_span_kwargs(self) -> dict[str, Any]:
        """The fields `attach_spans` reads, as keyword arguments (by hand: `asdict` deep-copies)."""
        return {"path": self.path, "start": self.start, "end": self.end,
                "text_offset_map": self.text_offset_map, "text": self.text, "diff": self.diff}


@dataclass(frozen=True)
class ToolCall:
    """A tool call that is not an edit (``view_file``, ``run_tests``); the
    environment executes it. ``start:end`` is the call in the action text."""

    name: str
    arguments: dict[str, Any]
    start: int = 0
    end: int = 0


@dataclass
class ParsedAction:
    """The result of `parse_action`.

    changes       path -> new full content (None = delete); empty on error
    edit_spans    exact spans of written content (see `EditSpan`)
    edit_blocks   one record per block, for `codegym.edits.spans.attach_spans`
    formats_used  formats found in the text, in order of appearance
    submit        the action submits (after applying ``changes``)
    tool_calls    non-edit tool calls, in order
    error         what was wrong (None if the action is usable)
    warnings      things that were ignored or guessed
    """

    changes: dict[str, str | None] = field(default_factory=dict)
    edit_spans: list[EditSpan] = field(default_factory=list)
    edit_blocks: list[EditBlock] = field(default_factory=list)
    formats_used: list[str] = field(default_factory=list)
    submit: bool = False
    tool_calls: list[ToolCall] = field(default_factory=list)
    error: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "changes": dict(self.changes),
            "edit_spans": [asdict(s) for s in self.edit_spans],
            "edit_blocks": [asdict(b) for b in self.edit_blocks],
            "formats_used": list(self.formats_used),
            "submit": self.submit,
            "tool_calls": [asdict(t) for t in self.tool_calls],
            "error": self.error,
            "warnings": list(self.warnings),
        }


@dataclass
class DiffUnit:
    """One sub-diff of a step.

    Line numbers are 1-based. ``old_start``/``old_lines`` (and the ``new_``
    pair) cover the unit in the old (new) file from its first to its last
    changed line, as a zero-context hunk header would; an empty range
    (``*_lines == 0``) starts at the line after which the insertion or
    deletion happens (0 = top of file), again as in unified diffs. The
    covered range may include unchanged lines between changes; ``removed`` and
    ``added`` list exactly the changed line numbers.

    ``pre_raw``/``post_raw`` are the removed/added lines as they are in the
    files (without the newline); ``pre_image``/``post_image`` the same lines
    normalised: trailing whitespace stripped, blank lines dropped, and the
    indentation common to pre and post removed (jointly, so that re-indenting
    is still visible). ``signature`` is the sha256 hex of ``kind``,
    ``pre_image`` and ``post_image``, so the same edit made at another place or
    indentation (in another trajectory) has the same signature. ``n_lines`` =
    lines removed + lines added. ``hunk`` is the index of the hunk of this file
    the unit came from (units of one hunk share it). ``span`` is filled by
    `attach_spans`.
    """

    path: str
    kind: str  # "add" | "delete" | "replace"
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    pre_image: list[str]
    post_image: list[str]
    pre_raw: list[str]
    post_raw: list[str]
    scope: str
    signature: str
    n_lines: int
    span: tuple[int, int] | None = None
    granularity: str = "function"
    hunk: int = 0
    removed: list[int] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    language: str | None = None

    def to_dict(self) -> dict[str, Any]:
        # by hand rather than dataclasses.asdict (its deep copy was a tenth of a step)
        d = {f: getattr(self, f) for f in _UNIT_FIELDS}
        for f in ("pre_image", "post_image", "pre_raw", "post_raw", "removed", "added"):
            d[f] = list(d[f])
        d["span"] = list(self.span) if self.span is not None else None
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DiffUnit:
        kw = dict(d)
        if kw.get("span") is not None:
            kw["span"] = (int(kw["span"][0]), int(kw["span"][1]))
        return cls(**kw)


_UNIT_FIELDS = tuple(f.name for f in fields(DiffUnit))
