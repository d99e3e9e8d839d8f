"""Diff units: a step's diff split into hunks and syntax-aware sub-diffs.

This module owns the credit units of DiDPO (Diff-in-Diff Policy Optimization):
a step's whole diff is cut into hunks, each hunk into sub-diffs along the
syntax of the file (functions, and optionally top-level statements of a
function body), and every sub-diff gets a position-independent `signature`
and a character `span` in the action text that produced it. Sub-diffs of
different trajectories of the same task are grouped by signature and by
`line_similarity`; the group's advantage is projected back onto the tokens
inside each unit's span (see `codegym.rollout`).

Public names:

- `DiffUnit` (dataclass, JSON via `to_dict`/`from_dict`), `EditSpan`.
- `split_units(old_files, new_files, language_of=None, action_spans=None,
  granularity="function") -> list[DiffUnit]`.
- `attach_spans(units, action_text, edits)`: fill `DiffUnit.span`.
- `line_similarity(a_lines, b_lines)`, `unit_similarity(a, b)`,
  `normalise_lines(lines)`, `language_for_path(path)`, `parser_for(language)`.
- `unified_diff(old, new)`: re-exported from `codegym.edits.workspace`, which owns
  the one implementation of diff text (layering: workspace sits above diffs).

Granularities (``granularity=``), coarse to fine; each refines the previous,
so a trainer can compute several and pick the split with the best
groupability:

- ``"hunk"``: one unit per unified-diff hunk (change blocks less than 6 equal
  lines apart, as in ``git diff -U3``).
- ``"function"`` (default): each hunk is cut where the changed lines move to
  another named scope (function, method, class, struct, namespace, module
  level); consecutive pieces of a hunk in the same scope form one unit. A hunk
  touching two functions gives two units; changes inside one function body
  give one.
- ``"statement"``: as ``"function"``, and inside a scope the pieces are cut
  again at the boundaries of the scope body's top-level statements (an ``if``
  block with everything nested in it is one statement).

Scopes are named ``"<outermost kind>:<dotted names>"``: ``"function:solve"``,
``"class:Foo.method"``, ``"function:solve.helper"``, ``"struct:P"``,
``"namespace:ns.Foo::bar"``, ``"module"`` for top-level code. Languages come
from file extensions (the language table's, languages with a grammar) or
``language_of``; tree-sitter parses both sides of the diff (trees are cached
per text, and a step's new side is re-parsed incrementally from its old side;
Python, whose grammar re-reads everything after an edit, parses only the
top-level statements around the change: `_parse_pair_windowed`). Files in other
languages, or a missing grammar, give hunk-level units with scope "module".
tree-sitter is error tolerant, and any failure of the syntax layer falls back
to the same hunk-level units, so code with syntax errors never raises.

Blank lines and comment-only lines do not cut units: a comment joins the code
line after it (it usually documents it), a blank line joins the line before it.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field, fields
from difflib import SequenceMatcher
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

from codegym.core.languages import grammar_of, language_name, language_of_path

from codegym.edits.workspace import (
    diff_opcodes,
    group_hunks,
    line_text,
    split_lines,
    unified_diff,
)

__all__ = [
    "DiffUnit",
    "EditSpan",
    "split_units",
    "attach_spans",
    "line_similarity",
    "unit_similarity",
    "normalise_lines",
    "language_for_path",
    "parser_for",
    "unified_diff",
    "GRANULARITIES",
]

GRANULARITIES = ("hunk", "function", "statement")

def _canonical(language: str) -> str:
    lang = language_name(language)
    return lang.name if lang else language


def language_for_path(path: str) -> str | None:
    """Language (one with a tree-sitter grammar) of a path from its extension, or None."""
    return language_of_path(path.lower(), with_grammar=True)


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------


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
    def from_dict(cls, d: Mapping[str, Any]) -> "DiffUnit":
        kw = dict(d)
        if kw.get("span") is not None:
            kw["span"] = (int(kw["span"][0]), int(kw["span"][1]))
        return cls(**kw)


_UNIT_FIELDS = tuple(f.name for f in fields(DiffUnit))


@dataclass(frozen=True)
class EditSpan:
    """Where, in the action text, the content written to one file came from.

    ``action_text[start:end]`` is the written content as it appears in the
    action: the body of a fenced code block (whole-file edit), the REPLACE part
    of a search/replace block, or the lines of a unified-diff hunk (with their
    ``+``/``-``/space markers; ``@@`` lines may separate several hunks). Give
    one EditSpan per block; several may name the same path.

    When the content is encoded in the action (e.g. a JSON string in a tool
    call, where a newline is the two characters ``\\n``), pass the decoded
    content as ``text`` and ``text_offset_map``: a sequence of ``len(text)+1``
    action-text offsets, entry i being where character i of ``text`` starts
    and the last entry where the content ends. A span (i, j) of ``text`` maps
    to (map[i], map[j]).

    ``diff`` says whether the content is diff-formatted (None: try both
    readings and keep the one that locates more lines).
    """

    path: str
    start: int
    end: int
    text_offset_map: Sequence[int] | None = None
    text: str | None = None
    diff: bool | None = None


# ---------------------------------------------------------------------------
# Normalisation and similarity
# ---------------------------------------------------------------------------


def _leading_ws(s: str) -> str:
    return s[: len(s) - len(s.lstrip())]


def _margin(lines: Iterable[str]) -> str:
    prefixes = [_leading_ws(l) for l in lines]
    return os.path.commonprefix(prefixes) if prefixes else ""


def normalise_lines(lines: Iterable[str]) -> list[str]:
    """Strip trailing whitespace, drop blank lines, remove common indentation."""
    out = [l.rstrip() for l in lines]
    out = [l for l in out if l]
    m = len(_margin(out))
    return [l[m:] for l in out] if m else out


def line_similarity(a_lines: Sequence[str], b_lines: Sequence[str]) -> float:
    """difflib ratio of the normalised line lists (1.0 when both are empty)."""
    a, b = normalise_lines(a_lines), normalise_lines(b_lines)
    if not a and not b:
        return 1.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


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


# ---------------------------------------------------------------------------
# Syntax: scopes and statements from tree-sitter
# ---------------------------------------------------------------------------

_local = threading.local()  # tree_sitter.Parser objects are not thread-safe


def parser_for(language: str):
    """This thread's tree-sitter Parser for a language name (python, c, cpp,
    julia, javascript, or an alias such as py/js/jl), or None when the grammar
    is not installed. Shared so the package sets tree-sitter up once."""
    return _parser(_canonical(language))


def _parser(language: str):
    cache = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    if language not in cache:
        try:
            import importlib

            from tree_sitter import Language, Parser

            mod = importlib.import_module(grammar_of(language) or "")
            cache[language] = Parser(Language(mod.language()))
        except Exception:  # grammar not installed (or unknown name): hunk-level units
            cache[language] = None
    return cache[language]


_TREE_CACHE_SIZE = 16


def _thread_lru(name: str) -> OrderedDict:
    """This thread's LRU cache `name` (see `_remember`)."""
    cache = getattr(_local, name, None)
    if cache is None:
        cache = OrderedDict()
        setattr(_local, name, cache)
    return cache


def _tree_cache() -> "OrderedDict[tuple[str, str], Any]":
    """(language, text) -> whole-file tree."""
    return _thread_lru("trees")


def _bounds_cache() -> "OrderedDict[tuple[str, str], Any]":
    """(language, text) -> statement boundaries (`_boundaries`), None for a text with errors."""
    return _thread_lru("bounds")


#: languages whose grammar's incremental parse re-reads everything after an edit
#: (tree-sitter-python: the external scanner's state differs after the edit, so no
#: later subtree is reused -- measured: an incremental parse of a 550-line module
#: costs as much as a fresh one).  For these, a step parses only a *window*: the
#: top-level statements around the change, on both sides (see `_parse_window`).
_WINDOWED = frozenset({"python"})
#: set to False to always parse whole files (the windowed path is tested against it)
WINDOWED_PARSE = True


def _row_offset(data: bytes, row: int) -> tuple[int, tuple[int, int]]:
    """Byte offset and tree-sitter point of the start of line `row` (or of the
    end of the text when `row` is past its last newline)."""
    parts = data.split(b"\n", row)
    if len(parts) <= row:  # past the last newline: the end of an unterminated last line
        return len(data), (len(parts) - 1, len(parts[-1]))
    return len(data) - len(parts[-1]), (row, 0)


def _remember(cache: OrderedDict, key, value, size: int = _TREE_CACHE_SIZE) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)


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
    from tree_sitter import Point, Range

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
        _remember(cache, key, tree)
    else:
        cache.move_to_end(key)
    return tree


def _parse_pair_windowed(language: str, old: str, new: str, first_row: int, old_end_row: int,
                         new_end_row: int, old_lines: Sequence[str], new_lines: Sequence[str]):
    """`_parse_pair` for `_WINDOWED` languages: trees of a window of each side.

    The window runs from the last statement boundary before the change to the
    first after it (strictly, so an edit that attaches to a neighbouring
    statement -- an ``else:``, a decorator -- has it in the window).  At such a
    boundary the lexer is in its initial state (column 0, no open bracket,
    string or block), so the window parses exactly as the same lines do in the
    whole file: every node of the changed rows is the node a full parse gives.
    A window that does not parse cleanly (the edit opened a string or a
    bracket that runs on) falls back to a whole-file parse.  Boundaries are
    kept per text and carried from one step to the next; they cost one
    whole-file parse per episode.  Returns None when windowing does not apply.
    """
    bcache = _bounds_cache()
    bounds = bcache.get((language, old))
    if bounds is None:
        if (language, old) in bcache:  # known: the old text has syntax errors
            return None
        bounds = _boundaries(_full_tree(language, old).root_node)
        _remember(bcache, (language, old), bounds)
        if bounds is None:
            return None
    else:
        bcache.move_to_end((language, old))
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
    if inner is None:
        # the edit made the window unclean: whole-file trees (and boundaries) of new
        full = _full_tree(language, new, nb)
        _remember(bcache, (language, new), _boundaries(full.root_node))
        return old_tree, full
    if (language, new) not in bcache:
        kids = new_tree.root_node.children
        tail = [r + delta for r in bounds[j:]]
        if tail and kids and "comment" in kids[-1].type:
            tail = tail[1:]  # the statement after the window now follows a comment
        _remember(bcache, (language, new), bounds[:i] + inner + tail)
    return old_tree, new_tree


def _parse_pair(language: str, old: str, new: str, first_row: int, old_end_row: int,
                new_end_row: int, old_lines: Sequence[str], new_lines: Sequence[str]):
    """Trees of `old` and `new` (`*_lines`: their `split_lines`), reusing cached trees
    and parsing `new` incrementally from `old` (rows [first_row, *_end_row) are what
    changed).

    In an episode the new side of one step is the old side of the next, so
    with the cache each step costs one incremental parse.  For `_WINDOWED`
    languages the trees may cover only the rows around the change (see
    `_parse_pair_windowed`): callers only ask about the changed rows.
    """
    parser = _parser(language)
    if parser is None:
        return None, None
    if WINDOWED_PARSE and language in _WINDOWED:
        got = _parse_pair_windowed(language, old, new, first_row, old_end_row, new_end_row,
                                   old_lines, new_lines)
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
        _remember(cache, (language, new), new_tree)
    else:
        cache.move_to_end((language, new))
    return old_tree, new_tree


def _text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _named(node) -> list:
    return [c for c in node.named_children if "comment" not in c.type]


def _first_named(node):
    for c in node.named_children:
        if "comment" not in c.type:
            return c
    return None


_C_NAME_TYPES = {"identifier", "field_identifier", "qualified_identifier", "destructor_name",
                 "operator_name", "type_identifier", "template_function", "operator_cast",
                 "namespace_identifier"}


def _c_declarator_name(node) -> str | None:
    d = node.child_by_field_name("declarator")
    for _ in range(16):
        if d is None:
            return None
        if d.type in _C_NAME_TYPES:
            return _text(d)
        nxt = d.child_by_field_name("declarator")
        if nxt is None:  # e.g. reference_declarator has no field name
            named = d.named_children
            nxt = named[-1] if named else None
        d = nxt
    return None


def _julia_call_name(node) -> str | None:
    """Callee of the first call_expression at the head of a Julia signature."""
    n = node
    for _ in range(8):
        if n is None:
            return None
        if n.type == "call_expression":
            return _text(_first_named(n))
        if n.type in ("identifier", "field_expression"):
            return _text(n)
        n = _first_named(n)
    return None


def _python_scope(node):
    t = node.type
    if t in ("function_definition", "class_definition"):
        if node.parent is not None and node.parent.type == "decorated_definition":
            return None
        return ("function" if t == "function_definition" else "class",
                _text(node.child_by_field_name("name")))
    if t == "decorated_definition":
        d = node.child_by_field_name("definition")
        if d is None:
            return None
        return ("function" if d.type == "function_definition" else "class",
                _text(d.child_by_field_name("name")))
    return None


def _python_body(node):
    if node.type == "decorated_definition":
        node = node.child_by_field_name("definition") or node
    return node.child_by_field_name("body")


_C_AGGREGATES = {"struct_specifier": "struct", "union_specifier": "union",
                 "enum_specifier": "enum", "class_specifier": "class"}


def _c_scope(node):
    t = node.type
    if t == "function_definition":
        return ("function", _c_declarator_name(node) or "<anonymous>")
    if t in _C_AGGREGATES:
        if node.child_by_field_name("body") is None:
            return None
        name = node.child_by_field_name("name")
        if name is None and node.parent is not None and node.parent.type == "type_definition":
            name = node.parent.child_by_field_name("declarator")
        return (_C_AGGREGATES[t], _text(name) if name is not None else "<anonymous>")
    if t == "namespace_definition":
        name = node.child_by_field_name("name")
        return ("namespace", _text(name) if name is not None else "<anonymous>")
    if t == "lambda_expression":
        p = node.parent
        if p is not None and p.type == "init_declarator":
            return ("function", _text(p.child_by_field_name("declarator")))
    return None


def _js_function_name(node) -> str | None:
    name = node.child_by_field_name("name")
    if name is not None:
        return _text(name)
    p = node.parent
    if p is None:
        return None
    if p.type == "variable_declarator":
        return _text(p.child_by_field_name("name"))
    if p.type == "pair":
        return _text(p.child_by_field_name("key"))
    if p.type == "assignment_expression":
        return _text(p.child_by_field_name("left"))
    if p.type in ("public_field_definition", "field_definition"):
        return _text(p.child_by_field_name("property") or p.child_by_field_name("name"))
    return None


def _js_scope(node):
    t = node.type
    if t in ("function_declaration", "generator_function_declaration", "method_definition"):
        return ("function", _text(node.child_by_field_name("name")))
    if t in ("class_declaration", "class"):
        name = _js_function_name(node)
        return ("class", name) if name else None
    if t in ("arrow_function", "function_expression", "function", "generator_function"):
        name = _js_function_name(node)
        return ("function", name) if name else None
    return None


def _js_body(node):
    body = node.child_by_field_name("body")
    if body is not None and body.type not in ("statement_block", "class_body"):
        return None  # arrow function with an expression body: a single statement
    return body


_JULIA_SCOPES = {"function_definition": "function", "macro_definition": "macro",
                 "struct_definition": "struct", "module_definition": "module",
                 "baremodule_definition": "module"}


def _julia_scope(node):
    t = node.type
    if t in ("function_definition", "macro_definition"):
        sig = _first_named(node)
        return (_JULIA_SCOPES[t], (_julia_call_name(sig) if sig is not None else None) or "<anonymous>")
    if t == "struct_definition":
        head = _first_named(node)
        ident = head
        for _ in range(8):
            if ident is None or ident.type == "identifier":
                break
            ident = _first_named(ident)
        return ("struct", _text(ident) if ident is not None else "<anonymous>")
    if t in ("module_definition", "baremodule_definition"):
        name = node.child_by_field_name("name") or _first_named(node)
        return ("module", _text(name))
    if t == "assignment":
        lhs = _first_named(node)
        while lhs is not None and lhs.type in ("where_expression", "typed_expression"):
            lhs = _first_named(lhs)
        if lhs is not None and lhs.type == "call_expression":
            return ("function", _text(_first_named(lhs)))
    return None


def _julia_statements(node) -> list:
    if node.type in ("source_file",):
        return _named(node)
    if node.type == "assignment":
        return []
    return _named(node)[1:]  # the first named child is the signature / name


class _LangSpec:
    def __init__(self, scope: Callable, body: Callable | None, statements: Callable | None = None):
        self.scope = scope
        self.body = body
        self.statements = statements


_SPECS = {
    "python": _LangSpec(_python_scope, _python_body),
    "c": _LangSpec(_c_scope, lambda n: n.child_by_field_name("body")),
    "cpp": _LangSpec(_c_scope, lambda n: n.child_by_field_name("body")),
    "javascript": _LangSpec(_js_scope, _js_body),
    "julia": _LangSpec(_julia_scope, None, _julia_statements),
}

# A label is (scope path, statement index or None); a scope path is a tuple of
# (kind, name) from the outermost scope inwards.
_BLANK = object()
_COMMENT = object()
Label = tuple[tuple[tuple[str, str], ...], Hashable]
_MODULE: Label = ((), None)


class _Outline:
    """Scope/statement labels of the lines of one file version."""

    def __init__(self, lines: list[str], language: str | None, statements: bool, tree=None):
        self.lines = lines
        self.statements = statements
        self.spec = _SPECS.get(language) if language else None
        self.tree = tree if self.spec is not None else None
        self._body_cache: dict[int, list | None] = {}
        self._path_cache: dict[int, tuple] = {}

    def raw_label(self, row: int, force: bool = False):
        """Label of line `row`, or _BLANK/_COMMENT (unless `force`)."""
        line = line_text(self.lines[row])
        stripped = line.lstrip()
        if not stripped and not force:
            return _BLANK
        if self.tree is None:
            return _MODULE
        col = len(line[: len(line) - len(stripped)].encode("utf-8", "surrogateescape"))
        root = self.tree.root_node
        node = root.descendant_for_point_range((row, col), (row, col))
        if node is None:
            return _MODULE
        if not force and "comment" in node.type:
            return _COMMENT
        path, inner = self._scope_path(node)
        stmt = None
        if self.statements:
            stmt = self._statement_index(inner if inner is not None else root, row)
        return (path, stmt)

    def _scope_path(self, node):
        """(scope path from the root down to `node`, innermost scope node or None).

        Memoised per node: the lines of one block share most of their ancestors, so
        the walk up stops at the first ancestor already seen."""
        cache = self._path_cache
        chain = []
        hit = None
        n = node
        while n is not None:
            hit = cache.get(n.id)
            if hit is not None:
                break
            chain.append(n)
            n = n.parent
        path, inner = hit if hit is not None else ((), None)
        for m in reversed(chain):
            s = self.spec.scope(m)
            if s is not None:
                path = (*path, s)
                inner = m
            cache[m.id] = (path, inner)
        return path, inner

    def _statement_index(self, scope_node, row: int) -> int:
        key = scope_node.id
        if key not in self._body_cache:
            if self.spec.statements is not None:
                stmts = self.spec.statements(scope_node)
            elif scope_node.parent is None:  # module level
                stmts = _named(scope_node)
            else:
                body = self.spec.body(scope_node)
                stmts = _named(body) if body is not None else None
            self._body_cache[key] = stmts
        stmts = self._body_cache[key]
        if not stmts:
            return -1 if stmts is None or row < scope_node.start_point.row else 0
        best = -1  # header lines, before the first statement
        for i, st in enumerate(stmts):
            if st.start_point.row > row:
                break
            best = i  # a line after the last statement (closing brace, "end") joins it
            if row <= st.end_point.row:
                break
        return best


def _resolve(raw: list, outline: _Outline, rows: range) -> list[Label]:
    """Give blank and comment lines the label of their neighbours."""
    out = list(raw)
    nxt = None
    for k in range(len(out) - 1, -1, -1):
        if out[k] is _COMMENT:
            out[k] = nxt if nxt is not None else _BLANK
        elif out[k] is not _BLANK:
            nxt = out[k]
    prev = None
    for k, x in enumerate(out):
        if x is _BLANK:
            out[k] = prev
        else:
            prev = x
    first = next((x for x in out if x is not None), None)
    if first is None:  # only blank lines: label them where they are
        first = outline.raw_label(rows[0], force=True) if len(rows) else _MODULE
    return [first if x is None else x for x in out]


def _runs(labels: list[Hashable], start: int) -> list[tuple[Hashable, int, int]]:
    """Maximal runs of equal keys: (key, first row, end row)."""
    runs: list[tuple[Hashable, int, int]] = []
    for k, lab in enumerate(labels):
        if runs and runs[-1][0] == lab:
            runs[-1] = (lab, runs[-1][1], start + k + 1)
        else:
            runs.append((lab, start + k, start + k + 1))
    return runs


def _common_label(labels: Iterable[Label]) -> Label:
    labels = list(labels)
    if not labels:
        return _MODULE
    paths = [lab[0] for lab in labels]
    prefix = paths[0]
    for p in paths[1:]:
        n = 0
        while n < min(len(prefix), len(p)) and prefix[n] == p[n]:
            n += 1
        prefix = prefix[:n]
    stmts = {lab[1] for lab in labels}
    same_path = all(p == prefix for p in paths)
    return (prefix, stmts.pop() if same_path and len(stmts) == 1 else None)


def _scope_name(path: tuple[tuple[str, str], ...]) -> str:
    if not path:
        return "module"
    return f"{path[0][0]}:" + ".".join(name for _, name in path)


# ---------------------------------------------------------------------------
# Splitting
# ---------------------------------------------------------------------------

# A piece: (label, (old_a, old_b), (new_a, new_b)), 0-based half-open ranges;
# an empty range sits at the insertion/deletion point.
_Piece = tuple[Label, tuple[int, int], tuple[int, int]]


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


def _pieces_of_block(block, old_out: _Outline, new_out: _Outline) -> list[_Piece]:
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
    old_lab = _resolve([old_out.raw_label(r) for r in old_rows], old_out, old_rows) if i2 > i1 else []
    new_lab = _resolve([new_out.raw_label(r) for r in new_rows], new_out, new_rows) if j2 > j1 else []
    old_runs = _runs([lab[0] for lab in old_lab], i1)
    new_runs = _runs([lab[0] for lab in new_lab], j1)
    pieces: list[_Piece] = []
    for os_, ns_, co, cn in _align_runs(old_runs, new_runs, i1, j1):
        if len(ns_) == 1 and len(os_) <= 1:
            path = ns_[0][0]  # one scope on each side (e.g. a renamed function): name it as it is now
        elif len(os_) == 1 and not ns_:
            path = os_[0][0]
        else:
            path = _common_label([(r[0], None) for r in os_ + ns_])[0]
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
    m = len(_margin(pre_n + post_n))
    if m:
        pre_n = [l[m:] for l in pre_n]
        post_n = [l[m:] for l in post_n]
    return DiffUnit(
        path=path, kind=kind,
        old_start=old_start, old_lines=old_lines, new_start=new_start, new_lines=new_lines,
        pre_image=pre_n, post_image=post_n, pre_raw=pre_raw, post_raw=post_raw,
        scope=_scope_name(label[0]), signature=_signature(kind, pre_n, post_n),
        n_lines=len(removed) + len(added), granularity=granularity, hunk=hunk,
        removed=[i + 1 for i in removed], added=[j + 1 for j in added], language=language,
    )


def _lines_of(text: str) -> list[str]:
    """`split_lines`, remembered for the last few texts of this thread (in an
    episode the new side of a step is the old side of the next). The lists are
    shared: this module only reads them."""
    cache = _thread_lru("lines")
    hit = cache.get(text)
    if hit is None:
        hit = split_lines(text)
        _remember(cache, text, hit, size=4)
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
    if language in _SPECS:
        try:
            # opcodes[0] starts at the same row on both sides (equal prefix), and
            # the lines after the last opcode are equal too
            old_tree, new_tree = _parse_pair(language, old or "", new or "", opcodes[0][1],
                                             opcodes[-1][2], opcodes[-1][4], a, b)
        except Exception:  # the syntax layer must never break a step
            old_tree = new_tree = None
    old_out = _Outline(a, language, statements, old_tree)
    new_out = _Outline(b, language, statements, new_tree)
    units: list[DiffUnit] = []
    for h, blocks in enumerate(hunks):
        try:
            pieces = [p for blk in blocks for p in _pieces_of_block(blk, old_out, new_out)]
        except Exception:  # defensive: the syntax layer must never break a step
            pieces = [(_MODULE, (blk[1], blk[2]), (blk[3], blk[4])) for blk in blocks]
        if granularity == "hunk":
            groups = [(_common_label(p[0] for p in pieces), pieces)]
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
    action_spans: tuple[str, Sequence[EditSpan]] | None = None,
    *,
    granularity: str = "function",
    context: int = 3,
) -> list[DiffUnit]:
    """Split the diff between two snapshots into `DiffUnit`s.

    A path missing from one side is an added/deleted file. ``language_of`` maps
    a path to a language name (python, c, cpp, julia, javascript; default: by
    extension); ``action_spans`` = ``(action_text, [EditSpan, ...])`` fills each
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
        lang = _canonical(lang) if lang else None
        units.extend(_file_units(path, old, new, lang, granularity, context))
    if action_spans is not None:
        action_text, edits = action_spans
        attach_spans(units, action_text, edits, new_files=new_files, old_files=old_files)
    return units


# ---------------------------------------------------------------------------
# Spans: which characters of the action produced a unit
# ---------------------------------------------------------------------------


# A source line: (key, start, end) = whitespace-stripped content for matching,
# and the action-text offsets of the line content. Plain tuples: thousands are
# made per step.
_SrcLine = tuple[str, int, int]


@dataclass
class _Segment:
    edit: EditSpan
    new_side: list[_SrcLine]  # lines that are in the new file (content, context, '+')
    old_side: list[_SrcLine]  # diff segments: lines that were in the old file (context, '-')
    new_offset: int | None = None  # new-file line index of new_side[0] (once located)


def _source_lines(edit: EditSpan, action_text: str) -> list[tuple[str, int, int]]:
    """(content, start, end) of each line of the edit, offsets in action_text."""
    omap: Sequence[int] | None = None
    base = 0
    if edit.text is not None:
        if edit.text_offset_map is None:
            raise ValueError(f"EditSpan for {edit.path!r}: text given without text_offset_map")
        src = edit.text
        omap = edit.text_offset_map
        if len(omap) == len(src):
            omap = list(omap) + [(omap[-1] + 1) if omap else edit.start]
        if len(omap) != len(src) + 1:
            raise ValueError(f"EditSpan for {edit.path!r}: text_offset_map needs len(text)+1 entries")
    else:
        if edit.text_offset_map is not None:
            raise ValueError(f"EditSpan for {edit.path!r}: text_offset_map given without text")
        if not (0 <= edit.start <= edit.end <= len(action_text)):
            raise ValueError(f"EditSpan for {edit.path!r}: ({edit.start}, {edit.end}) is outside the action text")
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


def _segments(edit: EditSpan, lines: list[tuple[str, int, int]], as_diff: bool) -> list[_Segment]:
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


def _locate(segments: list[_Segment], by_key: "_LineIndex | dict[str, list[int]]", wanted: dict[int, str],
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
    plans = []
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
    edits: Sequence[EditSpan],
    new_files: Mapping[str, str] | None = None,
    old_files: Mapping[str, str] | None = None,
) -> list[DiffUnit]:
    """Set ``unit.span`` for each unit from the action text that produced it.

    How a span is computed (so a trainer can map it to tokens):

    1. Each `EditSpan` is read as lines: its content ``action_text[start:end]``
       (or ``text`` with ``text_offset_map``) split at ``\\n``. In diff form,
       ``+`` lines and context lines are lines of the new file, ``-`` lines
       and context lines lines of the old file, ``@@`` starts a new block, and
       a line's span excludes its one-character marker. A line's span never
       includes its ``\\n`` (nor a ``\\r`` before it) and always includes its
       indentation.
    2. Each non-blank added line of each unit (new-file line number and
       whitespace-stripped text) is located in the edits of the unit's path by
       offset voting (see `_locate`): every edit block is placed where most of
       its lines match, so a line repeated elsewhere in the file is not
       mistaken for the one the block wrote. When ``new_files`` is given
       (`split_units` passes it), every line of the new file votes, so the
       unchanged lines a block repeats (search/replace context) anchor it too;
       otherwise only the units' own lines vote. For diff-form edits the
       unit's removed lines are located among the ``-``/context lines the same
       way (against ``old_files`` when given).
    3. ``span = (start, end)``: from the start of the earliest located line to
       the end of the latest, as half-open Python ``str`` indices (code
       points) into ``action_text``. Everything between (other lines, diff
       markers, blank lines) is inside the span, so
       ``action_text[start:end]`` contains each post-image line.
    4. A unit with no located line (a deletion written as a whole file or a
       search/replace, or only blank lines) gets the whole ``(start, end)`` of
       the edit that caused it: the only edit of its path, or the edit placed
       around the unit's position; None if there is no such edit.

    Mapping to tokens: with a tokenizer that reports character offsets (e.g.
    Hugging Face ``return_offsets_mapping=True`` on the response text), token
    ``[ts, te)`` belongs to the unit iff ``ts < end and te > start``. If the
    action is a slice of a longer response, add the slice's offset, or pass
    the whole response as ``action_text``.

    Returns `units` (modified in place).
    """
    by_path: dict[str, list[EditSpan]] = {}
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

    def voters(self, side: str) -> "_LineIndex | dict[str, list[int]]":
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
    def new_voters(self) -> "_LineIndex | dict[str, list[int]]":
        return self.voters("new")

    @property
    def old_voters(self) -> "_LineIndex | dict[str, list[int]]":
        return self.voters("old")


def _best_reading(edit: EditSpan, action_text: str, ctx: _SpanContext) -> list[_Segment]:
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


def _causing_edit_span(u: DiffUnit, edits: list[EditSpan], segments: list[_Segment]) -> tuple[int, int] | None:
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
    # dedupe by identity: EditSpan may hold an unhashable offset map
    covering = list({id(e): e for e in covering}.values())
    if len(covering) == 1:
        return (covering[0].start, covering[0].end)
    unplaced = [e for e in edits if not any(s.edit is e and s.new_offset is not None for s in segments)]
    if not covering and len(unplaced) == 1:  # e.g. a search/replace with an empty REPLACE
        return (unplaced[0].start, unplaced[0].end)
    return None
