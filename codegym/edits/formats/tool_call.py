"""The ``tool_call`` format: JSON function calls in OpenAI shape (bare, in a
JSON block, or in ``<tool_call>`` tags), the tools and their arguments
(`TOOLS`), and applying the editing tools (``write_file``, ``str_replace``,
``insert``); ``view_file``/``run_tests`` become `ToolCall`s for the env."""

from __future__ import annotations

import json
import re
from typing import Any

from codegym.edits.formats.context import Chunk, Context, Op
from codegym.edits.formats.jsonpos import JSON_DECODER, LocatedStr, compose, plain, read_located, skip_ws
from codegym.edits.records import ToolCall
from codegym.edits.text import ActionError, clean_path, lines_and_starts, mismatch_hint, quote

TOOL_TAG_RE = re.compile(r"<tool_call>")
#: a line of prose that may start a JSON value
JSON_START_RE = re.compile(r"^[ \t]*[\[{]", re.M)

#: name -> {argument: (type, required, description)}
TOOLS: dict[str, dict[str, tuple[type, bool, str]]] = {
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
        "old_str": (str, True, "Exact text to replace; must occur exactly once in the file "
                                "(include surrounding lines to make it unique)."),
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
TOOL_DOCS = {
    "view_file": "Show a file (or a range of its lines) with line numbers.",
    "write_file": "Create a file or replace its whole content.",
    "str_replace": "Replace the one occurrence of old_str in a file by new_str.",
    "insert": "Insert text after a given line of a file.",
    "run_tests": "Run the public tests on the current files and show the results.",
    "submit": "Submit the current files for final judging; ends the episode.",
}
#: a tool call, for messages
CALL_EXAMPLE = '{"name": "view_file", "arguments": {"path": "main.py"}}'


# ---------------------------------------------------------------------------
# Recognising
# ---------------------------------------------------------------------------


def _is_call(o: Any) -> bool:
    if not isinstance(o, dict):
        return False
    if isinstance(o.get("tool_calls"), list):
        return bool(o["tool_calls"]) and all(_is_call(x) for x in o["tool_calls"])
    f = o.get("function")
    if isinstance(f, dict) and isinstance(f.get("name"), str):
        return True
    n = o.get("name")
    return isinstance(n, str) and ("arguments" in o or "parameters" in o or n in TOOLS)


def is_tool_json(o: Any) -> bool:
    """A decoded JSON value is a call, ``{"tool_calls": [...]}``, or a list of calls."""
    if isinstance(o, list):
        return bool(o) and all(_is_call(x) for x in o)
    return _is_call(o)


def json_values(ctx: Context, s: int, e: int) -> list[tuple[Any, int, int]] | None:
    """The JSON values that fill ``norm[s:e]`` (value, start, end); None if it is not only JSON."""
    out = []
    i = skip_ws(ctx.norm, s)
    while i < e:
        try:
            obj, j = JSON_DECODER.raw_decode(ctx.norm, i)
        except (ValueError, RecursionError):
            return None
        if j > e:
            return None
        out.append((obj, i, j))
        i = skip_ws(ctx.norm, j)
    return out


def read_tag(ctx: Context, s: int, e: int, where: str) -> None:
    """The calls inside ``<tool_call>...</tool_call>`` (``norm[s:e]``)."""
    vals = json_values(ctx, s, e)
    if not vals:
        raise ActionError(f"{where}: could not read the JSON inside (expected "
                          '{"name": "<tool>", "arguments": {...}})')
    if not all(is_tool_json(v[0]) for v in vals):
        raise ActionError(f"{where}: expected a tool call like {CALL_EXAMPLE}")
    add_tool_values(ctx, vals, where)


def add_tool_values(ctx: Context, vals: list[tuple[Any, int, int]], where: str) -> None:
    """Ops for the calls in JSON values already known to be tool calls."""
    for _obj, s, e in vals:
        try:
            located, _end = read_located(ctx.norm, s)
        except (ValueError, IndexError, RecursionError) as ex:
            raise ActionError(f"{where}: could not read the tool call JSON ({ex})") from None
        for name, args, cs, ce, label in _flatten_calls(ctx, located, s, e):
            _tool_op(ctx, name, args, cs, ce, label)


def _flatten_calls(ctx: Context, o: Any, s: int, e: int) -> list[tuple[str, dict, int, int, str]]:
    if isinstance(o, list):
        out = []
        for x in o:
            out.extend(_flatten_calls(ctx, x, getattr(x, "start", s), getattr(x, "end", e)))
        return out
    if isinstance(o.get("tool_calls"), list):
        return _flatten_calls(ctx, o["tool_calls"], s, e)
    ctx.n_call += 1
    f = o.get("function")
    if isinstance(f, dict) and isinstance(f.get("name"), str):
        name, args = str(f["name"]), f.get("arguments", f.get("parameters"))
    else:
        name, args = str(o["name"]), o.get("arguments", o.get("parameters"))
    label = f"tool call {ctx.n_call} ({name}, line {ctx.line(s)})"
    return [(name, _arguments(args, label), s, e, label)]


def _arguments(args: Any, label: str) -> dict:
    """A call's arguments as a dict (they may be a JSON string, with positions kept)."""
    if args is None:
        args = {}
    if isinstance(args, str):
        if not args.strip():
            return {}
        try:
            inner, end = read_located(args, 0)
            if skip_ws(args, end) != len(args):
                raise ValueError("extra text after the JSON object")
        except (ValueError, IndexError, RecursionError) as ex:
            raise ActionError(f"{label}: the arguments string is not valid JSON ({ex})") from None
        args = compose(inner, args) if isinstance(args, LocatedStr) else inner
    if not isinstance(args, dict):
        raise ActionError(f"{label}: arguments must be a JSON object, got {type(plain(args)).__name__}")
    return args


def _checked_arguments(name: str, args: dict, label: str) -> dict[str, Any]:
    """The arguments of a known tool, checked against its spec (ints may come as strings)."""
    spec = TOOLS.get(name)
    if spec is None:
        raise ActionError(f"{label}: unknown tool {name!r}; the tools are {', '.join(TOOLS)}")
    sig = ", ".join(k if req else k + "?" for k, (_t, req, _d) in spec.items())
    for k in args:
        if k not in spec:
            raise ActionError(f"{label}: unknown argument {k!r}; {name} takes ({sig})")
    clean: dict[str, Any] = {}
    for k, (typ, req, _d) in spec.items():
        if k not in args or args[k] is None:
            if req:
                raise ActionError(f"{label}: missing argument {k!r}; {name} takes ({sig})")
            continue
        v = args[k]
        if typ is int:
            if isinstance(v, str) and v.strip().lstrip("-").isdigit():
                v = int(v.strip())
            elif isinstance(v, float) and v.is_integer():
                v = int(v)
            if not isinstance(v, int) or isinstance(v, bool):
                raise ActionError(f"{label}: argument {k!r} must be an integer, got {quote(json.dumps(plain(v)))}")
        elif not isinstance(v, str):
            raise ActionError(f"{label}: argument {k!r} must be a string, got {type(plain(v)).__name__}")
        clean[k] = v
    return clean


def _tool_op(ctx: Context, name: str, args: dict, s: int, e: int, label: str) -> None:
    clean = _checked_arguments(name, args, label)
    src = (s, e)
    if name == "submit":
        ctx.add_submit(s, "tool_call", src)
        return
    ctx.seen(s, "tool_call")
    if "path" in clean:
        clean["path"] = clean_path(clean["path"], label)
    if name in ("view_file", "run_tests"):
        for k in ("start_line", "end_line"):
            if k in clean and clean[k] < 1:
                raise ActionError(f"{label}: {k} must be at least 1")
        call = ToolCall(name, plain(clean), ctx.orig(s), ctx.orig(e))
        ctx.add_op(Op(s, "tool_call", "tool", src, data=call))
        return
    path = clean["path"]
    if name == "write_file":
        value, kind, data = clean["content"], "write", None
    elif name == "str_replace":
        value, kind, data = clean["new_str"], "str_replace", str(clean["old_str"])
    else:  # insert
        if clean["line"] < 0:
            raise ActionError(f"{label}: line must be 0 (top of the file) or more")
        value, kind, data = clean["text"], "insert", clean["line"]
    pieces = _located_pieces(ctx, value, src)
    if kind == "insert" and value and not value.endswith("\n"):
        pieces.append(Chunk("\n"))
    ctx.add_op(Op(s, "tool_call", kind, src, path, pieces, data=data, label=label))
    if isinstance(value, LocatedStr) and value.omap:
        ctx.blocks.append((path, value.omap[0], value.omap[-1], False, value, "tool_call"))


def _located_pieces(ctx: Context, v: Any, src: tuple[int, int]) -> list[Chunk]:
    """Chunks of a decoded string: verbatim runs carry their action-text position."""
    text = str(v)
    segs = sorted(getattr(v, "segs", []))
    out: list[Chunk] = []
    d = 0
    for vs, ve, ts in segs:
        if vs > d:
            out.append(Chunk(text[d:vs]))
        piece = ctx.norm[ts:ts + ve - vs]
        if piece != text[vs:ve]:  # defensive: only verbatim text gets a span
            out.append(Chunk(text[vs:ve]))
        else:
            out.append(Chunk(piece, ts, "tool_call", src))
        d = ve
    if d < len(text):
        out.append(Chunk(text[d:]))
    return out or [Chunk("")]


# ---------------------------------------------------------------------------
# Applying
# ---------------------------------------------------------------------------


def apply_str_replace(ctx: Context, op: Op) -> None:
    w = ctx.get(op.path, op.label)
    if w is None:
        raise ctx.missing(op, "use write_file to create it")
    old = op.data
    if not old:
        raise ActionError(f"{op.label}: old_str is empty; use write_file to replace a whole file, or insert")
    content = w.content()
    i = content.find(old)
    if i < 0:
        hint = mismatch_hint(lines_and_starts(content)[0], lines_and_starts(old)[0], op.path)
        raise ActionError(f"{op.label}: old_str was not found in {op.path} (it must match exactly, "
                          f"including whitespace){'; ' + hint if hint else ''}")
    if content.find(old, i + 1) >= 0:
        n = content.count(old)
        raise ActionError(f"{op.label}: old_str occurs {max(n, 2)} times in {op.path}; include more "
                          "surrounding lines so it is unique")
    w.replace(i, i + len(old), list(op.pieces))
    ctx.set(op.path, w)


def apply_insert(ctx: Context, op: Op) -> None:
    w = ctx.get(op.path, op.label)
    if w is None:
        raise ctx.missing(op, "use write_file to create it")
    lines, offs, final_nl = lines_and_starts(w.content())
    line = op.data
    if line > len(lines):
        raise ActionError(f"{op.label}: line {line} is past the end of {op.path}, which has {len(lines)} lines")
    pieces = list(op.pieces)
    at = offs[line]
    if line == len(lines) and lines and not final_nl:
        pieces.insert(0, Chunk("\n"))
    w.replace(at, at, pieces)
    ctx.set(op.path, w)
