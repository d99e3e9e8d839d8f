"""The files an agent edits: versions, per-step and cumulative diffs.

This module owns:

- `Workspace`: a task's files with a version history. Two backends behind one
  interface: in memory (``Workspace.in_memory(files)``, a dict path -> text, for
  small tasks) and on disk (``Workspace.from_directory(path)``, a git working
  tree driven through gitpython, for repository tasks).
- `StepDiff` / `FileChange`: what one `Workspace.apply` did (old and new text of
  every touched file) and its unified diff.
- `WorkspaceError`: an edit that cannot be applied (bad path, protected file,
  deleting a missing file ...). The message is meant to be shown to the agent.
- The text-diff primitives every other module uses: `split_lines`,
  `diff_opcodes` and `unified_diff` (git-style text that `git apply` and
  `patch -p1` accept). `codegym.edits.units` re-exports `unified_diff` and builds its
  syntax-aware diff units on `split_lines`/`diff_opcodes`; there is one
  implementation of each.

Text is kept byte-faithful: no newline translation (``\\r\\n`` stays), files are
read and written as UTF-8 with ``surrogateescape`` so undecodable bytes survive a
round trip, and a last line without a newline is diffed as git does
(``\\ No newline at end of file``).

Versions: version 0 is the starter; every `apply` makes version + 1 (even an
edit set that changes nothing, so that env steps and versions stay aligned);
`undo` goes back one version. The git backend does not commit per version: the
starter is a commit (made from the working tree when the directory is opened)
and versions are kept as `StepDiff` records, so an edit costs a few file writes,
not git processes. `cumulative_diff()` is computed against that starter commit
and equals ``git diff --no-renames <starter>`` of the working tree (including
new files), see tests/test_workspace.py.
"""

from __future__ import annotations

import bisect
import fnmatch
import functools
import os
import shutil
import subprocess
import tempfile
import uuid
import weakref
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Iterable, Iterator, Mapping, NamedTuple, Sequence

__all__ = [
    "Workspace",
    "WorkspaceError",
    "StepDiff",
    "FileChange",
    "split_lines",
    "diff_opcodes",
    "unified_diff",
    "file_diff",
    "validate_path",
]


class WorkspaceError(ValueError):
    """An edit or path the workspace refuses; the message is agent-facing."""


# ---------------------------------------------------------------------------
# Text-diff primitives
# ---------------------------------------------------------------------------

# Lines are represented WITHOUT their "\n" terminator (so `str.split` does the
# work in C), except that a last line lacking a newline keeps a trailing "\n" as
# a marker.  The marker makes "x" (no EOL) compare unequal to "x\n" (EOL), which
# is what a faithful diff needs, and a line can never otherwise contain "\n".
_NO_EOL = "\n"
_NO_EOL_NOTE = "\\ No newline at end of file\n"


def split_lines(text: str) -> list[str]:
    """Split text into diff lines (see module notes on the no-EOL marker).

    Only "\\n" separates lines ("\\r" stays part of a line), matching git.
    ``split_lines("a\\nb")`` is ``["a", "b\\n"]``; ``split_lines("a\\nb\\n")`` is
    ``["a", "b"]``; ``split_lines("")`` is ``[]``.
    """
    if not text:
        return []
    lines = text.split("\n")
    last = lines.pop()
    if last:
        lines.append(last + _NO_EOL)
    return lines


def line_text(line: str) -> str:
    """The content of a diff line, without the no-EOL marker."""
    return line[:-1] if line.endswith(_NO_EOL) else line


def _common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    n = min(len(a), len(b))
    i = 0
    # Compare in chunks first: list-slice equality runs in C.
    step = 64
    while i + step <= n and a[i:i + step] == b[i:i + step]:
        i += step
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: Sequence[str], b: Sequence[str], limit: int) -> int:
    """Length of the common suffix, not reaching into the first `limit` lines."""
    n = min(len(a), len(b)) - limit
    k = 0
    step = 64
    la, lb = len(a), len(b)
    while k + step <= n and a[la - k - step:la - k] == b[lb - k - step:lb - k]:
        k += step
    while k < n and a[la - k - 1] == b[lb - k - 1]:
        k += 1
    return k


Opcode = tuple[str, int, int, int, int]


def diff_opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """Non-equal opcodes ``(tag, i1, i2, j1, j2)`` (difflib's format) turning
    `a` into `b`.

    Patience-style: the common prefix and suffix are stripped, lines that
    occur exactly once on each side anchor the match (their longest
    increasing subsequence), and difflib's SequenceMatcher (autojunk off)
    only runs on the small gaps between anchors. Plain SequenceMatcher is
    quadratic on code with many repeated lines (``}``, ``end``, blank lines);
    anchoring keeps an edit of a 500-line file well under a millisecond.
    """
    if a is b:
        return []
    p = _common_prefix(a, b)
    if p == len(a) == len(b):
        return []
    s = _common_suffix(a, b, p)
    out: list[Opcode] = []
    _diff_range(a, b, p, len(a) - s, p, len(b) - s, out)
    return out


# Gaps up to this many line pairs go straight to SequenceMatcher (minimal and
# cheap there); larger ones are anchored first.
_SMALL_GAP = 4096


def _diff_range(a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int,
                out: list[Opcode]) -> None:
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        alo += 1
        blo += 1
    while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
        ahi -= 1
        bhi -= 1
    if alo == ahi and blo == bhi:
        return
    if alo == ahi:
        out.append(("insert", alo, alo, blo, bhi))
        return
    if blo == bhi:
        out.append(("delete", alo, ahi, blo, blo))
        return
    anchors = _anchors(a, alo, ahi, b, blo, bhi) if (ahi - alo) * (bhi - blo) > _SMALL_GAP else []
    if not anchors:
        sm = SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
        out.extend((tag, i1 + alo, i2 + alo, j1 + blo, j2 + blo)
                   for tag, i1, i2, j1, j2 in sm.get_opcodes() if tag != "equal")
        return
    for i, j in anchors:
        _diff_range(a, b, alo, i, blo, j, out)
        alo, blo = i + 1, j + 1
    _diff_range(a, b, alo, ahi, blo, bhi, out)


def _anchors(a: Sequence[str], alo: int, ahi: int, b: Sequence[str], blo: int, bhi: int) -> list[tuple[int, int]]:
    """Lines unique on both sides, as (i, j) pairs forming the longest chain
    increasing in both i and j (patience sorting)."""
    seen_a: dict[str, int] = {}
    for i in range(alo, ahi):
        line = a[i]
        seen_a[line] = -1 if line in seen_a else i
    seen_b: dict[str, int] = {}
    for j in range(blo, bhi):
        line = b[j]
        if line in seen_a:
            seen_b[line] = -1 if line in seen_b else j
    pairs = [(seen_a[line], j) for line, j in seen_b.items() if j >= 0 and seen_a[line] >= 0]
    if not pairs:
        return []
    pairs.sort()
    # longest increasing subsequence of j, with back-pointers
    tails: list[int] = []  # tails[k] = index into pairs ending the best chain of length k+1
    tail_js: list[int] = []
    back = [-1] * len(pairs)
    for idx, (_i, j) in enumerate(pairs):
        k = bisect.bisect_left(tail_js, j)
        if k:
            back[idx] = tails[k - 1]
        if k == len(tails):
            tails.append(idx)
            tail_js.append(j)
        else:
            tails[k] = idx
            tail_js[k] = j
    chain = []
    idx = tails[-1]
    while idx >= 0:
        chain.append(pairs[idx])
        idx = back[idx]
    chain.reverse()
    return chain


def group_hunks(opcodes: Sequence[Opcode], context: int = 3) -> list[list[Opcode]]:
    """Group change blocks into unified-diff hunks: blocks closer than
    ``2 * context`` equal lines share a hunk (as in ``git diff -U<context>``)."""
    hunks: list[list[Opcode]] = []
    for op in opcodes:
        if hunks and op[1] - hunks[-1][-1][2] <= 2 * context:
            hunks[-1].append(op)
        else:
            hunks.append([op])
    return hunks


def _range(start: int, count: int) -> str:
    # Unified-diff convention (and git's exact format): an empty range names the
    # line before it; a count of 1 is omitted.
    if count == 0:
        return f"{start},0"
    if count == 1:
        return f"{start + 1}"
    return f"{start + 1},{count}"


def _emit(out: list[str], prefix: str, line: str) -> None:
    if line.endswith(_NO_EOL):
        out.append(prefix + line)
        out.append(_NO_EOL_NOTE)
    else:
        out.append(prefix + line + "\n")


_C_ESCAPES = {
    0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v",
    0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\",
}


@functools.lru_cache(maxsize=4096)
def _git_path(prefix: str, path: str) -> str:
    """``prefix + path`` quoted the way git quotes paths (core.quotePath=true)."""
    raw = (prefix + path).encode("utf-8", "surrogateescape")
    if not any(c < 0x20 or c >= 0x7F or c in (0x22, 0x5C) for c in raw):
        return prefix + path
    out = ['"']
    for c in raw:
        if c in _C_ESCAPES:
            out.append(_C_ESCAPES[c])
        elif c < 0x20 or c >= 0x7F:
            out.append(f"\\{c:03o}")
        else:
            out.append(chr(c))
    out.append('"')
    return "".join(out)


def file_diff(
    path: str,
    old: str | None,
    new: str | None,
    *,
    context: int = 3,
    old_lines: list[str] | None = None,
    new_lines: list[str] | None = None,
) -> str:
    """Git-style diff of one file (``old``/``new`` None = absent); "" if equal.

    ``old_lines``/``new_lines`` may pass `split_lines` results the caller has
    cached.
    """
    if old is None and new is None:
        return ""
    if old is not None and new is not None and (old is new or old == new):
        return ""
    a = old_lines if old_lines is not None else split_lines(old or "")
    b = new_lines if new_lines is not None else split_lines(new or "")
    qa, qb = _git_path("a/", path), _git_path("b/", path)
    out = [f"diff --git {qa} {qb}\n"]
    if old is None:
        out.append("new file mode 100644\n")
    elif new is None:
        out.append("deleted file mode 100644\n")
    return _render(out, qa, qb, old, new, a, b, diff_opcodes(a, b), context)


def _render(out: list[str], qa: str, qb: str, old: str | None, new: str | None, a: Sequence[str],
            b: Sequence[str], opcodes: Sequence[Opcode], context: int,
            bodies: dict | None = None, reuse: dict | None = None,
            fresh: tuple[int, int] | None = None) -> str:
    """The body of `file_diff` after its header lines, from given opcodes.

    Hunk bodies can be carried over between renders of the same `a` against
    successive `b`s (the cumulative diff of an episode): ``bodies`` collects
    this render's bodies, ``reuse`` offers the previous render's, and a body is
    reused only for a hunk whose `b` lines (context included) lie outside
    ``fresh``, the rows of `b` that changed since that render. Its key is the
    hunk's `a` range and its shape relative to its `b` start, so a hunk shifted
    by an edit above it is reused too. A hunk whose opcodes are the very ones of
    the previous render (before the changed rows) reuses its header as well.
    """
    if not opcodes:
        # Creating or deleting an empty file: git prints the header only.
        return "".join(out)
    out.append(f"--- {qa if old is not None else '/dev/null'}\n")
    out.append(f"+++ {qb if new is not None else '/dev/null'}\n")
    reuse = reuse if fresh is not None else None
    for hunk in group_hunks(opcodes, context):
        ops = tuple(hunk) if bodies is not None else None
        if reuse is not None and hunk[-1][4] + context < fresh[0]:
            # the very same opcodes before the changed rows: the same text, header included
            # (`a` is the same, and so are the rows of `b` up to there)
            whole = reuse.get(ops)
            if whole is not None:
                out.append(whole)
                bodies[ops] = whole
                continue
        i_lo = max(0, hunk[0][1] - context)
        i_hi = min(len(a), hunk[-1][2] + context)
        j_lo = max(0, hunk[0][3] - context)
        j_hi = min(len(b), hunk[-1][4] + context)
        header = f"@@ -{_range(i_lo, i_hi - i_lo)} +{_range(j_lo, j_hi - j_lo)} @@\n"
        out.append(header)
        key = None
        if bodies is not None:
            key = (i_lo, i_hi, j_hi - j_lo, tuple((i1, i2, j1 - j_lo, j2 - j_lo) for _t, i1, i2, j1, j2 in hunk))
            body = reuse.get(key) if reuse is not None and (j_hi < fresh[0] or j_lo > fresh[1]) else None
            if body is not None:
                out.append(body)
                bodies[key] = body
                bodies[ops] = header + body
                continue
        mark = len(out)
        i = i_lo
        for _tag, i1, i2, j1, j2 in hunk:
            _emit_run(out, " ", a[i:i1])
            _emit_run(out, "-", a[i1:i2])
            _emit_run(out, "+", b[j1:j2])
            i = i2
        _emit_run(out, " ", a[i:i_hi])
        if key is not None:
            body = "".join(out[mark:])
            del out[mark:]
            out.append(body)
            bodies[key] = body
            bodies[ops] = header + body
    return "".join(out)


def _emit_run(out: list[str], prefix: str, lines: Sequence[str]) -> None:
    """`_emit` for consecutive lines, joined in one go. Only a file's last line can
    carry the no-newline marker, so only a run's last line is checked."""
    if not lines:
        return
    last = lines[-1]
    if last.endswith(_NO_EOL):
        if len(lines) > 1:
            out.append(prefix + ("\n" + prefix).join(lines[:-1]) + "\n")
        out.append(prefix + last)
        out.append(_NO_EOL_NOTE)
    else:
        out.append(prefix + ("\n" + prefix).join(lines) + "\n")


def recompose_opcodes(a: Sequence[str], b_old: Sequence[str], b_new: Sequence[str],
                      ops: Sequence[Opcode], step: Sequence[Opcode]) -> list[Opcode]:
    """Opcodes ``a -> b_new`` from the opcodes ``a -> b_old`` (`ops`) and an edit
    ``b_old -> b_new`` (`step`, non-empty), re-diffing only around the edit.

    The edit's region of `b_old` is widened to the blocks of `ops` it touches;
    the equal lines around that window keep their alignment, and only the window
    (its `a` lines against its `b_new` lines) is diffed again. The result is a
    valid diff (applying it to `a` gives `b_new`); it can differ from a
    from-scratch `diff_opcodes` where a distant alignment would have changed.
    """
    c1, c2 = step[0][1], step[-1][2]
    delta = len(b_new) - len(b_old)
    before = [op for op in ops if op[4] < c1]
    after = [op for op in ops if op[3] > c2]
    mid = ops[len(before):len(ops) - len(after)]
    off_before = before[-1][2] - before[-1][4] if before else 0
    w1 = min(c1, mid[0][3]) if mid else c1
    w2 = max(c2, mid[-1][4]) if mid else c2
    off_after = mid[-1][2] - mid[-1][4] if mid else off_before
    out = list(before)
    _diff_range(a, b_new, w1 + off_before, w2 + off_after, w1, w2 + delta, out)
    out.extend((tag, i1, i2, j1 + delta, j2 + delta) for tag, i1, i2, j1, j2 in after)
    return out


def unified_diff(old: Mapping[str, str], new: Mapping[str, str], *, context: int = 3) -> str:
    """Git-style unified diff between two ``{path: text}`` snapshots.

    A path only in `old` is a deletion, only in `new` an addition. Files come
    in sorted path order; no ``index`` lines and no rename detection, so the
    text is deterministic and applies with ``git apply`` and ``patch -p1``.
    """
    parts = []
    for path in sorted(set(old) | set(new)):
        parts.append(file_diff(path, old.get(path), new.get(path), context=context))
    return "".join(parts)


# ---------------------------------------------------------------------------
# Paths
# ---------------------------------------------------------------------------


def validate_path(path: str) -> str:
    """Normalise a workspace-relative path or raise `WorkspaceError`.

    ``./a//b.py`` -> ``a/b.py``. Refused: non-strings, empty paths, absolute
    paths, drive letters, backslashes, NUL, ``..`` components, a trailing
    ``/`` (a directory), and anything inside a ``.git`` directory.
    """
    if not isinstance(path, str):
        raise WorkspaceError(f"invalid path {path!r}: expected a string")
    return _validate_path(path)


@functools.lru_cache(maxsize=8192)
def _validate_path(path: str) -> str:
    shown = repr(path)
    if not path.strip():
        raise WorkspaceError(f"invalid path {shown}: empty path")
    if "\0" in path:
        raise WorkspaceError(f"invalid path {shown}: contains a NUL character")
    if "\\" in path:
        raise WorkspaceError(f"invalid path {shown}: use '/' as the separator, not '\\'")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":" and path[0].isalpha()):
        raise WorkspaceError(
            f"invalid path {shown}: absolute paths are not allowed; give a path relative to the workspace root"
        )
    if path.endswith("/"):
        raise WorkspaceError(f"invalid path {shown}: names a directory, not a file")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise WorkspaceError(f"invalid path {shown}: names the workspace root, not a file")
    for p in parts:
        if p == "..":
            raise WorkspaceError(f"invalid path {shown}: '..' is not allowed (paths stay inside the workspace)")
        if p.lower() == ".git":
            raise WorkspaceError(f"invalid path {shown}: writing into .git is not allowed")
    return "/".join(parts)


def _parents(path: str) -> Iterator[str]:
    i = path.rfind("/")
    while i > 0:
        path = path[:i]
        yield path
        i = path.rfind("/")


# ---------------------------------------------------------------------------
# Step records
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    """One file touched by a step: ``old``/``new`` text, None = absent."""

    path: str
    old: str | None
    new: str | None

    @property
    def status(self) -> str:
        """"added", "deleted" or "modified"."""
        if self.old is None:
            return "added"
        if self.new is None:
            return "deleted"
        return "modified"


@dataclass(eq=False)
class StepDiff:
    """What one `Workspace.apply` did: the version it produced and its changes.

    ``text`` is the step's unified diff (computed on first access and cached).
    ``old_files``/``new_files`` restrict the before/after snapshots to the
    touched paths (absent files left out), which is what
    `codegym.edits.units.split_units` takes.
    """

    version: int
    changes: tuple[FileChange, ...]
    # split_lines() results the workspace already had; dropped once the text is
    # built so that long histories do not hold two copies of every file.
    _lines: dict[str, tuple[list[str] | None, list[str] | None]] | None = field(
        default=None, repr=False
    )
    _text: str | None = field(default=None, repr=False)

    @property
    def parent_version(self) -> int:
        return self.version - 1

    @property
    def text(self) -> str:
        if self._text is None:
            lines = self._lines or {}
            parts = []
            for ch in self.changes:
                ol, nl = lines.get(ch.path, (None, None))
                parts.append(file_diff(ch.path, ch.old, ch.new, old_lines=ol, new_lines=nl))
            self._text = "".join(parts)
            self._lines = None
        return self._text

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self.changes]

    @property
    def is_empty(self) -> bool:
        return not self.changes

    @property
    def old_files(self) -> dict[str, str]:
        return {c.path: c.old for c in self.changes if c.old is not None}

    @property
    def new_files(self) -> dict[str, str]:
        return {c.path: c.new for c in self.changes if c.new is not None}

    def to_dict(self) -> dict:
        return {
            "version": self.version,
            "changes": [{"path": c.path, "status": c.status} for c in self.changes],
            "diff": self.text,
        }

    def __str__(self) -> str:
        return self.text


# ---------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------


class _CumEntry(NamedTuple):
    text: str
    lines: list[str]
    starter_lines: list[str]
    opcodes: list[Opcode]
    diff: str
    bodies: dict  # hunk bodies of `diff` (see `_render`)


class _MemoryStore:
    """Files in a dict; the starter snapshot kept for `cumulative_diff`."""

    kind = "memory"

    def __init__(self, files: dict[str, str]):
        self.files = files
        self.starter = dict(files)
        # directory -> number of files under it, for file/directory clash checks
        self.dirs: dict[str, int] = {}
        for p in files:
            self._add_dirs(p, 1)

    def _add_dirs(self, path: str, delta: int) -> None:
        for d in _parents(path):
            n = self.dirs.get(d, 0) + delta
            if n:
                self.dirs[d] = n
            else:
                del self.dirs[d]

    def read(self, path: str) -> str | None:
        return self.files.get(path)

    def check_writable(self, path: str, creating: bool) -> None:
        if not creating:
            return
        if path in self.dirs:
            raise WorkspaceError(f"cannot create file {path!r}: a directory of that name exists")
        for d in _parents(path):
            if d in self.files:
                raise WorkspaceError(f"cannot create file {path!r}: {d!r} is a file, not a directory")

    def write(self, path: str, text: str | None) -> None:
        existed = path in self.files
        if text is None:
            if existed:
                del self.files[path]
                self._add_dirs(path, -1)
        else:
            self.files[path] = text
            if not existed:
                self._add_dirs(path, 1)

    def list(self) -> list[str]:
        return sorted(self.files)

    def starter_text(self, path: str) -> str | None:
        return self.starter.get(path)

    def changed_paths(self, touched: Iterable[str]) -> set[str]:
        return set(touched)

    def snapshot_files(self) -> dict[str, str]:
        return dict(self.files)

    def copy(self, dest: str | os.PathLike | None) -> "_MemoryStore":
        new = _MemoryStore.__new__(_MemoryStore)
        new.files = dict(self.files)
        new.starter = self.starter  # never mutated: sharing is safe
        new.dirs = dict(self.dirs)
        return new

    def close(self) -> None:
        pass


_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "codegym",
    "GIT_AUTHOR_EMAIL": "codegym@localhost",
    "GIT_COMMITTER_NAME": "codegym",
    "GIT_COMMITTER_EMAIL": "codegym@localhost",
    # a fixed date makes the starter commit of a given tree reproducible
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


def _read_disk(full: Path) -> str:
    with open(full, "r", encoding="utf-8", errors="surrogateescape", newline="") as f:
        return f.read()


def _write_disk(full: Path, text: str) -> None:
    with open(full, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)


class _GitStore:
    """A git working tree on disk; the starter is a commit.

    The starter commit is built with a private index file (``GIT_INDEX_FILE``),
    so opening a dirty repository neither moves its branch nor touches its
    index: the commit object simply records the working tree as it was. The
    same private index, refreshed with ``git add -A``, answers "which files
    exist / changed since the starter" honouring .gitignore.
    """

    kind = "git"

    def __init__(self, root: Path, owned: bool, starter: str | None = None,
                 index_from: Path | None = None):
        import git  # gitpython; imported here so in-memory use never pays for it

        self.root = root
        self.repo = git.Repo(root) if (root / ".git").exists() else git.Repo.init(root)
        self.git_dir = Path(self.repo.git_dir)
        self.index = self.git_dir / f"codegym-index-{uuid.uuid4().hex[:12]}"
        self._finalizers = [weakref.finalize(self, _unlink, self.index)]
        if owned:
            self._finalizers.append(weakref.finalize(self, shutil.rmtree, str(root), True))
        if index_from is not None and index_from.exists():
            shutil.copyfile(index_from, self.index)
        self.starter = starter if starter is not None else self._make_starter()
        self._starter_tree = self.repo.commit(self.starter).tree
        self.real_root = os.path.realpath(root)

    # -- git plumbing -------------------------------------------------------
    def _git(self, *args: str, env: dict | None = None) -> str:
        full_env = dict(os.environ)
        full_env["GIT_INDEX_FILE"] = str(self.index)
        full_env.update(_GIT_IDENTITY)
        if env:
            full_env.update(env)
        proc = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args], cwd=self.root, env=full_env,
            capture_output=True, text=True, encoding="utf-8", errors="surrogateescape",
        )
        if proc.returncode != 0:
            raise WorkspaceError(f"git {' '.join(args)} failed in {self.root}: {proc.stderr.strip()}")
        return proc.stdout

    def _make_starter(self) -> str:
        head = None
        try:
            head = self.repo.head.commit.hexsha
        except ValueError:  # unborn branch: empty repository
            pass
        if head:
            self._git("read-tree", head)
        else:
            self._git("read-tree", "--empty")
        self._git("add", "-A")
        tree = self._git("write-tree").strip()
        if head and self.repo.commit(head).tree.hexsha == tree:
            return head
        args = ["commit-tree", tree, "-m", "codegym starter"]
        if head:
            args[2:2] = ["-p", head]
        return self._git(*args).strip()

    def _refresh(self) -> None:
        self._git("add", "-A")

    # -- store interface ----------------------------------------------------
    def _full(self, path: str) -> Path:
        return self.root / path

    def _check_inside(self, path: str, full: Path, what: str) -> None:
        # a symlinked directory must not lead reads, writes or deletes out of
        # the working tree
        parent_real = os.path.realpath(full.parent)
        if parent_real != self.real_root and not parent_real.startswith(self.real_root + os.sep):
            raise WorkspaceError(f"cannot {what} {path!r}: it resolves outside the workspace")

    def _file(self, path: str) -> Path | None:
        """The file at `path` if it exists; WorkspaceError if it leads out."""
        full = self._full(path)
        link = os.path.islink(full)
        if link or "/" in path:
            self._check_inside(path, full, "read")
            if link and not os.path.realpath(full).startswith(self.real_root + os.sep):
                raise WorkspaceError(f"cannot read {path!r}: it is a symbolic link out of the workspace")
        return full if full.is_file() else None

    def read(self, path: str) -> str | None:
        full = self._file(path)
        return _read_disk(full) if full is not None else None

    def check_writable(self, path: str, creating: bool) -> None:
        full = self._full(path)
        self._check_inside(path, full, "write")
        if os.path.islink(full):
            raise WorkspaceError(f"cannot write {path!r}: it is a symbolic link")
        if full.is_dir():
            raise WorkspaceError(f"cannot write {path!r}: a directory of that name exists")
        for d in _parents(path):
            dp = self.root / d
            if dp.exists() and not dp.is_dir():
                raise WorkspaceError(f"cannot create file {path!r}: {d!r} is a file, not a directory")

    def write(self, path: str, text: str | None) -> None:
        full = self._full(path)
        if text is None:
            self._check_inside(path, full, "delete")
            if full.is_file() or full.is_symlink():
                full.unlink()
            # git does not track empty directories; keep the tree tidy
            d = full.parent
            while d != self.root and d.is_dir() and not any(d.iterdir()):
                d.rmdir()
                d = d.parent
            return
        full.parent.mkdir(parents=True, exist_ok=True)
        _write_disk(full, text)

    def list(self) -> list[str]:
        self._refresh()
        out = self._git("ls-files", "-z")
        return sorted(p for p in out.split("\0") if p)

    def starter_text(self, path: str) -> str | None:
        try:
            blob = self._starter_tree / path
        except KeyError:
            return None
        if blob.type != "blob":
            return None
        return blob.data_stream.read().decode("utf-8", "surrogateescape")

    def changed_paths(self, touched: Iterable[str]) -> set[str]:
        self._refresh()
        out = self._git("diff", "--cached", "--no-renames", "--name-only", "-z", self.starter)
        return {p for p in out.split("\0") if p} | set(touched)

    def readable(self) -> Iterator[str]:
        """Current paths whose content stays inside the working tree."""
        for p in self.list():
            try:
                if self._file(p) is not None:
                    yield p
            except WorkspaceError:
                continue  # a symlink out of the workspace: not part of it

    def snapshot_files(self) -> dict[str, str]:
        return {p: _read_disk(self.root / p) for p in self.readable()}

    def copy(self, dest: str | os.PathLike | None) -> "_GitStore":
        owned = dest is None
        target = Path(tempfile.mkdtemp(prefix="codegym-ws-")) if owned else Path(dest)
        if not owned and target.exists() and any(target.iterdir()):
            raise WorkspaceError(f"cannot copy the workspace to {target}: directory is not empty")
        shutil.copytree(self.root, target, symlinks=True, dirs_exist_ok=True,
                        ignore=_ignore_private_indexes)
        return _GitStore(target.resolve(), owned=owned, starter=self.starter,
                         index_from=self.index)

    def close(self) -> None:
        try:
            self.repo.close()
        finally:
            for fin in reversed(self._finalizers):
                fin()


def _ignore_private_indexes(directory: str, names: list[str]) -> list[str]:
    return [n for n in names if n.startswith("codegym-index-")]


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# ---------------------------------------------------------------------------
# Workspace
# ---------------------------------------------------------------------------


class Workspace:
    """A task's files with versions, per-step and cumulative diffs.

    Example::

        >>> ws = Workspace.in_memory({"main.py": "print(1)\\n"})
        >>> step = ws.apply({"main.py": "print(2)\\n", "util.py": "X = 1\\n"})
        >>> ws.version, step.paths
        (1, ['main.py', 'util.py'])
        >>> print(ws.diff, end="")
        diff --git a/main.py b/main.py
        --- a/main.py
        +++ b/main.py
        @@ -1 +1 @@
        -print(1)
        +print(2)
        diff --git a/util.py b/util.py
        new file mode 100644
        --- /dev/null
        +++ b/util.py
        @@ -0,0 +1 @@
        +X = 1
        >>> ws.apply({"../x": "boom"})
        Traceback (most recent call last):
        ...
        codegym.edits.workspace.WorkspaceError: invalid path '../x': '..' is not allowed (paths stay inside the workspace)
        >>> _ = ws.undo()
        >>> ws.version, ws.list()
        (0, ['main.py'])

    ``protected`` holds glob patterns (`fnmatch`, ``*`` also crosses ``/``); a
    pattern matching a path or one of its parent directories makes edits to it
    raise `WorkspaceError` (``"tests"`` and ``"tests/*"`` both protect
    ``tests/a.py``).
    """

    def __init__(self, store: _MemoryStore | _GitStore, protected: Sequence[str] = ()):
        self._store = store
        if isinstance(protected, str):
            protected = (protected,)
        self._protected: tuple[str, ...] = tuple(protected)
        self._history: list[StepDiff] = []
        # path -> number of history steps that changed it (kept incrementally: the
        # cumulative diff must not cost O(history) per step)
        self._touched: dict[str, int] = {}
        # path -> the current text, its lines, the starter's lines, the opcodes
        # between them and the diff text: files a step did not change keep their
        # diff, and a changed file is re-diffed only around the edit
        self._cum_cache: dict[str, _CumEntry] = {}
        # path -> (text, split_lines(text)): the last split of each file, reused
        # as the "old" side of the next diff (the cheap part of the 1 ms budget)
        self._lines: dict[str, tuple[str, list[str]]] = {}
        self._protected_cache: dict[str, str | None] = {}

    # -- construction -------------------------------------------------------
    @classmethod
    def in_memory(cls, files: Mapping[str, str | bytes], protected: Sequence[str] = ()) -> "Workspace":
        """A workspace held in a dict (bytes values are decoded as UTF-8 with
        surrogateescape, so they round-trip)."""
        clean: dict[str, str] = {}
        for path, text in files.items():
            p = validate_path(path)
            if p in clean:
                raise WorkspaceError(f"duplicate path {path!r} (same file as {p!r})")
            clean[p] = _as_text(path, text)
        store = _MemoryStore(clean)
        for p in clean:  # a file also used as a directory cannot be materialised
            for d in _parents(p):
                if d in clean:
                    raise WorkspaceError(f"invalid starter: {d!r} is both a file and a directory")
        return cls(store, protected)

    @classmethod
    def from_directory(cls, path: str | os.PathLike, copy_to: str | os.PathLike | None = None,
                       protected: Sequence[str] = ()) -> "Workspace":
        """A workspace on a git working tree.

        With ``copy_to`` the directory is first copied there (``copy_to`` must
        be absent or empty) and the copy is used; otherwise `path` is used in
        place. If the directory is not the top of a git repository one is
        initialised. The starter commit is HEAD when the tree is clean, else a
        commit object (not on any branch) recording the current working tree.
        """
        src = Path(path)
        if not src.is_dir():
            raise WorkspaceError(f"{src} is not a directory")
        if copy_to is not None:
            root = Path(copy_to)
            if root.exists() and any(root.iterdir()):
                raise WorkspaceError(f"cannot copy {src} to {root}: directory is not empty")
            shutil.copytree(src, root, symlinks=True, dirs_exist_ok=True,
                            ignore=_ignore_private_indexes)
        else:
            root = src
        return cls(_GitStore(root.resolve(), owned=False), protected)

    # -- reading ------------------------------------------------------------
    @property
    def protected(self) -> tuple[str, ...]:
        """Glob patterns of files edits may not touch."""
        return self._protected

    @property
    def backend(self) -> str:
        """"memory" or "git"."""
        return self._store.kind

    @property
    def root(self) -> Path | None:
        """The working tree (git backend) or None (in memory)."""
        return getattr(self._store, "root", None)

    @property
    def starter_commit(self) -> str | None:
        """The commit `cumulative_diff` compares against (git backend)."""
        return getattr(self._store, "starter", None) if self.backend == "git" else None

    @property
    def version(self) -> int:
        return len(self._history)

    @property
    def history(self) -> tuple[StepDiff, ...]:
        return tuple(self._history)

    @property
    def files(self) -> dict[str, str]:
        """A fresh ``{path: text}`` dict of the current files."""
        return self._store.snapshot_files()

    def list(self) -> list[str]:
        """Current file paths, sorted (git backend: files git would track)."""
        return self._store.list()

    def exists(self, path: str) -> bool:
        return self._store.read(validate_path(path)) is not None

    def read(self, path: str) -> str:
        p = validate_path(path)
        text = self._store.read(p)
        if text is None:
            raise WorkspaceError(f"no such file: {p!r}")
        return text

    @property
    def diff(self) -> str:
        """Unified diff of the last step ("" at version 0)."""
        return self._history[-1].text if self._history else ""

    def cumulative_diff(self) -> str:
        """Unified diff from the starter to the current files."""
        parts = []
        for p in sorted(self._store.changed_paths(set(self._touched))):
            new = self._store.read(p)
            hit = self._cum_cache.get(p)
            if hit is not None and (hit.text is new or hit.text == new):
                parts.append(hit.diff)
                continue
            parts.append(self._cumulative_file_diff(p, new, hit))
        return "".join(parts)

    def _cumulative_file_diff(self, p: str, new: str | None, hit: "_CumEntry | None") -> str:
        """The starter->current diff of `p`; in memory, updated around the last edit
        (`recompose_opcodes`) rather than diffed from scratch at every step."""
        b = self._cached_lines(p, new)
        reuse = fresh = None
        if hit is not None and new is not None and self._store.kind == "memory":
            step = diff_opcodes(hit.lines, b)
            ops = recompose_opcodes(hit.starter_lines, hit.lines, b, hit.opcodes, step) if step else hit.opcodes
            a = hit.starter_lines
            old = self._store.starter_text(p)
            if step:  # rows of b that differ from the last render's b (closed range)
                reuse, fresh = hit.bodies, (step[0][3], step[-1][4])
        else:
            old = self._store.starter_text(p)
            if new is None or old is None or self._store.kind != "memory":
                text = file_diff(p, old, new, new_lines=b)
                self._cum_cache.pop(p, None)
                return text
            a = split_lines(old)
            ops = diff_opcodes(a, b)
        bodies: dict = {}
        if not ops:  # back to the starter's text
            text = ""
        else:
            qa, qb = _git_path("a/", p), _git_path("b/", p)
            text = _render([f"diff --git {qa} {qb}\n"], qa, qb, old, new, a, b, ops, 3, bodies, reuse, fresh)
        self._cum_cache[p] = _CumEntry(new, b, a, ops, text, bodies)
        return text

    # -- editing ------------------------------------------------------------
    def _protected_by(self, path: str) -> str | None:
        if not self.protected:
            return None
        hit = self._protected_cache.get(path, "")
        if hit == "":
            hit = None
            for candidate in (path, *_parents(path)):
                for pat in self.protected:
                    if fnmatch.fnmatchcase(candidate, pat):
                        hit = pat
                        break
                if hit:
                    break
            self._protected_cache[path] = hit
        return hit

    def _cached_lines(self, path: str, text: str | None) -> list[str] | None:
        if text is None:
            return None
        entry = self._lines.get(path)
        if entry is not None and (entry[0] is text or entry[0] == text):
            return entry[1]
        lines = split_lines(text)
        self._lines[path] = (text, lines)
        return lines

    def apply(self, changes: Mapping[str, str | None]) -> StepDiff:
        """Apply an edit set atomically and make a new version.

        ``changes`` maps paths to their new full text, or None to delete. Either
        every change applies or none does (`WorkspaceError` names the first
        problem). Changes that leave a file as it was are dropped from the step.
        """
        if not isinstance(changes, Mapping):
            raise WorkspaceError(f"expected a mapping of path -> text, got {type(changes).__name__}")
        planned: list[FileChange] = []
        seen: dict[str, str] = {}
        store = self._store
        for raw_path, new in changes.items():
            p = validate_path(raw_path)
            if p in seen:
                raise WorkspaceError(f"path {raw_path!r} given twice (same file as {seen[p]!r})")
            seen[p] = raw_path
            if new is not None:
                new = _as_text(raw_path, new)
            pat = self._protected_by(p)
            if pat is not None:
                raise WorkspaceError(f"{p!r} is protected (matches {pat!r}); it cannot be edited")
            old = store.read(p)
            if new is None and old is None:
                raise WorkspaceError(f"cannot delete {p!r}: no such file")
            if old is not None and new is not None and (old is new or old == new):
                continue
            if new is not None:
                store.check_writable(p, creating=old is None)
            planned.append(FileChange(p, old, new))
        planned.sort(key=lambda c: c.path)
        self._check_final_layout(planned)
        done: list[FileChange] = []
        try:
            for ch in planned:
                store.write(ch.path, ch.new)
                done.append(ch)
        except OSError as e:  # disk full, permissions...: roll back what was written
            for ch in reversed(done):
                store.write(ch.path, ch.old)
            raise WorkspaceError(f"could not write {planned[len(done)].path!r}: {e}") from e
        lines = {}
        for ch in planned:
            entry = self._lines.get(ch.path)
            old_l = None
            if ch.old is not None and entry is not None and (entry[0] is ch.old or entry[0] == ch.old):
                old_l = entry[1]
            if ch.new is None:
                self._lines.pop(ch.path, None)
                new_l = None
            else:
                new_l = split_lines(ch.new)
                self._lines[ch.path] = (ch.new, new_l)
            lines[ch.path] = (old_l, new_l)
        step = StepDiff(version=self.version + 1, changes=tuple(planned), _lines=lines)
        self._history.append(step)
        for ch in planned:
            self._touched[ch.path] = self._touched.get(ch.path, 0) + 1
        return step

    def _check_final_layout(self, planned: list[FileChange]) -> None:
        # Files created in the same edit set must not clash with each other
        # (e.g. "a" and "a/b"); clashes with existing files were checked per path.
        created = {c.path for c in planned if c.old is None}
        if not created:
            return
        for p in created:
            for d in _parents(p):
                if d in created:
                    raise WorkspaceError(f"cannot create both {d!r} and {p!r}: {d!r} would be a file and a directory")

    def undo(self) -> StepDiff:
        """Revert the last step; returns the step that was undone."""
        if not self._history:
            raise WorkspaceError("nothing to undo: the workspace is at its starting version")
        step = self._history.pop()
        for ch in step.changes:
            left = self._touched.get(ch.path, 0) - 1
            if left > 0:
                self._touched[ch.path] = left
            else:
                self._touched.pop(ch.path, None)
        for ch in reversed(step.changes):
            self._store.write(ch.path, ch.old)
            if ch.old is None:
                self._lines.pop(ch.path, None)
        return step

    # -- forking / output ---------------------------------------------------
    def copy(self, dest: str | os.PathLike | None = None) -> "Workspace":
        """An independent copy (same versions and history). The git backend
        copies the working tree and its .git to `dest` (default: a new temp
        directory, removed by `close()` or garbage collection)."""
        new = Workspace(self._store.copy(dest), self.protected)
        new._history = list(self._history)  # StepDiff records are never mutated in place
        new._touched = dict(self._touched)
        new._cum_cache = dict(self._cum_cache)
        new._lines = dict(self._lines)
        new._protected_cache = dict(self._protected_cache)
        return new

    def write_to(self, directory: str | os.PathLike) -> Path:
        """Materialise the current files under `directory` (created if needed)."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        if self.backend == "git":
            for p in self._store.readable():
                target = out / p
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self._store.root / p, target)  # keeps the executable bit
        else:
            for p, text in self._store.files.items():
                target = out / p
                target.parent.mkdir(parents=True, exist_ok=True)
                _write_disk(target, text)
        return out

    def close(self) -> None:
        """Release resources (git backend: the private index, and the working
        tree if this workspace created it with `copy()`)."""
        self._store.close()

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        where = f" root={self.root}" if self.root else ""
        return f"<Workspace {self.backend}{where} version={self.version}>"


def _as_text(path: str, value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "surrogateescape")
    raise WorkspaceError(f"content for {path!r} must be text, got {type(value).__name__}")
