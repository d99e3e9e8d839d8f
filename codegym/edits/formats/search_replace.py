"""The ``search_replace`` format: ``<<<<<<< SEARCH`` / ``=======`` /
``>>>>>>> REPLACE`` blocks (bare or fenced), which file each targets, and
applying them where SEARCH matches (exactly, then ignoring trailing
whitespace, then a uniform indentation shift: docs/edits.md)."""

from __future__ import annotations

import re

from codegym.edits.formats.context import MAX_EDITS, Chunk, Context, Fence, Op, WorkFile, trim_final_newline
from codegym.edits.text import ActionError, clean_path, common_indent, find_all, lines_and_starts, mismatch_hint

#: more SEARCH/REPLACE marker lines than this is an error
MAX_MARKER_LINES = 4 * MAX_EDITS
_SR_RE = re.compile(r"^(?:(<{5,9}) ?SEARCH|(={5,9})|(>{5,9}) ?REPLACE)[ \t]*$", re.M)
#: a line that reads as a SEARCH/REPLACE marker
MARKER_LINE_RE = re.compile(r"^(?:<{5,9} ?SEARCH|={5,9}|>{5,9} ?REPLACE)[ \t]*$", re.M)

_SEARCH, _DIVIDER, _REPLACE = 0, 1, 2


def scan_markers(ctx: Context) -> None:
    """Find every marker line: ``ctx.sr_marks`` = (start, end, kind) in text order."""
    marks = []
    for m in _SR_RE.finditer(ctx.norm):
        marks.append((m.start(), m.end(), _SEARCH if m.group(1) else _DIVIDER if m.group(2) else _REPLACE))
        if len(marks) > MAX_MARKER_LINES:
            raise ActionError(f"the action has more than {MAX_MARKER_LINES} SEARCH/REPLACE marker lines")
    ctx.sr_marks = marks
    ctx.sr_starts = [m[0] for m in marks]


def has_search(marks: list[tuple[int, int, int]]) -> bool:
    return any(mk[2] == _SEARCH for mk in marks)


def _block_path(ctx: Context, s0: int, fence: Fence | None, fence_path: str | None,
                prev_path: str | None) -> tuple[str, int]:
    """The path a block at ``s0`` targets (as written) and where the block starts: the
    line above the SEARCH marker, else the fence's path, else the previous block's,
    else the main file."""
    own = ctx.label_path(ctx.prev_line(s0))
    if own is not None and (fence is None or ctx.prev_line_start(s0) >= fence.content_start):
        return own, ctx.prev_line_start(s0)
    if fence_path is not None:
        return fence_path, s0
    if prev_path is not None:
        return prev_path, s0
    return ctx.main_file, s0


def read_region(ctx: Context, marks: list[tuple[int, int, int]], fence_path: str | None,
                fence: Fence | None = None) -> None:
    """Turn the marker lines of one region (a fence, or a stretch of prose) into ops."""
    norm = ctx.norm
    prev_path = ctx.last_sr_path
    k = 0
    while k < len(marks):
        s0, e0, kind = marks[k]
        if kind == _DIVIDER:  # a stray ======= (e.g. a reST underline) is text
            k += 1
            continue
        if kind == _REPLACE:
            if fence is not None or ctx.in_prose(s0):
                raise ActionError(f"line {ctx.line(s0)}: found >>>>>>> REPLACE without a <<<<<<< SEARCH before it")
            k += 1
            continue
        ctx.n_sr += 1
        name = f"SEARCH/REPLACE block {ctx.n_sr} (line {ctx.line(s0)})"
        if k + 1 >= len(marks) or marks[k + 1][2] != _DIVIDER:
            raise ActionError(f"{name}: missing the ======= line after the SEARCH part")
        d0, d1, _ = marks[k + 1]
        j = k + 2
        while j < len(marks) and marks[j][2] == _DIVIDER:
            j += 1  # "=======" inside the REPLACE part is content
        if j >= len(marks) or marks[j][2] != _REPLACE:
            raise ActionError(f"{name}: missing the >>>>>>> REPLACE line")
        r0, r1, _ = marks[j]
        raw, src_start = _block_path(ctx, s0, fence, fence_path, prev_path)
        path = prev_path = clean_path(raw, name)
        name = f"SEARCH/REPLACE block {ctx.n_sr} ({path}, line {ctx.line(s0)})"
        src = (src_start, min(r1 + 1, len(norm)))
        srep = min(d1 + 1, r0)
        piece = Chunk(norm[srep:r0], srep, "search_replace", src)
        ctx.seen(src_start, "search_replace")
        ctx.add_op(Op(s0, "search_replace", "sr", src, path, [piece], data=norm[min(e0 + 1, d0):d0], label=name))
        ctx.blocks.append((path, srep, r0, False, None, "search_replace"))
        if fence is None:
            ctx.consume(src[0], src[1])
        k = j + 1
    ctx.last_sr_path = prev_path


def _create_or_fill(ctx: Context, op: Op, w: WorkFile | None) -> None:
    """An empty SEARCH: create the file, or fill an empty one."""
    if w is None:
        ctx.set(op.path, WorkFile(list(op.pieces)))
        return
    if w.content() == "":
        w.replace(0, 0, list(op.pieces))
        ctx.set(op.path, w)
        return
    raise ActionError(f"{op.label}: the SEARCH part is empty but {op.path} already exists and is not empty; "
                      "put the lines to replace in SEARCH (an empty SEARCH only creates a new file)")


def apply_search_replace(ctx: Context, op: Op) -> None:
    path, name, search = op.path, op.label, op.data
    w = ctx.get(path, name)
    if w is None and not search.strip() or search == "":
        _create_or_fill(ctx, op, w)
        return
    if w is None:
        raise ctx.missing(op, "to create it, leave SEARCH empty")
    lines, offs, final_nl = lines_and_starts(w.content())
    needle = lines_and_starts(search)[0]
    for level in ("exact", "rstrip", "indent"):
        found = find_all(lines, needle, level)
        if len(found) > 1:
            where = ", ".join(str(p + 1) for p in found[:6])
            raise ActionError(f"{name}: the SEARCH text matches {len(found)} places in {path} (lines {where}); "
                              "add more lines around the change so it matches exactly one place")
        if found:
            break
    else:
        hint = mismatch_hint(lines, needle, path)
        raise ActionError(f"{name}: the SEARCH text was not found in {path}{'; ' + hint if hint else ''}")
    p = found[0]
    m = len(needle)
    pieces = list(op.pieces)
    if level == "indent":
        pieces = _reindent(pieces[0], needle, lines[p:p + m])
    if p + m == len(lines) and not final_nl:
        pieces = trim_final_newline(pieces)
    w.replace(offs[p], offs[p + m], pieces)
    ctx.set(path, w)
    if level != "exact":
        ctx.warn(f"{name}: matched with {'trailing whitespace' if level == 'rstrip' else 'indentation'} "
                 f"differences at line {p + 1}")


def _reindent(piece: Chunk, needle: list[str], window: list[str]) -> list[Chunk]:
    """The REPLACE text shifted by the indentation SEARCH was shifted by in the file."""
    si, fi = common_indent(needle), common_indent(window)
    out: list[Chunk] = []
    pos = 0
    t = piece.text
    while pos < len(t):
        e = t.find("\n", pos)
        e = len(t) if e < 0 else e + 1
        line = t[pos:e]
        if line.strip() and line.startswith(si):
            if fi:
                out.append(Chunk(fi))
            out.append(piece.sub(pos + len(si), e))
        else:
            out.append(piece.sub(pos, e))
        pos = e
    return out or [piece]
