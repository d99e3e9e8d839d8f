"""Spans: which characters of the action text produced each diff unit.

`attach_spans(units, action_text, edits)` reads each edit block (`EditBlock`,
or an exact `EditSpan`) as lines, places each block in the new (and, for
diffs, the old) file by offset voting, and sets every unit's ``span`` to the
stretch of action text that wrote its lines. docs/edits.md says how spans map
to tokens.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codegym.edits.records import DiffUnit, EditBlock, EditSpan

#: what `attach_spans` reads: a block of the action (or one exact piece of content)
Edit = EditBlock | EditSpan

# A source line: (key, start, end) = whitespace-stripped content for matching,
# and the action-text offsets of the line content. Plain tuples: thousands are
# made per step.
_SrcLine = tuple[str, int, int]


@dataclass
class _Segment:
    edit: Edit
    new_side: list[_SrcLine]  # lines that are in the new file (content, context, '+')
    old_side: list[_SrcLine]  # diff segments: lines that were in the old file (context, '-')
    new_offset: int | None = None  # new-file line index of new_side[0] (once located)


def _source_lines(edit: Edit, action_text: str) -> list[tuple[str, int, int]]:
    """(content, start, end) of each line of the edit, offsets in action_text."""
    omap: Sequence[int] | None = None
    base = 0
    if edit.text is not None:
        if edit.text_offset_map is None:
            raise ValueError(f"EditBlock for {edit.path!r}: text given without text_offset_map")
        src = edit.text
        omap = edit.text_offset_map
        if len(omap) == len(src):
            omap = list(omap) + [(omap[-1] + 1) if omap else edit.start]
        if len(omap) != len(src) + 1:
            raise ValueError(f"EditBlock for {edit.path!r}: text_offset_map needs len(text)+1 entries")
    else:
        if edit.text_offset_map is not None:
            raise ValueError(f"EditBlock for {edit.path!r}: text_offset_map given without text")
        if not (0 <= edit.start <= edit.end <= len(action_text)):
            raise ValueError(f"EditBlock for {edit.path!r}: ({edit.start}, {edit.end}) is outside the action text")
        src = action_text[edit.start:edit.end]
        base = edit.start
    out = []
    pos = 0
    parts = src.split("\n")
    if parts and parts[-1] == "":
        parts.pop()  # the text ends with a newline: no empty last line
    for part in parts:
        n = len(part) - 1 if part.endswith("\r") else len(part)
        out.append((part[:n], pos, pos + n))
        pos += len(part) + 1
    if omap is not None:
        return [(c, omap[a], omap[b]) for c, a, b in out]
    return [(c, a + base, b + base) for c, a, b in out]


def _segments(edit: Edit, lines: list[tuple[str, int, int]], as_diff: bool) -> list[_Segment]:
    if not as_diff:
        return [_Segment(edit, [(c.strip(), s, e) for c, s, e in lines], [])]
    segs = [_Segment(edit, [], [])]
    k = 0
    while k < len(lines):
        c, s, e = lines[k]
        if c.startswith("@@"):
            if segs[-1].new_side or segs[-1].old_side:
                segs.append(_Segment(edit, [], []))
        elif c.startswith("--- ") and k + 1 < len(lines) and lines[k + 1][0].startswith("+++ "):
            k += 1  # file header pair
        elif c.startswith(("diff --git ", "index ", "new file mode", "deleted file mode", "\\")):
            pass
        elif c.startswith("+"):
            segs[-1].new_side.append((c[1:].strip(), s + 1, e))
        elif c.startswith("-"):
            segs[-1].old_side.append((c[1:].strip(), s + 1, e))
        else:  # context line (its leading space may have been lost)
            body = c[1:] if c.startswith(" ") else c
            line = (body.strip(), s + (1 if c.startswith(" ") else 0), e)
            segs[-1].new_side.append(line)
            segs[-1].old_side.append(line)
        k += 1
    return [g for g in segs if g.new_side or g.old_side]


_VOTE_CAP = 8


def _locate(segments: list[_Segment], by_key: _LineIndex | dict[str, list[int]], wanted: dict[int, str],
            side: str) -> dict[int, tuple[int, int, _Segment]]:
    """Map `wanted` lines {line index: key} to source lines by offset voting.

    `by_key` maps a key to the indices of the voter lines with that key. For
    each segment, every (voter line n, source line i) pair with equal keys
    votes for the offset n - i; the best offset places the segment (a block
    of text written contiguously puts all its lines at one offset, so the true
    placement gets one vote per line while coincidental matches scatter).
    Each segment first places wanted lines at its best offset, segments with
    more votes first; then offsets with at least two votes may place what is
    left (an edit whose content the environment completed with unchanged
    lines). A source line is used once.
    """
    found: dict[int, tuple[int, int, _Segment]] = {}
    plans: list[tuple[int, _Segment, list[_SrcLine], list[tuple[int, int]], set[int]]] = []
    for seg in segments:
        src = seg.new_side if side == "new" else seg.old_side
        votes: Counter = Counter()
        # Frequent lines ("}", "end", "return x") say little about placement
        # and cost occurrences^2 votes: only rarer lines vote, unless there
        # are none.
        for cap in (_VOTE_CAP, None):
            for i, line in enumerate(src):
                occ = by_key.get(line[0], ())
                if cap is None or len(occ) <= cap:
                    for n in occ:
                        votes[n - i] += 1
            if votes:
                break
        if not votes:
            continue
        ranked = sorted(votes.items(), key=lambda kv: (-kv[1], abs(kv[0])))
        if side == "new":
            seg.new_offset = ranked[0][0]
        plans.append((ranked[0][1], seg, src, ranked, set()))
    plans.sort(key=lambda p: -p[0])

    def place(d: int, seg: _Segment, src: list[_SrcLine], used: set[int]) -> None:
        for n, key in wanted.items():
            if n in found:
                continue
            i = n - d
            if 0 <= i < len(src) and i not in used and src[i][0] == key:
                found[n] = (src[i][1], src[i][2], seg)
                used.add(i)

    for _best, seg, src, ranked, used in plans:
        place(ranked[0][0], seg, src, used)
    for _best, seg, src, ranked, used in plans:
        for d, count in ranked[1:]:
            if count < 2 or len(found) == len(wanted):
                break
            place(d, seg, src, used)
    return found


def attach_spans(
    units: list[DiffUnit],
    action_text: str,
    edits: Sequence[Edit],
    new_files: Mapping[str, str] | None = None,
    old_files: Mapping[str, str] | None = None,
) -> list[DiffUnit]:
    """Set ``unit.span`` for each unit from the action text that produced it:
    each edit is read as lines, placed in the new (and, for diffs, the old)
    file by offset voting (`_locate`; every line of ``new_files``/``old_files``
    votes when given), and a unit's span runs from its earliest to its latest
    located line, as ``str`` indices into ``action_text``; a unit with no
    located line gets the span of the edit that caused it, or None.
    docs/edits.md gives the exact rules and how to map spans to tokens.
    Returns `units` (modified in place).
    """
    by_path: dict[str, list[Edit]] = {}
    for e in edits:
        by_path.setdefault(e.path, []).append(e)
    units_by_path: dict[str, list[DiffUnit]] = {}
    for u in units:
        units_by_path.setdefault(u.path, []).append(u)
    for path, path_units in units_by_path.items():
        path_edits = by_path.get(path)
        if not path_edits:
            for u in path_units:
                u.span = None
            continue
        ctx = _SpanContext(path_units, path, new_files, old_files)
        segments: list[_Segment] = []
        for e in path_edits:
            segments.extend(_best_reading(e, action_text, ctx))
        found_new = _locate(segments, ctx.new_voters, ctx.new_wanted, "new")
        with_old = [s for s in segments if s.old_side]
        found_old = _locate(with_old, ctx.old_voters, ctx.old_wanted, "old") if with_old else {}
        for u in path_units:
            hits = [found_new[j - 1] for j in u.added if (j - 1) in found_new]
            hits += [found_old[i - 1] for i in u.removed if (i - 1) in found_old]
            if hits:
                u.span = (min(h[0] for h in hits), max(h[1] for h in hits))
            else:
                u.span = _causing_edit_span(u, path_edits, segments)
    return units


def _find_lines(text: str, key: str) -> list[int]:
    """Indices of the lines of `text` (split at ``\\n``) whose ``strip()`` is `key`
    (a non-empty stripped line). Scans with str.find: a few keys of a long file
    cost far less than indexing every line."""
    out: list[int] = []
    pos = row = counted = 0
    n, k = len(text), len(key)
    while True:
        p = text.find(key, pos)
        if p < 0:
            return out
        ls = text.rfind("\n", 0, p) + 1
        le = text.find("\n", p + k)
        if le < 0:
            le = n
        if text[ls:p].strip() or text[p + k:le].strip():
            pos = p + 1
            continue
        row += text.count("\n", counted, ls)
        counted = ls
        out.append(row)
        pos = le + 1


class _LineIndex:
    """key -> indices of a text's lines with that key, computed per key on demand."""

    __slots__ = ("text", "memo")

    def __init__(self, text: str):
        self.text = text
        self.memo: dict[str, list[int]] = {}

    def get(self, key: str, default=()):
        r = self.memo.get(key)
        if r is None:
            r = self.memo[key] = _find_lines(self.text, key) if key else []
        return r or default


class _SpanContext:
    """Lines to place (the units' own) and lines that vote (whole files when
    known), per side; the old side is only built for diff-form edits."""

    def __init__(self, units: list[DiffUnit], path: str, new_files, old_files):
        self.new_wanted = {n - 1: t.strip() for u in units for n, t in zip(u.added, u.post_raw) if t.strip()}
        self.old_wanted = {n - 1: t.strip() for u in units for n, t in zip(u.removed, u.pre_raw) if t.strip()}
        self._files = {"new": new_files, "old": old_files}
        self._path = path
        self._voters: dict[str, Any] = {}

    def voters(self, side: str) -> _LineIndex | dict[str, list[int]]:
        """key -> voter line indices: every line of the side's file when it is
        known, else the units' own lines."""
        if side not in self._voters:
            files = self._files[side]
            text = files.get(self._path) if files is not None else None
            if text is None:
                by_key: dict[str, list[int]] = {}
                for n, key in (self.new_wanted if side == "new" else self.old_wanted).items():
                    by_key.setdefault(key, []).append(n)
                self._voters[side] = by_key
            else:
                self._voters[side] = _LineIndex(text)
        return self._voters[side]

    @property
    def new_voters(self) -> _LineIndex | dict[str, list[int]]:
        return self.voters("new")

    @property
    def old_voters(self) -> _LineIndex | dict[str, list[int]]:
        return self.voters("old")


def _best_reading(edit: Edit, action_text: str, ctx: _SpanContext) -> list[_Segment]:
    lines = _source_lines(edit, action_text)
    if edit.diff is not None:
        return _segments(edit, lines, edit.diff)
    plain = _segments(edit, lines, False)
    if not any(c.startswith(("+", "-", "@@")) for c, _s, _e in lines):
        return plain
    as_diff = _segments(edit, lines, True)

    def score(segs: list[_Segment]) -> int:
        # a copy: _locate records offsets on the segments it is given
        trial = [_Segment(s.edit, s.new_side, s.old_side) for s in segs]
        n = len(_locate(trial, ctx.new_voters, ctx.new_wanted, "new"))
        with_old = [s for s in trial if s.old_side]
        if with_old:
            n += len(_locate(with_old, ctx.old_voters, ctx.old_wanted, "old"))
        return n

    return as_diff if score(as_diff) > score(plain) else plain


def _causing_edit_span(u: DiffUnit, edits: list[Edit], segments: list[_Segment]) -> tuple[int, int] | None:
    if len(edits) == 1:
        return (edits[0].start, edits[0].end)
    # The unit sits between new-file lines new_start-1 and new_start (0-based
    # insertion point); pick the edit whose located block covers that point.
    point = u.new_start if u.new_lines == 0 else u.new_start - 1
    covering = []
    for seg in segments:
        if seg.new_offset is None:
            continue
        lo, hi = seg.new_offset, seg.new_offset + len(seg.new_side)
        if lo <= point <= hi:
            covering.append(seg.edit)
    # dedupe by identity: an EditBlock may hold an unhashable offset map
    covering = list({id(e): e for e in covering}.values())
    if len(covering) == 1:
        return (covering[0].start, covering[0].end)
    unplaced = [e for e in edits if not any(s.edit is e and s.new_offset is not None for s in segments)]
    if not covering and len(unplaced) == 1:  # e.g. a search/replace with an empty REPLACE
        return (unplaced[0].start, unplaced[0].end)
    return None
