"""Repository tool calls in an action: `extract_repo_tools`, `parse_with_repo_tools`.

`SWEEnv` answers ``view_file``, ``list_files``, ``search`` and ``run_tests`` (`REPO_TOOLS`).
They are read here, before the action parser, because `codegym.edits.parse` rejects
tool names it does not know: a JSON value (bare, in a ```` ```json ```` block or in
``<tool_call>`` tags) whose calls are all repository tools is taken and blanked out,
so the spans of the edits the parser reads from the rest still index the action; a
value that mixes them with edit tools is refused with a message saying to send them
separately. Reading is linear in the text, with at most `MAX_REGIONS` candidates.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from codegym.edits.parse import parse_action
from codegym.edits.records import ParsedAction

#: name -> {argument: (accepted types, required)}
REPO_TOOLS: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "view_file": {"path": ((str,), True), "start_line": ((int,), False), "end_line": ((int,), False)},
    "list_files": {"path": ((str,), False)},
    "search": {"pattern": ((str,), True), "path": ((str,), False)},
    "run_tests": {"tests": ((str, list), False)},
}
REPO_TOOL_HELP = """\
Repository tools (JSON tool calls, bare, in a ```json block or in <tool_call></tool_call> tags):
- view_file(path, start_line?, end_line?): show a file with line numbers (or a range); a folder lists its files
- list_files(path?): the files under a folder (default: the whole repository)
- search(pattern, path?): lines matching a regular expression (Python syntax; invalid ones are searched as plain text)
- run_tests(tests?): run the named tests (ids as the test command accepts them, e.g. "tests.test_x.Case.test_y") on the current files; without tests, run the existing test suite
Example: {"name": "search", "arguments": {"pattern": "def parse", "path": "src"}}"""  # noqa: E501 (prompt text)
_FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})([^\n`]*)$", re.M)
#: a bare line that starts a tool-call object (or a list of them)
_JSON_LINE_RE = re.compile(r'^[ \t]*(?:\[[ \t]*)?\{[ \t]*"(?:name|type|function|tool_calls)"', re.M)
#: most places a tool call is looked for in one action (hostile actions stay linear)
MAX_REGIONS = 64
_JSON_LANGS = {"", "json", "jsonc", "json5", "tool_call", "tool-call", "tool", "tools", "function", "function_call"}
_DECODER = json.JSONDecoder(strict=False)
#: the parser's errors that mean "nothing found" (an action of repository tools alone is fine)
_NOTHING = ("no edit, tool call or submit was found", "the action is empty")


@dataclass(frozen=True)
class RepoCall:
    """A repository tool call found in the action text (``text[start:end]``)."""

    name: str
    arguments: dict[str, Any]
    start: int
    end: int


def _calls_of(obj: Any) -> list[tuple[str, Any]] | None:
    """(name, arguments) of a tool-call JSON value, None if it is not one."""
    if isinstance(obj, list):
        out = []
        for x in obj:
            got = _calls_of(x)
            if got is None:
                return None
            out.extend(got)
        return out or None
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("tool_calls"), list):
        return _calls_of(obj["tool_calls"])
    f = obj.get("function")
    if isinstance(f, dict) and isinstance(f.get("name"), str):
        return [(f["name"], f.get("arguments", f.get("parameters")))]
    if isinstance(obj.get("name"), str):
        return [(obj["name"], obj.get("arguments", obj.get("parameters")))]
    return None


def _clean_args(name: str, args: Any) -> dict[str, Any]:
    if args is None or args == "":
        args = {}
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError as e:
            raise ValueError(f"{name}: the arguments string is not valid JSON ({e})") from None
    if not isinstance(args, dict):
        raise ValueError(f"{name}: arguments must be a JSON object")
    spec = REPO_TOOLS[name]
    sig = ", ".join(k if req else k + "?" for k, (_t, req) in spec.items())
    out: dict[str, Any] = {}
    for k, v in args.items():
        if k not in spec:
            raise ValueError(f"{name}: unknown argument {k!r}; {name} takes ({sig})")
        if v is None:
            continue
        types = spec[k][0]
        if int in types and isinstance(v, str) and v.strip().isdigit():
            v = int(v)
        if not isinstance(v, types) or isinstance(v, bool):
            raise ValueError(f"{name}: argument {k!r} must be {' or '.join(t.__name__ for t in types)}")
        out[k] = v
    for k, (_t, req) in spec.items():
        if req and k not in out:
            raise ValueError(f"{name}: missing argument {k!r}; {name} takes ({sig})")
    return out


def _inside(starts: list[int], ends: list[int], pos: int) -> bool:
    i = bisect.bisect_right(starts, pos) - 1
    return i >= 0 and pos < ends[i]


def _regions(text: str) -> list[tuple[int, int, int, int]]:
    """(region start, region end, JSON start, JSON end) of every place a tool call may be:
    ``<tool_call>`` tags, fenced blocks labelled json (or unlabelled), and bare lines that
    start a tool-call object. Linear in the text (hostile actions included); at most
    `MAX_REGIONS` candidates."""
    out: list[tuple[int, int, int, int]] = []
    tags: list[tuple[int, int]] = []
    pos = 0
    while len(out) < MAX_REGIONS:
        a = text.find("<tool_call>", pos)
        if a < 0:
            break
        b = text.find("</tool_call>", a)
        if b < 0:
            break
        pos = b + len("</tool_call>")
        out.append((a, pos, a + len("<tool_call>"), b))
        tags.append((a, pos))
    tag_starts, tag_ends = [a for a, _ in tags], [b for _, b in tags]
    blocks: list[tuple[int, int]] = []
    fences = list(_FENCE_RE.finditer(text))
    i = 0
    while i < len(fences):
        opening = fences[i]
        fence, lang = opening.group(1), opening.group(2).strip()
        j = i + 1
        while j < len(fences) and not (fences[j].group(1)[0] == fence[0] and len(fences[j].group(1)) >= len(fence)
                                       and not fences[j].group(2).strip()):
            j += 1
        if j >= len(fences):
            break
        close = fences[j]
        if not _inside(tag_starts, tag_ends, opening.start()):
            blocks.append((opening.start(), close.end()))
            first = lang.split()[0].lower() if lang else ""
            if first in _JSON_LANGS and len(out) < MAX_REGIONS:
                out.append((opening.start(), close.end(), opening.end() + 1, close.start()))
        i = j + 1
    taken = sorted(tags + blocks)
    starts, ends = [a for a, _ in taken], [b for _, b in taken]
    attempts, last_end = 0, -1
    for m in _JSON_LINE_RE.finditer(text):
        s = m.start()
        if s < last_end or _inside(starts, ends, s):
            continue
        attempts += 1  # a failed decode may read to the end of the text: bound them
        if attempts > MAX_REGIONS or len(out) >= MAX_REGIONS:
            break
        j = s + len(m.group(0)) - len(m.group(0).lstrip(" \t"))  # the "[" or "{"
        try:
            _obj, end = _DECODER.raw_decode(text, j)
        except (ValueError, RecursionError):
            continue
        out.append((s, end, j, end))
        last_end = end
    return sorted(out)


def extract_repo_tools(text: str) -> tuple[list[RepoCall], str, str | None]:
    """(repository tool calls, the text with those calls blanked out, error or None).

    A JSON value is taken when every call in it is a repository tool (`REPO_TOOLS`);
    blanking keeps every other character at its offset, so the spans of the edits
    `codegym.edits.parse.parse_action` reads from the rest still index `text`."""
    calls: list[RepoCall] = []
    chars = list(text)
    for start, end, js, je in _regions(text):
        body = text[js:je]
        values = []
        k = 0
        ok = True
        while True:
            while k < len(body) and body[k] in " \t\r\n":
                k += 1
            if k >= len(body):
                break
            try:
                obj, k = _DECODER.raw_decode(body, k)
            except (ValueError, RecursionError):
                ok = False
                break
            values.append(obj)
        if not ok or not values:
            continue
        found: list[tuple[str, Any]] = []
        for v in values:
            got = _calls_of(v)
            if got is None:
                found = []
                break
            found.extend(got)
        if not found:
            continue
        names = [n for n, _a in found]
        mine = [n in REPO_TOOLS for n in names]
        if not all(mine):
            exclusive = [n for n, a in found if n in ("list_files", "search") or (n == "run_tests" and a)]
            if exclusive:
                return [], text, (f"the tool calls at character {start} mix repository tools "
                                  f"({', '.join(sorted(set(exclusive)))}) with edit tools in one JSON value; "
                                  "send the repository tools as separate calls")
            continue
        for name, args in found:
            try:
                calls.append(RepoCall(name, _clean_args(name, args), start, end))
            except ValueError as e:
                return [], text, f"tool call {name} at character {start}: {e}"
        for q in range(start, end):
            if chars[q] != "\n":
                chars[q] = " "
    return calls, "".join(chars), None


def parse_with_repo_tools(action: str, files: Mapping[str, str],
                          formats: Collection[str]) -> tuple[ParsedAction, list[RepoCall]]:
    """(the action's edits as the parser reads them, its repository tool calls).

    Without ``tool_call`` among `formats` no repository tool is read; an action of
    repository tools alone parses as a tool-call action with no edit."""
    calls: list[RepoCall] = []
    rest, tool_error = action, None
    if "tool_call" in formats:
        calls, rest, tool_error = extract_repo_tools(action)
    if tool_error is not None:
        return ParsedAction(error=tool_error), calls
    if calls and not rest.strip():
        return ParsedAction(formats_used=["tool_call"]), calls
    parsed = parse_action(rest, files, "", formats)
    if calls and parsed.error and parsed.error.startswith(_NOTHING):
        parsed = ParsedAction(formats_used=["tool_call"])
    return parsed, calls
