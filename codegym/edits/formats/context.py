"""What the formats share while one action is read: the normalised text and
its positions (line numbers, CRLF map, fences, regions already used), the
operations found so far, warnings, and the files as they are being edited
(`WorkFile`: content made of `Chunk`s that remember which action text wrote
them, so spans can give their final place in the file)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from codegym.edits.records import ToolCall
from codegym.edits.text import ActionError, is_simple_path, looks_like_filename

#: more edit operations than this in one action is an error (bounds the work per action)
MAX_EDITS = 1_000
_LABEL_PREFIX_RE = re.compile(r"(?:file|path|filename)[ \t]*:[ \t]*", re.I)


class Chunk:
    """A run of file content; ``tstart >= 0`` when it is verbatim action text
    (normalised coordinates) written by the construct ``src``."""

    __slots__ = ("text", "tstart", "fmt", "src")

    def __init__(self, text: str, tstart: int = -1, fmt: str = "", src: tuple[int, int] = (0, 0)):
        self.text = text
        self.tstart = tstart
        self.fmt = fmt
        self.src = src

    def sub(self, i: int, j: int) -> Chunk:
        return Chunk(self.text[i:j], self.tstart + i if self.tstart >= 0 else -1, self.fmt, self.src)


class WorkFile:
    """A file being edited: chunks that remember which action text wrote them."""

    __slots__ = ("chunks", "_content")

    def __init__(self, chunks: list[Chunk]):
        self.chunks = chunks
        self._content: str | None = None

    @classmethod
    def of(cls, text: str) -> WorkFile:
        return cls([Chunk(text)] if text else [])

    def content(self) -> str:
        if self._content is None:
            self._content = "".join(c.text for c in self.chunks)
        return self._content

    def replace(self, a: int, b: int, pieces: list[Chunk]) -> None:
        before: list[Chunk] = []
        after: list[Chunk] = []
        pos = 0
        for ch in self.chunks:
            cs, ce = pos, pos + len(ch.text)
            pos = ce
            if ce <= a and not (cs == ce == b and a < b):
                before.append(ch)
            elif cs >= b and not (cs == ce == a and a < b):
                after.append(ch)
            else:
                if cs < a:
                    before.append(ch.sub(0, a - cs))
                if ce > b:
                    after.append(ch.sub(b - cs, ce - cs))
        self.chunks = before + pieces + after
        self._content = None


def trim_final_newline(pieces: list[Chunk]) -> list[Chunk]:
    """``pieces`` without the newline that ends their text (if it does)."""
    for k in range(len(pieces) - 1, -1, -1):
        t = pieces[k].text
        if t:
            if t.endswith("\n"):
                return pieces[:k] + [pieces[k].sub(0, len(t) - 1)] + pieces[k + 1:]
            return pieces
    return pieces


@dataclass
class Fence:
    """A fenced block: offsets of its opening line, content and end."""

    open_start: int
    content_start: int
    content_end: int
    close_end: int
    indent: str
    marker: str
    info: str
    closed: bool


@dataclass
class Op:
    """One operation found in the text; applied in text order (``pos``)."""

    pos: int
    fmt: str
    kind: str  # write | patch | sr | str_replace | insert | tool | submit
    src: tuple[int, int] = (0, 0)
    path: str = ""
    pieces: list[Chunk] = field(default_factory=list)
    data: Any = None
    label: str = ""


#: a block that wrote to a file: (path, start, end, is_diff, decoded JSON string or None, format)
Block = tuple[str, int, int, bool, Any, str]


class Context:
    """The state of reading one action (positions are in ``norm``, the text with
    CRLF read as LF; `orig` maps them back)."""

    def __init__(self, text: str, files: Mapping[str, Any], main_file: str, allowed: frozenset[str],
                 warnings: list[str] | None = None):
        self.norm, self.crlf = text, []
        if "\r\n" in text:
            idx = [m.start() for m in re.finditer("\r\n", text)]
            self.norm = text.replace("\r\n", "\n")
            # the "\n" that replaced the k-th "\r\n" sits at idx[k] - k in norm
            self.crlf = [p - k for k, p in enumerate(idx)]
        self.files, self.main_file, self.allowed = files, main_file, allowed
        self.warnings: list[str] = warnings if warnings is not None else []
        self.ops: list[Op] = []
        self.formats_seen: list[tuple[int, str]] = []
        self.ignored_blocks: list[str] = []  # code blocks not read as code, for the "nothing found" message
        self.pathless_disallowed: list[tuple[Fence, str]] = []
        self.blocks: list[Block] = []
        self.fences: list[Fence] = []
        self.fence_starts: list[int] = []
        self._consumed: list[tuple[int, int]] = []  # regions a format has read (sorted)
        self._consumed_starts: list[int] = []
        self._nl: list[int] | None = None
        # per-format scan state: SEARCH/REPLACE marker lines (start, end, kind 0/1/2) and
        # their regions, blocks and calls counted for names, diff lines read (capped)
        self.sr_marks: list[tuple[int, int, int]] = []
        self.sr_starts: list[int] = []
        self.sr_regions: list[tuple[int, list[tuple[int, int, int]], str | None, Fence | None]] = []
        self.last_sr_path: str | None = None
        self.n_sr = self.n_call = self.diff_lines = 0
        # applying: the files as edited so far, and what the action asks besides edits
        self.cur: dict[str, WorkFile | None] = {}
        self.touched: list[str] = []
        self.tool_calls: list[ToolCall] = []
        self.submit = False

    # -- positions ----------------------------------------------------------

    def orig(self, n: int) -> int:
        """Offset in the action text of offset ``n`` of ``norm``."""
        if not self.crlf:
            return n
        return n + bisect.bisect_left(self.crlf, n)

    def line(self, pos: int) -> int:
        """1-based line number of ``pos``."""
        if self._nl is None:  # built once, on demand: messages need line numbers
            self._nl = [m.start() for m in re.finditer("\n", self.norm)]
        return bisect.bisect_left(self._nl, pos) + 1

    def line_at(self, pos: int) -> tuple[int, int, int]:
        """(start, end, next) of the line containing pos."""
        s = self.norm.rfind("\n", 0, pos) + 1
        e = self.norm.find("\n", pos)
        if e < 0:
            return s, len(self.norm), len(self.norm)
        return s, e, e + 1

    def prev_line(self, pos: int) -> str | None:
        """The line ending right before ``pos`` (which starts a line)."""
        if pos <= 0:
            return None
        s = self.norm.rfind("\n", 0, pos - 1) + 1
        return self.norm[s:pos - 1]

    def prev_line_start(self, pos: int) -> int:
        return self.norm.rfind("\n", 0, max(pos - 1, 0)) + 1 if pos > 0 else 0

    def label_path(self, line: str | None) -> str | None:
        """A file name written on a line of its own (``a.py``, ``**a.py**``, ``a.py:``)."""
        if line is None:
            return None
        s = line.strip()
        if not s or len(s) > 300:
            return None
        s = s.strip("*_`#> \t")
        s = _LABEL_PREFIX_RE.sub("", s, count=1) if _LABEL_PREFIX_RE.match(s) else s
        s = s.strip("*_` \t").rstrip(":").strip("*_` \t")
        if not is_simple_path(s or "-"):
            return None
        if looks_like_filename(s) or s in self.files or s == self.main_file:
            return s
        return None

    # -- regions ------------------------------------------------------------

    def fence_of(self, pos: int) -> Fence | None:
        k = bisect.bisect_right(self.fence_starts, pos) - 1
        if k >= 0:
            f = self.fences[k]
            if f.open_start <= pos < f.close_end:
                return f
        return None

    def consume(self, a: int, b: int) -> None:
        """Mark ``norm[a:b]`` as read by a format (other formats skip it)."""
        k = bisect.bisect_left(self._consumed_starts, a)
        self._consumed.insert(k, (a, b))
        self._consumed_starts.insert(k, a)

    def in_prose(self, pos: int) -> bool:
        """``pos`` is outside every fence and every region a format has read."""
        if self.fence_of(pos) is not None:
            return False
        k = bisect.bisect_right(self._consumed_starts, pos) - 1
        return not (k >= 0 and pos < self._consumed[k][1])

    # -- findings -----------------------------------------------------------

    def warn(self, msg: str) -> None:
        # capped: hostile input must not produce a million warnings
        if len(self.warnings) < 20:
            self.warnings.append(msg)
        elif len(self.warnings) == 20:
            self.warnings.append("(more warnings were left out)")

    def seen(self, pos: int, fmt: str) -> None:
        self.formats_seen.append((pos, fmt))

    def formats_used(self) -> list[str]:
        out: list[str] = []
        for _p, f in sorted(self.formats_seen, key=lambda t: t[0]):
            if f not in out:
                out.append(f)
        return out

    def add_op(self, op: Op) -> None:
        self.ops.append(op)
        if len(self.ops) > MAX_EDITS:
            raise ActionError(f"the action has more than {MAX_EDITS} edit operations; write fewer, larger edits")

    def add_submit(self, pos: int, fmt: str, src: tuple[int, int]) -> None:
        self.seen(pos, fmt)
        if fmt != "submit":
            self.seen(pos, "submit")
        self.add_op(Op(pos, fmt, "submit", src))

    # -- files being edited -------------------------------------------------

    def exists(self, path: str) -> bool:
        if path in self.cur:
            return self.cur[path] is not None
        return path in self.files and self.files[path] is not None

    def get(self, path: str, what: str) -> WorkFile | None:
        """The file as edited so far (None: absent); ActionError for a binary file."""
        if path not in self.cur:
            if path not in self.files or self.files[path] is None:
                return None
            v = self.files[path]
            if not isinstance(v, str):
                raise ActionError(f"{what}: {path} is not a text file and cannot be edited")
            self.cur[path] = WorkFile.of(v)
        return self.cur[path]

    def set(self, path: str, w: WorkFile | None) -> None:
        self.cur[path] = w
        if path not in self.touched:
            self.touched.append(path)

    def files_list(self) -> str:
        names = sorted(p for p in set(self.files) | set(self.cur) if self.exists(p))
        if not names:
            return "the workspace is empty"
        return "files: " + ", ".join(names[:12]) + (" ..." if len(names) > 12 else "")

    def missing(self, op: Op, hint: str) -> ActionError:
        """The error for an edit of a file that does not exist."""
        return ActionError(f"{op.label}: {op.path} does not exist ({self.files_list()}); {hint}")
