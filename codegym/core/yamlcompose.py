"""Composing a YAML document within bounds: the node graph `codegym.core.yamldoc` builds on.

Owns `Caps` (what one document may cost: its file size, the files it names, its
nodes, nesting and what its aliases expand to), `DEFAULT_CAPS`, and `compose`: the
events of libyaml's parser turned into nodes by a loop (no recursion: a deeply
nested document cannot overflow a stack), recording the line of every key and item
and duplicate keys on the way, and refusing -- at the event that crosses a bound --
documents nested too deep, with too many nodes, aliases that expand past a
multiple of the document (alias bombs), recursive aliases and tags outside the safe
set. Work is linear in the text; docs/tasks.md lists the bounds.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

MB = 1 << 20


@dataclass(frozen=True)
class Caps:
    """What one YAML document may cost (defaults: docs/tasks.md, "Confinement and caps").

    file_bytes     the YAML file itself
    inlined_bytes  each file it names ({file: ...}, stdin_file, a glob's matches ...)
    total_bytes    the YAML file and every file it names, together
    nodes          YAML nodes (scalars, lists, mappings) of the document, aliases expanded
    depth          nesting of lists and mappings
    """

    file_bytes: int = 4 * MB
    inlined_bytes: int = 16 * MB
    total_bytes: int = 64 * MB
    nodes: int = 100_000
    depth: int = 64

    def replace(self, **kw: Any) -> Caps:
        return Caps(**{**{f.name: getattr(self, f.name) for f in fields(self)}, **kw})


DEFAULT_CAPS = Caps()
#: what an override (a suite's ``caps:``) may raise the caps to, at most
HARD_CAPS = Caps(file_bytes=256 * MB, inlined_bytes=1024 * MB, total_bytes=4096 * MB, nodes=5_000_000,
                 depth=64)

#: aliases may expand a document to ALIAS_FACTOR times its own nodes and characters,
#: plus the slack (a shared ``limits: *lim`` is fine; 9 levels of 9 aliases is not)
ALIAS_FACTOR = 10
ALIAS_SLACK_NODES = 10_000
ALIAS_SLACK_CHARS = 1 * MB

#: explicit tags a document may carry: the YAML types the safe constructor builds
SAFE_TAGS = frozenset("tag:yaml.org,2002:" + t for t in (
    "null", "bool", "int", "float", "binary", "timestamp", "omap", "pairs", "set", "str", "seq", "map",
    "merge", "value"))

_STD = "tag:yaml.org,2002:"
_MERGE = _STD + "merge"
_INT = _STD + "int"


class CapError(Exception):
    """A document over one of its bounds, or a construct refused (line, path, message)."""

    def __init__(self, line: int, loc: tuple, message: str):
        super().__init__(message)
        self.line, self.loc, self.message = line, loc, message


class _Frame:
    """An open list or mapping: its node, where it is, what its children cost so far."""

    __slots__ = ("node", "loc", "anchor", "start_nodes", "start_chars", "key", "seen", "index", "merge", "seq")

    def __init__(self, node: Any, loc: tuple, anchor: str | None, nodes: int, chars: int):
        self.node, self.loc, self.anchor = node, loc, anchor
        self.seq = isinstance(node, SequenceNode)
        self.start_nodes, self.start_chars = nodes, chars
        self.key: Any = None          # a mapping's key node waiting for its value
        self.seen: dict[str, int] = {}
        self.index = 0
        self.merge = False            # the pending key is ``<<``


def _line(ev: Any) -> int:
    return ev.start_mark.line + 1 if ev.start_mark is not None else 1


def _key_name(knode: Any) -> str:
    return knode.value if isinstance(knode, ScalarNode) else str(knode.start_mark)


class _Composer:
    """One pass over the events; see `compose`."""

    def __init__(self, loader: Any, caps: Caps, size: int, lines: dict, dups: list):
        self.ld, self.caps, self.lines, self.dups = loader, caps, lines, dups
        self.stack: list[_Frame] = []
        self.anchors: dict[str, Any] = {}       # anchor -> node
        self.weights: dict[str, tuple | None] = {}  # anchor -> (nodes, chars); None while open
        self.nodes = 0         # composed nodes
        self.exp_nodes = 0     # nodes with every alias expanded
        self.exp_chars = 0     # scalar characters with every alias expanded
        self.max_chars = ALIAS_FACTOR * size + ALIAS_SLACK_CHARS

    # ----- where the next node goes

    def child_loc(self, line: int) -> tuple:
        """The path of the next node, recording its line (items; keys are recorded as keys)."""
        if not self.stack:
            return ()
        f = self.stack[-1]
        if f.seq:
            loc = f.loc + (f.index,)
            self.lines[loc] = line
            return loc
        if f.key is None:
            return f.loc + ("?",)  # a key that is itself a list or mapping
        if f.merge:
            return f.loc + ("<<",)
        return f.loc + (_key_name(f.key),)

    def attach(self, node: Any) -> Any:
        if not self.stack:
            return node
        f = self.stack[-1]
        if f.seq:
            f.node.value.append(node)
            f.index += 1
        elif f.key is None:
            f.key = node
            f.merge = node.tag == _MERGE
            if not f.merge:
                name = _key_name(node)
                line = node.start_mark.line + 1
                if name in f.seen:
                    self.dups.append((line, f.loc + (name,), f"duplicate key (first given on line {f.seen[name]})"))
                    f.merge = True  # (its value's lines must not replace the first one's)
                else:
                    f.seen[name] = line
                    self.lines[f.loc + (name,)] = line
        else:
            f.node.value.append((f.key, node))
            f.key = None
            f.merge = False
        return None

    # ----- bounds

    def count(self, ev: Any, loc: tuple, nodes: int, chars: int, composed: int) -> None:
        self.nodes += composed
        self.exp_nodes += nodes
        self.exp_chars += chars
        c = self.caps
        if self.nodes > c.nodes or self.exp_nodes > c.nodes:
            raise CapError(_line(ev), loc, f"more than {c.nodes:,} YAML values in one document "
                                           "(caps.nodes; aliases count every time they are used)")
        if self.exp_nodes > ALIAS_FACTOR * self.nodes + ALIAS_SLACK_NODES or self.exp_chars > self.max_chars:
            what = f"alias *{ev.anchor}" if type(ev) is AliasEvent else "this value"
            raise CapError(_line(ev), loc, f"{what} expands the document past {ALIAS_FACTOR} times its "
                                           "own size: refused (a YAML alias bomb?)")

    def tag(self, ev: Any, kind: type, loc: tuple) -> str:
        tag = ev.tag
        if tag is None or tag == "!":
            if kind is not ScalarNode:
                return self.ld.resolve(kind, None, ev.implicit)
            v = ev.value
            if ev.implicit[0] and v.isascii() and v.isdigit() and (v[0] != "0" or v == "0"):
                return _INT  # (the common case, without the resolver's regular expressions)
            return self.ld.resolve(kind, v, ev.implicit)
        if tag not in SAFE_TAGS:
            short = "!!" + tag[len(_STD):] if tag.startswith(_STD) else tag
            raise CapError(_line(ev), loc, f"YAML tag {short} is not allowed (only the standard types: "
                                           "str, int, float, bool, null, timestamp, binary, seq, map, set)")
        return tag

    # ----- events

    def run(self) -> Any:
        ld = self.ld
        ld.get_event()  # stream start
        if ld.check_event(StreamEndEvent):
            return None
        ld.get_event()  # document start
        root = None
        get, stack, lines, resolve, cap = ld.get_event, self.stack, self.lines, ld.resolve, self.caps.nodes
        while root is None:
            ev = get()
            # the common case inline (a plain scalar, no anchor, no tag, under the caps):
            # the same as `step`, without its calls (about half the cost per value)
            if (type(ev) is ScalarEvent and stack and ev.anchor is None and ev.tag is None
                    and self.exp_nodes < cap and self.nodes < cap):
                f, v, imp = stack[-1], ev.value, ev.implicit
                tag = (_INT if imp[0] and v.isascii() and v.isdigit() and (v[0] != "0" or v == "0")
                       else resolve(ScalarNode, v, imp))
                node = ScalarNode(tag, v, ev.start_mark, ev.end_mark, style=ev.style)
                self.nodes += 1
                self.exp_nodes += 1
                self.exp_chars += len(v)
                if f.seq:
                    lines[f.loc + (f.index,)] = ev.start_mark.line + 1
                    f.node.value.append(node)
                    f.index += 1
                elif f.key is not None:
                    f.node.value.append((f.key, node))
                    f.key = None
                    f.merge = False
                else:
                    self.attach(node)
                continue
            root = self.step(ev)
        ld.get_event()  # document end
        if not ld.check_event(StreamEndEvent):
            ev = ld.get_event()
            raise CapError(_line(ev), (), "expected a single document in the file, found another one")
        return root

    def step(self, ev: Any) -> Any:
        cls = type(ev)
        if cls is ScalarEvent:
            loc = self.child_loc(_line(ev))
            self.count(ev, loc, 1, len(ev.value), 1)
            node = ScalarNode(self.tag(ev, ScalarNode, loc), ev.value, ev.start_mark, ev.end_mark, style=ev.style)
            self.anchor(ev, node, (1, len(ev.value)))
            return self.attach(node)
        if cls is AliasEvent:
            loc = self.child_loc(_line(ev))
            if ev.anchor not in self.anchors:
                raise CapError(_line(ev), loc, f"alias *{ev.anchor} names no anchor defined before it")
            w = self.weights[ev.anchor]
            if w is None:
                raise CapError(_line(ev), loc, f"recursive alias *{ev.anchor}: a value cannot contain itself")
            self.count(ev, loc, w[0], w[1], 0)
            return self.attach(self.anchors[ev.anchor])
        if cls is SequenceStartEvent or cls is MappingStartEvent:
            loc = self.child_loc(_line(ev))
            if len(self.stack) >= self.caps.depth:
                raise CapError(_line(ev), loc[:6] + ("...",), f"nested deeper than {self.caps.depth} levels")
            kind = SequenceNode if cls is SequenceStartEvent else MappingNode
            node = kind(self.tag(ev, kind, loc), [], ev.start_mark, None, flow_style=ev.flow_style)
            self.count(ev, loc, 1, 0, 1)
            self.stack.append(_Frame(node, loc, ev.anchor, self.exp_nodes - 1, self.exp_chars))
            self.anchor(ev, node, None)
            return None
        if cls is SequenceEndEvent or cls is MappingEndEvent:
            f = self.stack.pop()
            f.node.end_mark = ev.end_mark
            if f.anchor is not None:
                self.weights[f.anchor] = (self.exp_nodes - f.start_nodes, self.exp_chars - f.start_chars)
            return self.attach(f.node)
        raise CapError(_line(ev), (), f"unexpected YAML event {cls.__name__}")

    def anchor(self, ev: Any, node: Any, weight: tuple | None) -> None:
        a = ev.anchor
        if a is None:
            return
        if a in self.anchors:
            first = self.anchors[a].start_mark.line + 1
            raise CapError(_line(ev), (), f"anchor &{a} is defined twice (first on line {first})")
        self.anchors[a] = node
        self.weights[a] = weight


_GC_LOCK = threading.Lock()
_gc_users = 0
_gc_was_enabled = True


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while a document is built (it would scan the
    growing heap again and again: about half of the cost of a large document). What is
    built has no cycle (recursive aliases are refused); nested and concurrent users
    restore the collector's state once the last one leaves."""
    global _gc_users, _gc_was_enabled
    with _GC_LOCK:
        if _gc_users == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_users += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_users -= 1
            if _gc_users == 0 and _gc_was_enabled:
                gc.enable()


def compose(loader: Any, caps: Caps, size: int, lines: dict, dups: list) -> Any:
    """The root node of the one document `loader` parses (None when empty).

    Records the line of every key and item in `lines` (paths through an alias stop at
    the alias: its own line) and every duplicate key in `dups` as (line, path, message).
    Raises CapError at the event that crosses a bound of `caps` (`size`: the text's
    length, for the alias budget), yaml.YAMLError for syntax errors."""
    return _Composer(loader, caps, size, lines, dups).run()
