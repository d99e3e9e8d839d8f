"""Parse model text into workspace edits (the agent's action).

This module owns the action formats of codegym: how the text a model writes is
turned into one set of file changes, which tool calls it makes, whether it
submits, and what feedback it gets when the text cannot be used. It also
renders a change set in each format (for the oracle agent and round trips) and
documents the formats for prompts (`format_help`, `TOOL_SCHEMAS`).

Public names:

- `parse_action(text, files, main_file, formats=None) -> ParsedAction`
- `ParsedAction` (changes, edit_spans, edit_blocks, formats_used, submit,
  tool_calls, error, warnings), `EditSpan`, `EditBlock`, `ToolCall`
- `format_help(formats=None, main_file="main.py") -> str`
- `render_action(changes, format, files, main_file, submit=False) -> str`
- `TOOL_SCHEMAS`, `tool_schemas(formats)`, `FORMATS`
- `apply_changes(files, changes)`, `view_file(files, path, start_line, end_line)`

Formats (names as used in ``formats=``):

``code_block``
    A fenced block replaces a whole file. The path comes from the info string
    (```` ```python path=a.py ````, also ``file=``/``filename=``,
    ```` ```python:a.py ````, ```` ```python a.py ````, ```` ```a.py ````),
    from a line holding only a file name right above the fence (``a.py``,
    ``**a.py**``, ``### `a.py` ``, ``a.py:``), or from a first content line
    ``# path: a.py`` / ``// file: a.py`` (that line is then not written).
    Blocks without a path replace the main file, and when there are several,
    only the LAST complete one is used (models often show an example first);
    the others are reported in ``warnings``. Blocks in a language that is not
    code (``text``, ``output``, ``console``, shells, data formats) and blocks
    in a programming language that does not match the main file's extension
    are not edits unless they carry a path. The content is exactly the text
    between the fence lines, so it always ends with a newline (a code block
    cannot express a file without a final newline).
``unified_diff``
    A ```` ```diff ```` / ```` ```patch ```` block, any fenced block whose
    content starts with ``--- x`` + ``+++ y`` or ``diff --git``, or the same
    bare in the text. Hunk header counts are ignored (LLMs miscount): the body
    is read until the next header. A hunk is placed where its context and
    removed lines match exactly, nearest to the stated line (then anywhere);
    if nothing matches exactly, trailing whitespace is ignored. Context lines
    keep the file's text. ``--- /dev/null`` creates, ``+++ /dev/null``
    deletes, ``rename from/to`` renames. Hunks without file headers (only in a
    fenced diff) target the block's path or the main file. A blank line inside
    a hunk is read as an empty context line when more hunk lines follow.
``search_replace``
    Aider-style ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE`` blocks,
    bare or inside a fence. The path is the line right above the SEARCH
    marker, else the fence's path (info string or line above the fence), else
    the previous block's path, else the main file. SEARCH is matched line by
    line: exactly; else ignoring trailing whitespace; else ignoring a uniform
    indentation shift (the REPLACE lines are re-indented by the same shift).
    At the first level that matches, the match must be unique, otherwise the
    block is an error. An empty SEARCH creates a file (or fills an empty one).
    If the match ends at the end of a file that has no final newline, the
    REPLACE text's final newline is dropped (the file keeps its convention).
``tool_call``
    JSON in OpenAI function-call shape: ``{"name": ..., "arguments": {...}}``
    (``arguments`` may be a JSON string; ``parameters`` is accepted too),
    ``{"type": "function", "function": {...}}``, ``{"tool_calls": [...]}``,
    or a list of these; bare (a line starting with ``{``/``[``), in a
    ```` ```json ```` block, or in ``<tool_call>...</tool_call>`` tags. Tools:
    see `TOOL_SCHEMAS`. ``view_file``/``run_tests`` are returned in
    ``tool_calls`` (the environment executes them); edits become changes.
``submit``
    A line that is exactly ``submit`` (any case; outside code blocks), or the
    ``submit`` tool. It may accompany edits: the edits apply, then the
    episode is submitted. A submit via tool call needs both ``tool_call``
    and ``submit`` to be accepted.

Rules for the whole action:

- Edits apply in text order, each seeing the result of the previous ones; the
  result is one change set (``changes``: path -> new content, None = deleted;
  files whose final content equals the original are left out, with a
  warning).
- Atomic: any error (a hunk that does not apply, an ambiguous SEARCH, an
  unterminated code block that would have been an edit, a disallowed format,
  a bad path, invalid tool arguments, content with NUL or lone surrogate
  characters) gives ``error`` and NO changes, tool calls or submit.
- Never raises on model text: empty text, garbage, binary, huge input
  (``max_chars``, default 1,000,000), CRLF line endings (read as LF) all give
  a message (bytes are decoded as UTF-8 with replacement, and spans then
  index the decoded text). Scanning is regex/`str.find` based and linear,
  and the numbers of fence lines, marker lines, diff lines and edit
  operations are capped, so a hostile action costs well under a second.
- Paths must be relative and stay inside the workspace (``..`` and absolute
  paths are errors).

Spans: every `EditSpan` is exact: ``text[start:end]`` equals the piece of
content it wrote (``file_content[file_start:file_end]`` in the final file).
Content that does not appear verbatim in the text (the newline of a CRLF
line, a JSON escape such as ``\\n``, the indentation added when a SEARCH
matched with a shifted indentation) is not covered by any span. Diff hunks
give one span per added line (the ``+`` marker is not content); a removal
gives a zero-length span at the removed lines. `EditBlock` gives one record
per block in the shape `codegym.edits.units.EditSpan` reads (diff-form hunks,
decoded JSON strings with an offset map).
"""

from __future__ import annotations

import bisect
import difflib
import functools
import json
import json.decoder
import json.scanner
import os.path
import posixpath
import re
from dataclasses import asdict, dataclass, field
from itertools import accumulate
from typing import Any, Callable, Iterator, Mapping, Sequence

from codegym.core.languages import all_extensions, extensions_of, language_of_path

__all__ = [
    "FORMATS",
    "EDIT_FORMATS",
    "MAX_ACTION_CHARS",
    "EditSpan",
    "EditBlock",
    "ToolCall",
    "ParsedAction",
    "parse_action",
    "format_help",
    "render_action",
    "TOOL_SCHEMAS",
    "tool_schemas",
    "apply_changes",
    "view_file",
]

#: every action format, in the order used in messages
FORMATS: tuple[str, ...] = ("code_block", "unified_diff", "search_replace", "tool_call", "submit")
#: the formats that can change files
EDIT_FORMATS: tuple[str, ...] = FORMATS[:4]
#: longer actions are refused without being parsed (a model does not write 1 MB of code in a turn)
MAX_ACTION_CHARS = 1_000_000
#: more edit operations than this in one action is an error (bounds the work per action)
MAX_EDITS = 1_000
#: more fence lines (```), SEARCH/REPLACE marker lines or diff lines than this is an error
MAX_FENCE_LINES = 2_000
MAX_MARKER_LINES = 4 * MAX_EDITS
MAX_DIFF_LINES = 50_000


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class EditSpan:
    """One piece of written content and where it came from.

    ``text[start:end]`` (the action text) is exactly the piece, and it sits at
    ``content[file_start:file_end]`` of the new content of ``path``.
    ``source_start:source_end`` is the whole construct that wrote it (code
    block, diff change group, SEARCH/REPLACE block, tool call string).
    Iterating gives ``(path, start, end)``.
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

    # read like a `codegym.edits.units.EditSpan` of verbatim, non-diff content
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
    """One block of the action that wrote to ``path``, in the shape
    `codegym.edits.units.EditSpan` reads: ``text[start:end]`` is a code block body,
    a REPLACE section, or a diff hunk body with its markers (``diff=True``);
    for a JSON string, ``text`` is the decoded content and
    ``text_offset_map[i]`` the action-text offset of its character i
    (``len(text) + 1`` entries)."""

    path: str
    start: int
    end: int
    text_offset_map: tuple[int, ...] | None = None
    text: str | None = None
    diff: bool | None = False
    format: str = ""

    def diff_span_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `codegym.edits.units.EditSpan` (by hand: `asdict` deep-copies)."""
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
    edit_blocks   one record per block, for `codegym.edits.units.attach_spans`
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


class _Fail(Exception):
    """A problem with the action; its message becomes ParsedAction.error."""


# ---------------------------------------------------------------------------
# Languages (for deciding which code blocks are edits, and for rendering)
# ---------------------------------------------------------------------------

#: info strings of blocks that show things rather than code
_NON_EDIT_LANGS = frozenset(
    "text txt plain plaintext output out result results console terminal stdout stderr stdin "
    "input in log logs trace traceback shell-session sh-session pycon python-repl repl ipython "
    "example sample none nohighlight ansi tree mermaid math diagram".split()
)
#: shells and data formats: silently not edits (a mismatch with the main file is expected)
_QUIET_LANGS = frozenset(
    "sh bash shell zsh ksh fish powershell ps1 pwsh bat cmd batch json json5 jsonc jsonl yaml yml "
    "toml ini cfg xml csv tsv markdown md html htm css sql make makefile cmake dockerfile docker "
    "tex latex".split()
)
_DIFF_LANGS = frozenset({"diff", "patch", "udiff", "git-diff", "gitdiff"})
_JSON_LANGS = frozenset({"json", "json5", "jsonc", "tool_call", "tool-call", "tool", "tools", "function", "function_call"})
_TOOL_LANGS = frozenset({"tool_call", "tool-call", "tool", "tools", "function", "function_call"})

def _ext(path: str) -> str:
    return os.path.splitext(path)[1]


def _lang_for_path(path: str) -> str:
    """The code-block tag of a file: its language in the one table (``text`` for .txt)."""
    return language_of_path(path.lower()) or ("text" if _ext(path).lower() == ".txt" else "")


# ---------------------------------------------------------------------------
# Regexes. Each is anchored to a line start and has no nested quantifiers, so
# scanning is linear in the text (no catastrophic backtracking).
# ---------------------------------------------------------------------------

_FENCE_RE = re.compile(r"^([ \t]*)(`{3,}|~{3,})([^\n]*)$", re.M)
_SR_RE = re.compile(r"^(?:(<{5,9}) ?SEARCH|(={5,9})|(>{5,9}) ?REPLACE)[ \t]*$", re.M)
_DIFF_START_RE = re.compile(r"^(?:diff --git [^\n]*|--- [^\n]*\n\+\+\+ [^\n]*)$", re.M)
_SUBMIT_RE = re.compile(r"^[ \t]*submit[ \t]*$", re.M | re.I)
_TOOL_TAG_RE = re.compile(r"<tool_call>")
_JSON_START_RE = re.compile(r"^[ \t]*[\[{]", re.M)
_HUNK_RE = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_HUNK_LABEL_RE = re.compile(r"@@[^@\n]{0,80}@@")
_PATH_KV_RE = re.compile(r"(?:^|[ \t])(?:path|file|filename)[ \t]*=[ \t]*(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^ \t\n]+))", re.I)
_PATH_COMMENT_RE = re.compile(r"[ \t]*(?:#|//|--|;|%)[ \t]*(?:path|file|filename)[ \t]*:[ \t]*([^ \t\n]+)[ \t]*", re.I)
_LABEL_PREFIX_RE = re.compile(r"(?:file|path|filename)[ \t]*:[ \t]*", re.I)
_SIMPLE_PATH_RE = re.compile(r"[\w./][\w\-./+@]*")
_GIT_EXT_RE = re.compile(
    r"(?:index |new file mode |deleted file mode |old mode |new mode |similarity index |"
    r"dissimilarity index |rename from |rename to |copy from |copy to |Binary files |GIT binary patch)"
)
_WS_RE = re.compile(r"[ \t\n\r]*")
_NONWS_RE = re.compile(r"[^ \t\n\r]")
_ESC_RE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)
_SURROGATE_ESC_RE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_BAD_CHAR_RE = re.compile("[\x00\ud800-\udfff]")
_MARKER_LINE_RE = re.compile(r"^(?:<{5,9} ?SEARCH|={5,9}|>{5,9} ?REPLACE)[ \t]*$", re.M)
_JSON_DECODER = json.JSONDecoder(strict=False)


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------

#: name -> {argument: (type, required, description)}
_TOOLS: dict[str, dict[str, tuple[type, bool, str]]] = {
    "view_file": {
        "path": (str, True, "File to show, relative to the workspace root."),
        "start_line": (int, False, "First line to show (1-based, default 1)."),
        "end_line": (int, False, "Last line to show (inclusive, default: end of file)."),
    },
    "write_file": {
        "path": (str, True, "File to create or overwrite."),
        "content": (str, True, "The complete new content of the file."),
    },
    "str_replace": {
        "path": (str, True, "File to edit."),
        "old_str": (str, True, "Exact text to replace; must occur exactly once in the file (include surrounding lines to make it unique)."),
        "new_str": (str, True, "Text that replaces old_str."),
    },
    "insert": {
        "path": (str, True, "File to edit."),
        "line": (int, True, "Insert after this line number (0 = at the top of the file)."),
        "text": (str, True, "Lines to insert (a final newline is added if missing)."),
    },
    "run_tests": {},
    "submit": {},
}
_TOOL_DOCS = {
    "view_file": "Show a file (or a range of its lines) with line numbers.",
    "write_file": "Create a file or replace its whole content.",
    "str_replace": "Replace the one occurrence of old_str in a file by new_str.",
    "insert": "Insert text after a given line of a file.",
    "run_tests": "Run the public tests on the current files and show the results.",
    "submit": "Submit the current files for final judging; ends the episode.",
}


def tool_schemas(formats: Sequence[str] | set[str] | None = None) -> list[dict[str, Any]]:
    """OpenAI ``tools`` entries for the tool-call format; without ``submit``
    in ``formats`` the submit tool is left out. Empty if tool calls are not
    accepted."""
    allowed = _check_formats(formats)
    if "tool_call" not in allowed:
        return []
    out = []
    for name, spec in _TOOLS.items():
        if name == "submit" and "submit" not in allowed:
            continue
        props = {
            k: {"type": "string" if t is str else "integer", "description": d}
            for k, (t, _req, d) in spec.items()
        }
        out.append({
            "type": "function",
            "function": {
                "name": name,
                "description": _TOOL_DOCS[name],
                "parameters": {
                    "type": "object",
                    "properties": props,
                    "required": [k for k, (_t, req, _d) in spec.items() if req],
                    "additionalProperties": False,
                },
            },
        })
    return out




def _check_formats(formats: Sequence[str] | set[str] | None) -> frozenset[str]:
    # An unknown format name is a programming error of the caller, not model text: raise.
    if formats is None:
        return frozenset(FORMATS)
    if isinstance(formats, str):
        formats = [formats]
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ValueError(f"unknown action format(s) {bad}; known: {', '.join(FORMATS)}")
    return frozenset(formats)


#: OpenAI ``tools`` list for every tool (`tool_schemas` filters by format)
TOOL_SCHEMAS: list[dict[str, Any]] = tool_schemas(None)


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def _q(s: str, n: int = 80) -> str:
    """Quote a line for a message, shortened."""
    s = s if len(s) <= n else s[: n - 3] + "..."
    return repr(s)


@functools.lru_cache(maxsize=32)
def _split_lines(content: str) -> "tuple[list[str], _LineStarts, bool]":
    """Lines without their newline, char offset of each line start (plus the
    end), and whether the content ends with a newline.

    Cached (a step splits the same file several times); callers must not mutate
    the lists."""
    if not content:
        return [], _LineStarts([], 0), True
    final_nl = content.endswith("\n")
    lines = (content[:-1] if final_nl else content).split("\n")
    return lines, _LineStarts(lines, len(content)), final_nl


class _LineStarts:
    """``starts[i]``: char offset of line i; ``starts[len(lines)]``: the content's length.
    (Line i starts after the i newlines and the characters of the lines before it.)
    An edit reads two or three of them: the first few are summed on demand, a table
    of all is built only for callers that read more."""

    __slots__ = ("_lines", "_end", "_sums", "_reads")

    def __init__(self, lines: list[str], end: int):
        self._lines, self._end = lines, end
        self._sums: list[int] | None = None
        self._reads = 0

    def __len__(self) -> int:
        return len(self._lines) + 1

    def __getitem__(self, i: int) -> int:
        n = len(self._lines) + 1
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("line start index out of range")
        if self._sums is None:
            self._reads += 1
            if self._reads <= 3:
                return min(sum(map(len, self._lines[:i])) + i, self._end)
            self._sums = list(accumulate(map(len, self._lines), initial=0))
        return min(self._sums[i] + i, self._end)


def _keep_lines(content: str) -> list[str]:
    """Lines with their "\\n" (the last may lack it); splits on \\n only."""
    if not content:
        return []
    parts = content.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _looks_like_filename(s: str, known_exts_only: bool = False) -> bool:
    if not s or len(s) > 255 or not _SIMPLE_PATH_RE.fullmatch(s):
        return False
    base, dot, ext = s.rpartition(".")
    if not dot or not base or base.endswith(("/", ".")) or not ext or not ext[0].isalpha():
        return False
    if known_exts_only and "." + ext not in all_extensions() and "." + ext.lower() not in all_extensions():
        return False
    return True


def _clean_path(raw: str, what: str) -> str:
    """A workspace-relative POSIX path, or _Fail."""
    p = raw.strip()
    if len(p) >= 2 and p[0] == p[-1] and p[0] in "\"'`":
        p = p[1:-1].strip()
    if not p:
        raise _Fail(f"{what}: the path is empty")
    if any(ord(c) < 32 or ord(c) == 127 for c in p) or _BAD_CHAR_RE.search(p):
        raise _Fail(f"{what}: the path {_q(p)} contains control characters")
    if "\\" in p:
        raise _Fail(f"{what}: the path {_q(p)} uses backslashes; write paths with '/'")
    if p.startswith("/") or re.match(r"[A-Za-z]:", p) or p.startswith("~"):
        raise _Fail(f"{what}: the path {_q(p)} is absolute; paths are relative to the workspace root")
    n = posixpath.normpath(p)
    if n in (".", "..") or n.startswith("../"):
        raise _Fail(f"{what}: the path {_q(p)} is outside the workspace")
    return n


class _Chunk:
    """A run of file content; ``tstart >= 0`` when it is verbatim action text
    (normalised coordinates) written by the construct ``src``."""

    __slots__ = ("text", "tstart", "fmt", "src")

    def __init__(self, text: str, tstart: int = -1, fmt: str = "", src: tuple[int, int] = (0, 0)):
        self.text = text
        self.tstart = tstart
        self.fmt = fmt
        self.src = src

    def sub(self, i: int, j: int) -> "_Chunk":
        return _Chunk(self.text[i:j], self.tstart + i if self.tstart >= 0 else -1, self.fmt, self.src)


class _WFile:
    """A file being edited: chunks that remember which action text wrote them,
    so spans can give their final position in the file."""

    __slots__ = ("chunks", "_content")

    def __init__(self, chunks: list[_Chunk]):
        self.chunks = chunks
        self._content: str | None = None

    @classmethod
    def of(cls, text: str) -> "_WFile":
        return cls([_Chunk(text)] if text else [])

    def content(self) -> str:
        if self._content is None:
            self._content = "".join(c.text for c in self.chunks)
        return self._content

    def replace(self, a: int, b: int, pieces: list[_Chunk]) -> None:
        before: list[_Chunk] = []
        after: list[_Chunk] = []
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


def _trim_final_newline(pieces: list[_Chunk]) -> list[_Chunk]:
    for k in range(len(pieces) - 1, -1, -1):
        t = pieces[k].text
        if t:
            if t.endswith("\n"):
                return pieces[:k] + [pieces[k].sub(0, len(t) - 1)] + pieces[k + 1:]
            return pieces
    return pieces


def _common_indent(lines: Sequence[str]) -> str:
    ind = [l[: len(l) - len(l.lstrip())] for l in lines if l.strip()]
    return os.path.commonprefix(ind) if ind else ""


def _find_all(lines: list[str], needle: list[str], level: str) -> list[int]:
    """Start indexes where ``needle`` matches ``lines`` at a tolerance level:
    "exact", "rstrip" (trailing whitespace ignored) or "indent" (also a
    uniform indentation shift)."""
    m = len(needle)
    n = len(lines)
    if m == 0 or m > n:
        return []
    out: list[int] = []
    if level == "exact":
        first = needle[0]
        i = 0
        while True:
            try:
                i = lines.index(first, i, n - m + 1)
            except ValueError:
                return out
            if lines[i:i + m] == needle:
                out.append(i)
            i += 1
    if level == "rstrip":
        rl = [l.rstrip() for l in lines]
        rn = [l.rstrip() for l in needle]
        return _find_all(rl, rn, "exact")
    # indent: compare with each side's common indentation removed
    k0 = next((k for k, s in enumerate(needle) if s.strip()), None)
    if k0 is None:
        return []
    si = _common_indent(needle)
    rel = [s.rstrip()[len(si):] if s.strip() else "" for s in needle]
    key = needle[k0].strip()
    for p in range(0, n - m + 1):
        if lines[p + k0].strip() != key:
            continue
        window = lines[p:p + m]
        if any(bool(w.strip()) != bool(s.strip()) for w, s in zip(window, needle)):
            continue
        fi = _common_indent(window)
        if all((w.rstrip()[len(fi):] if w.strip() else "") == r for w, r in zip(window, rel)):
            out.append(p)
    return out


def _mismatch_hint(lines: list[str], needle: list[str], path: str) -> str:
    """Why ``needle`` was not found: the closest place and its first difference."""
    k0 = next((k for k, s in enumerate(needle) if s.strip()), None)
    if k0 is None:
        return ""
    key = needle[k0].strip()
    hits = [i for i, l in enumerate(lines) if l.strip() == key]
    if not hits:
        close = difflib.get_close_matches(key, [l.strip() for l in lines[:5000]], n=1, cutoff=0.6)
        msg = f"the line {_q(needle[k0].strip())} does not occur in {path}"
        if close:
            idx = next(i for i, l in enumerate(lines) if l.strip() == close[0])
            msg += f"; the closest line is {idx + 1}: {_q(lines[idx])}"
        return msg
    best_p, best_n = None, -1
    for h in hits[:200]:
        p = h - k0
        cnt = 0
        while cnt < len(needle) and 0 <= p + cnt < len(lines) and lines[p + cnt].rstrip() == needle[cnt].rstrip():
            cnt += 1
        if cnt > best_n:
            best_p, best_n = p, cnt
    assert best_p is not None
    if best_n >= len(needle) or best_p + best_n >= len(lines) or best_p + best_n < 0:
        return f"the lines run past the end of {path}"
    want, have = needle[best_n], lines[best_p + best_n]
    why = " (only the indentation differs)" if want.strip() == have.strip() else ""
    return (f"the closest match starts at line {best_p + 1} of {path}, but line {best_n + 1} of the "
            f"block is {_q(want)} where the file has {_q(have)}{why}")


# ---------------------------------------------------------------------------
# JSON with source positions (for tool-call spans)
# ---------------------------------------------------------------------------


class _LStr(str):
    """A decoded JSON string that remembers where its characters came from:
    ``segs`` = [(vstart, vend, sstart)] with value[vstart:vend] ==
    source[sstart:sstart + vend - vstart]; ``omap`` = source offset of each
    character (escapes map to where the escape starts), plus the end."""

    segs: list[tuple[int, int, int]]
    omap: list[int]


class _LDict(dict):
    start: int
    end: int


def _string_segs(s: str, rs: int, re_: int, value: str) -> tuple[list[tuple[int, int, int]], list[int]]:
    if not _SURROGATE_ESC_RE.search(s, rs, re_):
        # fast path: every escape decodes to one character
        segs = []
        omap: list[int] = []
        d, r = 0, rs
        for a, b in [m.span() for m in _ESC_RE.finditer(s, rs, re_)]:
            if a > r:
                segs.append((d, d + a - r, r))
                omap.extend(range(r, a))
                d += a - r
            omap.append(a)
            d += 1
            r = b
        if re_ > r:
            segs.append((d, d + re_ - r, r))
            omap.extend(range(r, re_))
            d += re_ - r
        omap.append(re_)
        if d == len(value):
            return segs, omap
        return [], [rs] * (len(value) + 1)
    segs = []
    omap: list[int] = []
    d, r = 0, rs
    ms = list(_ESC_RE.finditer(s, rs, re_))
    k = 0
    while k < len(ms):
        m = ms[k]
        if m.start() > r:
            n = m.start() - r
            segs.append((d, d + n, r))
            omap.extend(range(r, m.start()))
            d += n
        r = m.end()
        h = m.group(1)
        if (h is not None and 0xD800 <= int(h, 16) <= 0xDBFF and k + 1 < len(ms)
                and ms[k + 1].start() == m.end() and ms[k + 1].group(1) is not None
                and 0xDC00 <= int(ms[k + 1].group(1), 16) <= 0xDFFF):
            r = ms[k + 1].end()  # a surrogate pair decodes to one character
            k += 1
        omap.append(m.start())
        d += 1
        k += 1
    if re_ > r:
        segs.append((d, d + re_ - r, r))
        omap.extend(range(r, re_))
        d += re_ - r
    omap.append(re_)
    if d != len(value):  # never mis-attribute: no spans rather than wrong ones
        return [], [rs] * (len(value) + 1)
    return segs, omap


def _jloc(s: str, i: int, depth: int = 0) -> tuple[Any, int]:
    """Parse one JSON value at ``s[i:]`` keeping string positions."""
    i = _WS_RE.match(s, i).end()
    c = s[i]
    if c == '"':
        val, end = json.decoder.scanstring(s, i + 1, False)
        ls = _LStr(val)
        ls.segs, ls.omap = _string_segs(s, i + 1, end - 1, val)
        return ls, end
    if c in "{[":
        if depth > 64:
            raise ValueError("JSON nested too deeply")
        close = "}" if c == "{" else "]"
        start = i
        obj: Any = _LDict() if c == "{" else []
        i = _WS_RE.match(s, i + 1).end()
        if s[i] == close:
            out_end = i + 1
        else:
            while True:
                if c == "{":
                    if s[i] != '"':
                        raise ValueError("expected a key")
                    key, i = json.decoder.scanstring(s, i + 1, False)
                    i = _WS_RE.match(s, i).end()
                    if s[i] != ":":
                        raise ValueError("expected ':'")
                    v, i = _jloc(s, i + 1, depth + 1)
                    obj[key] = v
                else:
                    v, i = _jloc(s, i, depth + 1)
                    obj.append(v)
                i = _WS_RE.match(s, i).end()
                if s[i] == ",":
                    i = _WS_RE.match(s, i + 1).end()
                    continue
                if s[i] == close:
                    break
                raise ValueError(f"expected ',' or {close!r}")
            out_end = i + 1
        if isinstance(obj, _LDict):
            obj.start, obj.end = start, out_end
        return obj, out_end
    m = json.scanner.NUMBER_RE.match(s, i)
    if m:
        integer, frac, exp = m.groups()
        if frac or exp:
            return float(integer + (frac or "") + (exp or "")), m.end()
        return int(integer), m.end()
    for lit, val in (("true", True), ("false", False), ("null", None)):
        if s.startswith(lit, i):
            return val, i + len(lit)
    raise ValueError("invalid JSON value")


def _compose(value: Any, outer: _LStr) -> Any:
    """Positions of values parsed from the decoded string ``outer`` are in
    ``outer``'s coordinates; map them to ``outer``'s source."""
    if isinstance(value, _LStr):
        segs: list[tuple[int, int, int]] = []
        oends = [o[1] for o in outer.segs]
        for vs, ve, os_ in value.segs:
            oe = os_ + (ve - vs)
            k = bisect.bisect_right(oends, os_)  # first outer segment ending after os_
            while k < len(outer.segs) and outer.segs[k][0] < oe:
                ovs, ove, ots = outer.segs[k]
                lo, hi = max(os_, ovs), min(oe, ove)
                if lo < hi:
                    segs.append((vs + lo - os_, vs + hi - os_, ots + lo - ovs))
                k += 1
        out = _LStr(str(value))
        out.segs = segs
        out.omap = [outer.omap[min(j, len(outer.omap) - 1)] for j in value.omap]
        return out
    if isinstance(value, dict):
        d = _LDict({k: _compose(v, outer) for k, v in value.items()})
        d.start, d.end = getattr(value, "start", 0), getattr(value, "end", 0)
        return d
    if isinstance(value, list):
        return [_compose(v, outer) for v in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _is_call(o: Any) -> bool:
    if not isinstance(o, dict):
        return False
    if isinstance(o.get("tool_calls"), list):
        return bool(o["tool_calls"]) and all(_is_call(x) for x in o["tool_calls"])
    f = o.get("function")
    if isinstance(f, dict) and isinstance(f.get("name"), str):
        return True
    n = o.get("name")
    return isinstance(n, str) and ("arguments" in o or "parameters" in o or n in _TOOLS)


def _is_tool_json(o: Any) -> bool:
    if isinstance(o, list):
        return bool(o) and all(_is_call(x) for x in o)
    return _is_call(o)


# ---------------------------------------------------------------------------
# Parsed structures
# ---------------------------------------------------------------------------


@dataclass
class _Fence:
    open_start: int
    content_start: int
    content_end: int
    close_end: int
    indent: str
    marker: str
    info: str
    closed: bool


@dataclass
class _Hunk:
    header: str
    old_start: int | None
    old_count: int | None
    start: int  # source: start of the @@ line
    end: int = 0
    # (kind, ts, te, newline_in_text, no_newline_marker); content = norm[ts:te]
    lines: list[list[Any]] = field(default_factory=list)


@dataclass
class _FilePatch:
    start: int
    old: str | None = None  # raw header paths; "/dev/null" kept as is
    new: str | None = None
    git_old: str | None = None
    git_new: str | None = None
    headers: bool = False
    from_git: bool = False
    implicit: str | None = None  # target of header-less hunks
    new_file: bool = False
    deleted_file: bool = False
    rename_from: str | None = None
    rename_to: str | None = None
    binary: bool = False
    hunks: list[_Hunk] = field(default_factory=list)
    end: int = 0


@dataclass
class _Op:
    pos: int
    fmt: str
    kind: str  # write | patch | sr | str_replace | insert | tool | submit
    src: tuple[int, int] = (0, 0)
    path: str = ""
    pieces: list[_Chunk] = field(default_factory=list)
    data: Any = None
    label: str = ""


# ---------------------------------------------------------------------------
# The parser
# ---------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: Any, files: Mapping[str, Any], main_file: str,
                 allowed: frozenset[str], max_chars: int | None):
        self.raw = text
        self.files = files
        self.main_file = main_file
        self.allowed = allowed
        self.max_chars = max_chars
        self.warnings: list[str] = []
        self.ops: list[_Op] = []
        self.formats_seen: list[tuple[int, str]] = []
        self.ignored_blocks: list[str] = []
        self.cur: dict[str, _WFile | None] = {}
        self.touched: list[str] = []
        self.blocks: list[tuple[str, int, int, bool, _LStr | None, str]] = []
        self.tool_calls: list[ToolCall] = []
        self.submit = False
        self.n_sr = 0
        self.n_call = 0
        self._nl: list[int] | None = None
        self._diff_lines = 0
        self._sr_regions: list[tuple[int, list[tuple[int, int, int]], str | None, _Fence | None]] = []
        self._last_sr_path: str | None = None
        self._pathless_disallowed: list[tuple[_Fence, str]] = []

    # -- entry ------------------------------------------------------------

    def fail_result(self, msg: str, with_help: bool = True) -> ParsedAction:
        if with_help:
            msg = msg.rstrip() + "\n\n" + _accepted_help(self.allowed, self.main_file)
        return ParsedAction(error=msg, warnings=list(self.warnings),
                            formats_used=self._formats_used())

    def run(self) -> ParsedAction:
        text = self.raw
        if isinstance(text, (bytes, bytearray, memoryview)):
            text = bytes(text).decode("utf-8", errors="replace")
            self._warn("the action was bytes; decoded as UTF-8 with replacement characters")
        if not isinstance(text, str):
            return self.fail_result(f"the action must be text, not {type(self.raw).__name__}")
        if self.max_chars is not None and len(text) > self.max_chars:
            return self.fail_result(
                f"the action is {len(text):,} characters long; the limit is {self.max_chars:,}. "
                "Write a shorter action (a diff or search/replace edit instead of whole files)")
        if not text.strip():
            return self.fail_result("the action is empty")
        self.orig_text = text
        self._normalise(text)
        try:
            self._collect()
            if not self.ops:
                return self.fail_result(self._nothing_found())
            self._check_allowed()
            if len(self.ops) > MAX_EDITS:
                raise _Fail(f"the action has {len(self.ops)} edit operations; the limit is {MAX_EDITS}")
            self.ops.sort(key=lambda o: o.pos)
            for op in self.ops:
                getattr(self, "_apply_" + op.kind)(op)
            return self._result()
        except _Fail as e:
            return self.fail_result(str(e))

    # -- text normalisation -----------------------------------------------

    def _normalise(self, text: str) -> None:
        if "\r\n" in text:
            idx = [m.start() for m in re.finditer("\r\n", text)]
            self.norm = text.replace("\r\n", "\n")
            # the "\n" that replaced the k-th "\r\n" sits at idx[k] - k in norm
            self.crlf = [p - k for k, p in enumerate(idx)]
        else:
            self.norm = text
            self.crlf = []

    def _orig(self, n: int) -> int:
        if not self.crlf:
            return n
        return n + bisect.bisect_left(self.crlf, n)

    def _line(self, pos: int) -> int:
        if self._nl is None:  # built once, on demand: messages need line numbers
            self._nl = [m.start() for m in re.finditer("\n", self.norm)]
        return bisect.bisect_left(self._nl, pos) + 1

    def _warn(self, msg: str) -> None:
        # capped: hostile input must not produce a million warnings
        if len(self.warnings) < 20:
            self.warnings.append(msg)
        elif len(self.warnings) == 20:
            self.warnings.append("(more warnings were left out)")

    def _line_at(self, pos: int) -> tuple[int, int, int]:
        """(start, end, next) of the line containing pos."""
        s = self.norm.rfind("\n", 0, pos) + 1
        e = self.norm.find("\n", pos)
        if e < 0:
            return s, len(self.norm), len(self.norm)
        return s, e, e + 1

    def _prev_line(self, pos: int) -> str | None:
        """The line ending right before ``pos`` (which starts a line)."""
        if pos <= 0:
            return None
        s = self.norm.rfind("\n", 0, pos - 1) + 1
        return self.norm[s:pos - 1]

    def _seen(self, pos: int, fmt: str) -> None:
        self.formats_seen.append((pos, fmt))

    def _formats_used(self) -> list[str]:
        out: list[str] = []
        for _p, f in sorted(self.formats_seen, key=lambda t: t[0]):
            if f not in out:
                out.append(f)
        return out

    def _known_file(self, p: str) -> bool:
        return p in self.files or p == self.main_file

    def _label_path(self, line: str | None) -> str | None:
        """A file name written on a line of its own (``a.py``, ``**a.py**``, ``a.py:``)."""
        if line is None:
            return None
        s = line.strip()
        if not s or len(s) > 300:
            return None
        s = s.strip("*_`#> \t")
        s = _LABEL_PREFIX_RE.sub("", s, count=1) if _LABEL_PREFIX_RE.match(s) else s
        s = s.strip("*_` \t").rstrip(":").strip("*_` \t")
        if not _SIMPLE_PATH_RE.fullmatch(s or "-"):
            return None
        if _looks_like_filename(s) or self._known_file(s):
            return s
        return None

    # -- scanning ---------------------------------------------------------

    def _scan_fences(self) -> list[_Fence]:
        norm = self.norm
        ms = []
        for m in _FENCE_RE.finditer(norm):
            ms.append(m)
            if len(ms) > MAX_FENCE_LINES:
                raise _Fail(f"the action has more than {MAX_FENCE_LINES} code fence lines (```); "
                            "write fewer code blocks")
        fences: list[_Fence] = []
        nesting = True
        i = 0
        while i < len(ms):
            m = ms[i]
            marker = m.group(2)
            ch, L = marker[0], len(marker)
            info = m.group(3)
            if ch == "`" and "`" in info:  # ```x``` on one line is inline code
                i += 1
                continue
            j = None
            if nesting:
                # A "```lang" line inside a block opens a nested block (a
                # markdown string in the code); a bare fence closes the innermost.
                depth = 0
                for k in range(i + 1, len(ms)):
                    g = ms[k].group(2)
                    if g[0] != ch or len(g) < L:
                        continue
                    inf = ms[k].group(3).strip()
                    if not inf:
                        if depth == 0:
                            j = k
                            break
                        depth -= 1
                    elif not (ch == "`" and "`" in inf):
                        depth += 1
                if j is None:
                    nesting = False  # at most one failed nested scan: stays linear
            if j is None:
                for k in range(i + 1, len(ms)):
                    g = ms[k].group(2)
                    if g[0] == ch and len(g) >= L and not ms[k].group(3).strip():
                        j = k
                        break
            cstart = min(m.end() + 1, len(norm))
            if j is None:
                fences.append(_Fence(m.start(), cstart, len(norm), len(norm), m.group(1), marker, info, False))
                break
            c = ms[j]
            fences.append(_Fence(m.start(), cstart, max(c.start(), cstart), min(c.end() + 1, len(norm)),
                                 m.group(1), marker, info, True))
            i = j + 1
        self.fences = fences
        self._fence_starts = [f.open_start for f in fences]
        return fences

    def _fence_of(self, pos: int) -> _Fence | None:
        k = bisect.bisect_right(self._fence_starts, pos) - 1
        if k >= 0:
            f = self.fences[k]
            if f.open_start <= pos < f.close_end:
                return f
        return None

    def _in_consumed(self, pos: int) -> bool:
        k = bisect.bisect_right(self._consumed_starts, pos) - 1
        return k >= 0 and pos < self._consumed[k][1]

    def _consume(self, a: int, b: int) -> None:
        k = bisect.bisect_left(self._consumed_starts, a)
        self._consumed.insert(k, (a, b))
        self._consumed_starts.insert(k, a)

    def _in_prose(self, pos: int) -> bool:
        return self._fence_of(pos) is None and not self._in_consumed(pos)

    # -- collecting operations --------------------------------------------

    def _collect(self) -> None:
        norm = self.norm
        self._scan_fences()
        self._consumed: list[tuple[int, int]] = []
        self._consumed_starts: list[int] = []
        sr_marks = []
        for m in _SR_RE.finditer(norm):
            sr_marks.append((m.start(), m.end(), 0 if m.group(1) else 1 if m.group(2) else 2))
            if len(sr_marks) > MAX_MARKER_LINES:
                raise _Fail(f"the action has more than {MAX_MARKER_LINES} SEARCH/REPLACE marker lines")
        self._sr_marks = sr_marks
        self._sr_starts = [m[0] for m in sr_marks]
        candidates: list[tuple[_Fence, str]] = []
        for f in self.fences:
            self._classify_fence(f, candidates)
        self._pathless(candidates)
        # prose: <tool_call> tags, SEARCH/REPLACE, diffs, bare JSON, submit
        end_tag = -2
        for m in _TOOL_TAG_RE.finditer(norm):
            if not self._in_prose(m.start()):
                continue
            if end_tag != -1 and end_tag < m.end():  # search again only past the last hit: linear
                end_tag = norm.find("</tool_call>", m.end())
            fence_after = bisect.bisect_right(self._fence_starts, m.start())
            limit = self.fences[fence_after].open_start if fence_after < len(self.fences) else len(norm)
            stop = end_tag if 0 <= end_tag <= limit else limit
            self._tool_region(m.end(), stop, strict=True, where=f"<tool_call> at line {self._line(m.start())}")
            self._consume(m.start(), stop + (len("</tool_call>") if stop == end_tag else 0))
        # SEARCH/REPLACE regions in text order (a block may inherit the previous block's path)
        groups: dict[int, list[tuple[int, int, int]]] = {}
        for mk in sr_marks:
            if self._in_prose(mk[0]):
                groups.setdefault(bisect.bisect_right(self._fence_starts, mk[0]), []).append(mk)
        regions = self._sr_regions + [(g[0][0], g, None, None) for g in groups.values()]
        for _pos, marks, fpath, fence in sorted(regions, key=lambda r: r[0]):
            self._sr_region(marks, fence_path=fpath, fence=fence)
        for m in _DIFF_START_RE.finditer(norm):
            if self._in_prose(m.start()):
                patches, stop = self._parse_diff(m.start(), len(norm), bare=True, default=None)
                self._patch_ops(patches)
                self._consume(m.start(), max(stop, m.end()))
        attempts = scanned = 0
        for m in _JSON_START_RE.finditer(norm):
            scanned += 1
            if attempts >= 64 or scanned > 20_000:  # bounded work on JSON-looking garbage
                break
            s = m.end() - 1
            if not self._in_prose(s):
                continue
            attempts += 1
            try:
                obj, e = _JSON_DECODER.raw_decode(norm, s)
            except (ValueError, RecursionError):
                continue
            if _is_tool_json(obj):
                self._tool_values([(obj, s, e)], where=f"the JSON at line {self._line(s)}")
            self._consume(s, e)
        if not any(op.kind == "submit" for op in self.ops):
            for m in _SUBMIT_RE.finditer(norm):
                if self._in_prose(m.start()):
                    self._add_submit(m.start(), "submit", (m.start(), m.end()))
                    break  # several submit lines submit once

    def _add_op(self, op: _Op) -> None:
        self.ops.append(op)
        if len(self.ops) > MAX_EDITS:
            raise _Fail(f"the action has more than {MAX_EDITS} edit operations; write fewer, larger edits")

    def _add_submit(self, pos: int, fmt: str, src: tuple[int, int]) -> None:
        self._seen(pos, fmt)
        if fmt != "submit":
            self._seen(pos, "submit")
        self._add_op(_Op(pos, fmt, "submit", src))

    def _info(self, info: str) -> tuple[str, str | None]:
        """Language and path of a fence's info string."""
        info = info.strip()
        if not info:
            return "", None
        path = None
        m = _PATH_KV_RE.search(info)
        if m:
            path = next(g for g in m.groups() if g is not None)
        toks = info.split()
        first = toks[0] if "=" not in toks[0] else ""
        first = first.strip("{}")
        if first.startswith("."):
            first = first[1:]
        lang = first
        if ":" in first:
            lang, _, p = first.partition(":")
            if p and path is None:
                path = p
        elif path is None and _looks_like_filename(first, known_exts_only=True):
            path = first
            lang = _lang_for_path(first)
        elif path is None and len(toks) >= 2 and "=" not in toks[1] and _looks_like_filename(toks[1]):
            path = toks[1]
        return lang.lower(), path

    def _fence_label(self, f: _Fence) -> str:
        info = f.info.strip()
        return f"{f.marker}{info[:40]}" + ("..." if len(info) > 40 else "")

    def _would_edit(self, lang: str, path: str | None) -> bool:
        return bool(path) or lang not in _NON_EDIT_LANGS and not (lang in _QUIET_LANGS and lang not in _JSON_LANGS)

    def _compatible(self, lang: str) -> bool | None:
        """Can a block in ``lang`` be the main file? None = not a known language."""
        exts = extensions_of(lang)
        if exts is None:
            return None
        mext = _ext(self.main_file)
        if mext not in all_extensions() and mext.lower() not in all_extensions():
            return lang not in _QUIET_LANGS
        return mext in exts or mext.lower() in exts

    def _classify_fence(self, f: _Fence, candidates: list[tuple[_Fence, str]]) -> None:
        norm = self.norm
        lang, path = self._info(f.info)
        label_path = None
        if path is None:
            label_path = self._label_path(self._prev_line(f.open_start))
        where = f"the code block at line {self._line(f.open_start)} ({self._fence_label(f)})"
        if not f.closed:
            if self._would_edit(lang, path or label_path):
                raise _Fail(
                    f"{where} is never closed: end it with a line holding only {f.marker}. "
                    "(If your answer was cut off, write a shorter edit.)")
            self._warn(f"{where} is never closed; it was ignored")
            return
        cs, ce = f.content_start, f.content_end
        k0 = bisect.bisect_left(self._sr_starts, cs)
        k1 = bisect.bisect_left(self._sr_starts, ce)
        marks = self._sr_marks[k0:k1]
        first_nb = _NONWS_RE.search(norm, cs, ce)
        starts_json = first_nb is not None and norm[first_nb.start()] in "{["
        if lang in _JSON_LANGS or (lang == "" and starts_json):
            if starts_json:
                vals = self._json_values(cs, ce)
                if vals is not None and all(_is_tool_json(v[0]) for v in vals) and vals:
                    self._tool_values(vals, where=where)
                    return
            if lang in _TOOL_LANGS:
                raise _Fail(f"{where} is not a valid tool call: expected JSON like "
                            '{"name": "view_file", "arguments": {"path": "main.py"}}')
        fence_path = path or label_path
        if any(mk[2] == 0 for mk in marks):
            self._sr_regions.append((f.open_start, marks, fence_path, f))
            return
        # content that reads as a diff is one, unless the block names the file it replaces
        if lang in _DIFF_LANGS or (fence_path is None and self._looks_like_diff(cs, ce)):
            patches, _ = self._parse_diff(cs, ce, bare=False, default=fence_path or self.main_file)
            if not patches:
                raise _Fail(f"{where} is marked as a diff but has no file headers or @@ hunks")
            self._patch_ops(patches)
            return
        content_start = cs
        if fence_path is None and cs < ce:
            e = norm.find("\n", cs, ce)
            first_line = norm[cs:e if e >= 0 else ce]
            m = _PATH_COMMENT_RE.fullmatch(first_line) if len(first_line) < 300 else None
            if m:
                fence_path = m.group(1)
                content_start = e + 1 if e >= 0 else ce
        if fence_path is not None:
            self._write_op(f, fence_path, content_start, where)
            return
        body = norm[cs:ce]
        if body.strip().lower() == "submit" and lang in ("", "text", "txt", "plaintext"):
            self._add_submit(cs, "submit", (f.open_start, f.close_end))
            return
        if lang in _NON_EDIT_LANGS or lang in _QUIET_LANGS:
            self.ignored_blocks.append(f"```{lang} at line {self._line(f.open_start)}")
            return
        if lang and self._compatible(lang) is False:
            self.ignored_blocks.append(f"```{lang} at line {self._line(f.open_start)}")
            self._warn(
                f"{where} was not used: a {lang} block cannot replace {self.main_file} "
                f"(add path=... to the fence to write another file)")
            return
        if not body.strip():
            self._warn(f"{where} is empty; it was ignored")
            return
        candidates.append((f, where))

    def _pathless(self, candidates: list[tuple[_Fence, str]]) -> None:
        if not candidates:
            return
        if "code_block" not in self.allowed:
            # illustrations are fine next to an accepted edit; alone, they are the mistake
            self._pathless_disallowed = candidates
            return
        f, where = candidates[-1]
        if len(candidates) > 1:
            others = ", ".join(str(self._line(c.open_start)) for c, _ in candidates[:-1])
            self._warn(
                f"{len(candidates)} code blocks have no path; only the last one (line "
                f"{self._line(f.open_start)}) replaces {self.main_file}; ignored the ones at line(s) {others}")
        self._write_op(f, self.main_file, f.content_start, where)

    def _write_op(self, f: _Fence, raw_path: str, content_start: int, where: str) -> None:
        path = _clean_path(raw_path, where)
        ce = f.content_end
        src = (f.open_start, f.close_end)
        pieces: list[_Chunk] = []
        if not f.indent:
            pieces.append(_Chunk(self.norm[content_start:ce], content_start, "code_block", src))
        else:
            # an indented fence (inside a list): strip that indentation from each line
            pos = content_start
            ind = len(f.indent)
            while pos < ce:
                e = self.norm.find("\n", pos, ce)
                e = ce if e < 0 else e + 1
                k = 0
                while k < ind and pos + k < e and self.norm[pos + k] in " \t":
                    k += 1
                pieces.append(_Chunk(self.norm[pos + k:e], pos + k, "code_block", src))
                pos = e
        self._seen(f.open_start, "code_block")
        self._add_op(_Op(f.open_start, "code_block", "write", src, path, pieces, label=where))
        self.blocks.append((path, content_start, ce, False, None, "code_block"))

    # -- search/replace ---------------------------------------------------

    def _sr_region(self, marks: list[tuple[int, int, int]], fence_path: str | None,
                   fence: _Fence | None = None) -> None:
        norm = self.norm
        prev_path = self._last_sr_path
        k = 0
        while k < len(marks):
            s0, e0, kind = marks[k]
            if kind == 1:  # a stray ======= (e.g. a reST underline) is text
                k += 1
                continue
            if kind == 2:
                if fence is not None or self._in_prose(s0):
                    raise _Fail(f"line {self._line(s0)}: found >>>>>>> REPLACE without a <<<<<<< SEARCH before it")
                k += 1
                continue
            self.n_sr += 1
            name = f"SEARCH/REPLACE block {self.n_sr} (line {self._line(s0)})"
            if k + 1 >= len(marks) or marks[k + 1][2] != 1:
                raise _Fail(f"{name}: missing the ======= line after the SEARCH part")
            d0, d1, _ = marks[k + 1]
            j = k + 2
            while j < len(marks) and marks[j][2] == 1:
                j += 1  # "=======" inside the REPLACE part is content
            if j >= len(marks) or marks[j][2] != 2:
                raise _Fail(f"{name}: missing the >>>>>>> REPLACE line")
            r0, r1, _ = marks[j]
            ssearch = min(e0 + 1, d0)
            srep = min(d1 + 1, r0)
            src_start = s0
            own = self._label_path(self._prev_line(s0))
            if own is not None and (fence is None or self._prev_line_start(s0) >= fence.content_start):
                src_start = self._prev_line_start(s0)
                raw = own
            elif fence_path is not None:
                raw = fence_path
            elif prev_path is not None:
                raw = prev_path
            else:
                raw = self.main_file
            path = _clean_path(raw, name)
            prev_path = path
            name = f"SEARCH/REPLACE block {self.n_sr} ({path}, line {self._line(s0)})"
            src = (src_start, min(r1 + 1, len(norm)))
            search = norm[ssearch:d0]
            piece = _Chunk(norm[srep:r0], srep, "search_replace", src)
            self._seen(src_start, "search_replace")
            self._add_op(_Op(s0, "search_replace", "sr", src, path, [piece], data=search, label=name))
            self.blocks.append((path, srep, r0, False, None, "search_replace"))
            if fence is None:
                self._consume(src[0], src[1])
            k = j + 1
        self._last_sr_path = prev_path

    def _prev_line_start(self, pos: int) -> int:
        return self.norm.rfind("\n", 0, max(pos - 1, 0)) + 1 if pos > 0 else 0

    # -- unified diff -----------------------------------------------------

    def _looks_like_diff(self, cs: int, ce: int) -> bool:
        m = _NONWS_RE.search(self.norm, cs, ce)
        if m is None:
            return False
        s, e, nxt = self._line_at(m.start())
        line = self.norm[s:min(e, ce)]
        if line.startswith("diff --git "):
            return True
        return line.startswith("--- ") and self.norm.startswith("+++ ", nxt) and nxt < ce

    def _is_header(self, pos: int, end: int) -> bool:
        """Is the line at pos a '--- x' line followed by '+++ y' (and then a hunk or the end)?"""
        norm = self.norm
        if not norm.startswith("--- ", pos):
            return False
        e = norm.find("\n", pos, end)
        if e < 0 or not norm.startswith("+++ ", e + 1):
            return False
        e2 = norm.find("\n", e + 1, end)
        if e2 < 0:
            return True
        return norm.startswith(("@@", "\n", "diff ", "--- "), e2 + 1) or e2 + 1 >= end

    def _parse_diff(self, start: int, end: int, bare: bool, default: str | None) -> tuple[list[_FilePatch], int]:
        norm = self.norm
        patches: list[_FilePatch] = []
        cur: _FilePatch | None = None
        hunk: _Hunk | None = None
        pos = start
        while pos < end:
            self._diff_lines += 1
            if self._diff_lines > MAX_DIFF_LINES:
                raise _Fail(f"the diffs in this action have more than {MAX_DIFF_LINES} lines")
            nl = norm.find("\n", pos, end)
            le = nl if nl >= 0 else end
            nxt = le + 1 if nl >= 0 else end
            line = norm[pos:le]
            if hunk is not None:
                c = line[:1]
                if c == " " or (c in "+-" and line and not self._is_header(pos, end)):
                    hunk.lines.append([c, pos + 1, le, nl >= 0, False])
                    hunk.end = nxt
                    pos = nxt
                    continue
                if c == "\\":
                    if hunk.lines:
                        hunk.lines[-1][4] = True
                    hunk.end = nxt
                    pos = nxt
                    continue
                if not line.strip():
                    # blank lines are empty context lines if the hunk goes on after them
                    nb = _NONWS_RE.search(norm, pos, end)
                    q = norm.rfind("\n", pos, nb.start()) + 1 if nb else end
                    if q < end and norm[q] in " +-\\" and not self._is_header(q, end):
                        while pos < q:
                            self._diff_lines += 1
                            if self._diff_lines > MAX_DIFF_LINES:
                                raise _Fail(f"the diffs in this action have more than {MAX_DIFF_LINES} lines")
                            e2 = norm.find("\n", pos, end)
                            e2 = end if e2 < 0 else e2
                            hunk.lines.append([" ", pos, pos, e2 < end, False])
                            pos = e2 + 1
                        hunk.end = pos
                        continue
                hunk = None
            if line.startswith("diff --git "):
                cur = _FilePatch(start=pos, from_git=True)
                m = re.match(r"diff --git (?:a/)?(\S+) (?:b/)?(\S+)\s*$", line) if len(line) < 1000 else None
                if m:
                    cur.git_old, cur.git_new = m.group(1), m.group(2)
                patches.append(cur)
            elif line.startswith("--- ") and norm.startswith("+++ ", nxt) and nxt < end:
                e2 = norm.find("\n", nxt, end)
                e2 = end if e2 < 0 else e2
                old, new = line[4:], norm[nxt + 4:e2]
                if cur is None or not cur.from_git or cur.headers or cur.hunks:
                    cur = _FilePatch(start=pos)
                    patches.append(cur)
                    if len(patches) > MAX_EDITS:
                        raise _Fail(f"the action has more than {MAX_EDITS} file diffs")
                cur.old, cur.new, cur.headers = old, new, True
                cur.end = min(e2 + 1, end)
                pos = min(e2 + 1, end)
                continue
            elif line.startswith("@@"):
                if cur is None:
                    if bare or default is None:
                        break
                    cur = _FilePatch(start=pos, implicit=default)
                    patches.append(cur)
                lm = _HUNK_LABEL_RE.match(line)
                header = lm.group(0) if lm else line[:60]
                hm = _HUNK_RE.match(line)
                hunk = _Hunk(header=header, start=pos,
                             old_start=int(hm.group(1)) if hm else None,
                             old_count=(int(hm.group(2)) if hm.group(2) is not None else 1) if hm else None)
                hunk.end = nxt
                cur.hunks.append(hunk)
            elif cur is not None and not cur.hunks and _GIT_EXT_RE.match(line):
                if line.startswith("new file mode"):
                    cur.new_file = True
                elif line.startswith("deleted file mode"):
                    cur.deleted_file = True
                elif line.startswith("rename from "):
                    cur.rename_from = line[len("rename from "):].strip()
                elif line.startswith("rename to "):
                    cur.rename_to = line[len("rename to "):].strip()
                elif line.startswith(("Binary files", "GIT binary patch")):
                    cur.binary = True
            elif bare:
                break
            elif not line.strip() or cur is None:
                pass  # blank lines, and text before the first header, are not part of the diff
            else:
                raise _Fail(
                    f"line {self._line(pos)} of the diff is not part of a hunk: {_q(line)} "
                    "(inside a hunk every line starts with ' ', '+' or '-'; a new hunk starts with @@)")
            pos = nxt
        for a, b in zip(patches, patches[1:]):
            a.end = b.start
        if patches:
            patches[-1].end = max(patches[-1].end, pos)
        return patches, pos

    def _patch_ops(self, patches: list[_FilePatch]) -> None:
        for p in patches:
            self._seen(p.start, "unified_diff")
            self._add_op(_Op(p.start, "unified_diff", "patch", (p.start, p.end), data=p))

    def _diff_path(self, raw: str | None) -> str | None:
        if raw is None:
            return None
        p = raw.split("\t")[0].strip()
        if len(p) >= 2 and p[0] == p[-1] == '"':
            p = p[1:-1]
        if p == "/dev/null":
            return None
        return p

    def _resolve_patch_paths(self, p: _FilePatch) -> tuple[str | None, str | None, str]:
        if p.implicit is not None and not p.headers:
            path = _clean_path(p.implicit, "diff")
            return path, path, path
        old = self._diff_path(p.old) if p.headers else (p.git_old if p.git_old else None)
        new = self._diff_path(p.new) if p.headers else (p.git_new if p.git_new else None)
        if not p.headers and p.from_git:
            old = p.rename_from or old
            new = p.rename_to or new
            if p.new_file:
                old = None
            if p.deleted_file:
                new = None
        # git's a/ b/ prefixes, unless the prefixed path is a real file
        if p.headers and (old is None or old.startswith("a/")) and (new is None or new.startswith("b/")):
            if not (old is not None and self._exists(old)):
                old = old[2:] if old else old
                new = new[2:] if new else new
        for side in ("old", "new"):
            v = old if side == "old" else new
            if v is not None and v.startswith(("a/", "b/")) and not self._exists(v) and self._exists(v[2:]):
                if side == "old":
                    old = v[2:]
                else:
                    new = v[2:]
        what = f"the diff for {new or old}"
        if old is not None:
            old = _clean_path(old, what)
        if new is not None:
            new = _clean_path(new, what)
        if old is None and new is None:
            raise _Fail("a diff has /dev/null on both sides (--- and +++)")
        return old, new, new or old or ""

    # -- tool calls -------------------------------------------------------

    def _json_values(self, s: int, e: int) -> list[tuple[Any, int, int]] | None:
        out = []
        i = _WS_RE.match(self.norm, s).end()
        while i < e:
            try:
                obj, j = _JSON_DECODER.raw_decode(self.norm, i)
            except (ValueError, RecursionError):
                return None
            if j > e:
                return None
            out.append((obj, i, j))
            i = _WS_RE.match(self.norm, j).end()
        return out

    def _tool_region(self, s: int, e: int, strict: bool, where: str) -> None:
        vals = self._json_values(s, e)
        if not vals:
            if strict:
                raise _Fail(f"{where}: could not read the JSON inside (expected "
                            '{"name": "<tool>", "arguments": {...}})')
            return
        if not all(_is_tool_json(v[0]) for v in vals):
            raise _Fail(f"{where}: expected a tool call like "
                        '{"name": "view_file", "arguments": {"path": "main.py"}}')
        self._tool_values(vals, where)

    def _tool_values(self, vals: list[tuple[Any, int, int]], where: str) -> None:
        for _obj, s, e in vals:
            try:
                located, end = _jloc(self.norm, s)
            except (ValueError, IndexError, RecursionError) as ex:
                raise _Fail(f"{where}: could not read the tool call JSON ({ex})") from None
            for name, args, cs, ce, label in self._flatten_calls(located, s, e, where):
                self._tool_op(name, args, cs, ce, label)

    def _flatten_calls(self, o: Any, s: int, e: int, where: str) -> list[tuple[str, dict, int, int, str]]:
        if isinstance(o, list):
            out = []
            for x in o:
                out.extend(self._flatten_calls(x, getattr(x, "start", s), getattr(x, "end", e), where))
            return out
        if isinstance(o.get("tool_calls"), list):
            return self._flatten_calls(o["tool_calls"], s, e, where)
        self.n_call += 1
        f = o.get("function")
        if isinstance(f, dict) and isinstance(f.get("name"), str):
            name, args = str(f["name"]), f.get("arguments", f.get("parameters"))
        else:
            name, args = str(o["name"]), o.get("arguments", o.get("parameters"))
        label = f"tool call {self.n_call} ({name}, line {self._line(s)})"
        if args is None:
            args = {}
        if isinstance(args, str):
            if not args.strip():
                args = {}
            else:
                try:
                    inner, end = _jloc(args, 0)
                    if _WS_RE.match(args, end).end() != len(args):
                        raise ValueError("extra text after the JSON object")
                except (ValueError, IndexError, RecursionError) as ex:
                    raise _Fail(f"{label}: the arguments string is not valid JSON ({ex})") from None
                args = _compose(inner, args) if isinstance(args, _LStr) else inner
        if not isinstance(args, dict):
            raise _Fail(f"{label}: arguments must be a JSON object, got {type(_plain(args)).__name__}")
        return [(name, args, s, e, label)]

    def _tool_op(self, name: str, args: dict, s: int, e: int, label: str) -> None:
        spec = _TOOLS.get(name)
        if spec is None:
            raise _Fail(f"{label}: unknown tool {name!r}; the tools are {', '.join(_TOOLS)}")
        sig = ", ".join(k if req else k + "?" for k, (_t, req, _d) in spec.items())
        for k in args:
            if k not in spec:
                raise _Fail(f"{label}: unknown argument {k!r}; {name} takes ({sig})")
        clean: dict[str, Any] = {}
        for k, (typ, req, _d) in spec.items():
            if k not in args or args[k] is None:
                if req:
                    raise _Fail(f"{label}: missing argument {k!r}; {name} takes ({sig})")
                continue
            v = args[k]
            if typ is int:
                if isinstance(v, str) and v.strip().lstrip("-").isdigit():
                    v = int(v.strip())
                elif isinstance(v, float) and v.is_integer():
                    v = int(v)
                if not isinstance(v, int) or isinstance(v, bool):
                    raise _Fail(f"{label}: argument {k!r} must be an integer, got {_q(json.dumps(_plain(v)))}")
            elif not isinstance(v, str):
                raise _Fail(f"{label}: argument {k!r} must be a string, got {type(_plain(v)).__name__}")
            clean[k] = v
        src = (s, e)
        if name == "submit":
            self._add_submit(s, "tool_call", src)
            return
        self._seen(s, "tool_call")
        if "path" in clean:
            clean["path"] = _clean_path(clean["path"], label)
        if name in ("view_file", "run_tests"):
            for k in ("start_line", "end_line"):
                if k in clean and clean[k] < 1:
                    raise _Fail(f"{label}: {k} must be at least 1")
            self._add_op(_Op(s, "tool_call", "tool", src, data=ToolCall(name, _plain(clean), self._orig(s), self._orig(e))))
            return
        path = clean["path"]
        if name == "write_file":
            pieces = self._lstr_pieces(clean["content"], src)
            self._add_op(_Op(s, "tool_call", "write", src, path, pieces, label=label))
            self._add_block(path, clean["content"])
        elif name == "str_replace":
            pieces = self._lstr_pieces(clean["new_str"], src)
            self._add_op(_Op(s, "tool_call", "str_replace", src, path, pieces, data=str(clean["old_str"]), label=label))
            self._add_block(path, clean["new_str"])
        elif name == "insert":
            if clean["line"] < 0:
                raise _Fail(f"{label}: line must be 0 (top of the file) or more")
            pieces = self._lstr_pieces(clean["text"], src)
            if clean["text"] and not clean["text"].endswith("\n"):
                pieces.append(_Chunk("\n"))
            self._add_op(_Op(s, "tool_call", "insert", src, path, pieces, data=clean["line"], label=label))
            self._add_block(path, clean["text"])

    def _add_block(self, path: str, v: Any) -> None:
        if isinstance(v, _LStr) and v.omap:
            lo, hi = v.omap[0], v.omap[-1]
            self.blocks.append((path, lo, hi, False, v, "tool_call"))

    def _lstr_pieces(self, v: Any, src: tuple[int, int]) -> list[_Chunk]:
        text = str(v)
        segs = sorted(getattr(v, "segs", []))
        out: list[_Chunk] = []
        d = 0
        for vs, ve, ts in segs:
            if vs > d:
                out.append(_Chunk(text[d:vs]))
            piece = self.norm[ts:ts + ve - vs]
            if piece != text[vs:ve]:  # defensive: only verbatim text gets a span
                out.append(_Chunk(text[vs:ve]))
            else:
                out.append(_Chunk(piece, ts, "tool_call", src))
            d = ve
        if d < len(text):
            out.append(_Chunk(text[d:]))
        return out or [_Chunk("")]

    # -- checks and diagnostics ---------------------------------------------

    def _check_allowed(self) -> None:
        bad: list[str] = []
        for op in self.ops:
            if op.fmt not in self.allowed and op.fmt not in bad:
                bad.append(op.fmt)
            if op.kind == "submit" and "submit" not in self.allowed and "submit" not in bad:
                bad.append("submit")
        pd = self._pathless_disallowed
        if pd:
            self._warn(
                f"ignored {len(pd)} code block(s) without a path (code_block edits are not accepted here)")
        if bad:
            which = " and ".join(bad)
            raise _Fail(f"this action uses {which}, which {'is' if len(bad) == 1 else 'are'} not accepted here")

    def _nothing_found(self) -> str:
        if self._pathless_disallowed:
            return ("the code block(s) in this action would replace a whole file, but whole-file "
                    "code blocks are not accepted here")
        parts = ["no edit, tool call or submit was found in the action"]
        if self.ignored_blocks:
            parts.append(
                f"; these code blocks are not read as code for {self.main_file}: "
                + ", ".join(self.ignored_blocks[:5])
                + f". Label the block with its language or path, e.g. ```{_lang_for_path(self.main_file) or 'text'} "
                f"path={self.main_file}")
        elif "<<<<<<<" in self.norm or ">>>>>>>" in self.norm:
            parts.append("; SEARCH/REPLACE markers must be alone on their lines: "
                         "<<<<<<< SEARCH, =======, >>>>>>> REPLACE")
        elif "@@" in self.norm:
            parts.append("; a diff needs '--- a/<path>' and '+++ b/<path>' header lines "
                         "(or a ```diff block)")
        return "".join(parts)

    # -- applying ---------------------------------------------------------

    def _exists(self, path: str) -> bool:
        if path in self.cur:
            return self.cur[path] is not None
        return path in self.files and self.files[path] is not None

    def _get(self, path: str, what: str) -> _WFile | None:
        if path not in self.cur:
            if path not in self.files or self.files[path] is None:
                return None
            v = self.files[path]
            if not isinstance(v, str):
                raise _Fail(f"{what}: {path} is not a text file and cannot be edited")
            self.cur[path] = _WFile.of(v)
        return self.cur[path]

    def _set(self, path: str, w: _WFile | None) -> None:
        self.cur[path] = w
        if path not in self.touched:
            self.touched.append(path)

    def _files_list(self) -> str:
        names = sorted(p for p in set(self.files) | set(self.cur) if self._exists(p))
        if not names:
            return "the workspace is empty"
        return "files: " + ", ".join(names[:12]) + (" ..." if len(names) > 12 else "")

    def _apply_write(self, op: _Op) -> None:
        if self._exists(op.path):
            self._get(op.path, op.label)  # binary check
        self._set(op.path, _WFile(list(op.pieces)))

    def _apply_submit(self, op: _Op) -> None:
        self.submit = True

    def _apply_tool(self, op: _Op) -> None:
        self.tool_calls.append(op.data)

    def _apply_str_replace(self, op: _Op) -> None:
        w = self._get(op.path, op.label)
        if w is None:
            raise _Fail(f"{op.label}: {op.path} does not exist ({self._files_list()}); use write_file to create it")
        old = op.data
        if not old:
            raise _Fail(f"{op.label}: old_str is empty; use write_file to replace a whole file, or insert")
        content = w.content()
        i = content.find(old)
        if i < 0:
            hint = _mismatch_hint(_split_lines(content)[0], _split_lines(old)[0], op.path)
            raise _Fail(f"{op.label}: old_str was not found in {op.path} (it must match exactly, "
                        f"including whitespace){'; ' + hint if hint else ''}")
        if content.find(old, i + 1) >= 0:
            n = content.count(old)
            raise _Fail(f"{op.label}: old_str occurs {max(n, 2)} times in {op.path}; include more "
                        "surrounding lines so it is unique")
        w.replace(i, i + len(old), list(op.pieces))
        self._set(op.path, w)

    def _apply_insert(self, op: _Op) -> None:
        w = self._get(op.path, op.label)
        if w is None:
            raise _Fail(f"{op.label}: {op.path} does not exist ({self._files_list()}); use write_file to create it")
        lines, offs, final_nl = _split_lines(w.content())
        line = op.data
        if line > len(lines):
            raise _Fail(f"{op.label}: line {line} is past the end of {op.path}, which has {len(lines)} lines")
        pieces = list(op.pieces)
        at = offs[line]
        if line == len(lines) and lines and not final_nl:
            pieces.insert(0, _Chunk("\n"))
        w.replace(at, at, pieces)
        self._set(op.path, w)

    def _apply_sr(self, op: _Op) -> None:
        path, name, search = op.path, op.label, op.data
        w = self._get(path, name)
        if w is None and not search.strip() or search == "":
            if w is None:
                self._set(path, _WFile(list(op.pieces)))
                return
            if w.content() == "":
                w.replace(0, 0, list(op.pieces))
                self._set(path, w)
                return
            raise _Fail(f"{name}: the SEARCH part is empty but {path} already exists and is not empty; "
                        "put the lines to replace in SEARCH (an empty SEARCH only creates a new file)")
        if w is None:
            raise _Fail(f"{name}: {path} does not exist ({self._files_list()}); to create it, leave SEARCH empty")
        content = w.content()
        lines, offs, final_nl = _split_lines(content)
        needle = _split_lines(search)[0]
        for level in ("exact", "rstrip", "indent"):
            found = _find_all(lines, needle, level)
            if len(found) > 1:
                where = ", ".join(str(p + 1) for p in found[:6])
                raise _Fail(f"{name}: the SEARCH text matches {len(found)} places in {path} (lines {where}); "
                            "add more lines around the change so it matches exactly one place")
            if found:
                break
        else:
            hint = _mismatch_hint(lines, needle, path)
            raise _Fail(f"{name}: the SEARCH text was not found in {path}{'; ' + hint if hint else ''}")
        p = found[0]
        m = len(needle)
        pieces = list(op.pieces)
        if level == "indent":
            pieces = self._reindent(pieces[0], needle, lines[p:p + m], op)
        if p + m == len(lines) and not final_nl:
            pieces = _trim_final_newline(pieces)
        w.replace(offs[p], offs[p + m], pieces)
        self._set(path, w)
        if level != "exact":
            self._warn(f"{name}: matched with {'trailing whitespace' if level == 'rstrip' else 'indentation'} "
                                 f"differences at line {p + 1}")

    def _reindent(self, piece: _Chunk, needle: list[str], window: list[str], op: _Op) -> list[_Chunk]:
        si, fi = _common_indent(needle), _common_indent(window)
        out: list[_Chunk] = []
        pos = 0
        t = piece.text
        while pos < len(t):
            e = t.find("\n", pos)
            e = len(t) if e < 0 else e + 1
            line = t[pos:e]
            if line.strip() and line.startswith(si):
                if fi:
                    out.append(_Chunk(fi))
                out.append(piece.sub(pos + len(si), e))
            else:
                out.append(piece.sub(pos, e))
            pos = e
        return out or [piece]

    def _apply_patch(self, op: _Op) -> None:
        p: _FilePatch = op.data
        if p.binary:
            raise _Fail(f"the diff at line {self._line(p.start)} is a binary patch, which is not supported")
        old, new, shown = self._resolve_patch_paths(p)
        label = f"the diff for {shown}"
        if old is None:  # create
            assert new is not None
            w = self._get(new, label)
            if w is not None and w.content() != "":
                raise _Fail(f"{label} creates the file (--- /dev/null), but {new} already exists; "
                            f"write the diff against its current content (--- a/{new})")
            pieces: list[_Chunk] = []
            for k, h in enumerate(p.hunks, 1):
                if any(l[0] != "+" for l in h.lines):
                    raise _Fail(f"hunk {k} ({h.header}) of {new}: a diff that creates a file may only add lines (+)")
                pieces.extend(self._added_pieces(h, h.lines, (h.start, h.end)))
                self._hunk_block(new, h)
            self._set(new, _WFile(pieces))
            return
        w = self._get(old, label)
        if w is None:
            if p.hunks and all(l[0] == "+" for h in p.hunks for l in h.lines) and new is not None:
                self._warn(f"{label}: {old} does not exist; created it from the added lines")
                pieces = []
                for h in p.hunks:
                    pieces.extend(self._added_pieces(h, h.lines, (h.start, h.end)))
                    self._hunk_block(new, h)
                self._set(new, _WFile(pieces))
                return
            raise _Fail(f"{label}: {old} does not exist ({self._files_list()}); "
                        "to create a file, use '--- /dev/null' and '+++ b/<path>'")
        if new is None:  # delete
            self._set(old, None)
            return
        if new != old and self._exists(new):
            raise _Fail(f"{label}: renames {old} to {new}, but {new} already exists")
        delta = 0
        prev_end = 0
        for k, h in enumerate(p.hunks, 1):
            delta, prev_end = self._apply_hunk(w, h, k, new, delta, prev_end)
            self._hunk_block(new, h)
        if new != old:
            self._set(old, None)
        self._set(new, w)

    def _hunk_block(self, path: str, h: _Hunk) -> None:
        if h.lines:  # the @@ line and the body, markers included (diff form)
            self.blocks.append((path, h.start, h.end, True, None, "unified_diff"))

    def _added_pieces(self, h: _Hunk, lines: list[list[Any]], src: tuple[int, int]) -> list[_Chunk]:
        out: list[_Chunk] = []
        for kind, ts, te, nl, marked in lines:
            if kind != "+":
                continue
            if marked:
                out.append(_Chunk(self.norm[ts:te], ts, "unified_diff", src))
            elif nl:
                out.append(_Chunk(self.norm[ts:te + 1], ts, "unified_diff", src))
            else:
                out.append(_Chunk(self.norm[ts:te], ts, "unified_diff", src))
                out.append(_Chunk("\n"))
        return out

    def _apply_hunk(self, w: _WFile, h: _Hunk, k: int, path: str, delta: int, prev_end: int) -> tuple[int, int]:
        norm = self.norm
        content = w.content()
        lines, offs, final_nl = _split_lines(content)
        old = [norm[l[1]:l[2]] for l in h.lines if l[0] != "+"]
        n_new = sum(1 for l in h.lines if l[0] != "-")
        if h.old_start is not None:
            expected = (h.old_start - 1 if old or h.old_count else h.old_start) + delta
        else:
            expected = prev_end
        if not old:
            p = min(max(expected, 0), len(lines))
        else:
            found: list[int] = []
            for level in ("exact", "rstrip"):
                found = _find_all(lines, old, level)
                if found:
                    break
            if not found:
                hint = _mismatch_hint(lines, old, path)
                raise _Fail(f"hunk {k} ({h.header}) of {path} did not apply: context not found"
                            + (f"\n{hint}" if hint else "")
                            + "\nThe context (' ') and removed ('-') lines must match the current file.")
            after = [c for c in found if c >= prev_end] or found
            p = min(after, key=lambda c: (abs(c - expected), c))
            if len(found) > 1 and h.old_start is None:
                self._warn(f"hunk {k} ({h.header}) of {path} matched {len(found)} places; "
                                     f"used line {p + 1}")
        # change groups: runs of -/+ lines between context lines
        groups: list[tuple[int, int, list[list[Any]]]] = []
        f = p
        cur: list[Any] | None = None
        for l in h.lines:
            if l[0] == " ":
                if cur is not None:
                    groups.append(tuple(cur))  # type: ignore[arg-type]
                    cur = None
                f += 1
                continue
            if cur is None:
                cur = [f, 0, []]
            cur[2].append(l)
            if l[0] == "-":
                cur[1] += 1
                f += 1
        if cur is not None:
            groups.append(tuple(cur))  # type: ignore[arg-type]
        for g_start, n_rem, glines in reversed(groups):
            a, b = offs[g_start], offs[g_start + n_rem]
            gsrc = (glines[0][1] - 1, glines[-1][2] + (1 if glines[-1][3] else 0))
            pieces = self._added_pieces(h, glines, gsrc)
            at_eof = g_start + n_rem == len(lines)
            if not pieces:
                pieces = [_Chunk("", gsrc[0], "unified_diff", gsrc)]
            else:
                if at_eof and lines and not final_nl and n_rem == 0:
                    pieces.insert(0, _Chunk("\n"))  # appending after a last line that has no newline
                if not at_eof and not pieces[-1].text.endswith("\n"):
                    pieces.append(_Chunk("\n"))  # a "no newline" marker only means something at the end
            w.replace(a, b, pieces)
        return delta + n_new - len(old), p + n_new

    # -- result -----------------------------------------------------------

    def _result(self) -> ParsedAction:
        changes: dict[str, str | None] = {}
        spans: list[EditSpan] = []
        for path in self.touched:
            w = self.cur.get(path)
            orig = self.files.get(path)
            if w is None:
                if orig is not None:
                    changes[path] = None
                continue
            content = w.content()
            if content == orig:
                self._warn(f"the edit left {path} unchanged")
                continue
            # (a pure-ASCII string without NUL -- isascii() is a flag -- needs no scan)
            m = _BAD_CHAR_RE.search(content) if "\x00" in content or not content.isascii() else None
            if m:
                what = "a NUL character" if m.group(0) == "\x00" else "a lone surrogate (not valid Unicode text)"
                line = content.count("\n", 0, m.start()) + 1
                raise_msg = f"the new content of {path} contains {what} at line {line}; source files must be text"
                return self.fail_result(raise_msg)
            changes[path] = content
            spans.extend(self._spans(path, w))
        blocks = []
        for path, s, e, is_diff, lstr, fmt in self.blocks:
            if path not in changes or changes[path] is None:
                continue
            if lstr is not None:
                omap = tuple(map(self._orig, lstr.omap)) if self.crlf else tuple(lstr.omap)
                blocks.append(EditBlock(path, omap[0], omap[-1], omap, str(lstr), False, fmt))
            else:
                blocks.append(EditBlock(path, self._orig(s), self._orig(e), None, None, is_diff, fmt))
        spans.sort(key=lambda sp: (sp.start, sp.end))
        return ParsedAction(
            changes=changes, edit_spans=spans, edit_blocks=blocks, formats_used=self._formats_used(),
            submit=self.submit, tool_calls=list(self.tool_calls), error=None, warnings=list(self.warnings))

    def _spans(self, path: str, w: _WFile) -> list[EditSpan]:
        out: list[list[Any]] = []  # [tstart, tend, fmt, fstart, fend, src]
        fpos = 0
        last: list[Any] = [-1, -1, "", -1, -1, None]
        for ch in w.chunks:
            n = len(ch.text)
            t = ch.tstart
            if t >= 0:
                if last[1] == t and last[4] == fpos and last[5] == ch.src:
                    last[1] += n
                    last[4] += n
                else:
                    last = [t, t + n, ch.fmt, fpos, fpos + n, ch.src]
                    out.append(last)
            fpos += n
        res = []
        crlf = self.crlf
        if not crlf:
            return [EditSpan(path, ts, te, fmt, fs, fe, src[0], src[1]) for ts, te, fmt, fs, fe, src in out]
        for ts, te, fmt, fs, fe, src in out:
            s0, s1 = self._orig(src[0]), self._orig(src[1])
            if not crlf:
                res.append(EditSpan(path, ts, te, fmt, fs, fe, s0, s1))
                continue
            # cut at newlines that were CRLF in the action, so each piece is
            # verbatim there; k = number of CRLFs before the current position
            k = bisect.bisect_left(crlf, ts)
            a = ts
            while k < len(crlf) and crlf[k] < te:
                nl = crlf[k]
                if nl > a:
                    res.append(EditSpan(path, a + k, nl + k, fmt, fs + a - ts, fs + nl - ts, s0, s1))
                a = nl + 1
                k += 1
            if a < te or ts == te:
                res.append(EditSpan(path, a + k, te + k, fmt, fs + a - ts, fe, s0, s1))
        return res


def _accepted_help(allowed: frozenset[str], main_file: str) -> str:
    return format_help(sorted(allowed, key=FORMATS.index), main_file=main_file, brief=True)


# ---------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------


def parse_action(text: str, files: Mapping[str, str] | None, main_file: str,
                 formats: set[str] | Sequence[str] | None = None, *,
                 max_chars: int | None = MAX_ACTION_CHARS) -> ParsedAction:
    """Turn model text into edits of ``files`` (see the module docstring for
    the formats and the rules). Never raises on any ``text``: problems are in
    ``ParsedAction.error`` (with the accepted formats and examples) and then
    nothing is changed. Raises ValueError only for unknown names in
    ``formats``."""
    allowed = _check_formats(formats)
    parser = _Parser(text, files or {}, main_file, allowed, max_chars)
    try:
        return parser.run()
    except Exception as e:  # pragma: no cover
        # last line of defence: model text must never crash the environment
        return ParsedAction(error=f"internal error while reading the action ({type(e).__name__}: {e}); "
                                  "please report it. " + _accepted_help(allowed, main_file),
                            warnings=list(parser.warnings))


def _example_code(main_file: str) -> tuple[str, str, str]:
    """(lang, old line, new line) of a small edit in the main file's language."""
    ext = _ext(main_file).lower()
    if ext in (".py", ".pyi", ".jl", ".rb"):
        return _lang_for_path(main_file) or "python", "    return x", "    return 2 * x"
    if ext in (".c", ".h", ".cpp", ".cc", ".cxx", ".hpp", ".js", ".mjs", ".ts", ".java", ".go", ".rs"):
        return _lang_for_path(main_file), "    return x;", "    return 2 * x;"
    return _lang_for_path(main_file), "old line", "new line"


def format_help(formats: Sequence[str] | set[str] | None = None, *, main_file: str = "main.py",
                brief: bool = False) -> str:
    """Text for the observation: the accepted action formats, with an example
    of each (``brief`` gives the short version used in error messages)."""
    allowed = _check_formats(formats)
    order = [f for f in FORMATS if f in allowed]
    lang, old, new = _example_code(main_file)
    mf = main_file
    parts: list[str] = []
    head = "Accepted action formats: " + ", ".join(order) + "."
    parts.append(head if brief else head + " Each edit you write is applied to the files in order; "
                 "if any part of an action cannot be applied, nothing is applied and you get an error.")
    for f in order:
        if f == "code_block":
            parts.append(
                ("- code_block (replaces a whole file):\n" if brief else
                 f"- code_block: a fenced code block replaces a whole file. Put the path in the info "
                 f"string; a block without a path replaces {mf} (if several blocks have no path, only "
                 "the last one is used). Blocks labelled text/output/console are not edits.\n")
                + f"```{lang} path={mf}\n<the complete new content of {mf}>\n```")
        elif f == "unified_diff":
            parts.append(
                ("- unified_diff:\n" if brief else
                 "- unified_diff: a unified diff in a ```diff block. Line numbers may be approximate, "
                 "but context (' ') and removed ('-') lines must match the file exactly; "
                 "'--- /dev/null' creates a file, '+++ /dev/null' deletes one.\n")
                + f"```diff\n--- a/{mf}\n+++ b/{mf}\n@@ -3,1 +3,1 @@\n-{old}\n+{new}\n```")
        elif f == "search_replace":
            parts.append(
                ("- search_replace:\n" if brief else
                 "- search_replace: the file path on its own line, then a SEARCH/REPLACE block. SEARCH "
                 "must match exactly one place in the file (add surrounding lines to make it unique); "
                 "an empty SEARCH creates a new file.\n")
                + f"{mf}\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE")
        elif f == "tool_call":
            call = json.dumps({"name": "str_replace", "arguments": {"path": mf, "old_str": old.strip(),
                                                                   "new_str": new.strip()}})
            tools = ("view_file(path, start_line?, end_line?), write_file(path, content), "
                     "str_replace(path, old_str, new_str), insert(path, line, text), run_tests()"
                     + (", submit()" if "submit" in allowed else ""))
            parts.append(
                ("- tool_call (JSON, bare or in <tool_call></tool_call>):\n" if brief else
                 "- tool_call: JSON function calls, bare, in a ```json block or in <tool_call></tool_call> "
                 f"tags; one call or a list. Tools: {tools}. old_str must occur exactly once.\n")
                + call)
        elif f == "submit":
            parts.append(
                "- submit: a line containing only `submit`" + (
                    "." if brief else
                    " submits the current files for final judging and ends the episode; it may "
                    "follow edits in the same message (they are applied first)."))
    return "\n".join(parts)


def apply_changes(files: Mapping[str, str], changes: Mapping[str, str | None]) -> dict[str, str]:
    """``files`` with ``changes`` applied (None deletes)."""
    out = dict(files)
    for p, c in changes.items():
        if c is None:
            out.pop(p, None)
        else:
            out[p] = c
    return out


def view_file(files: Mapping[str, str], path: str, start_line: int | None = None,
              end_line: int | None = None, max_lines: int = 400) -> str:
    """What the ``view_file`` tool shows: numbered lines of a file (or an
    explanation when the file or the range does not exist)."""
    if path not in files:
        names = ", ".join(sorted(files)[:20])
        return f"{path}: no such file (files: {names or 'none'})"
    lines = files[path].split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    a = max(1, start_line or 1)
    b = min(len(lines), end_line if end_line is not None else len(lines))
    if a > max(len(lines), 1) or (end_line is not None and end_line < a):
        return f"{path}: lines {a}-{end_line if end_line is not None else ''} are outside the file ({len(lines)} lines)"
    shown = lines[a - 1:b]
    more = ""
    if len(shown) > max_lines:
        shown = shown[:max_lines]
        more = f"\n... ({b - a + 1 - max_lines} more lines; use start_line/end_line)"
    width = len(str(a + len(shown)))
    body = "\n".join(f"{i:>{width}}  {l}" for i, l in enumerate(shown, a))
    return f"{path} (lines {a}-{a + len(shown) - 1} of {len(lines)}):\n{body}{more}"


# ---------------------------------------------------------------------------
# Rendering a change set in a format (oracle agent, round-trip tests)
# ---------------------------------------------------------------------------


def _fence_for(body: str) -> str:
    """A backtick fence longer than any backtick run that starts a line of body."""
    longest = 0
    for m in re.finditer(r"^[ \t]*(`{3,}|~{3,})", body, re.M):
        longest = max(longest, len(m.group(1)))
    return "`" * max(3, longest + 1)


def _opcode_groups(old_lines: list[str], new_lines: list[str]) -> list[tuple[int, int, int, int]]:
    sm = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in sm.get_opcodes() if tag != "equal"]


def _render_diff(path: str, old: str | None, new: str | None) -> str:
    a = _keep_lines(old or "")
    b = _keep_lines(new or "")
    out = [f"--- {'/dev/null' if old is None else 'a/' + path}\n",
           f"+++ {'/dev/null' if new is None else 'b/' + path}\n"]

    def rng(start: int, stop: int) -> str:
        length = stop - start
        beginning = start + 1 if length else start
        return f"{beginning}" if length == 1 else f"{beginning},{length}"

    def emit(mark: str, line: str) -> None:
        if line.endswith("\n"):
            out.append(mark + line)
        else:
            out.append(mark + line + "\n\\ No newline at end of file\n")

    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in sm.get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{rng(i1, i2)} +{rng(j1, j2)} @@\n")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                for l in a[x1:x2]:
                    emit(" ", l)
                continue
            for l in a[x1:x2]:
                emit("-", l)
            for l in b[y1:y2]:
                emit("+", l)
    return "".join(out)


def _line_blocks(old: str, new: str, unique: Callable[[list[str], list[str]], bool]) -> list[tuple[list[str], list[str]]]:
    """(search lines, replace lines) blocks (lines keep their newline) that,
    applied in order, turn old into new; each search is grown with context
    until ``unique(current_lines, search)``."""
    a = _keep_lines(old)
    b = _keep_lines(new)
    cur = list(a)
    blocks = []
    for i1, i2, j1, j2 in _opcode_groups(a, b):
        # cur == b[:j1] + a[i1:]; the group's old lines sit at cur[j1 : j1 + i2 - i1]
        c = 0 if i2 > i1 else 1
        while True:
            lo = max(j1 - c, 0)
            hi = min(j1 + (i2 - i1) + c, len(cur))
            search = cur[lo:hi]
            replace = b[lo:j2] + cur[j1 + (i2 - i1):hi]
            if any(l.strip() for l in search) and unique(cur, search):
                break
            if lo == 0 and hi == len(cur):
                break
            c += 1
        blocks.append((search, replace))
        cur[lo:hi] = replace
    return blocks


def render_action(changes: Mapping[str, str | None], format: str, files: Mapping[str, str],
                  main_file: str, *, submit: bool = False) -> str:
    """Express ``changes`` (relative to ``files``) as action text in one
    format, so that `parse_action` gives back the same changes. Raises
    ValueError when the format cannot express a change (deleting a file is
    only possible with unified_diff; SEARCH/REPLACE text and code blocks
    cannot contain SEARCH/REPLACE marker lines). Final newlines: unified_diff
    and tool_call are exact; a code block always ends its content with a
    newline, and a SEARCH/REPLACE edit keeps the file's convention, so those
    two cannot add or remove a file's final newline. With ``submit=True`` a
    ``submit`` line follows the edits."""
    if format not in EDIT_FORMATS:
        raise ValueError(f"render_action: format must be one of {EDIT_FORMATS}, got {format!r}")
    real = {p: c for p, c in changes.items() if files.get(p) != c or (c is not None and p not in files)}
    parts: list[str] = []
    if format == "code_block":
        for p, c in real.items():
            if c is None:
                raise ValueError(f"code_block cannot delete {p}; use unified_diff")
            if _MARKER_LINE_RE.search(c):
                raise ValueError(f"code_block cannot express {p}: its content has SEARCH/REPLACE marker lines")
            body = c if (c == "" or c.endswith("\n")) else c + "\n"
            fence = _fence_for(body)
            q = f'"{p}"' if " " in p else p
            parts.append(f"{fence}{_lang_for_path(p)} path={q}\n{body}{fence}\n")
    elif format == "unified_diff":
        body = "".join(_render_diff(p, files.get(p), c) for p, c in real.items())
        if body:
            fence = _fence_for(body)
            parts.append(f"{fence}diff\n{body}{fence}\n")
    elif format == "search_replace":
        def unique(cur: list[str], search: list[str]) -> bool:
            lines = [l[:-1] if l.endswith("\n") else l for l in cur]
            s = [l[:-1] if l.endswith("\n") else l for l in search]
            return len(_find_all(lines, s, "exact")) == 1

        for p, c in real.items():
            if c is None:
                raise ValueError(f"search_replace cannot delete {p}; use unified_diff")
            old = files.get(p)
            if old is not None and not isinstance(old, str):
                raise ValueError(f"{p} is not a text file")
            if old is None or old == "":
                blocks = [([], _keep_lines(c))]
            else:
                blocks = _line_blocks(old, c, unique)
            texts = []
            for search, replace in blocks:
                s = "".join(l if l.endswith("\n") else l + "\n" for l in search)
                r = "".join(l if l.endswith("\n") else l + "\n" for l in replace)
                if _MARKER_LINE_RE.search(s) or _MARKER_LINE_RE.search(r):
                    raise ValueError(f"search_replace cannot express the change to {p}: "
                                     "the text contains a line that looks like a SEARCH/REPLACE marker")
                texts.append(f"<<<<<<< SEARCH\n{s}=======\n{r}>>>>>>> REPLACE\n")
            body = "".join(texts)
            fence = _fence_for(body)
            parts.append(f"{p}\n{fence}{_lang_for_path(p)}\n{body}{fence}\n")
    else:  # tool_call
        calls: list[dict[str, Any]] = []

        def unique_str(cur: list[str], search: list[str]) -> bool:
            text, s = "".join(cur), "".join(search)
            i = text.find(s)
            return i >= 0 and text.find(s, i + 1) < 0

        for p, c in real.items():
            if c is None:
                raise ValueError(f"tool_call cannot delete {p}; use unified_diff")
            old = files.get(p)
            if old is None or old == "" or not isinstance(old, str):
                calls.append({"name": "write_file", "arguments": {"path": p, "content": c}})
                continue
            for search, replace in _line_blocks(old, c, unique_str):
                calls.append({"name": "str_replace", "arguments": {
                    "path": p, "old_str": "".join(search), "new_str": "".join(replace)}})
        if calls:
            parts.append("```json\n" + json.dumps(calls, indent=2, ensure_ascii=False) + "\n```\n")
    if submit:
        parts.append("submit\n")
    return "\n".join(parts)
