"""Checkers: decide whether a program's output (or a function's return value) is right.

Owns the comparison rules the judge applies in the trusted host process:

- text checkers for stdio tasks (`exact`, `lines`, `tokens`, `float`,
  `lines_unordered`, `sets`), pure functions of (expected, got);
- `ValueChecker` for function tasks: compares decoded return values (plain
  Python data rebuilt by `codegym.judge.harness.decode_value`) with the expected JSON
  value, exact by default or with a float tolerance;
- `ProgramChecker`: a special-judge program (testlib-like) run in the sandbox.

Every checker has a ``name`` and a ``version`` (`CHECKER_VERSION[name]`); the
judge puts ``checker.tag`` (``"tokens@1"``) in its reports, so a change of
rules is visible in recorded results. Bump the version when a rule changes.

Every check returns a `CheckResult` ``(ok, score, message, diff)``: `diff` is a
short, truncated description of the first difference (line/token, expected vs
got with a little context), meant for feedback to the agent.

Rules (case-sensitive everywhere: nothing is lower-cased):

exact            the two texts are identical (byte for byte after decoding).
lines            line by line, trailing whitespace of each line, ``\\r`` and
                 trailing blank lines ignored.
tokens (default) the whitespace-separated token sequences are equal; so any
                 run of spaces/tabs/newlines equals any other, leading and
                 trailing whitespace is ignored.
float            tokens; a pair of tokens that both parse as numbers and at
                 least one of which is not a plain integer (has ``.``, an
                 exponent, or is inf/nan) is equal when
                 ``|g - e| <= abs_tol`` or ``|g - e| <= rel_tol * |e|``
                 (nan equals nan, inf equals inf of the same sign); two plain
                 integers, and every non-numeric token, must match exactly.
lines_unordered  the output is a multiset of lines: each line is reduced to
                 its token tuple, lines without tokens are dropped, and the two
                 multisets must be equal (order free, multiplicity counts).
sets             lines in order (trailing blank lines ignored); within a line
                 the order of tokens is free but multiplicity counts (each line
                 is compared as a sorted token list, i.e. a multiset).
program          see `ProgramChecker`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

#: version of each checker's rules; reports carry ``name@version``
CHECKER_VERSION: dict[str, int] = {
    "exact": 1,
    "lines": 1,
    "tokens": 1,
    "float": 1,
    "lines_unordered": 1,
    "sets": 1,
    "program": 1,
    "values": 1,
}

#: how long a `diff` may get (characters)
DIFF_MAX = 400
#: context shown on each side of a differing token
CONTEXT = 24


class CheckResult(NamedTuple):
    """Outcome of one comparison.

    ok       the output is accepted
    score    in [0, 1]: 1.0 when ok, partial credit from program checkers, else 0.0
    message  human-readable verdict detail ("" when ok)
    diff     short description of the first difference (truncated)
    failed   the checker itself failed (a program checker crashed / exit 3): the
             judge reports sandbox_error, not wrong_answer
    """

    ok: bool
    score: float
    message: str = ""
    diff: str = ""
    failed: bool = False


OK = CheckResult(True, 1.0)


def _clip(s: str, n: int = DIFF_MAX) -> str:
    return s if len(s) <= n else s[: n - 3] + "..."


def _show(s: str, n: int = 60) -> str:
    """repr of a (possibly long) snippet, clipped."""
    if len(s) > n:
        s = s[: n - 3] + "..."
    return repr(s)


def _line_snippet(line: str, col: int) -> str:
    """The part of `line` around character `col`, with ellipses."""
    lo = max(0, col - CONTEXT)
    hi = min(len(line), col + CONTEXT)
    return ("..." if lo else "") + line[lo:hi] + ("..." if hi < len(line) else "")


def _token_positions(text: str) -> list[tuple[str, int, int, str]]:
    """Tokens with (line number from 1, column, the line's text). Only used on failure."""
    out = []
    for ln, line in enumerate(text.splitlines(), 1):
        for m in re.finditer(r"\S+", line):
            out.append((m.group(), ln, m.start(), line))
    return out


def token_diff(expected: str, got: str, index: int | None = None) -> str:
    """Describe the first differing token (or the one at `index`)."""
    e = _token_positions(expected)
    g = _token_positions(got)
    if index is None:
        index = 0
        while index < len(e) and index < len(g) and e[index][0] == g[index][0]:
            index += 1
    if index >= len(e) and index >= len(g):
        return ""
    if index >= len(g):
        tok, ln, col, line = e[index]
        return _clip(f"output ended early: expected {len(e)} tokens, got {len(g)}; "
                     f"next expected token {_show(tok)} (line {ln}: {_show(_line_snippet(line, col))})")
    if index >= len(e):
        tok, ln, col, line = g[index]
        return _clip(f"extra output: expected {len(e)} tokens, got {len(g)}; first extra token "
                     f"{_show(tok)} (line {ln}: {_show(_line_snippet(line, col))})")
    et, eln, ecol, eline = e[index]
    gt, gln, gcol, gline = g[index]
    return _clip(f"token {index + 1} (line {gln}): expected {_show(et)}, got {_show(gt)}\n"
                 f"  expected line {eln}: {_show(_line_snippet(eline, ecol), 80)}\n"
                 f"  got line {gln}:      {_show(_line_snippet(gline, gcol), 80)}")


def _norm_lines(text: str) -> list[str]:
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def line_diff(expected_lines: Sequence[str], got_lines: Sequence[str]) -> str:
    """Describe the first differing line of two line lists."""
    n = min(len(expected_lines), len(got_lines))
    for i in range(n):
        e, g = expected_lines[i], got_lines[i]
        if e != g:
            col = 0
            while col < len(e) and col < len(g) and e[col] == g[col]:
                col += 1
            return _clip(f"line {i + 1}, column {col + 1}:\n"
                         f"  expected: {_show(_line_snippet(e, col), 80)}\n"
                         f"  got:      {_show(_line_snippet(g, col), 80)}")
    if len(got_lines) < len(expected_lines):
        return _clip(f"output ended early: expected {len(expected_lines)} lines, got {len(got_lines)}; "
                     f"line {n + 1} should be {_show(expected_lines[n], 80)}")
    if len(got_lines) > len(expected_lines):
        return _clip(f"extra output: expected {len(expected_lines)} lines, got {len(got_lines)}; "
                     f"line {n + 1} is {_show(got_lines[n], 80)}")
    return ""


# --------------------------------------------------------------------------- text checkers


class Checker:
    """Base of the text checkers: ``check(expected, got, input="") -> CheckResult``."""

    name = "base"

    @property
    def version(self) -> int:
        return CHECKER_VERSION[self.name]

    @property
    def tag(self) -> str:
        return f"{self.name}@{self.version}"

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.tag}>"


class ExactChecker(Checker):
    """Identical text."""

    name = "exact"

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        if got == expected:
            return OK
        el, gl = expected.split("\n"), got.split("\n")
        d = line_diff(el, gl)
        if not d:  # same lines: the difference is a trailing newline or \r
            d = (f"texts differ only in line endings / trailing newline: expected ends "
                 f"{_show(expected[-10:])}, got ends {_show(got[-10:])}")
        return CheckResult(False, 0.0, "output differs (exact comparison)", _clip(d))


class LinesChecker(Checker):
    """Line by line; trailing whitespace per line and trailing blank lines ignored."""

    name = "lines"

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        if got == expected:
            return OK
        el, gl = _norm_lines(expected), _norm_lines(got)
        if el == gl:
            return OK
        return CheckResult(False, 0.0, "output differs", line_diff(el, gl))


class TokensChecker(Checker):
    """Whitespace-separated tokens equal (the stdio default)."""

    name = "tokens"

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        # str.split() is the fast path: one C call per side, no per-token Python work
        if got == expected or got.split() == expected.split():
            return OK
        return CheckResult(False, 0.0, "output differs", token_diff(expected, got))


_NUM_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)",
                     re.IGNORECASE)
_INT_RE = re.compile(r"[+-]?\d+")


def parse_number(tok: str) -> float | None:
    """The float value of a numeric token, None if it is not a number.

    Stricter than float(): no underscores, no surrounding text, no hex."""
    if _NUM_RE.fullmatch(tok) is None:
        return None
    try:
        return float(tok)
    except (ValueError, OverflowError):
        return None


def floats_close(g: float, e: float, abs_tol: float, rel_tol: float) -> bool:
    """Absolute-or-relative closeness; nan == nan, infinities equal only themselves."""
    if math.isnan(e) or math.isnan(g):
        return math.isnan(e) and math.isnan(g)
    if math.isinf(e) or math.isinf(g):
        return e == g
    d = abs(g - e)
    return d <= abs_tol or d <= rel_tol * abs(e)


class FloatChecker(Checker):
    """Tokens; numbers within abs_tol or rel_tol (plain integer pairs exact)."""

    name = "float"

    def __init__(self, abs_tol: float = 1e-6, rel_tol: float = 1e-6):
        self.abs_tol = float(abs_tol)
        self.rel_tol = float(rel_tol)

    def token_equal(self, e: str, g: str) -> bool:
        if e == g:
            return True
        ev = parse_number(e)
        if ev is None:
            return False
        gv = parse_number(g)
        if gv is None:
            return False
        if _INT_RE.fullmatch(e) and _INT_RE.fullmatch(g):
            return int(e) == int(g)  # counts and indices stay exact
        return floats_close(gv, ev, self.abs_tol, self.rel_tol)

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        et, gt = expected.split(), got.split()
        if et == gt:
            return OK
        if len(et) == len(gt):
            for i, (e, g) in enumerate(zip(et, gt)):
                if not self.token_equal(e, g):
                    return CheckResult(False, 0.0,
                                       f"output differs (float tolerance abs {self.abs_tol:g}, "
                                       f"rel {self.rel_tol:g})", token_diff(expected, got, i))
            return OK
        return CheckResult(False, 0.0, "output differs (wrong number of tokens)",
                           token_diff(expected, got))

    def __repr__(self) -> str:
        return f"<FloatChecker {self.tag} abs={self.abs_tol:g} rel={self.rel_tol:g}>"


class LinesUnorderedChecker(Checker):
    """Multiset of (token tuples of) non-blank lines."""

    name = "lines_unordered"

    @staticmethod
    def _lines(text: str) -> Counter:
        c: Counter = Counter()
        for line in text.splitlines():
            toks = tuple(line.split())
            if toks:
                c[toks] += 1
        return c

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        if got == expected:
            return OK
        ec, gc = self._lines(expected), self._lines(got)
        if ec == gc:
            return OK
        missing = ec - gc
        extra = gc - ec
        parts = [f"expected {sum(ec.values())} lines (any order), got {sum(gc.values())}"]
        if missing:
            toks = next(iter(missing))
            parts.append(f"missing line: {_show(' '.join(toks), 80)}"
                         + (f" (and {sum(missing.values()) - 1} more)" if sum(missing.values()) > 1 else ""))
        if extra:
            toks = next(iter(extra))
            parts.append(f"unexpected line: {_show(' '.join(toks), 80)}"
                         + (f" (and {sum(extra.values()) - 1} more)" if sum(extra.values()) > 1 else ""))
        return CheckResult(False, 0.0, "output differs (lines compared as a multiset)",
                           _clip("\n  ".join(parts)))


class SetsChecker(Checker):
    """Lines in order, each line a multiset of tokens."""

    name = "sets"

    @staticmethod
    def _lines(text: str) -> list[list[str]]:
        lines = [sorted(line.split()) for line in text.splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        if got == expected:
            return OK
        el, gl = self._lines(expected), self._lines(got)
        if el == gl:
            return OK
        d = line_diff([" ".join(x) for x in el], [" ".join(x) for x in gl])
        return CheckResult(False, 0.0, "output differs (each line compared as a multiset of tokens; "
                                       "the diff shows sorted tokens)", d)


# --------------------------------------------------------------------------- values (function kind)


@dataclass(frozen=True)
class Repr:
    """A return value that could not be serialised as data: only its repr came back.

    Never equal to any expected value."""

    text: str
    type_name: str = ""

    def __repr__(self) -> str:
        return f"<unserialisable {self.type_name}: {self.text}>"


_MISSING = object()


class ValueChecker:
    """Compare a decoded return value with the expected JSON value (function tasks).

    Equality is Python's ``==`` on plain data (so ``1 == 1.0 == True`` unless
    `strict_types`), except that: NaN equals NaN; lists and tuples compare
    equal element-wise when `seq_lenient` (default, as LiveCodeBench/EvalPlus
    do); with a float tolerance every pair of non-bool numbers where either is a
    float is compared with `floats_close`; sets compare as sets; dict keys must
    match exactly; a `Repr` (unserialisable value) equals nothing.
    Both sides are plain data built by the trusted host, so no user code runs.
    """

    name = "values"

    def __init__(self, abs_tol: float | None = None, rel_tol: float | None = None,
                 seq_lenient: bool = True, strict_types: bool = False):
        self.tolerance = abs_tol is not None or rel_tol is not None
        self.abs_tol = float(abs_tol or 0.0)
        self.rel_tol = float(rel_tol or 0.0)
        self.seq_lenient = seq_lenient
        self.strict_types = strict_types

    @property
    def version(self) -> int:
        return CHECKER_VERSION[self.name]

    @property
    def tag(self) -> str:
        return f"{self.name}@{self.version}"

    def _num_eq(self, g: Any, e: Any) -> bool:
        if isinstance(g, float) or isinstance(e, float):
            try:
                g, e = float(g), float(e)
            except OverflowError:  # an int beyond float range: Python compares it exactly
                return g == e
            if self.tolerance:
                return floats_close(g, e, self.abs_tol, self.rel_tol)
            if math.isnan(g) or math.isnan(e):
                return math.isnan(g) and math.isnan(e)
            return g == e
        return g == e

    def first_difference(self, got: Any, expected: Any, path: str = "") -> str | None:
        """None when equal, else a description of the first difference (with its path)."""
        stack = [(got, expected, path)]
        while stack:
            g, e, p = stack.pop()
            where = p or "value"
            if isinstance(g, Repr):
                return f"{where}: expected {_short(e)}, got an unserialisable {g.type_name} ({_short(g.text)})"
            if self.strict_types and not self._same_kind(g, e):
                return f"{where}: expected {type(e).__name__} {_short(e)}, got {type(g).__name__} {_short(g)}"
            if isinstance(g, (int, float)) and isinstance(e, (int, float)):  # bool is an int
                if not self._num_eq(g, e):
                    return f"{where}: expected {_short(e)}, got {_short(g)}"
                continue
            if isinstance(g, (list, tuple)) and isinstance(e, (list, tuple)):
                if not self.seq_lenient and type(g) is not type(e):
                    return f"{where}: expected a {type(e).__name__}, got a {type(g).__name__}"
                if len(g) != len(e):
                    return f"{where}: expected length {len(e)}, got length {len(g)} ({_short(g)})"
                for i in range(len(g) - 1, -1, -1):
                    stack.append((g[i], e[i], f"{p}[{i}]"))
                continue
            if isinstance(g, dict) and isinstance(e, dict):
                if len(g) != len(e) or any(k not in e for k in g):
                    miss = [k for k in e if k not in g]
                    extra = [k for k in g if k not in e]
                    return (f"{where}: keys differ" + (f"; missing {_short(miss)}" if miss else "")
                            + (f"; unexpected {_short(extra)}" if extra else ""))
                for k in reversed(list(e)):
                    stack.append((g[k], e[k], f"{p}[{k!r}]"))
                continue
            if isinstance(g, (set, frozenset)) and isinstance(e, (set, frozenset)):
                if self.tolerance or any(isinstance(x, float) for x in e):
                    ok = self._sets_eq(g, e)
                else:
                    ok = g == e
                if not ok:
                    return f"{where}: expected {_short(e)}, got {_short(g)}"
                continue
            if type(g) in (str, bytes, type(None)) or type(e) in (str, bytes, type(None)):
                if type(g) is not type(e) or g != e:
                    return f"{where}: expected {_short(e)}, got {_short(g)}"
                continue
            try:
                same = g == e
            except Exception:  # noqa: BLE001 -- plain data should not raise; be safe anyway
                same = False
            if same is not True:
                return f"{where}: expected {_short(e)}, got {_short(g)}"
        return None

    def _sets_eq(self, g: Any, e: Any) -> bool:
        if len(g) != len(e):
            return False
        rest = list(e)
        for x in g:
            for j, y in enumerate(rest):
                if self.first_difference(x, y) is None:
                    rest.pop(j)
                    break
            else:
                return False
        return True

    def _same_kind(self, g: Any, e: Any) -> bool:
        if isinstance(g, (list, tuple)) and isinstance(e, (list, tuple)):
            return self.seq_lenient or type(g) is type(e)
        if isinstance(g, (set, frozenset)) and isinstance(e, (set, frozenset)):
            return True
        return type(g) is type(e)

    def check_value(self, expected: Any, got: Any) -> CheckResult:
        try:
            d = self.first_difference(got, expected)
        except RecursionError:
            d = "value nested too deeply to compare"
        if d is None:
            return OK
        return CheckResult(False, 0.0, "wrong return value", _clip(d))

    def __repr__(self) -> str:
        return f"<ValueChecker {self.tag} tol={self.tolerance}>"


def _short(v: Any, n: int = 80) -> str:
    try:
        s = repr(v)
    except Exception:  # noqa: BLE001
        s = f"<{type(v).__name__}>"
    return s if len(s) <= n else s[: n - 3] + "..."


# --------------------------------------------------------------------------- program checkers

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


class ProgramChecker:
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

    @property
    def version(self) -> int:
        return CHECKER_VERSION[self.name]

    @property
    def tag(self) -> str:
        return f"{self.name}@{self.version}"

    def limits(self):
        from codegym.core.limits import Limits
        return Limits(time_s=self.time_s, memory_mb=self.memory_mb, output_bytes=1 << 20)

    def build(self, sandbox):
        """Build (cached per sandbox and by the sandbox's content-hash cache).

        A Python checker is not built itself: the launcher is, and the checker's source
        travels as an extra file of each run, so it never enters the build store that
        candidates' runs can read (a checker often computes the answer itself)."""
        key = id(sandbox)
        b = self._builds.get(key)
        if b is None:
            from codegym.judge import harness
            from codegym.sandbox import get_language
            if self.language == "python":
                b = sandbox.build("python", {"main.py": harness.LAUNCHER})
            else:
                main = get_language(self.language).main_file
                b = sandbox.build(self.language, {main: self.code})
            self._builds[key] = b
        return b

    def _run_extras(self) -> tuple[list[str], dict[str, str]]:
        if self.language == "python":
            from codegym.judge import harness
            return ["main.py"], harness.hidden_files({"main.py": self.code})
        return [], {}

    def interpret(self, res) -> CheckResult:
        """Map the checker program's ExecResult to a CheckResult."""
        msg = (res.stderr or res.stdout or "").strip()
        msg = _clip(msg, 300)
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

    def check_many(self, sandbox, items: Sequence[tuple[str, str, str]]) -> list[CheckResult]:
        """Check many (input, expected, got) triples in parallel in `sandbox`."""
        from codegym.sandbox.types import RunRequest
        b = self.build(sandbox)
        if not b.ok:
            res = b.result
            why = f"{res.status}: {res.message}" if res is not None else "build failed"
            detail = _clip((res.stderr or res.stdout) if res is not None else "", 300)
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

    def check(self, expected: str, got: str, input: str = "", sandbox=None) -> CheckResult:  # noqa: A002
        if sandbox is None:
            from codegym.sandbox import make_sandbox
            sandbox = make_sandbox()
        return self.check_many(sandbox, [(input, expected, got)])[0]

    def __repr__(self) -> str:
        return f"<ProgramChecker {self.tag} {self.language}>"


# --------------------------------------------------------------------------- construction

_TEXT = {
    "exact": ExactChecker,
    "lines": LinesChecker,
    "tokens": TokensChecker,
    "lines_unordered": LinesUnorderedChecker,
    "sets": SetsChecker,
}
_SINGLETONS: dict[str, Checker] = {}


def _spec_get(spec: Any, key: str, default: Any = None) -> Any:
    if spec is None:
        return default
    if isinstance(spec, dict):
        return spec.get(key, default)
    return getattr(spec, key, default)


def make_checker(spec: Any = None, *, time_s: float | None = None) -> Checker | ProgramChecker:
    """The text checker (or `ProgramChecker`) for a CheckerSpec, a dict, or a type name.

    None means the stdio default (`tokens`)."""
    if spec is None:
        kind = "tokens"
    elif isinstance(spec, str):
        kind = spec
    else:
        kind = _spec_get(spec, "type", "tokens")
    if kind in _TEXT:
        c = _SINGLETONS.get(kind)
        if c is None:
            c = _SINGLETONS[kind] = _TEXT[kind]()
        return c
    if kind == "float":
        return FloatChecker(_spec_get(spec, "abs_tol", 1e-6), _spec_get(spec, "rel_tol", 1e-6))
    if kind == "program":
        code = _spec_get(spec, "code")
        if not code:
            raise ValueError("program checker without code")
        lim = max(10.0, 2.0 * time_s) if time_s else 10.0
        return ProgramChecker(code, _spec_get(spec, "language", "python") or "python",
                              _spec_get(spec, "args", ()) or (), time_s=lim)
    raise ValueError(f"unknown checker type {kind!r} (known: {', '.join([*_TEXT, 'float', 'program'])})")


def make_value_checker(spec: Any = None) -> ValueChecker:
    """The value checker of a function task: exact unless the spec is `float`.

    Options read from the spec (dict or CheckerSpec attributes, when present):
    ``seq_lenient`` (list == tuple, default True), ``strict_types`` (default False)."""
    kind = spec if isinstance(spec, str) else _spec_get(spec, "type", "exact")
    lenient = _spec_get(spec, "seq_lenient", True) if not isinstance(spec, str) else True
    strict = _spec_get(spec, "strict_types", False) if not isinstance(spec, str) else False
    if kind == "float":
        return ValueChecker(_spec_get(spec, "abs_tol", 1e-6), _spec_get(spec, "rel_tol", 1e-6),
                            seq_lenient=bool(lenient), strict_types=bool(strict))
    return ValueChecker(seq_lenient=bool(lenient), strict_types=bool(strict))


__all__ = [
    "CHECKER_VERSION", "CheckResult", "Checker", "ExactChecker", "LinesChecker", "TokensChecker",
    "FloatChecker", "LinesUnorderedChecker", "SetsChecker", "ValueChecker", "ProgramChecker",
    "Repr", "make_checker", "make_value_checker", "token_diff", "line_diff", "parse_number",
    "floats_close", "CHECK_INPUT", "CHECK_OUTPUT", "CHECK_ANSWER",
]
