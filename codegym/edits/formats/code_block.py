"""The ``code_block`` format: fenced blocks, and which of them are edits.

Scans the fences of the action, reads each block's language and path (info
string, a file name on the line above, a ``# path:`` first line), hands
blocks that hold another format (JSON tool calls, SEARCH/REPLACE, diffs) to
that format, and turns the rest into whole-file writes, by the policy on
languages below (docs/edits.md: which blocks are edits).
"""

from __future__ import annotations

import bisect
import os.path
import re

from codegym.core.languages import all_extensions, extensions_of, language_of_path
from codegym.edits.formats import search_replace, tool_call, unified_diff
from codegym.edits.formats.context import Chunk, Context, Fence, Op, WorkFile
from codegym.edits.text import ActionError, clean_path, looks_like_filename

#: more fence lines (```) than this is an error
MAX_FENCE_LINES = 2_000

#: info strings of blocks that show things rather than code
_NON_EDIT_LANGS = frozenset(
    "text txt plain plaintext output out result results console terminal stdout stderr stdin "
    "input in log logs trace traceback shell-session sh-session pycon python-repl repl ipython "
    "example sample none nohighlight ansi tree mermaid math diagram".split()
)
#: shells and data formats: silently not edits (a mismatch with the main file is expected)
_QUIET_LANGS = frozenset(
    "sh bash shell zsh ksh fish powershell ps1 pwsh bat cmd batch json json5 jsonc jsonl yaml yml "
    "toml ini cfg xml csv tsv markdown md html htm css sql make makefile cmake dockerfile docker "
    "tex latex".split()
)
_DIFF_LANGS = frozenset({"diff", "patch", "udiff", "git-diff", "gitdiff"})
_TOOL_LANGS = frozenset({"tool_call", "tool-call", "tool", "tools", "function", "function_call"})
_JSON_LANGS = frozenset({"json", "json5", "jsonc"}) | _TOOL_LANGS

# Each regex is anchored to a line start and has no nested quantifiers, so
# scanning is linear in the text (no catastrophic backtracking).
_FENCE_RE = re.compile(r"^([ \t]*)(`{3,}|~{3,})([^\n]*)$", re.M)
_PATH_KV_RE = re.compile(
    r"(?:^|[ \t])(?:path|file|filename)[ \t]*=[ \t]*(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^ \t\n]+))", re.I)
_PATH_COMMENT_RE = re.compile(r"[ \t]*(?:#|//|--|;|%)[ \t]*(?:path|file|filename)[ \t]*:[ \t]*([^ \t\n]+)[ \t]*",
                              re.I)
_NONWS_RE = re.compile(r"[^ \t\n\r]")


def fence_tag(path: str) -> str:
    """The code-block tag of a file: its language in the one table (``text`` for .txt)."""
    return language_of_path(path.lower()) or ("text" if os.path.splitext(path)[1].lower() == ".txt" else "")


# ---------------------------------------------------------------------------
# Scanning fences
# ---------------------------------------------------------------------------


def _closing(ms: list[re.Match], i: int, nesting: bool) -> tuple[int | None, bool]:
    """Index of the fence line that closes the one at ``ms[i]`` (None: never closed),
    and whether nested blocks are still looked for."""
    ch, size = ms[i].group(2)[0], len(ms[i].group(2))
    if nesting:
        # A "```lang" line inside a block opens a nested block (a
        # markdown string in the code); a bare fence closes the innermost.
        depth = 0
        for k in range(i + 1, len(ms)):
            g = ms[k].group(2)
            if g[0] != ch or len(g) < size:
                continue
            inf = ms[k].group(3).strip()
            if not inf:
                if depth == 0:
                    return k, nesting
                depth -= 1
            elif not (ch == "`" and "`" in inf):
                depth += 1
        nesting = False  # at most one failed nested scan: stays linear
    for k in range(i + 1, len(ms)):
        g = ms[k].group(2)
        if g[0] == ch and len(g) >= size and not ms[k].group(3).strip():
            return k, nesting
    return None, nesting


def scan_fences(ctx: Context) -> None:
    """Find the fenced blocks: ``ctx.fences`` in text order."""
    norm = ctx.norm
    ms = []
    for m in _FENCE_RE.finditer(norm):
        ms.append(m)
        if len(ms) > MAX_FENCE_LINES:
            raise ActionError(f"the action has more than {MAX_FENCE_LINES} code fence lines (```); "
                              "write fewer code blocks")
    fences: list[Fence] = []
    nesting = True
    i = 0
    while i < len(ms):
        m = ms[i]
        marker, info = m.group(2), m.group(3)
        if marker[0] == "`" and "`" in info:  # ```x``` on one line is inline code
            i += 1
            continue
        j, nesting = _closing(ms, i, nesting)
        cstart = min(m.end() + 1, len(norm))
        if j is None:
            fences.append(Fence(m.start(), cstart, len(norm), len(norm), m.group(1), marker, info, False))
            break
        c = ms[j]
        fences.append(Fence(m.start(), cstart, max(c.start(), cstart), min(c.end() + 1, len(norm)),
                            m.group(1), marker, info, True))
        i = j + 1
    ctx.fences = fences
    ctx.fence_starts = [f.open_start for f in fences]


# ---------------------------------------------------------------------------
# Reading one block
# ---------------------------------------------------------------------------


def fence_info(info: str) -> tuple[str, str | None]:
    """Language and path of a fence's info string."""
    info = info.strip()
    if not info:
        return "", None
    path = None
    m = _PATH_KV_RE.search(info)
    if m:
        path = next(g for g in m.groups() if g is not None)
    toks = info.split()
    first = toks[0] if "=" not in toks[0] else ""
    first = first.strip("{}")
    if first.startswith("."):
        first = first[1:]
    lang = first
    if ":" in first:
        lang, _, p = first.partition(":")
        if p and path is None:
            path = p
    elif path is None and looks_like_filename(first, all_extensions()):
        path = first
        lang = fence_tag(first)
    elif path is None and len(toks) >= 2 and "=" not in toks[1] and looks_like_filename(toks[1]):
        path = toks[1]
    return lang.lower(), path


def _would_edit(lang: str, path: str | None) -> bool:
    return bool(path) or lang not in _NON_EDIT_LANGS and not (lang in _QUIET_LANGS and lang not in _JSON_LANGS)


def _compatible(lang: str, main_file: str) -> bool | None:
    """Can a block in ``lang`` be the main file? None = not a known language."""
    exts = extensions_of(lang)
    if exts is None:
        return None
    mext = os.path.splitext(main_file)[1]
    if mext not in all_extensions() and mext.lower() not in all_extensions():
        return lang not in _QUIET_LANGS
    return mext in exts or mext.lower() in exts


def read_fence(ctx: Context, f: Fence, candidates: list[tuple[Fence, str]]) -> None:
    """Ops for one fenced block; a code block without a path goes to ``candidates``."""
    lang, path = fence_info(f.info)
    label_path = ctx.label_path(ctx.prev_line(f.open_start)) if path is None else None
    info = f.info.strip()
    where = (f"the code block at line {ctx.line(f.open_start)} "
             f"({f.marker}{info[:40]}{'...' if len(info) > 40 else ''})")
    if not f.closed:
        if _would_edit(lang, path or label_path):
            raise ActionError(
                f"{where} is never closed: end it with a line holding only {f.marker}. "
                "(If your answer was cut off, write a shorter edit.)")
        ctx.warn(f"{where} is never closed; it was ignored")
        return
    if not _other_format(ctx, f, lang, path or label_path, where):
        _code(ctx, f, lang, path or label_path, where, candidates)


def _other_format(ctx: Context, f: Fence, lang: str, fence_path: str | None, where: str) -> bool:
    """Hand a block holding tool calls, SEARCH/REPLACE blocks or a diff to its format."""
    norm, cs, ce = ctx.norm, f.content_start, f.content_end
    first_nb = _NONWS_RE.search(norm, cs, ce)
    starts_json = first_nb is not None and norm[first_nb.start()] in "{["
    if lang in _JSON_LANGS or (lang == "" and starts_json):
        if starts_json:
            vals = tool_call.json_values(ctx, cs, ce)
            if vals is not None and all(tool_call.is_tool_json(v[0]) for v in vals) and vals:
                tool_call.add_tool_values(ctx, vals, where=where)
                return True
        if lang in _TOOL_LANGS:
            raise ActionError(f"{where} is not a valid tool call: expected JSON like {tool_call.CALL_EXAMPLE}")
    marks = ctx.sr_marks[bisect.bisect_left(ctx.sr_starts, cs):bisect.bisect_left(ctx.sr_starts, ce)]
    if search_replace.has_search(marks):
        ctx.sr_regions.append((f.open_start, marks, fence_path, f))
        return True
    # content that reads as a diff is one, unless the block names the file it replaces
    if lang in _DIFF_LANGS or (fence_path is None and unified_diff.looks_like_diff(ctx, cs, ce)):
        patches, _ = unified_diff.parse_diff(ctx, cs, ce, bare=False, default=fence_path or ctx.main_file)
        if not patches:
            raise ActionError(f"{where} is marked as a diff but has no file headers or @@ hunks")
        unified_diff.add_patch_ops(ctx, patches)
        return True
    return False


def _code(ctx: Context, f: Fence, lang: str, fence_path: str | None, where: str,
          candidates: list[tuple[Fence, str]]) -> None:
    """A block of code: a write when it has a path, else maybe the main file."""
    norm, cs, ce = ctx.norm, f.content_start, f.content_end
    content_start = cs
    if fence_path is None and cs < ce:
        e = norm.find("\n", cs, ce)
        first_line = norm[cs:e if e >= 0 else ce]
        m = _PATH_COMMENT_RE.fullmatch(first_line) if len(first_line) < 300 else None
        if m:
            fence_path = m.group(1)
            content_start = e + 1 if e >= 0 else ce
    if fence_path is not None:
        _write_op(ctx, f, fence_path, content_start, where)
        return
    body = norm[cs:ce]
    if body.strip().lower() == "submit" and lang in ("", "text", "txt", "plaintext"):
        ctx.add_submit(cs, "submit", (f.open_start, f.close_end))
        return
    if lang in _NON_EDIT_LANGS or lang in _QUIET_LANGS:
        ctx.ignored_blocks.append(f"```{lang} at line {ctx.line(f.open_start)}")
        return
    if lang and _compatible(lang, ctx.main_file) is False:
        ctx.ignored_blocks.append(f"```{lang} at line {ctx.line(f.open_start)}")
        ctx.warn(f"{where} was not used: a {lang} block cannot replace {ctx.main_file} "
                 f"(add path=... to the fence to write another file)")
        return
    if not body.strip():
        ctx.warn(f"{where} is empty; it was ignored")
        return
    candidates.append((f, where))


def add_pathless(ctx: Context, candidates: list[tuple[Fence, str]]) -> None:
    """The last code block without a path replaces the main file (the others are examples)."""
    if not candidates:
        return
    if "code_block" not in ctx.allowed:
        # illustrations are fine next to an accepted edit; alone, they are the mistake
        ctx.pathless_disallowed = candidates
        return
    f, where = candidates[-1]
    if len(candidates) > 1:
        others = ", ".join(str(ctx.line(c.open_start)) for c, _ in candidates[:-1])
        ctx.warn(
            f"{len(candidates)} code blocks have no path; only the last one (line "
            f"{ctx.line(f.open_start)}) replaces {ctx.main_file}; ignored the ones at line(s) {others}")
    _write_op(ctx, f, ctx.main_file, f.content_start, where)


def _write_op(ctx: Context, f: Fence, raw_path: str, content_start: int, where: str) -> None:
    path = clean_path(raw_path, where)
    norm, ce = ctx.norm, f.content_end
    src = (f.open_start, f.close_end)
    pieces: list[Chunk] = []
    if not f.indent:
        pieces.append(Chunk(norm[content_start:ce], content_start, "code_block", src))
    else:
        # an indented fence (inside a list): strip that indentation from each line
        pos = content_start
        ind = len(f.indent)
        while pos < ce:
            e = norm.find("\n", pos, ce)
            e = ce if e < 0 else e + 1
            k = 0
            while k < ind and pos + k < e and norm[pos + k] in " \t":
                k += 1
            pieces.append(Chunk(norm[pos + k:e], pos + k, "code_block", src))
            pos = e
    ctx.seen(f.open_start, "code_block")
    ctx.add_op(Op(f.open_start, "code_block", "write", src, path, pieces, label=where))
    ctx.blocks.append((path, content_start, ce, False, None, "code_block"))


def apply_write(ctx: Context, op: Op) -> None:
    """A whole-file write (code blocks, and the write_file tool)."""
    if ctx.exists(op.path):
        ctx.get(op.path, op.label)  # binary check
    ctx.set(op.path, WorkFile(list(op.pieces)))
