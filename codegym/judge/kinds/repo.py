"""The judge's ``repo`` kind: SWE-bench's grading, hardened (docs/swe.md, "Grading").

- `grading_tree`, `restore_paths`: the candidate's files over the base repository, the
  task's tests, test runner hooks and configuration restored, the test patch applied
  (hidden split), files that would run around the tests dropped.
- `run_env`, `RunEnv`, `repo_image`: what the tests run with (the repository's built
  environment, variables, setup commands; the Docker backend's image of that environment).
- `run_commands`, `run_command`, `CommandRun`: test commands on one checkout in the sandbox
  (setup once); a missing test tool is a ``sandbox_error`` that names it.
- `evaluate_case`, `run_repo_cases`: a `CaseResult` per case from the run's report
  (`codegym.judge.logs.pytest`); a listed test passes only with an explicit pass in a
  finished run.
- `resolution`, `Resolution`, `resolution_message`: FULL / PARTIAL / NO from a hidden report.
"""

from __future__ import annotations

import atexit
import configparser
import fnmatch
import json
import sys
import threading
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from codegym.judge import harness
from codegym.judge.kinds.common import case_limits
from codegym.judge.logs.pytest import django_to_dotted, parse_results
from codegym.judge.logs.swebench import OfficialParserMissing
from codegym.judge.report import CaseResult, clip, exec_message, tail
from codegym.sandbox import make_sandbox
from codegym.sandbox.envbuild import EnvBuildError
from codegym.sandbox.envimage import env_image, instance_image
from codegym.sandbox.repoenv import (
    InstanceEnv,
    PythonEnv,
    build_env,
    build_instance,
    env_root,
    find_env,
    find_instance,
)
from codegym.sandbox.types import Sandbox
from codegym.tasks.patches import SWEError, apply_patch, patch_paths
from codegym.tasks.repo import FAIL_TO_PASS, PASS_TO_PASS, base_tree, env_spec, repo_install, swe_data
from codegym.tasks.schema import Task

# =========================================================================== grading tree

#: added files that would run before or around the tests
_HIJACK_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
#: folders that hold tests, not the code under test
_TEST_DIRS = frozenset({"tests", "test", "testing"})


def _shadows_stdlib(path: str) -> bool:
    parts = path.split("/")
    if len(parts) == 1 and path.endswith(".py"):
        return path[:-3] in sys.stdlib_module_names
    return len(parts) == 2 and parts[1] == "__init__.py" and parts[0] in sys.stdlib_module_names


def file_of_test_id(test_id: str, known: Iterable[str]) -> str | None:
    """The file that defines a test id (pytest node id, junit's ``dotted.module::name``,
    unittest dotted id or Django form); None when no file of `known` is it."""
    head = test_id.split("::", 1)[0]
    if head.endswith(".py"):
        return head
    known = set(known)
    if head in known:  # a test file of another kind (docs/usage.rst::usage.rst)
        return head
    dotted = head if "::" in test_id else (django_to_dotted(test_id) or test_id)
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        stem = "/".join(parts[:k])
        for cand in (f"{stem}.py", f"{stem}/__init__.py"):
            if cand in known:
                return cand
    return None


def restore_paths(task: Task, base: Mapping[str, Any], tree: Mapping[str, Any]) -> set[str]:
    """Paths graded with the task's content, not the candidate's (docs/swe.md, Grading, step 2)."""
    data = swe_data(task)
    out: set[str] = set()
    test_patch_files: set[str] = set()
    if data.test_patch:
        modified, added, removed = patch_paths(data.test_patch)
        test_patch_files = modified | added | removed
        out |= test_patch_files
    known = set(base) | test_patch_files
    for tid in (*data.fail_to_pass, *data.pass_to_pass):
        f = file_of_test_id(tid, known)
        if f is not None:
            out.add(f)
    for f in list(out):  # the test packages the test modules are imported through (tests/__init__.py):
        parts = f.split("/")[:-1]  # not a source package's (toolz/__init__.py of toolz/tests/...)
        for k in range(1, len(parts) + 1):
            init = "/".join(parts[:k]) + "/__init__.py"
            if init in base and any(d in _TEST_DIRS for d in parts[:k]):
                out.add(init)
    if data.test_files:
        for p in set(base) | set(tree):
            if any(fnmatch.fnmatchcase(p, g) for g in data.test_files):
                out.add(p)
    # the test runner's own hooks and configuration: every conftest.py (a hook can turn
    # every report into a pass), and a pytest section that changed in a way that can
    # load code or change what is collected (addopts = -p plugin, pythonpath, ...)
    for p in set(base) | set(tree):
        name = p.rsplit("/", 1)[-1]
        if name == "conftest.py":
            out.add(p)
        elif name in _RUNNER_CONFIGS and _pytest_section(tree.get(p), name) != _pytest_section(base.get(p), name):
            out.add(p)
    return out


#: files that may configure pytest, and how to read them
_RUNNER_CONFIGS = {"pytest.ini": "ini", ".pytest.ini": "ini", "tox.ini": "ini", "setup.cfg": "ini",
                   "pyproject.toml": "toml"}
#: pytest settings that cannot make a failing test pass (their changes are the candidate's)
_BENIGN_PYTEST_KEYS = frozenset({"filterwarnings", "markers", "minversion", "doctest_optionflags",
                                 "junit_family", "junit_suite_name", "junit_logging", "log_cli",
                                 "log_cli_level", "log_cli_format", "log_level", "log_format",
                                 "log_date_format", "console_output_style", "empty_parameter_set_mark"})


def _pytest_section(content: str | bytes | None, name: str):
    """The pytest settings of a configuration file that are not `_BENIGN_PYTEST_KEYS`
    (None when it has none; unparseable content is returned as is, so any change to
    it counts)."""
    if content is None:
        return None
    text = content.decode("utf-8", "surrogateescape") if isinstance(content, bytes) else content
    try:
        if _RUNNER_CONFIGS[name] == "toml":
            secs = tomllib.loads(text).get("tool", {}).get("pytest", {})
            secs = secs.get("ini_options", secs) if isinstance(secs, dict) else secs
        else:
            cp = configparser.RawConfigParser(strict=False, interpolation=None)
            cp.read_string(text)
            secs = {k: v for sec in ("pytest", "tool:pytest") if cp.has_section(sec) for k, v in cp.items(sec)}
        if isinstance(secs, dict):
            secs = {k: v for k, v in secs.items() if k not in _BENIGN_PYTEST_KEYS}
        return json.dumps(secs, sort_keys=True, default=str) if secs else None
    except Exception:  # noqa: BLE001 -- unreadable config: compare the raw text
        return text


def _as_bytes(v: str | bytes) -> bytes:
    return v if isinstance(v, bytes) else v.encode("utf-8", "surrogateescape")


def grading_tree(task: Task, files: Mapping[str, str | bytes | None], split: str = "hidden",
                 generated: Mapping[str, str | bytes] | None = None) -> tuple[dict[str, str | bytes], list[str]]:
    """(the tree the tests of `split` run on, notes for the report).

    `files` overlays the task's base repository (a None value deletes a file) and the files
    its environment's install generated there (`generated`: egg-info, ``_version.py`` ...,
    part of the base as the harness's checkout has them); a task without ``repo`` has no
    base, `files` is then the whole tree and nothing is restored."""
    notes: list[str] = []
    has_repo = getattr(task, "repo", None) is not None
    base: Mapping[str, str | bytes] = base_tree(task).files if has_repo else {}
    if has_repo and generated:
        base = {**base, **generated}
    tree: dict[str, str | bytes] = dict(base)
    for p, c in files.items():
        if c is None:
            tree.pop(p, None)
        else:
            tree[p] = c
    if not has_repo:
        return tree, notes
    data = swe_data(task)
    restore = restore_paths(task, base, tree)
    changed = sorted(p for p in restore if tree.get(p) != base.get(p))
    for p in restore:
        if p in base:
            tree[p] = base[p]
        else:
            tree.pop(p, None)
    if changed:
        notes.append(f"test files restored from the task: {', '.join(changed[:10])}"
                     + (" ..." if len(changed) > 10 else ""))
    patch_added: set[str] = set()
    if split in ("hidden", "all") and data.test_patch:
        try:
            new = apply_patch({p: (v if isinstance(v, str) else v.decode("utf-8", "surrogateescape"))
                               for p, v in tree.items()}, data.test_patch)
        except SWEError as e:
            raise SWEError(f"task {task.id}: the test patch does not apply to the base: {e}") from None
        for p, c in new.items():
            if c is None:
                tree.pop(p, None)
            else:
                tree[p] = c
                if p not in base:
                    patch_added.add(p)
    dropped = sorted(p for p in tree if p not in base and p not in patch_added
                     and (p.rsplit("/", 1)[-1] in _HIJACK_NAMES or p.endswith(".pth") or _shadows_stdlib(p)))
    for p in dropped:
        del tree[p]
    if dropped:
        notes.append(f"added files that would run around the tests were dropped: {', '.join(dropped)}")
    return tree, notes


# =========================================================================== running


@dataclass
class CommandRun:
    """One test command run in the sandbox.

    status   ok (the command ran; see rc) | timeout | runtime_error | memory_limit |
             output_limit | sandbox_error (the runner itself failed, or a test tool is missing)
    rc       the command's exit code ("timeout" / "error" / "missing" from the runner)
    output   its stdout+stderr (last 2 MiB); junit: the collected junit XML or None
    """

    status: str
    rc: Any = None
    output: str = ""
    junit: str | None = None
    message: str = ""
    cpu_s: float = 0.0
    wall_s: float = 0.0
    memory_mb: float = 0.0


@dataclass(frozen=True)
class RunEnv:
    """What the test commands of a task run with: directories put first on PATH, environment
    variables, setup commands (once per checkout), the official log parser if any."""

    path: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    setup: tuple[str, ...] = ()
    parser: str | None = None
    describe: str = ""
    files: Mapping[str, bytes] = field(default_factory=dict)
    note: str | None = None
    layer: Any = None


def _backend(sandbox: Sandbox | None) -> str:
    """Which build system a sandbox's environments come from: "docker" or "local"."""
    return "docker" if sandbox is not None and sandbox.isolation == "docker" else "local"


def run_env(task: Task, build: bool = True, sandbox: Sandbox | None = None) -> RunEnv:
    """The `RunEnv` of a repo task: its environment (`codegym.tasks.repo.env_spec`, and the
    repository installed at the base commit when the task says how, `repo_install`; built
    now when `build` and missing, inside the sandbox of `sandbox`'s backend), its variables,
    setup commands and the files the install generated in the checkout. Raises
    EnvBuildError (or SWEError for a bad recipe) when the environment cannot be had."""
    data = swe_data(task)
    spec = env_spec(task)
    out = RunEnv(setup=tuple(data.setup), parser=data.log_parser)
    env: dict[str, str] = {}
    if spec is not None:
        backend = _backend(sandbox)
        pyenv = build_env(spec, backend) if build else find_env(spec, backend)
        layer: PythonEnv | InstanceEnv | None = pyenv
        inst = repo_install(task) if pyenv is not None else None
        if pyenv is not None and inst is not None:
            layer = build_instance(pyenv, inst) if build else find_instance(pyenv, inst)
        if layer is not None:
            env = layer.env_vars()
            out = RunEnv(tuple(layer.path_dirs()), env, out.setup, out.parser, layer.path.name,
                         dict(getattr(layer, "files", {}) or {}), layer.system.note, layer)
    env.update(data.env)
    return RunEnv(out.path, env, out.setup, out.parser, out.describe, out.files, out.note, out.layer)


_SYSTEM_SANDBOXES: dict[tuple, Any] = {}
_SYSTEM_LOCK = threading.Lock()


def tests_sandbox(sandbox: Sandbox, tenv: RunEnv):
    """The sandbox a task's tests run in: `sandbox` when it runs on the system its environment
    was built on (the docker backend's per-task image carries that system), else a sandbox of
    this process on that system -- the environment's Python root, or this host's own --
    made once per system and closed at exit."""
    system = getattr(tenv.layer, "system", None)
    if system is None or sandbox is None or _backend(sandbox) == "docker" or sandbox.remote:
        return sandbox
    root = sandbox.root
    if (str(root.path) if root is not None else "/") == system.root:
        return sandbox
    key = ("local", system.root, str(env_root()))  # (its slots bind the environments' folder)
    with _SYSTEM_LOCK:
        sb = _SYSTEM_SANDBOXES.get(key)
        if sb is None or sb.closed:
            python = None if system.root == "/" else system.version
            sb = make_sandbox("local", python=python, workers=sandbox.workers)
            atexit.register(sb.close)
            _SYSTEM_SANDBOXES[key] = sb
    return sb


def repo_image(task: Task, sandbox: Sandbox) -> str | None:
    """The Docker backend's image of a task with an environment (`instance_image` /
    `env_image`: built locally from the same key, FROM the system's image); None for other
    tasks or backends."""
    if getattr(task, "repo", None) is None or not sandbox.task_images or env_spec(task) is None:
        return None
    layer = run_env(task, sandbox=sandbox).layer
    if layer is None:
        return None
    return instance_image(layer) if hasattr(layer, "files") else env_image(layer)


def _junit_path(command: Sequence[str]) -> str | None:
    for j, a in enumerate(command):
        if a.startswith("--junitxml="):
            return a.split("=", 1)[1]
        if a == "--junitxml" and j + 1 < len(command):
            return command[j + 1]
    return None


def with_setup(command: Sequence[str], setup: Sequence[str]) -> list[str]:
    """`command` preceded by the setup shell commands (one ``sh -c``; a failing setup
    command stops the run). `run_commands` runs setup once for several commands instead."""
    if not setup:
        return list(command)
    script = "set -e\n" + "\n".join(setup) + '\nexec "$@"\n'
    return ["sh", "-c", script, "codegym-setup", *command]


def _exec_status(res) -> str:
    return res.status if res.status in ("timeout", "memory_limit", "output_limit", "sandbox_error") \
        else "runtime_error"


def run_commands(sandbox: Sandbox, tree: Mapping[str, str | bytes], commands: Sequence[Sequence[str]], limits,
                 tenv: RunEnv | None = None) -> list[CommandRun]:
    """Run `commands` in order, in ONE fresh sandbox run directory holding `tree` (the
    checkout; cwd = its root): the setup commands of `tenv` first, once. A `CommandRun`
    per command; every command gets `limits`' wall time."""
    tenv = tenv or RunEnv()
    n = len(commands)
    build = sandbox.build("python", {"main.py": harness.COMMAND_RUNNER})
    if not build.ok:
        msg = exec_message(build.result) if build.result else "build failed"
        return [CommandRun("sandbox_error", message=msg) for _ in range(n)]
    extra = {f"ws/{p}": _as_bytes(c) for p, c in tree.items()
             if isinstance(p, str) and not p.startswith("/") and ".." not in p.split("/")}
    cmds = [{"argv": list(c), "collect": [j] if (j := _junit_path(c)) else []} for c in commands]
    body = json.dumps({"commands": cmds, "setup": list(tenv.setup), "env": dict(tenv.env),
                       "path": list(tenv.path), "timeout": limits.wall()})
    wall = limits.wall() * (n + (1 if tenv.setup else 0)) + 5
    res = sandbox.run(build, stdin=body, limits=limits.replace(wall_s=wall), extra_files=extra)
    stats: dict[str, Any] = dict(cpu_s=res.cpu_s, wall_s=res.wall_s, memory_mb=res.max_rss_mb)  # (of every run)
    payload = None
    for line in reversed(res.stdout.split("\n")):
        if line.startswith("@cgcmd "):
            try:
                payload = json.loads(line[len("@cgcmd "):])
            except ValueError:
                payload = None
            break
    if payload is None:
        msg = exec_message(res) or "the test runner gave no report"
        return [CommandRun(res.status if res.status != "ok" else "runtime_error", message=msg, **stats)
                for _ in range(n)]
    setup = payload.get("setup")
    if setup is not None and setup.get("rc") != 0:
        rc, said = setup.get("rc"), str(setup.get("output", ""))
        status = {"missing": "sandbox_error", "timeout": "timeout", "error": "sandbox_error"}.get(rc, "runtime_error")
        why = "a setup command's program is not installed in the sandbox" if rc == "missing" else \
            f"the setup commands failed (exit {rc})"
        return [CommandRun(status, rc=rc, output=said, message=f"{why}: {tail(said, 300)}", **stats)
                for _ in range(n)]
    out: list[CommandRun] = []
    for cmd, r in zip(cmds, payload.get("runs", []) + [None] * n):
        if r is None:
            out.append(CommandRun("sandbox_error", message="the test runner stopped before this command", **stats))
            continue
        run = CommandRun("ok", rc=r.get("rc"), output=str(r.get("output", "")), **stats)
        run.junit = (r.get("files") or {}).get(cmd["collect"][0]) if cmd["collect"] else None
        if run.rc == "timeout":
            run.status, run.message = "timeout", "the test command timed out"
        elif run.rc in ("missing", "error"):
            run.status, run.message = "sandbox_error", run.output[:500]
        out.append(run)
    return out[:n]


def run_command(sandbox: Sandbox, tree: Mapping[str, str | bytes], command: Sequence[str], limits,
                tenv: RunEnv | None = None) -> CommandRun:
    """Run one `command` in a fresh sandbox run directory holding `tree` (`run_commands`)."""
    return run_commands(sandbox, tree, [command], limits, tenv)[0]


# =========================================================================== cases


def _case_status_lines(statuses: Mapping[str, str]) -> str:
    """The `CaseResult.diff` of a repo case: one ``<status>  <test id>`` line per listed
    test that did not pass (read back by `resolution`)."""
    return "\n".join(f"{s}  {t}" for t, s in statuses.items() if s != "passed")


def evaluate_case(wanted: Sequence[str], run: CommandRun, parser: str | None = None
                  ) -> tuple[bool, float, str, dict[str, str]]:
    """(passed, score, message, statuses of the listed tests) of one case on one run."""
    res = parse_results(run.output, run.junit, parser)
    statuses: dict[str, str] = {}
    problems: list[str] = []  # the causes first: the message is clipped
    if not res.complete:
        problems.append("the test run did not finish (no final summary): no test counts as passed")
    if res.errors:
        problems.append("errors outside tests: " + "; ".join(e[:120] for e in res.errors[:3])
                        + (" ..." if len(res.errors) > 3 else ""))
    if wanted:
        for t in wanted:
            st = res.status_of(t, parser)
            if st is None:
                st = "missing"
            elif not res.complete:
                st = "incomplete"
            statuses[t] = st
        bad = [t for t, s in statuses.items() if s != "passed"]
        ok = not bad
        score = 1.0 - len(bad) / len(wanted)
        if bad:
            shown = "; ".join(f"{t}: {'missing from the report' if statuses[t] == 'missing' else statuses[t]}"
                              for t in bad[:4])
            problems.append(f"{len(bad)} of {len(wanted)} listed test(s) did not pass: {shown}"
                            + (" ..." if len(bad) > 4 else ""))
    else:
        ran = res.ran if res.ran is not None else len(res.statuses)
        ok = run.rc == 0 and res.complete and ran > 0 and res.failures == 0
        score = 1.0 if ok else 0.0
        if not ok:
            problems.append(f"exit code {run.rc}, {res.failures} failed, {ran} ran")
    message = "" if ok else clip("\n".join(problems) + "\n" + tail(run.output, 400))
    return ok, score, message, statuses


def run_repo_cases(task: Task, files: Mapping[str, Any], cases: Sequence[Any], sandbox: Sandbox,
                   early_exit: bool) -> list:
    """The judge's ``repo`` kind: a `CaseResult` (or None: not run) per case.

    The cases of one split run on one checkout: its setup commands once, then each
    distinct command once (cases that share a command share its run). A case passes when
    every listed test passed (score: the fraction that did), or, without a list, when the
    command exited 0 after running at least one test with no failure."""
    out: list[Any] = [None] * len(cases)
    try:
        tenv = run_env(task, sandbox=sandbox)
        sandbox = tests_sandbox(sandbox, tenv)
    except (EnvBuildError, SWEError, OSError) as e:
        msg = f"the repository's test environment could not be built: {e}"
        return [CaseResult(status="sandbox_error", message=msg[:1500], index=c.index, name=c.name, split=c.split,
                           weight=c.weight) for c in cases]
    trees: dict[str, tuple[dict, list[str]] | SWEError] = {}
    runs: dict[tuple, CommandRun] = {}
    for split in dict.fromkeys(c.split for c in cases):
        try:
            grading = grading_tree(task, files, split, tenv.files)
        except SWEError as e:
            trees[split] = e
            continue
        trees[split] = grading
        groups: dict[Any, list[tuple[str, ...]]] = {}
        for c in cases:
            if c.split == split:
                cmds = groups.setdefault(case_limits(task, c), [])
                if tuple(c.command or ()) not in cmds:
                    cmds.append(tuple(c.command or ()))
        for limits, cmds in groups.items():
            for cmd, run in zip(cmds, run_commands(sandbox, grading[0], cmds, limits, tenv)):
                runs[(split, cmd, limits)] = run
    for i, c in enumerate(cases):
        base = dict(index=c.index, name=c.name, split=c.split, weight=c.weight)
        tree = trees[c.split]
        if isinstance(tree, SWEError):
            out[i] = CaseResult(status="sandbox_error", message=str(tree), **base)
        else:
            run = runs[(c.split, tuple(c.command or ()), case_limits(task, c))]
            base.update(time_s=run.cpu_s, wall_s=run.wall_s, memory_mb=run.memory_mb)
            if run.status != "ok":
                out[i] = CaseResult(status=_exec_status(run), message=run.message, **base)
            else:
                try:
                    ok, score, message, statuses = evaluate_case(list(c.tests or []), run, tenv.parser)
                except OfficialParserMissing as e:
                    out[i] = CaseResult(status="sandbox_error", message=str(e), **base)
                    continue
                if tree[1] and not ok:
                    message = (message + "\nnote: " + "; ".join(tree[1]))[:1200]
                out[i] = CaseResult(status="passed" if ok else "wrong_answer", score=score, message=message,
                                    diff=_case_status_lines(statuses), **base)
        if tenv.note:  # the Python asked for was not had: every case says which one ran
            out[i].message = (out[i].message + "\n" if out[i].message else "") + f"note: {tenv.note}"
        if early_exit and not out[i].passed:
            break
    return out


# =========================================================================== resolution


@dataclass
class Resolution:
    """SWE-bench's verdict on a hidden-split report: status FULL | PARTIAL | NO, and the
    status of every FAIL_TO_PASS and PASS_TO_PASS test."""

    status: str
    fail_to_pass: dict[str, str] = field(default_factory=dict)
    pass_to_pass: dict[str, str] = field(default_factory=dict)

    @property
    def resolved(self) -> bool:
        return self.status == "FULL"

    @staticmethod
    def _count(d: Mapping[str, str]) -> tuple[int, int]:
        return sum(1 for s in d.values() if s == "passed"), len(d)

    @property
    def f2p_fraction(self) -> float:
        a, n = self._count(self.fail_to_pass)
        return a / n if n else 1.0

    @property
    def p2p_fraction(self) -> float:
        a, n = self._count(self.pass_to_pass)
        return a / n if n else 1.0

    def summary(self) -> str:
        (a, n), (b, m) = self._count(self.fail_to_pass), self._count(self.pass_to_pass)
        return f"resolution {self.status}: {FAIL_TO_PASS} {a}/{n}, {PASS_TO_PASS} {b}/{m}"

    def to_dict(self) -> dict:
        return {"resolution": self.status, "resolved": self.resolved,
                "fail_to_pass": dict(self.fail_to_pass), "pass_to_pass": dict(self.pass_to_pass),
                "summary": self.summary()}


def _statuses_from_case(tests: Sequence[str], cr: Mapping[str, Any] | Any | None) -> dict[str, str]:
    get = (lambda k: cr.get(k)) if isinstance(cr, Mapping) else (lambda k: getattr(cr, k, None))
    if cr is None:
        return {t: "skipped" for t in tests}
    status = get("status")
    if status == "passed":
        return {t: "passed" for t in tests}
    if status != "wrong_answer":  # timeout, runtime_error, skipped, sandbox_error
        return {t: str(status) for t in tests}
    listed = {}
    for line in (get("diff") or "").splitlines():
        st, _, tid = line.partition("  ")
        if tid:
            listed[tid] = st
    if not listed:  # failed as a whole (a command with no listed tests, errors outside tests ...)
        return {t: "failed" for t in tests}
    return {t: listed.get(t, "passed") for t in tests}


def resolution(task: Task, report) -> Resolution:
    """The `Resolution` of a hidden (or "all") judge report of a repo task (a
    `JudgeReport` or its ``to_dict()``). Tasks without FAIL_TO_PASS / PASS_TO_PASS cases
    count the tests of every hidden case as FAIL_TO_PASS."""
    cases = report["cases"] if isinstance(report, Mapping) else report.cases
    by_name: dict[str | None, Any] = {}
    for cr in cases:
        name = cr.get("name") if isinstance(cr, Mapping) else cr.name
        split = cr.get("split") if isinstance(cr, Mapping) else cr.split
        if split in ("hidden", ""):
            by_name.setdefault(name, cr)
    hidden = task.cases("hidden")
    named = [c for c in hidden if c.name in (FAIL_TO_PASS, PASS_TO_PASS)]
    f2p: dict[str, str] = {}
    p2p: dict[str, str] = {}
    if named:
        for c in named:
            target = f2p if c.name == FAIL_TO_PASS else p2p
            target.update(_statuses_from_case(list(c.tests or []), by_name.get(c.name)))
    else:
        for k, c in enumerate(hidden):
            name = c.name or f"hidden[{k}]"
            tests = list(c.tests or []) or [name]
            f2p.update(_statuses_from_case(tests, by_name.get(name)))
    res = Resolution("NO", f2p, p2p)
    if res.f2p_fraction == 1.0 and res.p2p_fraction == 1.0:
        res.status = "FULL"
    elif 0.0 < res.f2p_fraction < 1.0 and res.p2p_fraction == 1.0:
        res.status = "PARTIAL"
    return res


def resolution_message(task: Task, report: Mapping[str, Any]) -> str:
    """A repo task's report message (`report`: the `JudgeReport` fields as a dict) prefixed
    with its resolution on the hidden split (``resolution FULL|PARTIAL|NO: ...``)."""
    message = report.get("message") or ""
    if report["split"] not in ("hidden", "all") or report["verdict"] == "sandbox_error" and not report["cases"]:
        return message
    summary = resolution(task, report).summary()
    return summary + (f"; {message}" if message else "")
