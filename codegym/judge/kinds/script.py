"""The script kind: assert-style test code run with the candidate, one run per case.

Python runs through the script driver (`SCRIPT_DRIVER`): a run passes only when the
driver prints the marker of its per-run nonce and the process ends ok. Other languages
(Julia, JavaScript) run candidate + tests + an epilogue printing the marker; a Julia run
must also show no failure in its ``Test`` report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from codegym.core.languages import get_language
from codegym.judge.harness import SCRIPT_DRIVER
from codegym.judge.kinds.common import case_limits
from codegym.judge.logs.julia import julia_test_failures
from codegym.judge.protocol import (
    new_nonce,
    parse_script_failure,
    script_passed,
    script_program,
    script_request,
    solution_files,
)
from codegym.judge.report import CaseResult, clip, exec_message, tail
from codegym.judge.testgen import Case
from codegym.sandbox import RunRequest
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task


def script_failure_status(info: dict | None, res) -> tuple[str, str]:
    """(case status, message) of a run without the pass marker; `info` is the Python
    driver's failure report (None: none, or another language)."""
    if res.status in ("timeout", "memory_limit", "output_limit", "sandbox_error"):
        return res.status, exec_message(res)
    if info is None:
        if res.exit_code == 3 and "codegym:" in (res.stderr or ""):
            return "sandbox_error", tail(res.stderr)
        if res.status == "ok":
            return "runtime_error", clip("the program ended before the tests completed (no success marker)"
                                         + ("\n" + tail(res.stderr) if res.stderr.strip() else ""))
        return "runtime_error", exec_message(res)
    typ = str(info.get("type", ""))
    msg = str(info.get("message", ""))
    tamper = str(info.get("tamper", "") or "")
    if info.get("stage") == "driver":
        return "sandbox_error", msg
    if info.get("stage") == "import" and typ in ("SyntaxError", "IndentationError", "TabError"):
        return "compile_error", f"{typ}: {msg}"
    if typ == "MemoryError":
        return "memory_limit", "MemoryError"
    if typ == "AssertionError" or tamper or typ == "Refused":
        text = f"{typ}" + (f": {msg}" if msg else "")
        if tamper:
            text += f" (refused: {tamper})"
        return "wrong_answer", text
    return "runtime_error", f"{typ}: {msg}" if msg else typ


def run_script(task: Task, files: Mapping[str, Any], main_file: str, language: str, cases: list[Case], sandbox: Sandbox,
               early_exit: bool) -> tuple[list[CaseResult | None], str | None]:
    """Returns (results, compile_error message or None)."""
    out: list[CaseResult | None] = [None] * len(cases)
    nonces = [new_nonce() for _ in cases]
    compile_error: list[str | None] = [None]

    def evaluate(i: int, res) -> bool:
        result, compile_err = _case_result(cases[i], res, nonces[i], language, main_file)
        out[i] = result
        if compile_err is not None:
            compile_error[0] = compile_err
        return not result.passed

    if language == "python":
        _run_python(task, files, main_file, cases, sandbox, early_exit, nonces, evaluate)
        return out, compile_error[0]
    src = files.get(main_file) or ""
    if isinstance(src, bytes):
        src = src.decode("utf-8", "replace")
    lang_main = get_language(language).main_file
    builds = []
    for c in cases:
        fl = {k: v for k, v in files.items() if k != main_file}
        fl[lang_main] = script_program(language, src, c.code or "")
        builds.append(sandbox.build(language, fl))
    for i, (c, build) in enumerate(zip(cases, builds)):
        if not build.ok:
            res = build.result
            if res is not None and res.status == "compile_error":
                compile_error[0] = tail(res.stderr or res.stdout or res.message)
                break
            out[i] = CaseResult(c.index, c.name, "sandbox_error", c.split,
                                message=exec_message(res) if res else "build failed", weight=c.weight)
            if early_exit:
                break
            continue
        res = sandbox.run(build, stdin=nonces[i] + "\n", limits=case_limits(task, c))
        if evaluate(i, res) and early_exit:
            break
    return out, compile_error[0]


def _run_python(task: Task, files: Mapping[str, Any], main_file: str, cases: list[Case], sandbox: Sandbox,
                early_exit: bool, nonces: list[str], evaluate) -> None:
    """Every case through the script driver, in parallel; `evaluate(i, res)` -> failed."""
    build = sandbox.build("python", {"main.py": SCRIPT_DRIVER})
    sol_files = solution_files(dict(files), only_python=True, main_file=main_file)
    reqs = [RunRequest(stdin=script_request(nonces[i], main_file, c.code or "", task.entry_point,
                                            task.preamble),
                       limits=case_limits(task, c), extra_files=sol_files) for i, c in enumerate(cases)]

    def stop(i: int, res) -> bool:
        return evaluate(i, res) and early_exit
    if cases:
        sandbox.run_many(build, reqs, stop=stop)


def _case_result(c: Case, res, nonce: str, language: str, main_file: str) -> tuple[CaseResult, str | None]:
    """(the case's result, the compile error it shows or None) of one script run."""
    base = dict(index=c.index, name=c.name, split=c.split, time_s=res.cpu_s, wall_s=res.wall_s,
                memory_mb=res.max_rss_mb, weight=c.weight)
    if res.status == "ok" and script_passed(res.stdout, nonce):
        # exit 0 and the marker; Julia's own test report must show no failure either
        bad = julia_test_failures(res.stdout, res.stderr) if language == "julia" else None
        if bad is None:
            return CaseResult(status="passed", score=1.0, **base), None
        return CaseResult(status="wrong_answer", message=clip(bad), **base), None
    info = parse_script_failure(res.stdout) if language == "python" else None
    status, msg = script_failure_status(info, res)
    if language != "python" and status == "runtime_error":
        err = (res.stderr or "") + (res.stdout or "")
        if re.search(r"Test Failed|did not pass|AssertionError", err):
            status = "wrong_answer"
    if info and info.get("test_line") and c.code:
        lines = c.code.splitlines()
        ln = info["test_line"]
        if isinstance(ln, int) and 1 <= ln <= len(lines):
            msg = f"{msg}\n  at test line {ln}: {lines[ln - 1].strip()[:200]}"
    if info and isinstance(info.get("solution_line"), int):
        msg = f"{msg}\n  (raised in {main_file} line {info['solution_line']})"
    return CaseResult(status=status, message=clip(msg), **base), msg if status == "compile_error" else None


