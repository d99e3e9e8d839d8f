"""Parse model text into workspace edits (the agent's action).

`parse_action(text, files, main_file, formats=None) -> ParsedAction`: the
formats (`codegym.edits.formats`) find their constructs in the text, the
operations apply in text order to the files, and the result is one change set
with exact spans (`EditSpan`), one `EditBlock` per block, the tool calls and
whether the action submits; or an error and no changes. Also `FORMATS`,
`EDIT_FORMATS`, `MAX_ACTION_CHARS`, `apply_changes`. Rendering a change set
and documenting the formats is `codegym.edits.render`. The formats, the
rules for a whole action and the spans are described in docs/edits.md.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from typing import Any

from codegym.edits.formats import FORMATS, check_formats
from codegym.edits.formats.code_block import add_pathless, apply_write, fence_tag, read_fence, scan_fences
from codegym.edits.formats.context import MAX_EDITS, Context, Fence, Op, WorkFile
from codegym.edits.formats.jsonpos import JSON_DECODER
from codegym.edits.formats.search_replace import apply_search_replace, read_region, scan_markers
from codegym.edits.formats.tool_call import (
    JSON_START_RE,
    TOOL_TAG_RE,
    add_tool_values,
    apply_insert,
    apply_str_replace,
    is_tool_json,
    read_tag,
)
from codegym.edits.formats.unified_diff import DIFF_START_RE, add_patch_ops, apply_patch, parse_diff
from codegym.edits.records import EditBlock, EditSpan, ParsedAction
from codegym.edits.render import format_help
from codegym.edits.text import BAD_CHAR_RE, ActionError

#: longer actions are refused without being parsed (a model does not write 1 MB of code in a turn)
MAX_ACTION_CHARS = 1_000_000
_SUBMIT_RE = re.compile(r"^[ \t]*submit[ \t]*$", re.M | re.I)


def parse_action(text: str, files: Mapping[str, str] | None, main_file: str,
                 formats: set[str] | Sequence[str] | None = None, *,
                 max_chars: int | None = MAX_ACTION_CHARS) -> ParsedAction:
    """Turn model text into edits of ``files`` (see docs/edits.md for the
    formats and the rules). Never raises on any ``text``: problems are in
    ``ParsedAction.error`` (with the accepted formats and examples) and then
    nothing is changed. Raises ValueError only for unknown names in
    ``formats``."""
    allowed = check_formats(formats)
    warnings: list[str] = []
    try:
        return _parse(text, files or {}, main_file, allowed, max_chars, warnings)
    except Exception as e:  # pragma: no cover
        # last line of defence: model text must never crash the environment
        return ParsedAction(error=f"internal error while reading the action ({type(e).__name__}: {e}); "
                                  "please report it. " + _accepted_help(allowed, main_file),
                            warnings=list(warnings))


def apply_changes(files: Mapping[str, str], changes: Mapping[str, str | None]) -> dict[str, str]:
    """``files`` with ``changes`` applied (None deletes)."""
    out = dict(files)
    for p, c in changes.items():
        if c is None:
            out.pop(p, None)
        else:
            out[p] = c
    return out


def _accepted_help(allowed: frozenset[str], main_file: str) -> str:
    return format_help(sorted(allowed, key=FORMATS.index), main_file=main_file, brief=True)


def _failed(msg: str, allowed: frozenset[str], main_file: str, warnings: list[str],
            formats_used: list[str] | None = None) -> ParsedAction:
    msg = msg.rstrip() + "\n\n" + _accepted_help(allowed, main_file)
    return ParsedAction(error=msg, warnings=list(warnings), formats_used=formats_used or [])


def _parse(text: Any, files: Mapping[str, Any], main_file: str, allowed: frozenset[str],
           max_chars: int | None, warnings: list[str]) -> ParsedAction:
    raw = text
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", errors="replace")
        warnings.append("the action was bytes; decoded as UTF-8 with replacement characters")
    if not isinstance(text, str):
        return _failed(f"the action must be text, not {type(raw).__name__}", allowed, main_file, warnings)
    if max_chars is not None and len(text) > max_chars:
        return _failed(f"the action is {len(text):,} characters long; the limit is {max_chars:,}. "
                       "Write a shorter action (a diff or search/replace edit instead of whole files)",
                       allowed, main_file, warnings)
    if not text.strip():
        return _failed("the action is empty", allowed, main_file, warnings)
    ctx = Context(text, files, main_file, allowed, warnings)
    try:
        _collect(ctx)
        if not ctx.ops:
            return _failed(_nothing_found(ctx), allowed, main_file, warnings, ctx.formats_used())
        _check_allowed(ctx)
        if len(ctx.ops) > MAX_EDITS:
            raise ActionError(f"the action has {len(ctx.ops)} edit operations; the limit is {MAX_EDITS}")
        ctx.ops.sort(key=lambda o: o.pos)
        for op in ctx.ops:
            _APPLY[op.kind](ctx, op)
        return _result(ctx)
    except ActionError as e:
        return _failed(str(e), allowed, main_file, warnings, ctx.formats_used())


# ---------------------------------------------------------------------------
# Finding the operations
# ---------------------------------------------------------------------------


def _collect(ctx: Context) -> None:
    """Every format's operations: fenced blocks first, then prose (tool tags,
    SEARCH/REPLACE, diffs, bare JSON, a submit line)."""
    scan_fences(ctx)
    scan_markers(ctx)
    candidates: list[tuple[Fence, str]] = []
    for f in ctx.fences:
        read_fence(ctx, f, candidates)
    add_pathless(ctx, candidates)
    _tool_tags(ctx)
    # SEARCH/REPLACE regions in text order (a block may inherit the previous block's path)
    groups: dict[int, list[tuple[int, int, int]]] = {}
    for mk in ctx.sr_marks:
        if ctx.in_prose(mk[0]):
            groups.setdefault(bisect.bisect_right(ctx.fence_starts, mk[0]), []).append(mk)
    regions = ctx.sr_regions + [(g[0][0], g, None, None) for g in groups.values()]
    for _pos, marks, fpath, fence in sorted(regions, key=lambda r: r[0]):
        read_region(ctx, marks, fence_path=fpath, fence=fence)
    for m in DIFF_START_RE.finditer(ctx.norm):
        if ctx.in_prose(m.start()):
            patches, stop = parse_diff(ctx, m.start(), len(ctx.norm), bare=True, default=None)
            add_patch_ops(ctx, patches)
            ctx.consume(m.start(), max(stop, m.end()))
    _bare_json(ctx)
    if not any(op.kind == "submit" for op in ctx.ops):
        for m in _SUBMIT_RE.finditer(ctx.norm):
            if ctx.in_prose(m.start()):
                ctx.add_submit(m.start(), "submit", (m.start(), m.end()))
                break  # several submit lines submit once


def _tool_tags(ctx: Context) -> None:
    """``<tool_call>`` tags in prose; a tag runs to ``</tool_call>`` or the next fence."""
    norm = ctx.norm
    end_tag = -2
    for m in TOOL_TAG_RE.finditer(norm):
        if not ctx.in_prose(m.start()):
            continue
        if end_tag != -1 and end_tag < m.end():  # search again only past the last hit: linear
            end_tag = norm.find("</tool_call>", m.end())
        fence_after = bisect.bisect_right(ctx.fence_starts, m.start())
        limit = ctx.fences[fence_after].open_start if fence_after < len(ctx.fences) else len(norm)
        stop = end_tag if 0 <= end_tag <= limit else limit
        read_tag(ctx, m.end(), stop, where=f"<tool_call> at line {ctx.line(m.start())}")
        ctx.consume(m.start(), stop + (len("</tool_call>") if stop == end_tag else 0))


def _bare_json(ctx: Context) -> None:
    """JSON tool calls on lines of their own in prose (bounded work on JSON-looking garbage)."""
    attempts = scanned = 0
    for m in JSON_START_RE.finditer(ctx.norm):
        scanned += 1
        if attempts >= 64 or scanned > 20_000:
            break
        s = m.end() - 1
        if not ctx.in_prose(s):
            continue
        attempts += 1
        try:
            obj, e = JSON_DECODER.raw_decode(ctx.norm, s)
        except (ValueError, RecursionError):
            continue
        if is_tool_json(obj):
            add_tool_values(ctx, [(obj, s, e)], where=f"the JSON at line {ctx.line(s)}")
        ctx.consume(s, e)


def _check_allowed(ctx: Context) -> None:
    bad: list[str] = []
    for op in ctx.ops:
        if op.fmt not in ctx.allowed and op.fmt not in bad:
            bad.append(op.fmt)
        if op.kind == "submit" and "submit" not in ctx.allowed and "submit" not in bad:
            bad.append("submit")
    pd = ctx.pathless_disallowed
    if pd:
        ctx.warn(f"ignored {len(pd)} code block(s) without a path (code_block edits are not accepted here)")
    if bad:
        which = " and ".join(bad)
        raise ActionError(f"this action uses {which}, which {'is' if len(bad) == 1 else 'are'} not accepted here")


def _nothing_found(ctx: Context) -> str:
    if ctx.pathless_disallowed:
        return ("the code block(s) in this action would replace a whole file, but whole-file "
                "code blocks are not accepted here")
    parts = ["no edit, tool call or submit was found in the action"]
    if ctx.ignored_blocks:
        parts.append(
            f"; these code blocks are not read as code for {ctx.main_file}: "
            + ", ".join(ctx.ignored_blocks[:5])
            + f". Label the block with its language or path, e.g. ```{fence_tag(ctx.main_file) or 'text'} "
            f"path={ctx.main_file}")
    elif "<<<<<<<" in ctx.norm or ">>>>>>>" in ctx.norm:
        parts.append("; SEARCH/REPLACE markers must be alone on their lines: "
                     "<<<<<<< SEARCH, =======, >>>>>>> REPLACE")
    elif "@@" in ctx.norm:
        parts.append("; a diff needs '--- a/<path>' and '+++ b/<path>' header lines "
                     "(or a ```diff block)")
    return "".join(parts)


# ---------------------------------------------------------------------------
# Applying and the result
# ---------------------------------------------------------------------------


def _apply_tool(ctx: Context, op: Op) -> None:
    ctx.tool_calls.append(op.data)


def _apply_submit(ctx: Context, op: Op) -> None:
    ctx.submit = True


_APPLY = {"write": apply_write, "patch": apply_patch, "sr": apply_search_replace,
          "str_replace": apply_str_replace, "insert": apply_insert, "tool": _apply_tool, "submit": _apply_submit}


def _result(ctx: Context) -> ParsedAction:
    changes: dict[str, str | None] = {}
    spans: list[EditSpan] = []
    for path in ctx.touched:
        w = ctx.cur.get(path)
        orig = ctx.files.get(path)
        if w is None:
            if orig is not None:
                changes[path] = None
            continue
        content = w.content()
        if content == orig:
            ctx.warn(f"the edit left {path} unchanged")
            continue
        # (a pure-ASCII string without NUL -- isascii() is a flag -- needs no scan)
        m = BAD_CHAR_RE.search(content) if "\x00" in content or not content.isascii() else None
        if m:
            what = "a NUL character" if m.group(0) == "\x00" else "a lone surrogate (not valid Unicode text)"
            line = content.count("\n", 0, m.start()) + 1
            return _failed(f"the new content of {path} contains {what} at line {line}; source files must be text",
                           ctx.allowed, ctx.main_file, ctx.warnings, ctx.formats_used())
        changes[path] = content
        spans.extend(_spans(ctx, path, w))
    blocks = []
    for path, s, e, is_diff, lstr, fmt in ctx.blocks:
        if path not in changes or changes[path] is None:
            continue
        if lstr is not None:
            omap = tuple(map(ctx.orig, lstr.omap)) if ctx.crlf else tuple(lstr.omap)
            blocks.append(EditBlock(path, omap[0], omap[-1], omap, str(lstr), False, fmt))
        else:
            blocks.append(EditBlock(path, ctx.orig(s), ctx.orig(e), None, None, is_diff, fmt))
    spans.sort(key=lambda sp: (sp.start, sp.end))
    return ParsedAction(
        changes=changes, edit_spans=spans, edit_blocks=blocks, formats_used=ctx.formats_used(),
        submit=ctx.submit, tool_calls=list(ctx.tool_calls), error=None, warnings=list(ctx.warnings))


def _spans(ctx: Context, path: str, w: WorkFile) -> list[EditSpan]:
    """Exact spans of the verbatim chunks of a file (adjacent chunks of one construct merged)."""
    out: list[list[Any]] = []  # [tstart, tend, fmt, fstart, fend, src]
    fpos = 0
    last: list[Any] = [-1, -1, "", -1, -1, None]
    for ch in w.chunks:
        n = len(ch.text)
        t = ch.tstart
        if t >= 0:
            if last[1] == t and last[4] == fpos and last[5] == ch.src:
                last[1] += n
                last[4] += n
            else:
                last = [t, t + n, ch.fmt, fpos, fpos + n, ch.src]
                out.append(last)
        fpos += n
    crlf = ctx.crlf
    if not crlf:
        return [EditSpan(path, ts, te, fmt, fs, fe, src[0], src[1]) for ts, te, fmt, fs, fe, src in out]
    res = []
    for ts, te, fmt, fs, fe, src in out:
        s0, s1 = ctx.orig(src[0]), ctx.orig(src[1])
        # cut at newlines that were CRLF in the action, so each piece is
        # verbatim there; k = number of CRLFs before the current position
        k = bisect.bisect_left(crlf, ts)
        a = ts
        while k < len(crlf) and crlf[k] < te:
            nl = crlf[k]
            if nl > a:
                res.append(EditSpan(path, a + k, nl + k, fmt, fs + a - ts, fs + nl - ts, s0, s1))
            a = nl + 1
            k += 1
        if a < te or ts == te:
            res.append(EditSpan(path, a + k, te + k, fmt, fs + a - ts, fe, s0, s1))
    return res
