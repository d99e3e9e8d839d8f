"""`SWEEnv`: repository tasks (``kind: repo``) as episodes -- ``codegym/SWE-v0``.

A `CodeEnv` whose workspace is the task's repository: `reset` gives the episode a
private git working tree copied from the task's pristine base (`new_workspace`), the
prompt shows the issue and the file listing instead of whole files, the repository
tools (`codegym.envs.repo_tools`: ``view_file``, ``list_files``, ``search``,
``run_tests``) are answered here, and ``submit`` grades with
`codegym.judge.kinds.repo` (FAIL_TO_PASS and PASS_TO_PASS, resolution FULL / PARTIAL
/ NO). ``reward="binary"`` (default) is 1 when the issue is resolved;
``"pass_fraction"`` is the FAIL_TO_PASS fraction, 0 when a PASS_TO_PASS test fails.
``info["swe"]`` holds the resolution. docs/environments.md has an example.
"""

from __future__ import annotations

import concurrent.futures
import re
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from codegym.edits.render import view_file
from codegym.edits.workspace import Workspace
from codegym.envs import feedback as fb
from codegym.envs.code_env import CodeEnv
from codegym.envs.episode import make_env, resolve_tasks
from codegym.envs.registration import ENV_IDS
from codegym.envs.repo_tools import REPO_TOOL_HELP, parse_with_repo_tools
from codegym.envs.settings import EpisodeSettings
from codegym.judge.kinds.repo import resolution, run_command, run_env, tests_sandbox
from codegym.judge.logs.pytest import parse_results
from codegym.sandbox.envbuild import EnvBuildError
from codegym.sandbox.types import Sandbox
from codegym.tasks.patches import SWEError
from codegym.tasks.repo import BaseTree, base_tree, swe_data, with_reference
from codegym.tasks.schema import Task
from codegym.tasks.suite import Suite, load_suite

#: keyword arguments `gym.make("codegym/SWE-v0")` passes to `SWEEnv` (codegym.envs.registration.ENV_IDS,
#: without ``reward``, which the entry point `make_swe_env` resolves)
ENV_KWARGS = {k: v for k, v in ENV_IDS["codegym/SWE-v0"].items() if k != "reward"}

MAX_LISTING = 400
MAX_MATCHES = 100
MAX_TEST_OUTPUT = 3000
_TEST_ID_RE = re.compile(r"^[^\s-][^\s]*$")


# --------------------------------------------------------------------------- the workspace

#: the pristine workspace of each base tree (opened once), copied for every episode
_BASE_WORKSPACES: weakref.WeakKeyDictionary[BaseTree, Workspace] = weakref.WeakKeyDictionary()
_BASE_WORKSPACES_LOCK = threading.Lock()


def new_workspace(base: BaseTree) -> Workspace:
    """A private, editable copy of `base` (a `Workspace`, git backend) removed by its ``close()``."""
    with _BASE_WORKSPACES_LOCK:
        pristine = _BASE_WORKSPACES.get(base)
        if pristine is None:
            pristine = _BASE_WORKSPACES[base] = Workspace.from_directory(base.root)
    return pristine.copy()


# --------------------------------------------------------------------------- environments

#: seconds `reset` waits for a task's environment before leaving its build to the background
READY_WAIT_S = 0.1
_PREPARING: dict[tuple, concurrent.futures.Future] = {}
_PREP_LOCK = threading.Lock()
_BUILDER = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="codegym-envbuild")
_REAPER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="codegym-ws-reaper")


def prepare_env(task: Task, sandbox: Sandbox) -> concurrent.futures.Future:
    """A future of the task's `RunEnv` (`run_env`), built in the background when it is not yet:
    one build per task and sandbox at a time; a failed one is tried again by the next call."""
    key = (task.id, task.content_hash, id(sandbox))
    with _PREP_LOCK:
        fut = _PREPARING.get(key)
        if fut is None or (fut.done() and fut.exception() is not None):
            fut = _PREPARING[key] = _BUILDER.submit(run_env, task, True, sandbox)
        return fut


# --------------------------------------------------------------------------- the env


class SWEEnv(CodeEnv):
    """Repository tasks: the workspace is a git working tree of the task's repository.

    Args (`EpisodeEnv`'s): defaults ``suite="swe"`` and `default_settings`
    (``max_turns=10``, ``reward="binary"``: 1 = resolved). Every task must be ``kind:
    repo``; repository tasks are not timed (``timing`` is ignored).
    """

    truncate_tested_turn = True
    default_settings = EpisodeSettings(max_turns=10, reward="binary")

    def __init__(self, suite: Any = "swe", **kwargs: Any):
        super().__init__(suite, **kwargs)
        bad = [t.id for t in self.tasks if t.kind != "repo"]
        if bad:
            raise ValueError(f"SWEEnv runs repo tasks only; not repo: {', '.join(bad[:5])}")
        self.timing = False
        self.base: BaseTree | None = None

    # ------------------------------------------------------------------ hooks

    def _start(self, task: Task, options: Mapping[str, Any]) -> dict[str, Any]:
        if self.workspace is not None:  # removed in the background: a large tree takes seconds
            _REAPER.submit(self.workspace.close)
            self.workspace = None
        self.base = base_tree(task)
        self.task = with_reference(task)
        self.language = task.language
        self.main_file = ""  # a repository has no main file: every edit names its path
        self.workspace = new_workspace(self.base)
        # the repository's test environment: built once per repository, version and packages
        # inside the sandbox (the one step that may use the package registry), the repository
        # installed once per base commit, then shared by every episode. What is not built yet
        # is built in the background while the agent reads the issue (a test run waits for it):
        # the workspace is ready at once
        info = {"base_digest": self.base.digest, "source": self.base.source.describe(), "environment": None}
        fut = prepare_env(self.task, self.sandbox)
        try:
            tenv = fut.result(timeout=READY_WAIT_S)
        except concurrent.futures.TimeoutError:
            info["environment_pending"] = True
        except (EnvBuildError, SWEError, OSError) as e:  # the judge reports it: a sandbox_error, never the agent's
            info["environment_error"] = str(e)[:1000]
        else:
            info["environment"] = tenv.describe or None
            if tenv.note:
                info["environment_note"] = tenv.note
        return {"swe": info}

    def _parse(self, action: str, files: Mapping[str, str]) -> tuple[Any, Sequence[Any]]:
        return parse_with_repo_tools(action, files, self.formats)

    def _tool(self, name: str, args: Mapping[str, Any], lines: list[str]) -> bool:
        if name == "view_file":
            lines.append(self._view(args))
        elif name == "list_files":
            lines.append(self._list(args.get("path")))
        elif name == "search":
            lines.append(self._search(args["pattern"], args.get("path")))
        elif name == "run_tests":
            if self.feedback == "none":
                lines.append("run_tests: no tests run before submission in this environment (feedback='none').")
            elif args.get("tests"):
                lines.append(f"Tests {args['tests']}:\n" + self._run_named_tests(args["tests"]))
            else:
                return True
        return False

    def _score(self, report: dict, info: dict[str, Any]) -> tuple[float, str]:
        res = resolution(self.task, report)
        info["swe"] = res.to_dict()
        correct = 1.0 if res.resolved else 0.0
        shaped = res.f2p_fraction if res.p2p_fraction == 1.0 else 0.0
        info["reward_components"] = {"pass_fraction": shaped, "correct": correct,
                                     "progress": report.get("progress", 0.0), "resolved": correct}
        reward = correct if self.reward_mode == "binary" else shaped
        return reward, f"Submitted. {res.summary()}."

    def _feedback_text(self, report: dict, run_tests: bool) -> str:
        return fb.judge_feedback(report, "public", "full" if run_tests else self.feedback)

    def _judge_files(self) -> dict[str, str | None]:
        """The workspace as an overlay of the base (files the agent deleted are None)."""
        files: dict[str, str | None] = dict(self.workspace.files)
        for p in self.base.files:
            if p not in files:
                files[p] = None
        return files

    # ------------------------------------------------------------------ repository tools and prompt

    def _current_files(self) -> dict[str, str]:
        # nothing edited yet (version 0, undo included): the base's files, already in memory --
        # reading a large checkout back from disk at every reset took seconds
        if self.base is not None and self.workspace is not None and self.workspace.version == 0:
            return dict(self.base.files)
        return self.workspace.files

    def _prompt(self) -> str:
        task = self.task
        paths = sorted(self.base.files) if self.workspace.version == 0 and self.base is not None \
            else self.workspace.list()
        listing = "\n".join(paths[:MAX_LISTING])
        if len(paths) > MAX_LISTING:
            listing += f"\n... ({len(paths) - MAX_LISTING} more; use list_files)"
        data = swe_data(task)
        command = " ".join(data.test_command) if data.test_command else "(none)"
        example = next((p for p in paths if p.endswith(".py") and not p.startswith("tests")),
                       paths[0] if paths else "x")
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
                 + ("After each edit the existing tests run and you see the result. "
                    if self.feedback != "none" else "")
                 + "A line containing only `submit` (or the submit() tool) ends the episode: hidden tests then decide "
                   "whether the issue is resolved, and existing tests must keep passing."
                 + (" The last turn submits automatically." if self.auto_submit else ""))
        parts = [f"# {task.title or task.id}",
                 f"Task `{task.id}`: resolve the issue below in the repository (language: {task.language}).",
                 "", "## Issue", task.statement.strip(), "",
                 f"## Repository ({len(paths)} files)", listing, "",
                 f"Tests run from the repository root with: `{command}`", "",
                 "## How to answer", edits, "", *([REPO_TOOL_HELP, ""] if "tool_call" in self.formats else []), turns]
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
        data = swe_data(self.task)
        if not data.test_command:
            return "this task has no test command"
        # the current files as they are (the agent's own tests included): exploration, not grading
        tenv = run_env(self.task, sandbox=self.sandbox)
        tree = {**tenv.files, **self.workspace.files}
        run = run_command(tests_sandbox(self.sandbox, tenv), tree, [*data.test_command, *ids], self.task.limits, tenv)
        if run.status != "ok":
            return f"the test run failed: {run.status}: {run.message}"
        res = parse_results(run.output, run.junit, tenv.parser)
        lines = []
        if ids:
            for t in ids:
                st = res.status_of(t, tenv.parser)
                lines.append(f"{st or 'not found in the report'}  {t}")
        counts: dict[str, int] = {}
        for s in res.statuses.values():
            counts[s] = counts.get(s, 0) + 1
        head = (f"exit code {run.rc}; "
                + (", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no test results")
                + ("" if res.complete else "; the run did not finish"))
        return "\n".join([head, *lines, "output:", fb.truncate(run.output, MAX_TEST_OUTPUT)])


def make_swe_env(suite: Any = "swe", **kwargs: Any):
    """A `SWEEnv` wrapped in its reward (``reward="suite"`` by default): `make_env`."""
    return make_env(SWEEnv, suite, **kwargs)


def make_suite_env(suite: Any = None, **kwargs: Any):
    """``codegym/Suite-v0``'s entry point: a `SWEEnv` when every task of `suite` (or `tasks=`)
    is a repository task, else a `CodeEnv`, each with its reward (`make_env`). A suite that
    mixes repository tasks with others is refused (they need different episodes)."""
    tasks = resolve_tasks(suite, kwargs.get("tasks"))
    kinds = {t.kind for t in tasks}
    if "repo" in kinds and kinds != {"repo"}:
        bad = [t.id for t in tasks if t.kind == "repo"][:3]
        raise ValueError(f"suite {suite!r} mixes repository tasks ({', '.join(bad)} ...) with other kinds: "
                         "split them into two suites (repository tasks run in codegym/SWE-v0's episodes)")
    cls = SWEEnv if kinds == {"repo"} else CodeEnv
    if suite is not None and not isinstance(suite, Suite) and kwargs.get("tasks") is None:
        suite = load_suite(suite)  # loaded once: the env gets the Suite
    return make_env(cls, suite, **kwargs)
