"""The judge's task kinds as a table: `KIND_RUNNERS` maps each kind to its `KindRunner`.

A runner's `run` takes the task, the files, the materialised cases and the sandbox, and
returns one shape, `KindResult`: a result per case (None: not run), or a verdict
`Decided` before the cases could decide one (a build that fails, a compile error the run
found), and what timing an accepted program reuses (`launch`). What else differs by kind
is data of its `KindRunner`: whether the host checks the source first (no code, compile
errors: not for a repository's diff) and how the report's message is finished (a repo
task's resolution). `codegym.judge.run.judge` looks the kind up and builds the report
once; the kinds' own modules (`stdio`, `function`, `script`, `repo`) run the cases.
`PROGRAM_KIND_RUNNERS`, the kinds but repo, is also the table of the verifier an exported
Harbor task carries (`codegym.importers.harbor_verifier`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from codegym.judge.chunks import run_split, splits
from codegym.judge.kinds.function import run_function
from codegym.judge.kinds.repo import resolution_message, run_repo_cases
from codegym.judge.kinds.script import run_script
from codegym.judge.kinds.stdio import run_stdio, stdio_build, stdio_launch
from codegym.judge.report import CaseResult, Decided, tail
from codegym.judge.testgen import Case
from codegym.sandbox.types import ExecResult, Sandbox
from codegym.tasks.schema import Task


@dataclass(frozen=True)
class KindResult:
    """What a kind's run gives the judge.

    results  one per case, in case order (None: not run); empty when `decided`
    decided  the verdict when the run ended before its cases decided one
    launch   what timing an accepted program reuses: the stdio build (or its ``(argv,
             extra)`` when the cases ran split over workers), None for the other kinds
    """

    results: list[CaseResult | None] = field(default_factory=list)
    decided: Decided | None = None
    launch: Any = None


class RunKind(Protocol):
    def __call__(self, task: Task, files: Mapping[str, str | bytes], cases: list[Case], sandbox: Sandbox, *,
                 language: str, main_file: str, early_exit: bool) -> KindResult: ...


@dataclass(frozen=True)
class KindRunner:
    """How the judge runs one task kind.

    run            the cases' run (`RunKind`)
    checks_source  no code and compile errors are decided in the host before anything runs
                   (not for a repository task: its files are a change to a repository)
    message        ``message(task, report fields)``: the report's message finished by the
                   kind (repo: prefixed with the resolution); None: as the verdict made it
    """

    run: RunKind
    checks_source: bool = True
    message: Callable[[Task, Mapping[str, Any]], str] | None = None


def build_failed(res: ExecResult | None) -> Decided:
    """The verdict of a program whose build failed (`res`: the build's `ExecResult`)."""
    if res is not None and res.status == "compile_error":
        return Decided.compile_error(tail((res.stderr or "") + (res.stdout or "") or res.message, 4000),
                                     res.message or "compilation failed")
    # (stage and progress: the host's checks had passed, as a compile error's)
    return Decided.sandbox_error((res.message if res is not None else "") or "the build failed",
                                 stage="compile_error", progress=0.25)


def _compiled(results: list[CaseResult | None], compile_err: str | None) -> KindResult:
    """A run that reports a compile error of the program itself (function and script kinds)."""
    if compile_err is None:
        return KindResult(results)
    message = compile_err.splitlines()[-1] if compile_err else "compilation failed"
    return KindResult(decided=Decided.compile_error(compile_err, message))


def _run_stdio(task: Task, files: Mapping[str, str | bytes], cases: list[Case], sandbox: Sandbox, *,
               language: str, main_file: str, early_exit: bool) -> KindResult:
    argv, extra = stdio_launch(language, files, main_file, task.preamble)
    build = stdio_build(sandbox, language, files, extra)
    if not build.ok:
        return KindResult(decided=build_failed(build.result))
    if splits(sandbox, task, cases):  # many cases: split over the workers of the Ray backend
        # the workers build it themselves: what timing reuses is how it launches
        return KindResult(run_split(task, files, language, argv, extra, cases, sandbox, early_exit),
                          launch=(argv, extra))
    return KindResult(run_stdio(task, build, cases, sandbox, early_exit, language, argv, extra), launch=build)


def _run_function(task: Task, files: Mapping[str, str | bytes], cases: list[Case], sandbox: Sandbox, *,
                  language: str, main_file: str, early_exit: bool) -> KindResult:
    if language != "python":
        # (progress: the host's checks had passed, as a compile error's)
        return KindResult(decided=Decided.sandbox_error("function tasks run Python only", progress=0.25))
    return _compiled(*run_function(task, files, main_file, cases, sandbox, early_exit))


def _run_script(task: Task, files: Mapping[str, str | bytes], cases: list[Case], sandbox: Sandbox, *,
                language: str, main_file: str, early_exit: bool) -> KindResult:
    return _compiled(*run_script(task, files, main_file, language, cases, sandbox, early_exit))


def _run_repo(task: Task, files: Mapping[str, str | bytes], cases: list[Case], sandbox: Sandbox, *,
              language: str, main_file: str, early_exit: bool) -> KindResult:
    return KindResult(run_repo_cases(task, files, cases, sandbox, early_exit))


#: the kinds whose files are a program (what an exported Harbor task's verifier runs: it
#: carries this module's definitions above, copied by `codegym.importers.harbor_vendor`)
PROGRAM_KIND_RUNNERS: dict[str, KindRunner] = {
    "stdio": KindRunner(_run_stdio),
    "function": KindRunner(_run_function),
    "script": KindRunner(_run_script),
}

#: every task kind (`codegym.tasks.fields.KINDS`) and how the judge runs it
KIND_RUNNERS: dict[str, KindRunner] = {
    **PROGRAM_KIND_RUNNERS,
    "repo": KindRunner(_run_repo, checks_source=False, message=resolution_message),
}
