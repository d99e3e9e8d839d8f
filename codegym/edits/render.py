"""Actions as text: a change set rendered in one format (`render_action`, for
the oracle agent and round trips), the formats explained for prompts
(`format_help`), the OpenAI tools of the tool-call format (`tool_schemas`,
`TOOL_SCHEMAS`), and what the ``view_file`` tool shows (`view_file`)."""

from __future__ import annotations

import difflib
import json
import os.path
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codegym.edits.formats import EDIT_FORMATS, FORMATS, check_formats
from codegym.edits.formats.code_block import fence_tag
from codegym.edits.formats.search_replace import MARKER_LINE_RE
from codegym.edits.formats.tool_call import TOOL_DOCS, TOOLS
from codegym.edits.text import find_all, keep_lines


def tool_schemas(formats: Sequence[str] | set[str] | None = None) -> list[dict[str, Any]]:
    """OpenAI ``tools`` entries for the tool-call format; without ``submit``
    in ``formats`` the submit tool is left out. Empty if tool calls are not
    accepted."""
    allowed = check_formats(formats)
    if "tool_call" not in allowed:
        return []
    out = []
    for name, spec in TOOLS.items():
        if name == "submit" and "submit" not in allowed:
            continue
        props = {
            k: {"type": "string" if t is str else "integer", "description": d}
            for k, (t, _req, d) in spec.items()
        }
        out.append({
            "type": "function",
            "function": {
                "name": name,
                "description": TOOL_DOCS[name],
                "parameters": {
                    "type": "object",
                    "properties": props,
                    "required": [k for k, (_t, req, _d) in spec.items() if req],
                    "additionalProperties": False,
                },
            },
        })
    return out


#: OpenAI ``tools`` list for every tool (`tool_schemas` filters by format)
TOOL_SCHEMAS: list[dict[str, Any]] = tool_schemas(None)


# ---------------------------------------------------------------------------
# Help for prompts and error messages
# ---------------------------------------------------------------------------


def _example_code(main_file: str) -> tuple[str, str, str]:
    """(lang, old line, new line) of a small edit in the main file's language."""
    ext = os.path.splitext(main_file)[1].lower()
    if ext in (".py", ".pyi", ".jl", ".rb"):
        return fence_tag(main_file) or "python", "    return x", "    return 2 * x"
    if ext in (".c", ".h", ".cpp", ".cc", ".cxx", ".hpp", ".js", ".mjs", ".ts", ".java", ".go", ".rs"):
        return fence_tag(main_file), "    return x;", "    return 2 * x;"
    return fence_tag(main_file), "old line", "new line"


def _format_entry(f: str, allowed: frozenset[str], mf: str, brief: bool) -> str:
    """The help paragraph of one format, with its example."""
    lang, old, new = _example_code(mf)
    if f == "code_block":
        return (("- code_block (replaces a whole file):\n" if brief else
                 f"- code_block: a fenced code block replaces a whole file. Put the path in the info "
                 f"string; a block without a path replaces {mf} (if several blocks have no path, only "
                 "the last one is used). Blocks labelled text/output/console are not edits.\n")
                + f"```{lang} path={mf}\n<the complete new content of {mf}>\n```")
    if f == "unified_diff":
        return (("- unified_diff:\n" if brief else
                 "- unified_diff: a unified diff in a ```diff block. Line numbers may be approximate, "
                 "but context (' ') and removed ('-') lines must match the file exactly; "
                 "'--- /dev/null' creates a file, '+++ /dev/null' deletes one.\n")
                + f"```diff\n--- a/{mf}\n+++ b/{mf}\n@@ -3,1 +3,1 @@\n-{old}\n+{new}\n```")
    if f == "search_replace":
        return (("- search_replace:\n" if brief else
                 "- search_replace: the file path on its own line, then a SEARCH/REPLACE block. SEARCH "
                 "must match exactly one place in the file (add surrounding lines to make it unique); "
                 "an empty SEARCH creates a new file.\n")
                + f"{mf}\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE")
    if f == "tool_call":
        call = json.dumps({"name": "str_replace", "arguments": {"path": mf, "old_str": old.strip(),
                                                               "new_str": new.strip()}})
        tools = ("view_file(path, start_line?, end_line?), write_file(path, content), "
                 "str_replace(path, old_str, new_str), insert(path, line, text), run_tests()"
                 + (", submit()" if "submit" in allowed else ""))
        return (("- tool_call (JSON, bare or in <tool_call></tool_call>):\n" if brief else
                 "- tool_call: JSON function calls, bare, in a ```json block or in <tool_call></tool_call> "
                 f"tags; one call or a list. Tools: {tools}. old_str must occur exactly once.\n")
                + call)
    return "- submit: a line containing only `submit`" + (
        "." if brief else
        " submits the current files for final judging and ends the episode; it may "
        "follow edits in the same message (they are applied first).")


def format_help(formats: Sequence[str] | set[str] | None = None, *, main_file: str = "main.py",
                brief: bool = False) -> str:
    """Text for the observation: the accepted action formats, with an example
    of each (``brief`` gives the short version used in error messages)."""
    allowed = check_formats(formats)
    order = [f for f in FORMATS if f in allowed]
    head = "Accepted action formats: " + ", ".join(order) + "."
    parts = [head if brief else head + " Each edit you write is applied to the files in order; "
             "if any part of an action cannot be applied, nothing is applied and you get an error."]
    parts.extend(_format_entry(f, allowed, main_file, brief) for f in order)
    return "\n".join(parts)


def view_file(files: Mapping[str, str], path: str, start_line: int | None = None,
              end_line: int | None = None, max_lines: int = 400) -> str:
    """What the ``view_file`` tool shows: numbered lines of a file (or an
    explanation when the file or the range does not exist)."""
    if path not in files:
        names = ", ".join(sorted(files)[:20])
        return f"{path}: no such file (files: {names or 'none'})"
    lines = files[path].split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    a = max(1, start_line or 1)
    b = min(len(lines), end_line if end_line is not None else len(lines))
    if a > max(len(lines), 1) or (end_line is not None and end_line < a):
        return f"{path}: lines {a}-{end_line if end_line is not None else ''} are outside the file ({len(lines)} lines)"
    shown = lines[a - 1:b]
    more = ""
    if len(shown) > max_lines:
        shown = shown[:max_lines]
        more = f"\n... ({b - a + 1 - max_lines} more lines; use start_line/end_line)"
    width = len(str(a + len(shown)))
    body = "\n".join(f"{i:>{width}}  {l}" for i, l in enumerate(shown, a))
    return f"{path} (lines {a}-{a + len(shown) - 1} of {len(lines)}):\n{body}{more}"


# ---------------------------------------------------------------------------
# Rendering a change set in a format (oracle agent, round-trip tests)
# ---------------------------------------------------------------------------


def _fence_for(body: str) -> str:
    """A backtick fence longer than any backtick run that starts a line of body."""
    longest = 0
    for m in re.finditer(r"^[ \t]*(`{3,}|~{3,})", body, re.M):
        longest = max(longest, len(m.group(1)))
    return "`" * max(3, longest + 1)


def _render_diff(path: str, old: str | None, new: str | None) -> str:
    a = keep_lines(old or "")
    b = keep_lines(new or "")
    out = [f"--- {'/dev/null' if old is None else 'a/' + path}\n",
           f"+++ {'/dev/null' if new is None else 'b/' + path}\n"]

    def rng(start: int, stop: int) -> str:
        length = stop - start
        beginning = start + 1 if length else start
        return f"{beginning}" if length == 1 else f"{beginning},{length}"

    def emit(mark: str, line: str) -> None:
        if line.endswith("\n"):
            out.append(mark + line)
        else:
            out.append(mark + line + "\n\\ No newline at end of file\n")

    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in sm.get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{rng(i1, i2)} +{rng(j1, j2)} @@\n")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                for l in a[x1:x2]:
                    emit(" ", l)
                continue
            for l in a[x1:x2]:
                emit("-", l)
            for l in b[y1:y2]:
                emit("+", l)
    return "".join(out)


def _line_blocks(old: str, new: str,
                 unique: Callable[[list[str], list[str]], bool]) -> list[tuple[list[str], list[str]]]:
    """(search lines, replace lines) blocks (lines keep their newline) that,
    applied in order, turn old into new; each search is grown with context
    until ``unique(current_lines, search)``."""
    a = keep_lines(old)
    b = keep_lines(new)
    cur = list(a)
    blocks = []
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        # cur == b[:j1] + a[i1:]; the group's old lines sit at cur[j1 : j1 + i2 - i1]
        c = 0 if i2 > i1 else 1
        while True:
            lo = max(j1 - c, 0)
            hi = min(j1 + (i2 - i1) + c, len(cur))
            search = cur[lo:hi]
            replace = b[lo:j2] + cur[j1 + (i2 - i1):hi]
            if any(l.strip() for l in search) and unique(cur, search):
                break
            if lo == 0 and hi == len(cur):
                break
            c += 1
        blocks.append((search, replace))
        cur[lo:hi] = replace
    return blocks


def _unique_lines(cur: list[str], search: list[str]) -> bool:
    lines = [l[:-1] if l.endswith("\n") else l for l in cur]
    s = [l[:-1] if l.endswith("\n") else l for l in search]
    return len(find_all(lines, s, "exact")) == 1


def _unique_text(cur: list[str], search: list[str]) -> bool:
    text, s = "".join(cur), "".join(search)
    i = text.find(s)
    return i >= 0 and text.find(s, i + 1) < 0


def _as_code_blocks(real: Mapping[str, str | None]) -> list[str]:
    parts = []
    for p, c in real.items():
        if c is None:
            raise ValueError(f"code_block cannot delete {p}; use unified_diff")
        if MARKER_LINE_RE.search(c):
            raise ValueError(f"code_block cannot express {p}: its content has SEARCH/REPLACE marker lines")
        body = c if (c == "" or c.endswith("\n")) else c + "\n"
        fence = _fence_for(body)
        q = f'"{p}"' if " " in p else p
        parts.append(f"{fence}{fence_tag(p)} path={q}\n{body}{fence}\n")
    return parts


def _as_search_replace(real: Mapping[str, str | None], files: Mapping[str, str]) -> list[str]:
    parts = []
    for p, c in real.items():
        if c is None:
            raise ValueError(f"search_replace cannot delete {p}; use unified_diff")
        old = files.get(p)
        if old is not None and not isinstance(old, str):
            raise ValueError(f"{p} is not a text file")
        blocks = [([], keep_lines(c))] if old is None or old == "" else _line_blocks(old, c, _unique_lines)
        texts = []
        for search, replace in blocks:
            s = "".join(l if l.endswith("\n") else l + "\n" for l in search)
            r = "".join(l if l.endswith("\n") else l + "\n" for l in replace)
            if MARKER_LINE_RE.search(s) or MARKER_LINE_RE.search(r):
                raise ValueError(f"search_replace cannot express the change to {p}: "
                                 "the text contains a line that looks like a SEARCH/REPLACE marker")
            texts.append(f"<<<<<<< SEARCH\n{s}=======\n{r}>>>>>>> REPLACE\n")
        body = "".join(texts)
        fence = _fence_for(body)
        parts.append(f"{p}\n{fence}{fence_tag(p)}\n{body}{fence}\n")
    return parts


def _as_tool_calls(real: Mapping[str, str | None], files: Mapping[str, str]) -> list[str]:
    calls: list[dict[str, Any]] = []
    for p, c in real.items():
        if c is None:
            raise ValueError(f"tool_call cannot delete {p}; use unified_diff")
        old = files.get(p)
        if old is None or old == "" or not isinstance(old, str):
            calls.append({"name": "write_file", "arguments": {"path": p, "content": c}})
            continue
        for search, replace in _line_blocks(old, c, _unique_text):
            calls.append({"name": "str_replace", "arguments": {
                "path": p, "old_str": "".join(search), "new_str": "".join(replace)}})
    return ["```json\n" + json.dumps(calls, indent=2, ensure_ascii=False) + "\n```\n"] if calls else []


def render_action(changes: Mapping[str, str | None], format: str, files: Mapping[str, str],
                  main_file: str, *, submit: bool = False) -> str:
    """Express ``changes`` (relative to ``files``) as action text in one
    format, so that `parse_action` gives back the same changes. Raises
    ValueError when the format cannot express a change (deleting a file is
    only possible with unified_diff; SEARCH/REPLACE text and code blocks
    cannot contain SEARCH/REPLACE marker lines). Final newlines: unified_diff
    and tool_call are exact; a code block always ends its content with a
    newline, and a SEARCH/REPLACE edit keeps the file's convention, so those
    two cannot add or remove a file's final newline. With ``submit=True`` a
    ``submit`` line follows the edits."""
    if format not in EDIT_FORMATS:
        raise ValueError(f"render_action: format must be one of {EDIT_FORMATS}, got {format!r}")
    real = {p: c for p, c in changes.items() if files.get(p) != c or (c is not None and p not in files)}
    if format == "code_block":
        parts = _as_code_blocks(real)
    elif format == "unified_diff":
        body = "".join(_render_diff(p, files.get(p), c) for p, c in real.items())
        fence = _fence_for(body)
        parts = [f"{fence}diff\n{body}{fence}\n"] if body else []
    elif format == "search_replace":
        parts = _as_search_replace(real, files)
    else:
        parts = _as_tool_calls(real, files)
    if submit:
        parts.append("submit\n")
    return "\n".join(parts)
