"""`SWEEnv`: repository tasks (``kind: repo``) as episodes -- ``codegym/SWE-v0``.

A `CodeEnv` whose workspace is the task's repository: `reset` gives the episode
a private git working tree copied from the task's pristine base
(`codegym.tasks.repo.base_tree`), and the prompt shows the issue and the file listing
instead of whole files. Edits come in every `codegym.edits.parse` format (code
blocks with a path, unified diffs -- a ``git diff`` applies as is --,
SEARCH/REPLACE blocks, ``write_file`` / ``str_replace`` / ``insert`` tool
calls); ``submit`` grades with `codegym.tasks.repo` (test files restored, test patch
applied, FAIL_TO_PASS and PASS_TO_PASS, resolution FULL / PARTIAL / NO).

Repository tools (JSON tool calls, bare, in a ```` ```json ```` block or in
``<tool_call>`` tags, like `codegym.edits.parse`' tool calls)::

    view_file(path, start_line?, end_line?)  a file or a range of it; a folder: its files
    list_files(path?)                        files under a folder (default: all)
    search(pattern, path?)                   regular expression (or plain text) over the files
    run_tests(tests?)                        the named test ids ("a b" or a list) on the current
                                             files; without tests: the existing tests (public split)
    submit()                                 (or a line "submit") grade and end the episode

Rewards: ``reward="binary"`` (default) is 1 when the issue is resolved (FULL);
``reward="pass_fraction"`` is the fraction of FAIL_TO_PASS tests that pass, 0
when any PASS_TO_PASS test fails. ``info["swe"]`` (on submission) holds the
resolution and every listed test's status.

    >>> import gymnasium as gym, codegym
    >>> env = gym.make("codegym/SWE-v0")
    >>> obs, info = env.reset(options={"task_id": "swe/inikit-value-delimiters"})
    >>> obs, reward, terminated, truncated, info = env.step("submit")
    >>> info["swe"]["resolution"], reward
    ('NO', 0.0)

The repository tools are read here because `codegym.edits.parse` rejects tool names
it does not know; calls that mix them with edit tools in one JSON value are
refused with a message saying to send them separately.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

import gymnasium as gym

from codegym.tasks import repo as swe
from codegym.edits.parse import ParsedAction, parse_action, view_file
from codegym.envs import feedback as fb
from codegym.envs.code_env import CodeEnv

__all__ = ["SWEEnv", "RepoCall", "extract_repo_tools", "REPO_TOOLS", "ENV_KWARGS"]

#: keyword arguments `gym.make("codegym/SWE-v0")` should pass (see codegym.envs.ENV_IDS)
ENV_KWARGS = {"suite": "swe", "max_turns": 10}

#: name -> {argument: (accepted types, required)}
REPO_TOOLS: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "view_file": {"path": ((str,), True), "start_line": ((int,), False), "end_line": ((int,), False)},
    "list_files": {"path": ((str,), False)},
    "search": {"pattern": ((str,), True), "path": ((str,), False)},
    "run_tests": {"tests": ((str, list), False)},
}
_TOOL_HELP = """\
Repository tools (JSON tool calls, bare, in a ```json block or in <tool_call></tool_call> tags):
- view_file(path, start_line?, end_line?): show a file with line numbers (or a range); a folder lists its files
- list_files(path?): the files under a folder (default: the whole repository)
- search(pattern, path?): lines matching a regular expression (Python syntax; invalid ones are searched as plain text)
- run_tests(tests?): run the named tests (ids as the test command accepts them, e.g. "tests.test_x.Case.test_y") on the current files; without tests, run the existing test suite
Example: {"name": "search", "arguments": {"pattern": "def parse", "path": "src"}}"""
MAX_LISTING = 400
MAX_MATCHES = 100
MAX_TEST_OUTPUT = 3000
_NOTHING = ("no edit, tool call or submit was found", "the action is empty")
_FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})([^\n`]*)$", re.M)
_TAG_RE = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)
#: a bare line that starts a tool-call object (or a list of them)
_JSON_LINE_RE = re.compile(r'^[ \t]*(?:\[[ \t]*)?\{[ \t]*"(?:name|type|function|tool_calls)"', re.M)
MAX_REGIONS = 64
_JSON_LANGS = {"", "json", "jsonc", "json5", "tool_call", "tool-call", "tool", "tools", "function", "function_call"}
_DECODER = json.JSONDecoder(strict=False)
_TEST_ID_RE = re.compile(r"^[^\s-][^\s]*$")


@dataclass(frozen=True)
class RepoCall:
    """A repository tool call found in the action text (``text[start:end]``)."""

    name: str
    arguments: dict[str, Any]
    start: int
    end: int


# --------------------------------------------------------------------------- reading tool calls


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


# --------------------------------------------------------------------------- the env


class SWEEnv(CodeEnv):
    """Repository tasks: the workspace is a git working tree of the task's repository.

    Args (besides `CodeEnv`'s): defaults ``suite="swe"``, ``max_turns=10``,
    ``reward="binary"`` (1 = resolved). Every task must be ``kind: repo``.
    """

    def __init__(self, suite: Any = "swe", *, max_turns: int = 10, reward: str = "binary", **kwargs: Any):
        super().__init__(suite, max_turns=max_turns, reward=reward, **kwargs)
        bad = [t.id for t in self.tasks if t.kind != "repo"]
        if bad:
            raise ValueError(f"SWEEnv runs repo tasks only; not repo: {', '.join(bad[:5])}")
        self.base: swe.BaseTree | None = None

    # ------------------------------------------------------------------ helpers

    def _judge_files(self) -> dict[str, str | None]:
        """The workspace as an overlay of the base (files the agent deleted are None)."""
        files: dict[str, str | None] = dict(self.workspace.files)
        for p in self.base.files:
            if p not in files:
                files[p] = None
        return files

    def _judge(self, split: str, early_exit: bool, timing: bool | str = False) -> dict:
        from codegym.judge.run import judge
        report = judge(self.task, self._judge_files(), sandbox=self.sandbox, split=split,
                       early_exit=early_exit, language=self.language)
        return report.to_dict()

    def _prompt(self) -> str:
        task = self.task
        paths = self.workspace.list()
        listing = "\n".join(paths[:MAX_LISTING])
        if len(paths) > MAX_LISTING:
            listing += f"\n... ({len(paths) - MAX_LISTING} more; use list_files)"
        data = swe.swe_data(task)
        command = " ".join(data.test_command) if data.test_command else "(none)"
        example = next((p for p in paths if p.endswith(".py") and not p.startswith("tests")), paths[0] if paths else "x")
        how = {"code_block": f"a fenced code block whose info string names the file (```python path={example}), "
                             "replacing the whole file",
               "unified_diff": "a unified diff in a ```diff block (`--- a/<path>` / `+++ b/<path>` headers; "
                               "a `git diff` works)",
               "search_replace": "SEARCH/REPLACE blocks (the file path on the line above `<<<<<<< SEARCH`)",
               "tool_call": "the tools write_file(path, content), str_replace(path, old_str, new_str), "
                            "insert(path, line, text)"}
        ways = [text for fmt, text in how.items() if fmt in self.formats]
        edits = ("Edit files with " + "; or ".join(ways) + ". Every edit names its file.") if ways else \
            "No edit format is accepted in this environment."
        turns = (f"You have {self.max_turns} turn(s). "
                 + ("After each edit the existing tests run and you see the result. " if self.feedback != "none" else "")
                 + "A line containing only `submit` (or the submit() tool) ends the episode: hidden tests then decide "
                   "whether the issue is resolved, and existing tests must keep passing."
                 + (" The last turn submits automatically." if self.auto_submit else ""))
        parts = [f"# {task.title or task.id}",
                 f"Task `{task.id}`: resolve the issue below in the repository (language: {task.language}).",
                 "", "## Issue", task.statement.strip(), "",
                 f"## Repository ({len(paths)} files)", listing, "",
                 f"Tests run from the repository root with: `{command}`", "",
                 "## How to answer", edits, "", *([_TOOL_HELP, ""] if "tool_call" in self.formats else []), turns]
        return "\n".join(parts)

    def _list(self, path: str | None) -> str:
        files = self.workspace.list()
        if path:
            prefix = path.strip("/") + "/"
            if path.strip("/") in ("", "."):
                prefix = ""
            files = [p for p in files if p.startswith(prefix)]
            if not files:
                return f"{path}: no files there"
        shown = files[:MAX_LISTING]
        more = f"\n... ({len(files) - MAX_LISTING} more)" if len(files) > MAX_LISTING else ""
        return f"{len(files)} file(s):\n" + "\n".join(shown) + more

    def _search(self, pattern: str, path: str | None) -> str:
        try:
            rx = re.compile(pattern)
            how = "regex"
        except re.error:
            rx = re.compile(re.escape(pattern))
            how = "plain text (not a valid regular expression)"
        prefix = "" if not path or path.strip("/") in ("", ".") else path.strip("/")
        hits: list[str] = []
        total = 0
        for p, text in sorted(self.workspace.files.items()):
            if prefix and p != prefix and not p.startswith(prefix + "/"):
                continue
            for n, line in enumerate(text.split("\n"), 1):
                if rx.search(line):
                    total += 1
                    if len(hits) < MAX_MATCHES:
                        hits.append(f"{p}:{n}: {line.strip()[:200]}")
        if not hits:
            return f"no match for {pattern!r} ({how})" + (f" under {path}" if prefix else "")
        more = f"\n... ({total - MAX_MATCHES} more matches)" if total > MAX_MATCHES else ""
        return f"{total} match(es) for {pattern!r} ({how}):\n" + "\n".join(hits) + more

    def _view(self, args: Mapping[str, Any]) -> str:
        path = str(args.get("path", "")).strip()
        files = self.workspace.files
        if path not in files:
            stripped = path.strip("/")
            if stripped in ("", ".") or any(p.startswith(stripped + "/") for p in files):
                return self._list(stripped or None)
        return view_file(files, path, args.get("start_line"), args.get("end_line"))

    def _run_named_tests(self, tests: Any) -> str:
        ids = tests.split() if isinstance(tests, str) else [str(t) for t in tests]
        bad = [t for t in ids if not _TEST_ID_RE.match(t)]
        if bad:
            return f"not test ids: {', '.join(map(repr, bad[:5]))} (ids cannot start with '-' or hold spaces)"
        data = swe.swe_data(self.task)
        if not data.test_command:
            return "this task has no test command"
        # the current files as they are (the agent's own tests included): exploration, not grading
        tree = self.workspace.files
        command = swe.with_setup([*data.test_command, *ids], data.setup)
        run = swe.run_command(self.sandbox, tree, command, self.task.limits)
        if run.status != "ok":
            return f"the test run failed: {run.status}: {run.message}"
        res = swe.parse_results(run.output, run.junit)
        lines = []
        if ids:
            for t in ids:
                st = res.status_of(t)
                lines.append(f"{st or 'not found in the report'}  {t}")
        counts: dict[str, int] = {}
        for s in res.statuses.values():
            counts[s] = counts.get(s, 0) + 1
        head = (f"exit code {run.rc}; " + (", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no test results")
                + ("" if res.complete else "; the run did not finish"))
        return "\n".join([head, *lines, "output:", fb.truncate(run.output, MAX_TEST_OUTPUT)])

    # ------------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        gym.Env.reset(self, seed=seed)
        options = dict(options or {})
        task = self._pick_task(options)
        if self.workspace is not None:
            self.workspace.close()
            self.workspace = None
        self.base = swe.base_tree(task)
        self.task = swe.with_reference(task)
        self.language = task.language
        self.main_file = ""  # a repository has no main file: every edit names its path
        self.workspace = self.base.new_workspace()
        self.turn = 0
        self.done = False
        self.last_report = None
        self._cumulative_diff = ""
        info = self._base_info()
        info["swe"] = {"base_digest": self.base.digest, "source": self.base.source.describe()}
        return self._observe(self._prompt()), info

    def step(self, action: str):
        action, info = self._begin_step(action)
        before = info["files"]
        calls: list[RepoCall] = []
        rest, tool_error = action, None
        if "tool_call" in self.formats:
            calls, rest, tool_error = extract_repo_tools(action)
        if tool_error is not None:
            parsed = ParsedAction(error=tool_error)
        elif calls and not rest.strip():
            parsed = ParsedAction(formats_used=["tool_call"])
        else:
            parsed = parse_action(rest, before, "", self.formats)
            if calls and parsed.error and parsed.error.startswith(_NOTHING):
                parsed = ParsedAction(formats_used=["tool_call"])
        info["edits"] = self._edits_info(parsed, calls)
        lines: list[str] = [f"## Turn {self.turn}/{self.max_turns}"]
        error = self._apply_edits(parsed, action, before, info, lines)
        run_suite = False
        if error is None:
            for call in sorted([*parsed.tool_calls, *calls], key=lambda t: t.start):
                args = call.arguments
                if call.name == "view_file":
                    lines.append(self._view(args))
                elif call.name == "list_files":
                    lines.append(self._list(args.get("path")))
                elif call.name == "search":
                    lines.append(self._search(args["pattern"], args.get("path")))
                elif call.name == "run_tests":
                    if self.feedback == "none":
                        lines.append("run_tests: no tests run before submission in this environment (feedback='none').")
                    elif args.get("tests"):
                        lines.append(f"Tests {args['tests']}:\n" + self._run_named_tests(args["tests"]))
                    else:
                        run_suite = True
        submit = (error is None and parsed.submit) or (self.auto_submit and self.turn >= self.max_turns)
        reward = 0.0
        terminated = truncated = False
        if submit:
            report = self._judge("hidden", self.early_exit)
            self.last_report = report
            res = swe.resolution(self.task, report)
            info["judge"] = report
            info["submitted"] = True
            info["swe"] = res.to_dict()
            correct = 1.0 if res.resolved else 0.0
            shaped = res.f2p_fraction if res.p2p_fraction == 1.0 else 0.0
            reward = correct if self.reward_mode == "binary" else shaped
            info["reward_components"] = {"pass_fraction": shaped, "correct": correct,
                                         "progress": report.get("progress", 0.0), "resolved": correct}
            lines.append(f"Submitted. {res.summary()}.")
            lines.append("The episode is over.")
            terminated = True
        else:
            if (run_suite or (self.feedback != "none" and info["diff"])) and self.task.cases("public"):
                report = self._judge("public", True)
                self.last_report = report
                info["judge"] = report
                lines.append(fb.judge_feedback(report, "public", "full" if run_suite else self.feedback))
            if self.turn >= self.max_turns:
                truncated = True
                lines.append("No turns left; the episode ends without a submission.")
            else:
                left = self.max_turns - self.turn
                lines.append(f"Turns left: {left}."
                             + (" The next turn submits automatically." if left == 1 and self.auto_submit else ""))
        self.done = terminated or truncated
        if self.done and self.sampler is not None and hasattr(self.sampler, "update"):
            self.sampler.update(self.task.id, reward)
        return self._observe("\n".join(lines)), float(reward), terminated, truncated, info
