"""Diff units: a step's diff split into hunks and syntax-aware sub-diffs.

The credit units of DiDPO: `split_units(old_files, new_files, ...)` cuts the
diff of each file into hunks, and each hunk along the syntax of the file
(``granularity``: "hunk", "function" or "statement"; scopes from
`codegym.edits.scopes`, trees from `codegym.edits.trees`); every `DiffUnit`
gets a position-independent signature and, with ``action_spans``, the span of
the action text that wrote it (`codegym.edits.spans.attach_spans`). Units of
different trajectories are grouped by signature and `unit_similarity` in
`codegym.rollout`. Code with syntax errors, or without a grammar, gives
hunk-level units; nothing here raises on file content. docs/edits.md has the
details.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from difflib import SequenceMatcher

from codegym.core.languages import language_of_path
from codegym.edits.records import DiffUnit, EditBlock, EditSpan
from codegym.edits.scopes import MODULE, SPECS, Label, Outline, common_label, resolve_labels, scope_name
from codegym.edits.similarity import line_similarity
from codegym.edits.spans import attach_spans
from codegym.edits.text import common_indent
from codegym.edits.textdiff import diff_opcodes, group_hunks, line_text, split_lines
from codegym.edits.trees import canonical, parse_pair, remember, thread_lru

GRANULARITIES = ("hunk", "function", "statement")


def language_for_path(path: str) -> str | None:
    """Language (one with a tree-sitter grammar) of a path from its extension, or None."""
    return language_of_path(path.lower(), with_grammar=True)


def unit_similarity(a: DiffUnit, b: DiffUnit) -> float:
    """Similarity of two units: 0 if their kinds differ, else the line-count
    weighted mean of `line_similarity` of their pre-images and post-images."""
    if a.kind != b.kind:
        return 0.0
    total = 0.0
    weight = 0
    for x, y in ((a.pre_image, b.pre_image), (a.post_image, b.post_image)):
        w = len(x) + len(y)
        if w:
            total += w * line_similarity(x, y)
            weight += w
    return total / weight if weight else 1.0


def _signature(kind: str, pre: Sequence[str], post: Sequence[str]) -> str:
    payload = kind + "\0" + "\n".join(pre) + "\0" + "\n".join(post)
    return hashlib.sha256(payload.encode("utf-8", "surrogateescape")).hexdigest()


# A piece: (label, (old_a, old_b), (new_a, new_b)), 0-based half-open ranges;
# an empty range sits at the insertion/deletion point.
_Piece = tuple[Label, tuple[int, int], tuple[int, int]]


def _runs(labels: list[Hashable], start: int) -> list[tuple[Hashable, int, int]]:
    """Maximal runs of equal keys: (key, first row, end row)."""
    runs: list[tuple[Hashable, int, int]] = []
    for k, lab in enumerate(labels):
        if runs and runs[-1][0] == lab:
            runs[-1] = (lab, runs[-1][1], start + k + 1)
        else:
            runs.append((lab, start + k, start + k + 1))
    return runs


def _align_runs(old_runs, new_runs, co: int, cn: int) -> list:
    """Pair runs of labelled lines of the two sides of a change.

    Runs with equal keys pair up (SequenceMatcher over the key sequences); a
    run only on one side becomes a pure deletion/insertion placed at the
    other side's cursor; a replaced stretch with different run counts on the
    two sides stays one piece. Returns (old_runs, new_runs) pairs, either may
    be empty, with the cursor positions for empty sides.
    """
    out = []
    sm = SequenceMatcher(None, [r[0] for r in old_runs], [r[0] for r in new_runs], autojunk=False)
    for tag, x1, x2, y1, y2 in sm.get_opcodes():
        if tag == "equal" or (tag == "replace" and x2 - x1 == y2 - y1):
            for k in range(x2 - x1):
                o, n = old_runs[x1 + k], new_runs[y1 + k]
                out.append(([o], [n], co, cn))
                co, cn = o[2], n[2]
        elif tag == "delete":
            for o in old_runs[x1:x2]:
                out.append(([o], [], co, cn))
                co = o[2]
        elif tag == "insert":
            for n in new_runs[y1:y2]:
                out.append(([], [n], co, cn))
                cn = n[2]
        else:
            os_, ns_ = old_runs[x1:x2], new_runs[y1:y2]
            out.append((os_, ns_, co, cn))
            co, cn = os_[-1][2], ns_[-1][2]
    return out


def _span_of(runs, cursor: int) -> tuple[int, int]:
    return (runs[0][1], runs[-1][2]) if runs else (cursor, cursor)


def _pieces_of_block(block, old_out: Outline, new_out: Outline) -> list[_Piece]:
    """Cut one change block by scope (and, with statements, by statement).

    Function level: lines are keyed by their scope path. Statement level
    refines each function-level piece, keying its lines by the index of the
    top-level statement of the scope body they belong to, counted from the
    first statement the piece touches on its side (the two sides of a block
    start at the same place, so relative indices line up even when the parse
    of one side is poor). A statement-level piece is labelled with its
    absolute statement index so that changes to the same statement in
    neighbouring blocks of a hunk merge into one unit.
    """
    _tag, i1, i2, j1, j2 = block
    old_rows, new_rows = range(i1, i2), range(j1, j2)
    old_lab = resolve_labels([old_out.raw_label(r) for r in old_rows], old_out, old_rows) if i2 > i1 else []
    new_lab = resolve_labels([new_out.raw_label(r) for r in new_rows], new_out, new_rows) if j2 > j1 else []
    old_runs = _runs([lab[0] for lab in old_lab], i1)
    new_runs = _runs([lab[0] for lab in new_lab], j1)
    pieces: list[_Piece] = []
    for os_, ns_, co, cn in _align_runs(old_runs, new_runs, i1, j1):
        if len(ns_) == 1 and len(os_) <= 1:
            path = ns_[0][0]  # one scope on each side (e.g. a renamed function): name it as it is now
        elif len(os_) == 1 and not ns_:
            path = os_[0][0]
        else:
            path = common_label([(r[0], None) for r in os_ + ns_])[0]
        o_rng, n_rng = _span_of(os_, co), _span_of(ns_, cn)
        if not old_out.statements:
            pieces.append(((path, None), o_rng, n_rng))
            continue
        pieces.extend(_statement_pieces(path, o_rng, n_rng, old_lab, new_lab, i1, j1))
    return pieces


def _statement_pieces(path, o_rng, n_rng, old_lab, new_lab, i1: int, j1: int) -> list[_Piece]:
    o_stmt = [old_lab[r - i1][1] for r in range(*o_rng)]
    n_stmt = [new_lab[r - j1][1] for r in range(*n_rng)]

    def relative(stmts):
        base = next((x for x in stmts if isinstance(x, int) and x >= 0), 0)
        return [(x - base) if isinstance(x, int) else x for x in stmts]

    old_runs = _runs(relative(o_stmt), o_rng[0])
    new_runs = _runs(relative(n_stmt), n_rng[0])
    out: list[_Piece] = []
    for os_, ns_, co, cn in _align_runs(old_runs, new_runs, o_rng[0], n_rng[0]):
        o, n = _span_of(os_, co), _span_of(ns_, cn)
        key = ("new", n_stmt[n[0] - n_rng[0]]) if ns_ else ("old", o_stmt[o[0] - o_rng[0]])
        out.append(((path, key), o, n))
    return out


def _make_unit(path: str, pieces: list[_Piece], label: Label, a: list[str], b: list[str],
               granularity: str, hunk: int, language: str | None) -> DiffUnit:
    removed = [i for _, (x, y), _n in pieces for i in range(x, y)]
    added = [j for _, _o, (x, y) in pieces for j in range(x, y)]
    if removed:
        old_start, old_lines = removed[0] + 1, removed[-1] - removed[0] + 1
    else:
        old_start, old_lines = pieces[0][1][0], 0
    if added:
        new_start, new_lines = added[0] + 1, added[-1] - added[0] + 1
    else:
        new_start, new_lines = pieces[0][2][0], 0
    kind = "replace" if removed and added else ("add" if added else "delete")
    pre_raw = [line_text(a[i]) for i in removed]
    post_raw = [line_text(b[j]) for j in added]
    pre_n = [l.rstrip() for l in pre_raw if l.strip()]
    post_n = [l.rstrip() for l in post_raw if l.strip()]
    m = len(common_indent(pre_n + post_n))
    if m:
        pre_n = [l[m:] for l in pre_n]
        post_n = [l[m:] for l in post_n]
    return DiffUnit(
        path=path, kind=kind,
        old_start=old_start, old_lines=old_lines, new_start=new_start, new_lines=new_lines,
        pre_image=pre_n, post_image=post_n, pre_raw=pre_raw, post_raw=post_raw,
        scope=scope_name(label[0]), signature=_signature(kind, pre_n, post_n),
        n_lines=len(removed) + len(added), granularity=granularity, hunk=hunk,
        removed=[i + 1 for i in removed], added=[j + 1 for j in added], language=language,
    )


def _lines_of(text: str) -> list[str]:
    """`split_lines`, remembered for the last few texts of this thread (in an
    episode the new side of a step is the old side of the next). The lists are
    shared: this module only reads them."""
    cache = thread_lru("lines")
    hit = cache.get(text)
    if hit is None:
        hit = split_lines(text)
        remember(cache, text, hit, size=4)
    return hit


def _file_units(path: str, old: str | None, new: str | None, language: str | None,
                granularity: str, context: int) -> list[DiffUnit]:
    a = _lines_of(old or "")
    b = _lines_of(new or "")
    opcodes = diff_opcodes(a, b)
    hunks = group_hunks(opcodes, context)
    if not hunks:
        return []
    statements = granularity == "statement"
    old_tree = new_tree = None
    if language in SPECS:
        try:
            # opcodes[0] starts at the same row on both sides (equal prefix), and
            # the lines after the last opcode are equal too
            old_tree, new_tree = parse_pair(language, old or "", new or "", opcodes[0][1],
                                             opcodes[-1][2], opcodes[-1][4], a, b)
        except Exception:  # the syntax layer must never break a step
            old_tree = new_tree = None
    old_out = Outline(a, language, statements, old_tree)
    new_out = Outline(b, language, statements, new_tree)
    units: list[DiffUnit] = []
    for h, blocks in enumerate(hunks):
        try:
            pieces = [p for blk in blocks for p in _pieces_of_block(blk, old_out, new_out)]
        except Exception:  # defensive: the syntax layer must never break a step
            pieces = [(MODULE, (blk[1], blk[2]), (blk[3], blk[4])) for blk in blocks]
        if granularity == "hunk":
            groups = [(common_label(p[0] for p in pieces), pieces)]
        else:
            groups = []
            for p in pieces:
                if groups and groups[-1][0] == p[0]:
                    groups[-1][1].append(p)
                else:
                    groups.append((p[0], [p]))
        for label, group in groups:
            units.append(_make_unit(path, group, label, a, b, granularity, h, language))
    return units


def _language_resolver(language_of) -> Callable[[str], str | None]:
    if language_of is None:
        return language_for_path
    if isinstance(language_of, Mapping):
        return lambda p: language_of.get(p, language_for_path(p))
    return language_of


def split_units(
    old_files: Mapping[str, str],
    new_files: Mapping[str, str],
    language_of: Callable[[str], str | None] | Mapping[str, str] | None = None,
    action_spans: tuple[str, Sequence[EditBlock | EditSpan]] | None = None,
    *,
    granularity: str = "function",
    context: int = 3,
) -> list[DiffUnit]:
    """Split the diff between two snapshots into `DiffUnit`s.

    A path missing from one side is an added/deleted file. ``language_of`` maps
    a path to a language name (python, c, cpp, julia, javascript; default: by
    extension); ``action_spans`` = ``(action_text, [EditBlock, ...])`` fills each
    unit's ``span`` (see `attach_spans`). Units come in path order, then file
    order. Never raises on the content of the files.

    >>> units = split_units({"a.py": "def f():\\n    return 1\\n\\ndef g():\\n    return 2\\n"},
    ...                     {"a.py": "def f():\\n    return 10\\n\\ndef g():\\n    return 20\\n"},
    ...                     granularity="function")
    >>> [(u.scope, u.kind, u.post_image) for u in units]
    [('function:f', 'replace', ['return 10']), ('function:g', 'replace', ['return 20'])]
    """
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity must be one of {GRANULARITIES}, got {granularity!r}")
    lang_of = _language_resolver(language_of)
    units: list[DiffUnit] = []
    for path in sorted(set(old_files) | set(new_files)):
        old, new = old_files.get(path), new_files.get(path)
        if old is new or old == new:
            continue
        lang = lang_of(path)
        lang = canonical(lang) if lang else None
        units.extend(_file_units(path, old, new, lang, granularity, context))
    if action_spans is not None:
        action_text, edits = action_spans
        attach_spans(units, action_text, edits, new_files=new_files, old_files=old_files)
    return units
