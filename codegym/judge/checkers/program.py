"""Program checkers (special judges): a program run in the sandbox decides.

testlib's conventions: the checker gets the test's input, the program's output and the
expected answer as files, and answers with its exit code (and an optional score); see
`ProgramChecker`. A Python checker runs through the sandbox's launcher, its source an
extra file of each run, so it never enters the build store candidates can read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from codegym.core.languages import get_language
from codegym.core.limits import Limits
from codegym.judge.checkers.base import CheckResult, Tagged, clip
from codegym.sandbox import RunRequest, make_sandbox
from codegym.sandbox.launcher import LAUNCHER, hidden_files
from codegym.sandbox.types import Sandbox

#: exit codes of a checker program (testlib's conventions)
EXIT_OK, EXIT_WA, EXIT_PE, EXIT_FAIL, EXIT_PARTIAL = 0, 1, 2, 3, 7
#: names of the three files a checker program receives (argv order: input, output, answer)
CHECK_INPUT, CHECK_OUTPUT, CHECK_ANSWER = "input.txt", "output.txt", "answer.txt"

_SCORE_RE = re.compile(r"^\s*(?:points\s+)?([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)", re.IGNORECASE)


def _score_from(text: str) -> float | None:
    m = _SCORE_RE.match(text or "")
    if m is None:
        return None
    try:
        v = float(m.group(1))
    except ValueError:
        return None
    return v if math.isfinite(v) else None


class ProgramChecker(Tagged):
    """A special judge: a program run in the sandbox decides.

    It is run as ``<checker> input.txt output.txt answer.txt [args...]`` (testlib's
    order: the test's input, the program's output, the expected answer), with
    those three files in its working directory. Exit codes:

    0  accepted; an optional score in [0, 1] as the first token of stdout (default 1)
    1  wrong answer
    2  presentation error (reported as wrong answer)
    3  checker failure -> the judge reports sandbox_error
    7  partial: score in [0, 1] as the first token of stdout (``points 0.4`` also
       read from stderr); accepted only when the score is 1
    anything else (crash, timeout, other codes) -> checker failure.
    The checker's stderr (else stdout) is the message.
    """

    name = "program"

    def __init__(self, code: str, language: str = "python", args: Sequence[str] = (),
                 time_s: float = 10.0, memory_mb: int = 1024):
        self.code = code
        self.language = language
        self.args = [str(a) for a in args]
        self.time_s = time_s
        self.memory_mb = memory_mb
        self._builds: dict[int, Any] = {}

    def limits(self) -> Limits:
        return Limits(time_s=self.time_s, memory_mb=self.memory_mb, output_bytes=1 << 20)

    def build(self, sandbox: Sandbox):
        """Build (cached per sandbox and by the sandbox's content-hash cache).

        A Python checker is not built itself: the launcher is, and the checker's source
        travels as an extra file of each run, so it never enters the build store that
        candidates' runs can read (a checker often computes the answer itself)."""
        key = id(sandbox)
        b = self._builds.get(key)
        if b is None:
            if self.language == "python":
                b = sandbox.build("python", {"main.py": LAUNCHER})
            else:
                main = get_language(self.language).main_file
                b = sandbox.build(self.language, {main: self.code})
            self._builds[key] = b
        return b

    def _run_extras(self) -> tuple[list[str], dict[str, str | bytes]]:
        if self.language == "python":
            return ["main.py"], hidden_files({"main.py": self.code})
        return [], {}

    def interpret(self, res) -> CheckResult:
        """Map the checker program's ExecResult to a CheckResult."""
        msg = (res.stderr or res.stdout or "").strip()
        msg = clip(msg, 300)
        if res.status != "ok" and res.status != "runtime_error":
            return CheckResult(False, 0.0, f"checker program failed: {res.status} {res.message}".strip(),
                               msg, failed=True)
        code = res.exit_code
        if code == EXIT_OK:
            s = _score_from(res.stdout)
            score = 1.0 if s is None else min(1.0, max(0.0, s))
            return CheckResult(True, score, "", "")
        if code in (EXIT_WA, EXIT_PE):
            what = "wrong answer" if code == EXIT_WA else "presentation error"
            return CheckResult(False, 0.0, f"checker: {what}", msg)
        if code == EXIT_PARTIAL:
            s = _score_from(res.stdout)
            if s is None:
                s = _score_from(res.stderr)
            if s is None:
                return CheckResult(False, 0.0, "checker reported partial credit without a score",
                                   msg, failed=True)
            s = min(1.0, max(0.0, s))
            return CheckResult(s >= 1.0, s, "" if s >= 1.0 else f"checker: partial credit {s:g}", msg)
        return CheckResult(False, 0.0, f"checker program failed (exit code {code})", msg, failed=True)

    def check_many(self, sandbox: Sandbox, items: Sequence[tuple[str, str, str]]) -> list[CheckResult]:
        """Check many (input, expected, got) triples in parallel in `sandbox`."""
        b = self.build(sandbox)
        if not b.ok:
            res = b.result
            why = f"{res.status}: {res.message}" if res is not None else "build failed"
            detail = clip((res.stderr or res.stdout) if res is not None else "", 300)
            return [CheckResult(False, 0.0, f"checker program did not build ({why})", detail, failed=True)
                    for _ in items]
        pre, hidden = self._run_extras()
        argv = [*pre, CHECK_INPUT, CHECK_OUTPUT, CHECK_ANSWER, *self.args]
        reqs = [RunRequest(stdin="", argv=argv,
                           extra_files={**hidden, CHECK_INPUT: inp, CHECK_OUTPUT: got, CHECK_ANSWER: exp})
                for inp, exp, got in items]
        results = sandbox.run_many(b, reqs, limits=self.limits())
        out = []
        for r in results:
            if r is None:
                out.append(CheckResult(False, 0.0, "checker program was not run", "", failed=True))
            else:
                out.append(self.interpret(r))
        return out

    def check(self, expected: str, got: str, input: str = "", sandbox: Sandbox | None = None) -> CheckResult:  # noqa: A002
        if sandbox is None:
            sandbox = make_sandbox()
        return self.check_many(sandbox, [(input, expected, got)])[0]

    def __repr__(self) -> str:
        return f"<ProgramChecker {self.tag} {self.language}>"


