"""The judge: run a task's tests on a workspace and return a `JudgeReport`.

    >>> from codegym.judge.run import judge
    >>> from codegym.tasks.suite import load_suite
    >>> task = load_suite("examples").get("examples/bracket-depth")
    >>> rep = judge(task, task.solution("reference").files, split="hidden")
    >>> rep.verdict, rep.passed == rep.total
    ('accepted', True)

`judge` decides in stages: no code, then code that does not compile (checked in the host
where it can be), then the cases run by the task's kind (`codegym.judge.kinds`) and the
verdict rule (`codegym.judge.report.finish_report`); ``timing=True`` also measures an
accepted program on the perf split (`codegym.judge.perf`). docs/judge.md has the rules.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import time
import traceback
from collections.abc import Mapping

from codegym.judge.checkers import make_checker, make_value_checker
from codegym.judge.chunks import measure_split, run_split, splits
from codegym.judge.harness import HARNESS_VERSION
from codegym.judge.kinds.function import run_function
from codegym.judge.kinds.repo import annotate_report, repo_image, run_repo_cases
from codegym.judge.kinds.script import run_script
from codegym.judge.kinds.stdio import run_stdio, stdio_build, stdio_launch
from codegym.judge.perf import measure_report
from codegym.judge.protocol import parse_python
from codegym.judge.report import CaseResult, JudgeReport, finish_report, tail
from codegym.judge.syntax import precheck
from codegym.judge.testgen import Case, TestgenError, materialize
from codegym.sandbox import make_sandbox
from codegym.tasks.fields import canonical_language

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


def checker_tag(task, kind: str) -> str:
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


def task_image(task, sandbox) -> str | None:
    """The container image a task names for its tests (``repo.image``, or the image the
    sandbox builds from ``repo.dockerfile``); None: the backend's image per language."""
    repo = getattr(task, "repo", None)
    if repo is None:
        return None
    if getattr(repo, "dockerfile", None) and sandbox.task_images:
        return sandbox.image_from_dockerfile(repo.dockerfile)
    return getattr(repo, "image", None) or repo_image(task, sandbox)  # its environment's image


def _run_repo(task, files: Mapping[str, str | bytes], cases: list[Case], sandbox,
              early_exit: bool) -> list[CaseResult | None]:
    # Repository grading (base tree + overlay, restored tests, test patch, report parsing)
    # lives with the rest of the repo-task machinery.
    return run_repo_cases(task, files, cases, sandbox, early_exit)


def judge(task, files: Mapping[str, str | bytes], sandbox=None, split: str = "hidden", timing: bool = False,
          early_exit: bool = False, language: str | None = None) -> JudgeReport:
    """Judge workspace `files` ({path: text}) on `split` of `task` ("public", "hidden",
    "perf" or "all"). `early_exit` stops starting cases after the first failure (the
    cases not run are ``skipped``); `timing` also judges and measures the perf split."""
    t0 = time.monotonic()
    lang = canonical_language(language) if language else task.language
    if lang is None:
        raise ValueError(f"unknown language {language!r}")
    if lang not in task.accepted_languages():
        raise ValueError(f"task {task.id} does not accept {lang} (accepted: {', '.join(task.accepted_languages())})")
    rep = JudgeReport(verdict="no_code", passed=0, total=0, stage="no_code", progress=0.0, task_id=task.id,
                      task_hash=task.content_hash, split=split, language=lang,
                      checker=checker_tag(task, task.kind))
    if split not in ("public", "hidden", "perf", "all"):
        raise ValueError(f"unknown split {split!r}; expected public, hidden, perf or all")
    _judge_into(rep, task, files, sandbox, split, timing, early_exit)
    rep.elapsed_s = time.monotonic() - t0
    return rep


def _judge_into(rep: JudgeReport, task, files: Mapping[str, str | bytes], sandbox, split: str, timing: bool,
                early_exit: bool) -> None:
    lang, kind = rep.language, task.kind
    main_file = task.main_file_for(lang) or ""
    n_declared = sum(len(task.cases(s)) for s in (("public", "hidden", "perf") if split == "all" else (split,)))
    if _decided_before_running(rep, kind, files, main_file, n_declared):
        return
    sandbox = _task_sandbox(rep, task, sandbox, n_declared)
    if sandbox is None:
        return
    try:
        cases = materialize(task, split, sandbox)
        if timing and split not in ("perf", "all"):
            extra = materialize(task, "perf", sandbox)
            cases = cases + [dataclasses.replace(c, index=len(cases) + k) for k, c in enumerate(extra)]
    except TestgenError as e:
        _sandbox_error(rep, n_declared, f"tests could not be materialised: {e}")
        return
    rep.total = len(cases)
    ran = _run_cases(rep, task, files, main_file, cases, sandbox, early_exit)
    if ran is None:
        return
    results, build = ran
    rep.stage = "ran"
    finish_report(rep, results, cases)
    if kind == "repo":
        annotate_report(rep, task)  # "resolution FULL|PARTIAL|NO: ..." (hidden split)
    if timing and rep.verdict == "accepted":
        if splits(sandbox, task, cases):  # the cases ran on several workers: time it on one of them
            rep.__dict__.update(measure_split(rep, task, files, cases, lang, *build, sandbox).__dict__)
        else:
            measure_report(rep, task, files, cases, list(rep.cases), sandbox, lang, build)


def _decided_before_running(rep: JudgeReport, kind: str, files: Mapping[str, str | bytes], main_file: str,
                            n_declared: int) -> bool:
    """The no_code and compile_error verdicts the host can give without running anything
    (not for repo tasks); True when `rep` is decided."""
    lang = rep.language
    if kind != "repo" and is_blank_code(files.get(main_file), lang):
        rep.total = n_declared
        rep.message = f"{main_file} is missing or holds no code"
        return True
    rep.stage, rep.progress = "compile_error", 0.25
    if kind == "repo":
        return False
    if lang == "python":
        err = python_compile_error(files[main_file], main_file)
        if err is None:
            return False
        message = err.splitlines()[-1] if err else ""
    else:
        # A toolchain missing here (e.g. julia): tree-sitter still gives compile-stage feedback.
        err = precheck(lang, files, main_file)
        if err is None:
            return False
        message = err.splitlines()[1] if "\n" in err else err
    rep.verdict, rep.total, rep.compile_output, rep.message = "compile_error", n_declared, err, message
    return True


def _sandbox_error(rep: JudgeReport, total: int, message: str) -> None:
    rep.verdict, rep.stage, rep.progress, rep.total = "sandbox_error", "ran", 0.5, total
    rep.message = message


def _task_sandbox(rep: JudgeReport, task, sandbox, n_declared: int):
    """The sandbox to run the task in (None when its container image could not be built)."""
    if sandbox is None:
        sandbox = make_sandbox()
    if sandbox.task_images:  # container backends (docker)
        try:
            image = task_image(task, sandbox)
        except Exception as e:  # noqa: BLE001  the task's image could not be built: not a verdict
            _sandbox_error(rep, n_declared, f"the task's container image could not be built: {e}")
            return None
        if image is not None:  # an image of its own: containers of this task only
            sandbox = sandbox.for_task(task.id, image=image)
        # (else the pool's long-lived containers per language image serve it, as the local
        # backend's slots serve every task: each run carries its files, and the fork server
        # wipes the run directory, /tmp and every process after each one)
    elif not sandbox.remote:  # a host backend: it has no container image to offer
        repo = getattr(task, "repo", None)
        named = repo is not None and (repo.image or (repo.dockerfile and "a Dockerfile"))
        if named:
            _sandbox_error(rep, n_declared, f"task {task.id} runs its tests in container image {named}, which "
                           f"the {type(sandbox).__name__} backend cannot provide: judge it with "
                           "sandbox='docker' (make_sandbox('docker'))")
            return None
    return sandbox


def _run_cases(rep: JudgeReport, task, files: Mapping[str, str | bytes], main_file: str, cases: list[Case],
               sandbox, early_exit: bool):
    """(results, the stdio build or None) of the task's kind, or None when the run ended
    with a compile_error or sandbox_error verdict (then in `rep`)."""
    lang, kind = rep.language, task.kind
    compile_err: str | None = None
    build = None
    if kind == "stdio":
        argv, extra = stdio_launch(lang, files, main_file, task.preamble)
        build = stdio_build(sandbox, lang, files, extra)
        if not build.ok:
            _build_failed(rep, build.result)
            return None
        if splits(sandbox, task, cases):  # many cases: split over the workers of the Ray backend
            # the workers build it themselves: what `build` carries on is how it launches
            results, build = run_split(task, files, lang, argv, extra, cases, sandbox, early_exit), (argv, extra)
        else:
            results = run_stdio(task, build, cases, sandbox, early_exit, lang, argv, extra)
    elif kind == "function":
        if lang != "python":
            rep.verdict, rep.stage = "sandbox_error", "ran"
            rep.message = "function tasks run Python only"
            return None
        results, compile_err = run_function(task, files, main_file, cases, sandbox, early_exit)
    elif kind == "script":
        results, compile_err = run_script(task, files, main_file, lang, cases, sandbox, early_exit)
    elif kind == "repo":
        results = _run_repo(task, files, cases, sandbox, early_exit)
    else:
        raise ValueError(f"unknown task kind {kind!r}")
    if compile_err is not None:
        rep.verdict, rep.compile_output = "compile_error", compile_err
        rep.message = compile_err.splitlines()[-1] if compile_err else "compilation failed"
        return None
    return results, build


def _build_failed(rep: JudgeReport, res) -> None:
    if res is not None and res.status == "compile_error":
        rep.verdict = "compile_error"
        rep.compile_output = tail((res.stderr or "") + (res.stdout or "") or res.message, 4000)
        rep.message = res.message or "compilation failed"
    else:
        rep.verdict = "sandbox_error"
        rep.message = (res.message if res is not None else "") or "the build failed"


__all__ = ["judge", "is_blank_code", "python_compile_error", "checker_tag", "task_image"]
