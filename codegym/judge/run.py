"""The judge: run a task's tests on a workspace and return a `JudgeReport`.

    >>> from codegym.judge.run import judge
    >>> from codegym.tasks.suite import load_suite
    >>> task = load_suite("examples").get("examples/bracket-depth")
    >>> rep = judge(task, task.solution("reference").files, split="hidden")
    >>> rep.verdict, rep.passed == rep.total
    ('accepted', True)

`judge` decides in stages: no code, then code that does not compile (checked in the host
where it can be: `source_verdict`), then the cases run by the task's kind (its runner in
`codegym.judge.kinds.table.KIND_RUNNERS`) and the verdict rule
(`codegym.judge.report.case_verdict`); a verdict decided early is a value (`Decided`), and
the report is built once from it or from the cases. ``timing=True`` also measures an
accepted program on the perf split (`codegym.judge.perf`). docs/judge.md has the rules.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import time
import traceback
from collections.abc import Mapping
from typing import Any

from codegym.judge.checkers import make_checker
from codegym.judge.checkers.values import make_value_checker
from codegym.judge.chunks import measure_split, splits
from codegym.judge.harness import HARNESS_VERSION
from codegym.judge.kinds.repo import repo_image
from codegym.judge.kinds.table import KIND_RUNNERS
from codegym.judge.perf import measure_report
from codegym.judge.protocol import parse_python
from codegym.judge.report import Decided, JudgeReport, case_verdict
from codegym.judge.syntax import precheck
from codegym.judge.testgen import Case, TestgenError, materialize
from codegym.sandbox import make_sandbox
from codegym.sandbox.types import Sandbox
from codegym.tasks.fields import canonical_language
from codegym.tasks.schema import Task

_COMMENT_LINE = {"python": ("#",), "julia": ("#",), "c": ("//",), "cpp": ("//",), "javascript": ("//",)}
_BLOCK = {"c": re.compile(r"/\*.*?\*/", re.S), "cpp": re.compile(r"/\*.*?\*/", re.S),
          "javascript": re.compile(r"/\*.*?\*/", re.S), "julia": re.compile(r"#=.*?=#", re.S)}


def is_blank_code(source: str | bytes | None, language: str) -> bool:
    """True when a source holds no code: missing, blank, or only comments
    (Python: only comments, docstrings and ``pass``)."""
    if source is None:
        return True
    if isinstance(source, bytes):
        source = source.decode("utf-8", "replace")
    if not source.strip():
        return True
    if language == "python":
        try:
            tree = parse_python(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        return all(isinstance(n, ast.Pass) or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
                                               and isinstance(n.value.value, str)) for n in tree.body)
    block = _BLOCK.get(language)
    if block is not None:
        source = block.sub("", source)
    prefixes = _COMMENT_LINE.get(language)
    if prefixes is None:
        return False
    return all(not ln.strip() or ln.strip().startswith(prefixes) for ln in source.splitlines())


def python_compile_error(source: str | bytes, filename: str) -> str | None:
    """The compiler's message when `source` does not compile, else None (nothing is run)."""
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as e:
            return f"{filename}: not UTF-8: {e}"
    if len(source) > (4 << 20):
        return None  # too large to check here: the run will report it
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        return "".join(traceback.format_exception_only(type(e), e)).rstrip()
    except (RecursionError, MemoryError) as e:
        return f"{filename}: too deeply nested to compile ({type(e).__name__})"
    return None


def checker_tag(task: Task, kind: str) -> str:
    """What decides the task's cases, as reports name it (``tokens@1``, ``script@1`` ...)."""
    if kind == "stdio":
        try:
            return make_checker(task.checker, time_s=task.limits.time_s).tag
        except ValueError:
            return "unknown"
    if kind == "function":
        return make_value_checker(task.checker).tag
    if kind == "script":
        return f"script@{HARNESS_VERSION}"
    return f"repo@{HARNESS_VERSION}"


def task_image(task: Task, sandbox: Sandbox) -> str | None:
    """The container image a task names for its tests (``repo.image``, or the image the
    sandbox builds from ``repo.dockerfile``); None: the backend's image per language."""
    repo = getattr(task, "repo", None)
    if repo is None:
        return None
    if getattr(repo, "dockerfile", None) and sandbox.task_images:
        return sandbox.image_from_dockerfile(repo.dockerfile)
    return getattr(repo, "image", None) or repo_image(task, sandbox)  # its environment's image


def judge(task: Task, files: Mapping[str, str | bytes], sandbox: Sandbox | None = None, split: str = "hidden",
          timing: bool = False, early_exit: bool = False, language: str | None = None) -> JudgeReport:
    """Judge workspace `files` ({path: text}) on `split` of `task` ("public", "hidden",
    "perf" or "all"). `early_exit` stops starting cases after the first failure (the
    cases not run are ``skipped``); `timing` also judges and measures the perf split."""
    t0 = time.monotonic()
    lang = canonical_language(language) if language else task.language
    if lang is None:
        raise ValueError(f"unknown language {language!r}")
    if lang not in task.accepted_languages():
        raise ValueError(f"task {task.id} does not accept {lang} (accepted: {', '.join(task.accepted_languages())})")
    head: dict[str, Any] = {"task_id": task.id, "task_hash": task.content_hash, "split": split, "language": lang,
            "checker": checker_tag(task, task.kind)}
    if split not in ("public", "hidden", "perf", "all"):
        raise ValueError(f"unknown split {split!r}; expected public, hidden, perf or all")
    runner = KIND_RUNNERS.get(task.kind)
    if runner is None:
        raise ValueError(f"unknown task kind {task.kind!r}")
    main_file = task.main_file_for(lang) or ""
    n_declared = sum(len(task.cases(s)) for s in (("public", "hidden", "perf") if split == "all" else (split,)))
    decided = source_verdict(files, main_file, lang) if runner.checks_source else None
    if decided is None:
        sandbox, decided = _task_sandbox(task, sandbox)
    if decided is not None:
        return _decided_report(head, decided, n_declared, t0)
    assert sandbox is not None  # (`_task_sandbox` gave one: nothing was decided)
    try:
        cases = materialize(task, split, sandbox)
        if timing and split not in ("perf", "all"):
            extra = materialize(task, "perf", sandbox)
            cases = cases + [dataclasses.replace(c, index=len(cases) + k) for k, c in enumerate(extra)]
    except TestgenError as e:
        return _decided_report(head, Decided.sandbox_error(f"tests could not be materialised: {e}"), n_declared, t0)
    out = runner.run(task, files, cases, sandbox, language=lang, main_file=main_file, early_exit=early_exit)
    if out.decided is not None:
        return _decided_report(head, out.decided, len(cases), t0)
    fields = case_verdict(out.results, cases)
    if runner.message is not None:
        fields["message"] = runner.message(task, {**head, **fields})  # repo: "resolution FULL|PARTIAL|NO: ..."
    rep = JudgeReport(**head, **fields)
    if timing and rep.verdict == "accepted":
        rep = _timed(rep, task, files, cases, lang, out.launch, sandbox)
    rep.elapsed_s = time.monotonic() - t0
    return rep


def _decided_report(head: dict[str, Any], decided: Decided, total: int, t0: float) -> JudgeReport:
    return JudgeReport(passed=0, total=total, **head, **decided.fields(), elapsed_s=time.monotonic() - t0)


def _timed(rep: JudgeReport, task: Task, files: Mapping[str, str | bytes], cases: list[Case], lang: str,
           launch: Any, sandbox: Sandbox) -> JudgeReport:
    """`rep` of an accepted program with its measurement on the perf cases (and the verdict
    made again if a timed run failed): `codegym.judge.perf.measure_report`."""
    if splits(sandbox, task, cases):  # the cases ran on several workers: time it on one of them
        argv, extra = launch
        return measure_split(rep, task, files, cases, lang, argv, extra, sandbox)  # (the worker's report)
    measure_report(rep, task, files, cases, list(rep.cases), sandbox, lang, launch)
    return rep


def source_verdict(files: Mapping[str, str | bytes], main_file: str, lang: str) -> Decided | None:
    """The no_code and compile_error verdicts the host gives without running anything
    (None: the source must run to be judged)."""
    if is_blank_code(files.get(main_file), lang):
        return Decided.no_code(f"{main_file} is missing or holds no code")
    if lang == "python":
        err = python_compile_error(files[main_file], main_file)
        if err is None:
            return None
        message = err.splitlines()[-1] if err else ""
    else:
        # A toolchain missing here (e.g. julia): tree-sitter still gives compile-stage feedback.
        err = precheck(lang, files, main_file)
        if err is None:
            return None
        message = err.splitlines()[1] if "\n" in err else err
    return Decided.compile_error(err, message)


def _task_sandbox(task: Task, sandbox: Sandbox | None) -> tuple[Sandbox, Decided | None]:
    """The sandbox to run the task in, or the sandbox_error verdict when it has none (its
    container image could not be built, or the backend cannot provide one)."""
    if sandbox is None:
        sandbox = make_sandbox()
    if sandbox.task_images:  # container backends (docker)
        try:
            image = task_image(task, sandbox)
        except Exception as e:  # noqa: BLE001  the task's image could not be built: not a verdict
            return sandbox, Decided.sandbox_error(f"the task's container image could not be built: {e}")
        if image is not None:  # an image of its own: containers of this task only
            sandbox = sandbox.for_task(task.id, image=image)
        # (else the pool's long-lived containers per language image serve it, as the local
        # backend's slots serve every task: each run carries its files, and the fork server
        # wipes the run directory, /tmp and every process after each one)
    elif not sandbox.remote:  # a host backend: it has no container image to offer
        repo = getattr(task, "repo", None)
        named = repo is not None and (repo.image or (repo.dockerfile and "a Dockerfile"))
        if named:
            return sandbox, Decided.sandbox_error(
                f"task {task.id} runs its tests in container image {named}, which the {type(sandbox).__name__} "
                "backend cannot provide: judge it with sandbox='docker' (make_sandbox('docker'))")
    return sandbox, None


