"""Text diffs: lines, opcodes, hunks and git-style unified diff text.

`split_lines` (lines without "\\n"; a last line lacking one keeps a "\\n" as
its no-EOL marker), `diff_opcodes` (patience-anchored difflib opcodes),
`group_hunks`, `recompose_opcodes` (re-diff only around an edit),
`file_diff` / `unified_diff` (text that `git apply` and `patch -p1` accept)
and `render_diff` (a file diff's body from given opcodes, reusing hunk
bodies of a previous render). One implementation for the workspace, the
diff units and everything else.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher

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


_C_ESCAPES = {
    0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v",
    0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\",
}


@functools.lru_cache(maxsize=4096)
def git_path(prefix: str, path: str) -> str:
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
    qa, qb = git_path("a/", path), git_path("b/", path)
    out = [f"diff --git {qa} {qb}\n"]
    if old is None:
        out.append("new file mode 100644\n")
    elif new is None:
        out.append("deleted file mode 100644\n")
    return render_diff(out, qa, qb, old, new, a, b, diff_opcodes(a, b), context=context)


def render_diff(out: list[str], qa: str, qb: str, old: str | None, new: str | None, a: Sequence[str],
                b: Sequence[str], opcodes: Sequence[Opcode], *, context: int,
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
    reuse = reuse if fresh is not None and bodies is not None else None
    f_lo, f_hi = fresh if fresh is not None else (0, 0)
    for hunk in group_hunks(opcodes, context):
        ops = tuple(hunk) if bodies is not None else None
        if reuse is not None and bodies is not None and hunk[-1][4] + context < f_lo:
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
            body = reuse.get(key) if reuse is not None and (j_hi < f_lo or j_lo > f_hi) else None
            if body is not None:
                out.append(body)
                bodies[key] = body
                bodies[ops] = header + body
                continue
        mark = len(out)
        _hunk_body(out, a, b, hunk, i_lo, i_hi)
        if bodies is not None:  # (`key` was set just above)
            body = "".join(out[mark:])
            del out[mark:]
            out.append(body)
            bodies[key] = body
            bodies[ops] = header + body
    return "".join(out)


def _hunk_body(out: list[str], a: Sequence[str], b: Sequence[str], hunk: Sequence[Opcode],
               i_lo: int, i_hi: int) -> None:
    """The context, removed and added lines of one hunk (``a[i_lo:i_hi]`` with its changes)."""
    i = i_lo
    for _tag, i1, i2, j1, j2 in hunk:
        _emit_run(out, " ", a[i:i1])
        _emit_run(out, "-", a[i1:i2])
        _emit_run(out, "+", b[j1:j2])
        i = i2
    _emit_run(out, " ", a[i:i_hi])


def _emit_run(out: list[str], prefix: str, lines: Sequence[str]) -> None:
    """Lines with a prefix (" ", "-", "+"), joined in one go. Only a file's last line can
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
