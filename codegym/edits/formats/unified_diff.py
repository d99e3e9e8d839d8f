"""The ``unified_diff`` format: recognising diffs (fenced or bare), reading
them into file patches and hunks, and applying the hunks where their context
matches (tolerance rules: docs/edits.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from codegym.edits.formats.context import MAX_EDITS, Chunk, Context, Op, WorkFile
from codegym.edits.text import ActionError, clean_path, find_all, lines_and_starts, mismatch_hint, quote

#: more diff lines than this in one action is an error
MAX_DIFF_LINES = 50_000
#: a diff that starts a line of prose: a git header, or a --- line followed by a +++ line
DIFF_START_RE = re.compile(r"^(?:diff --git [^\n]*|--- [^\n]*\n\+\+\+ [^\n]*)$", re.M)
_HUNK_RE = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_HUNK_LABEL_RE = re.compile(r"@@[^@\n]{0,80}@@")
_GIT_EXT_RE = re.compile(
    r"(?:index |new file mode |deleted file mode |old mode |new mode |similarity index |"
    r"dissimilarity index |rename from |rename to |copy from |copy to |Binary files |GIT binary patch)"
)
_NONWS_RE = re.compile(r"[^ \t\n\r]")


@dataclass
class Hunk:
    header: str
    old_start: int | None
    old_count: int | None
    start: int  # source: start of the @@ line
    end: int = 0
    # (kind, ts, te, newline_in_text, no_newline_marker); content = norm[ts:te]
    lines: list[list[Any]] = field(default_factory=list)


@dataclass
class FilePatch:
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
    hunks: list[Hunk] = field(default_factory=list)
    end: int = 0


# ---------------------------------------------------------------------------
# Recognising and reading
# ---------------------------------------------------------------------------


def looks_like_diff(ctx: Context, cs: int, ce: int) -> bool:
    """The content ``norm[cs:ce]`` starts with ``diff --git`` or ``--- x`` + ``+++ y``."""
    m = _NONWS_RE.search(ctx.norm, cs, ce)
    if m is None:
        return False
    s, e, nxt = ctx.line_at(m.start())
    line = ctx.norm[s:min(e, ce)]
    if line.startswith("diff --git "):
        return True
    return line.startswith("--- ") and ctx.norm.startswith("+++ ", nxt) and nxt < ce


def _is_header(norm: str, pos: int, end: int) -> bool:
    """Is the line at pos a '--- x' line followed by '+++ y' (and then a hunk or the end)?"""
    if not norm.startswith("--- ", pos):
        return False
    e = norm.find("\n", pos, end)
    if e < 0 or not norm.startswith("+++ ", e + 1):
        return False
    e2 = norm.find("\n", e + 1, end)
    if e2 < 0:
        return True
    return norm.startswith(("@@", "\n", "diff ", "--- "), e2 + 1) or e2 + 1 >= end


class _DiffReader:
    """Reads ``norm[start:end]`` into file patches. ``bare``: the diff is in prose
    (it ends at the first line that is not part of it); ``default``: the target
    of hunks without file headers (fenced diffs only)."""

    def __init__(self, ctx: Context, end: int, bare: bool, default: str | None):
        self.ctx, self.norm, self.end, self.bare, self.default = ctx, ctx.norm, end, bare, default
        self.patches: list[FilePatch] = []
        self.cur: FilePatch | None = None
        self.hunk: Hunk | None = None

    def count_line(self) -> None:
        self.ctx.diff_lines += 1
        if self.ctx.diff_lines > MAX_DIFF_LINES:
            raise ActionError(f"the diffs in this action have more than {MAX_DIFF_LINES} lines")

    def read(self, pos: int) -> tuple[list[FilePatch], int]:
        norm, end = self.norm, self.end
        while pos < end:
            self.count_line()
            nl = norm.find("\n", pos, end)
            le = nl if nl >= 0 else end
            nxt = le + 1 if nl >= 0 else end
            line = norm[pos:le]
            if self.hunk is not None:
                went_on = self.hunk_line(pos, line, le, nxt, nl >= 0)
                if went_on is not None:
                    pos = went_on
                    continue
                self.hunk = None
            went_on = self.file_line(pos, line, nxt)
            if went_on is None:
                break
            pos = went_on
        for a, b in zip(self.patches, self.patches[1:]):
            a.end = b.start
        if self.patches:
            self.patches[-1].end = max(self.patches[-1].end, pos)
        return self.patches, pos

    def hunk_line(self, pos: int, line: str, le: int, nxt: int, has_nl: bool) -> int | None:
        """The line inside the current hunk: where reading goes on, or None (the hunk ended)."""
        hunk = self.hunk
        assert hunk is not None  # (inside a hunk)
        c = line[:1]
        if c == " " or (c in "+-" and line and not _is_header(self.norm, pos, self.end)):
            hunk.lines.append([c, pos + 1, le, has_nl, False])
            hunk.end = nxt
            return nxt
        if c == "\\":
            if hunk.lines:
                hunk.lines[-1][4] = True
            hunk.end = nxt
            return nxt
        if not line.strip():
            return self.blank_lines(pos)
        return None

    def blank_lines(self, pos: int) -> int | None:
        """Blank lines are empty context lines if the hunk goes on after them."""
        norm, end = self.norm, self.end
        nb = _NONWS_RE.search(norm, pos, end)
        q = norm.rfind("\n", pos, nb.start()) + 1 if nb else end
        if not (q < end and norm[q] in " +-\\" and not _is_header(norm, q, end)):
            return None
        hunk = self.hunk
        assert hunk is not None  # (inside a hunk)
        while pos < q:
            self.count_line()
            e2 = norm.find("\n", pos, end)
            e2 = end if e2 < 0 else e2
            hunk.lines.append([" ", pos, pos, e2 < end, False])
            pos = e2 + 1
        hunk.end = pos
        return pos

    def file_line(self, pos: int, line: str, nxt: int) -> int | None:
        """A line outside hunks: where reading goes on, or None (the diff ended)."""
        norm, end, cur = self.norm, self.end, self.cur
        if line.startswith("diff --git "):
            self.cur = FilePatch(start=pos, from_git=True)
            m = re.match(r"diff --git (?:a/)?(\S+) (?:b/)?(\S+)\s*$", line) if len(line) < 1000 else None
            if m:
                self.cur.git_old, self.cur.git_new = m.group(1), m.group(2)
            self.patches.append(self.cur)
        elif line.startswith("--- ") and norm.startswith("+++ ", nxt) and nxt < end:
            e2 = norm.find("\n", nxt, end)
            e2 = end if e2 < 0 else e2
            if cur is None or not cur.from_git or cur.headers or cur.hunks:
                cur = self.cur = FilePatch(start=pos)
                self.patches.append(cur)
                if len(self.patches) > MAX_EDITS:
                    raise ActionError(f"the action has more than {MAX_EDITS} file diffs")
            cur.old, cur.new, cur.headers = line[4:], norm[nxt + 4:e2], True
            cur.end = min(e2 + 1, end)
            return min(e2 + 1, end)
        elif line.startswith("@@"):
            if cur is None:
                if self.bare or self.default is None:
                    return None
                cur = self.cur = FilePatch(start=pos, implicit=self.default)
                self.patches.append(cur)
            self.hunk = _new_hunk(line, pos, nxt)
            cur.hunks.append(self.hunk)
        elif cur is not None and not cur.hunks and _GIT_EXT_RE.match(line):
            _git_extended_header(cur, line)
        elif self.bare:
            return None
        elif line.strip() and cur is not None:  # blank lines, and text before the first header, are not part of it
            raise ActionError(
                f"line {self.ctx.line(pos)} of the diff is not part of a hunk: {quote(line)} "
                "(inside a hunk every line starts with ' ', '+' or '-'; a new hunk starts with @@)")
        return nxt


def _new_hunk(line: str, pos: int, nxt: int) -> Hunk:
    lm = _HUNK_LABEL_RE.match(line)
    hm = _HUNK_RE.match(line)
    return Hunk(header=lm.group(0) if lm else line[:60], start=pos, end=nxt,
                old_start=int(hm.group(1)) if hm else None,
                old_count=(int(hm.group(2)) if hm.group(2) is not None else 1) if hm else None)


def _git_extended_header(cur: FilePatch, line: str) -> None:
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


def parse_diff(ctx: Context, start: int, end: int, bare: bool, default: str | None) -> tuple[list[FilePatch], int]:
    """The file patches of ``norm[start:end]`` and where the diff ends."""
    return _DiffReader(ctx, end, bare, default).read(start)


def add_patch_ops(ctx: Context, patches: list[FilePatch]) -> None:
    for p in patches:
        ctx.seen(p.start, "unified_diff")
        ctx.add_op(Op(p.start, "unified_diff", "patch", (p.start, p.end), data=p))


# ---------------------------------------------------------------------------
# Applying
# ---------------------------------------------------------------------------


def _diff_path(raw: str | None) -> str | None:
    if raw is None:
        return None
    p = raw.split("\t")[0].strip()
    if len(p) >= 2 and p[0] == p[-1] == '"':
        p = p[1:-1]
    if p == "/dev/null":
        return None
    return p


def _resolve_paths(ctx: Context, p: FilePatch) -> tuple[str | None, str | None, str]:
    """(old path, new path, the path named in messages); None = /dev/null."""
    if p.implicit is not None and not p.headers:
        path = clean_path(p.implicit, "diff")
        return path, path, path
    old = _diff_path(p.old) if p.headers else (p.git_old if p.git_old else None)
    new = _diff_path(p.new) if p.headers else (p.git_new if p.git_new else None)
    if not p.headers and p.from_git:
        old = p.rename_from or old
        new = p.rename_to or new
        if p.new_file:
            old = None
        if p.deleted_file:
            new = None
    # git's a/ b/ prefixes, unless the prefixed path is a real file
    if p.headers and (old is None or old.startswith("a/")) and (new is None or new.startswith("b/")):
        if not (old is not None and ctx.exists(old)):
            old = old[2:] if old else old
            new = new[2:] if new else new
    if old is not None and old.startswith(("a/", "b/")) and not ctx.exists(old) and ctx.exists(old[2:]):
        old = old[2:]
    if new is not None and new.startswith(("a/", "b/")) and not ctx.exists(new) and ctx.exists(new[2:]):
        new = new[2:]
    what = f"the diff for {new or old}"
    if old is not None:
        old = clean_path(old, what)
    if new is not None:
        new = clean_path(new, what)
    if old is None and new is None:
        raise ActionError("a diff has /dev/null on both sides (--- and +++)")
    return old, new, new or old or ""


def apply_patch(ctx: Context, op: Op) -> None:
    p: FilePatch = op.data
    if p.binary:
        raise ActionError(f"the diff at line {ctx.line(p.start)} is a binary patch, which is not supported")
    old, new, shown = _resolve_paths(ctx, p)
    label = f"the diff for {shown}"
    if old is None:  # create
        assert new is not None
        w = ctx.get(new, label)
        if w is not None and w.content() != "":
            raise ActionError(f"{label} creates the file (--- /dev/null), but {new} already exists; "
                              f"write the diff against its current content (--- a/{new})")
        for k, h in enumerate(p.hunks, 1):
            if any(l[0] != "+" for l in h.lines):
                raise ActionError(f"hunk {k} ({h.header}) of {new}: a diff that creates a file may only add lines (+)")
        _create(ctx, new, p)
        return
    w = ctx.get(old, label)
    if w is None:
        if p.hunks and all(l[0] == "+" for h in p.hunks for l in h.lines) and new is not None:
            ctx.warn(f"{label}: {old} does not exist; created it from the added lines")
            _create(ctx, new, p)
            return
        raise ActionError(f"{label}: {old} does not exist ({ctx.files_list()}); "
                          "to create a file, use '--- /dev/null' and '+++ b/<path>'")
    if new is None:  # delete
        ctx.set(old, None)
        return
    if new != old and ctx.exists(new):
        raise ActionError(f"{label}: renames {old} to {new}, but {new} already exists")
    delta = 0
    prev_end = 0
    for k, h in enumerate(p.hunks, 1):
        delta, prev_end = _apply_hunk(ctx, w, h, k, new, delta, prev_end)
        _hunk_block(ctx, new, h)
    if new != old:
        ctx.set(old, None)
    ctx.set(new, w)


def _create(ctx: Context, path: str, p: FilePatch) -> None:
    """A new file made of the added lines of every hunk."""
    pieces: list[Chunk] = []
    for h in p.hunks:
        pieces.extend(_added_pieces(ctx, h.lines, (h.start, h.end)))
        _hunk_block(ctx, path, h)
    ctx.set(path, WorkFile(pieces))


def _hunk_block(ctx: Context, path: str, h: Hunk) -> None:
    if h.lines:  # the @@ line and the body, markers included (diff form)
        ctx.blocks.append((path, h.start, h.end, True, None, "unified_diff"))


def _added_pieces(ctx: Context, lines: list[list[Any]], src: tuple[int, int]) -> list[Chunk]:
    out: list[Chunk] = []
    norm = ctx.norm
    for kind, ts, te, nl, marked in lines:
        if kind != "+":
            continue
        if marked:
            out.append(Chunk(norm[ts:te], ts, "unified_diff", src))
        elif nl:
            out.append(Chunk(norm[ts:te + 1], ts, "unified_diff", src))
        else:
            out.append(Chunk(norm[ts:te], ts, "unified_diff", src))
            out.append(Chunk("\n"))
    return out


def _place_hunk(ctx: Context, lines: list[str], old: list[str], h: Hunk, k: int, path: str,
                expected: int, prev_end: int) -> int:
    """The line where the hunk's old lines (context and removed) sit in the file."""
    if not old:
        return min(max(expected, 0), len(lines))
    found: list[int] = []
    for level in ("exact", "rstrip"):
        found = find_all(lines, old, level)
        if found:
            break
    if not found:
        hint = mismatch_hint(lines, old, path)
        raise ActionError(f"hunk {k} ({h.header}) of {path} did not apply: context not found"
                          + (f"\n{hint}" if hint else "")
                          + "\nThe context (' ') and removed ('-') lines must match the current file.")
    after = [c for c in found if c >= prev_end] or found
    p = min(after, key=lambda c: (abs(c - expected), c))
    if len(found) > 1 and h.old_start is None:
        ctx.warn(f"hunk {k} ({h.header}) of {path} matched {len(found)} places; used line {p + 1}")
    return p


def _change_groups(h: Hunk, p: int) -> list[tuple[int, int, list[list[Any]]]]:
    """Runs of -/+ lines between context lines: (first file line, lines removed, hunk lines)."""
    groups: list[tuple[int, int, list[list[Any]]]] = []
    f = p
    cur: list[Any] | None = None
    for l in h.lines:
        if l[0] == " ":
            if cur is not None:
                groups.append((cur[0], cur[1], cur[2]))
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
        groups.append((cur[0], cur[1], cur[2]))
    return groups


def _apply_hunk(ctx: Context, w: WorkFile, h: Hunk, k: int, path: str, delta: int,
                prev_end: int) -> tuple[int, int]:
    lines, offs, final_nl = lines_and_starts(w.content())
    old = [ctx.norm[l[1]:l[2]] for l in h.lines if l[0] != "+"]
    n_new = sum(1 for l in h.lines if l[0] != "-")
    if h.old_start is not None:
        expected = (h.old_start - 1 if old or h.old_count else h.old_start) + delta
    else:
        expected = prev_end
    p = _place_hunk(ctx, lines, old, h, k, path, expected, prev_end)
    for g_start, n_rem, glines in reversed(_change_groups(h, p)):
        a, b = offs[g_start], offs[g_start + n_rem]
        gsrc = (glines[0][1] - 1, glines[-1][2] + (1 if glines[-1][3] else 0))
        pieces = _added_pieces(ctx, glines, gsrc)
        at_eof = g_start + n_rem == len(lines)
        if not pieces:
            pieces = [Chunk("", gsrc[0], "unified_diff", gsrc)]
        else:
            if at_eof and lines and not final_nl and n_rem == 0:
                pieces.insert(0, Chunk("\n"))  # appending after a last line that has no newline
            if not at_eof and not pieces[-1].text.endswith("\n"):
                pieces.append(Chunk("\n"))  # a "no newline" marker only means something at the end
        w.replace(a, b, pieces)
    return delta + n_new - len(old), p + n_new
