"""tree-sitter trees of the two sides of a step's diff.

`parser_for` (one Parser per language and thread), `parse_pair` (trees of the
old and new text, cached per text; the new side re-parsed incrementally from
the old one, or, for Python, only a window of top-level statements around the
change: `_parse_pair_windowed`), and the per-thread LRU caches the diff units
share (`thread_lru`, `remember`). docs/edits.md explains windowed parsing.
"""

from __future__ import annotations

import bisect
import importlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from codegym.core.languages import grammar_of, language_name

_local = threading.local()  # tree_sitter.Parser objects are not thread-safe
_TREE_CACHE_SIZE = 16
#: languages whose grammar's incremental parse re-reads everything after an edit
#: (tree-sitter-python: the external scanner's state differs after the edit, so no
#: later subtree is reused; an incremental parse of a 550-line module costs as much
#: as a fresh one). For these, a step parses only a window around the change.
_WINDOWED = frozenset({"python"})
#: set to False to always parse whole files (the windowed path is tested against it)
WINDOWED_PARSE = True


def canonical(language: str) -> str:
    """The table's name of a language name or alias (unknown names as given)."""
    lang = language_name(language)
    return lang.name if lang else language


def parser_for(language: str):
    """This thread's tree-sitter Parser for a language name (python, c, cpp,
    julia, javascript, or an alias such as py/js/jl), or None when the grammar
    is not installed. Shared so the package sets tree-sitter up once."""
    return _parser(canonical(language))


def _parser(language: str):
    cache = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    if language not in cache:
        try:
            from tree_sitter import Language, Parser  # noqa: PLC0415 (optional: grammars may be absent)

            mod = importlib.import_module(grammar_of(language) or "")
            cache[language] = Parser(Language(mod.language()))
        except Exception:  # grammar not installed (or unknown name): hunk-level units
            cache[language] = None
    return cache[language]


def thread_lru(name: str) -> OrderedDict:
    """This thread's LRU cache `name` (see `remember`)."""
    cache = getattr(_local, name, None)
    if cache is None:
        cache = OrderedDict()
        setattr(_local, name, cache)
    return cache


def remember(cache: OrderedDict, key, value, size: int = _TREE_CACHE_SIZE) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)


def _tree_cache() -> OrderedDict[tuple[str, str], Any]:
    """(language, text) -> whole-file tree."""
    return thread_lru("trees")


def _bounds_cache() -> OrderedDict[tuple[str, str], Any]:
    """(language, text) -> statement boundaries (`_boundaries`), None for a text with errors."""
    return thread_lru("bounds")


def _row_offset(data: bytes, row: int) -> tuple[int, tuple[int, int]]:
    """Byte offset and tree-sitter point of the start of line `row` (or of the
    end of the text when `row` is past its last newline)."""
    parts = data.split(b"\n", row)
    if len(parts) <= row:  # past the last newline: the end of an unterminated last line
        return len(data), (len(parts) - 1, len(parts[-1]))
    return len(data) - len(parts[-1]), (row, 0)


def _boundaries(root, lo: int = 0, hi: int | None = None) -> list[int] | None:
    """Rows where a top-level statement starts at column 0 right after another
    top-level statement that ended on an earlier row, neither being a comment
    (a comment's placement depends on the lines after it), for the root's
    children starting in rows [lo, hi); None when the tree has errors."""
    if root.has_error:
        return None
    out = []
    prev = None
    for c in root.children:
        r = c.start_point.row
        if hi is not None and r >= hi:
            break
        if (prev is not None and r >= lo and c.start_point.column == 0 and prev.end_point.row < r
                and "comment" not in c.type and "comment" not in prev.type):
            out.append(r)
        prev = c
    return out


def _start_byte(data: bytes, lines: Sequence[str] | None, row: int) -> int:
    """Byte offset of the start of line `row`; `lines` (the `split_lines` of an ASCII
    text, so one byte per character) gives it without splitting the bytes."""
    if lines is not None and row < len(lines):
        return sum(map(len, lines[:row])) + row
    return _row_offset(data, row)[0]


def _parse_window(parser, data: bytes, row_a: int, row_b: int, n_rows: int,
                  lines: Sequence[str] | None = None):
    """Parse rows [row_a, row_b) of `data` only (tree-sitter included ranges: the
    nodes keep their positions in the whole text)."""
    from tree_sitter import Point, Range  # noqa: PLC0415 (optional: only with a grammar)

    start_byte = _start_byte(data, lines, row_a)
    end_byte, end_point = (_start_byte(data, lines, row_b), (row_b, 0)) if row_b < n_rows else (len(data), None)
    if end_point is None:
        nl = data.count(b"\n")
        end_point = (nl, len(data) - (data.rfind(b"\n") + 1))
    parser.included_ranges = [Range(Point(row_a, 0), Point(*end_point), start_byte, end_byte)]
    try:
        return parser.parse(data)
    finally:
        parser.included_ranges = []


class _LazyTree:
    """A tree-sitter tree parsed when its ``root_node`` is first read."""

    __slots__ = ("_parse", "_tree")

    def __init__(self, parse: Callable[[], Any]):
        self._parse, self._tree = parse, None

    @property
    def root_node(self):
        if self._tree is None:
            self._tree = self._parse()
        return self._tree.root_node


def _full_tree(language: str, text: str, data: bytes | None = None):
    """A whole-file tree of `text` (cached)."""
    cache = _tree_cache()
    key = (language, text)
    tree = cache.get(key)
    if tree is None:
        tree = _parser(language).parse(data if data is not None else text.encode("utf-8", "surrogateescape"))
        remember(cache, key, tree)
    else:
        cache.move_to_end(key)
    return tree


def _old_bounds(language: str, old: str) -> list[int] | None:
    """Statement boundaries of `old` (cached; None: it has syntax errors)."""
    bcache = _bounds_cache()
    bounds = bcache.get((language, old))
    if bounds is None:
        if (language, old) in bcache:  # known: the old text has syntax errors
            return None
        bounds = _boundaries(_full_tree(language, old).root_node)
        remember(bcache, (language, old), bounds)
    else:
        bcache.move_to_end((language, old))
    return bounds


def _parse_pair_windowed(language: str, old: str, new: str, first_row: int, old_end_row: int,
                         old_lines: Sequence[str], new_lines: Sequence[str]):
    """`parse_pair` for `_WINDOWED` languages: trees of a window of each side, from the
    last statement boundary before the change to the first after it (docs/edits.md).
    A window that does not parse cleanly falls back to a whole-file parse. Returns
    None when windowing does not apply (the old text has syntax errors)."""
    bounds = _old_bounds(language, old)
    if bounds is None:
        return None
    parser = _parser(language)  # (_parse_window resets its included ranges)
    old_rows, new_rows = len(old_lines), len(new_lines)  # split_lines: one entry per line
    nb = new.encode("utf-8", "surrogateescape")
    i = bisect.bisect_left(bounds, first_row)  # bounds[:i] < first_row
    row_a = bounds[i - 1] if i > 0 else 0
    j = bisect.bisect_right(bounds, old_end_row)  # bounds[j:] > old_end_row
    row_b = bounds[j] if j < len(bounds) else old_rows
    delta = new_rows - old_rows
    new_b = row_b + delta if j < len(bounds) else new_rows
    o_lines = old_lines if old.isascii() else None
    # the old side is only asked about when lines were removed: parsed on first use
    old_tree = _LazyTree(lambda: _parse_window(parser, old.encode("utf-8", "surrogateescape"),
                                               row_a, row_b, old_rows, o_lines))
    new_tree = _parse_window(parser, nb, row_a, new_b, new_rows, new_lines if new.isascii() else None)
    inner = _boundaries(new_tree.root_node, row_a + 1)
    bcache = _bounds_cache()
    if inner is None:
        # the edit made the window unclean: whole-file trees (and boundaries) of new
        full = _full_tree(language, new, nb)
        remember(bcache, (language, new), _boundaries(full.root_node))
        return old_tree, full
    if (language, new) not in bcache:
        kids = new_tree.root_node.children
        tail = [r + delta for r in bounds[j:]]
        if tail and kids and "comment" in kids[-1].type:
            tail = tail[1:]  # the statement after the window now follows a comment
        remember(bcache, (language, new), bounds[:i] + inner + tail)
    return old_tree, new_tree


def parse_pair(language: str, old: str, new: str, first_row: int, old_end_row: int,
               new_end_row: int, old_lines: Sequence[str], new_lines: Sequence[str]):
    """Trees of `old` and `new` (`*_lines`: their `split_lines`), reusing cached trees
    and parsing `new` incrementally from `old` (rows [first_row, *_end_row) are what
    changed); (None, None) without a grammar.

    In an episode the new side of one step is the old side of the next, so
    with the cache each step costs one incremental parse. For `_WINDOWED`
    languages the trees may cover only the rows around the change: callers
    only ask about the changed rows.
    """
    parser = _parser(language)
    if parser is None:
        return None, None
    if WINDOWED_PARSE and language in _WINDOWED:
        got = _parse_pair_windowed(language, old, new, first_row, old_end_row, old_lines, new_lines)
        if got is not None:
            return got
    cache = _tree_cache()
    ob = old.encode("utf-8", "surrogateescape")
    old_tree = _full_tree(language, old, ob)
    new_tree = cache.get((language, new))
    if new_tree is None:
        nb = new.encode("utf-8", "surrogateescape")
        start_byte, start_point = _row_offset(ob, first_row)
        old_end_byte, old_end_point = _row_offset(ob, old_end_row)
        new_end_byte, new_end_point = _row_offset(nb, new_end_row)
        edited = old_tree.copy()
        edited.edit(start_byte, old_end_byte, new_end_byte, start_point, old_end_point, new_end_point)
        new_tree = parser.parse(nb, edited)
        if new_tree.root_node.has_error:
            # error recovery may differ between incremental and fresh parses;
            # a fresh parse keeps units independent of what was cached
            new_tree = parser.parse(nb)
        remember(cache, (language, new), new_tree)
    else:
        cache.move_to_end((language, new))
    return old_tree, new_tree
