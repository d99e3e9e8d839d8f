"""codegym.judge.run with real executions in the local sandbox: every verdict, early exit vs
full runs, the kinds (stdio, function, script, repo), forging attempts against the
function and script harnesses, program checkers, timing, and the report parsers."""

from __future__ import annotations

import json
import textwrap

import pytest

from codegym.judge.logs.junit import parse_test_report
from codegym.judge.protocol import analyse_test_code, implicit_modules
from codegym.tasks.schema import Task

judge_mod = pytest.importorskip("codegym.judge.run")
judge = judge_mod.judge


@pytest.fixture(scope="module")
def sb():
    try:
        from codegym.sandbox import make_sandbox
    except ImportError as e:  # pragma: no cover - the sandbox is part of the package
        pytest.skip(f"codegym.sandbox is not importable: {e}")
    return make_sandbox("local")


LIM = {"time_s": 1, "memory_mb": 256}


def stdio_task(cases, checker=None, limits=None, languages=None, **kw):
    d = dict(id="t/stdio", statement="s", kind="stdio", language="python", tests={"hidden": cases},
             limits=limits or LIM, **kw)
    if checker is not None:
        d["checker"] = checker
    if languages is not None:
        d["languages"] = languages
    return Task(**d)


def fn_task(cases, entry="add", **kw):
    return Task(id="t/fn", statement="s", kind="function", language="python", entry_point=entry,
                tests={"hidden": cases}, limits=kw.pop("limits", LIM), **kw)


def script_task(codes, entry="add"):
    return Task(id="t/script", statement="s", kind="script", language="python", entry_point=entry,
                tests={"hidden": [{"code": c} for c in codes]}, limits=LIM)


SUM_CASES = [{"stdin": "1 2\n", "expected": "3\n"}, {"stdin": "5 7\n", "expected": "12\n"},
             {"stdin": "-4 4\n", "expected": "0\n"}]
SUM_OK = "a, b = map(int, input().split())\nprint(a + b)\n"


# --------------------------------------------------------------------------- no code / compile


@pytest.mark.parametrize("files", [{}, {"main.py": ""}, {"main.py": "  \n\n"},
                                   {"main.py": "# write your solution here\n# ...\n"},
                                   {"main.py": '"""docstring only"""\npass\n'},
                                   {"other.py": SUM_OK}])
def test_no_code(sb, files):
    rep = judge(stdio_task(SUM_CASES), files, sandbox=sb)
    assert (rep.verdict, rep.stage, rep.progress, rep.passed) == ("no_code", "no_code", 0.0, 0)
    assert rep.total == 3


def test_comment_only_c_is_no_code(sb):
    task = stdio_task(SUM_CASES, languages=["python", "c"])
    rep = judge(task, {"main.c": "/* nothing\n yet */\n// todo\n"}, sandbox=sb, language="c")
    assert rep.verdict == "no_code"


def test_python_compile_error(sb):
    rep = judge(stdio_task(SUM_CASES), {"main.py": "print(1\n"}, sandbox=sb)
    assert (rep.verdict, rep.stage, rep.progress) == ("compile_error", "compile_error", 0.25)
    assert "SyntaxError" in rep.compile_output and rep.cases == []


def test_c_compile_error_and_accepted(sb):
    from codegym.sandbox import get_language
    if not get_language("c").available():
        pytest.skip("gcc is not installed")
    task = stdio_task(SUM_CASES, languages=["python", "c"])
    rep = judge(task, {"main.c": "int main( { return 0; }\n"}, sandbox=sb, language="c")
    assert rep.verdict == "compile_error" and rep.compile_output and rep.progress == 0.25
    src = '#include <stdio.h>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}\n'
    rep = judge(task, {"main.c": src}, sandbox=sb, language="c")
    assert rep.verdict == "accepted" and rep.language == "c"


def test_language_not_accepted(sb):
    with pytest.raises(ValueError):
        judge(stdio_task(SUM_CASES, languages=["python"]), {"main.c": "int main(){}"}, sandbox=sb, language="c")


# --------------------------------------------------------------------------- stdio verdicts


def test_stdio_accepted_report_fields(sb):
    rep = judge(stdio_task(SUM_CASES), {"main.py": SUM_OK}, sandbox=sb)
    assert (rep.verdict, rep.stage, rep.progress, rep.passed, rep.total) == ("accepted", "accepted", 1.0, 3, 3)
    assert rep.checker == "tokens@1" and rep.task_id == "t/stdio" and len(rep.task_hash) == 64
    assert rep.first_failure is None and rep.score == 1.0
    for c in rep.cases:
        assert c.status == "passed" and c.wall_s > 0 and c.memory_mb > 0 and c.time_s >= 0
    json.dumps(rep.to_dict())


@pytest.mark.parametrize("src,verdict,limits", [
    ("print(-1)\n", "wrong_answer", None),
    ("raise ValueError('boom')\n", "runtime_error", None),
    ("while True:\n    pass\n", "timeout", {"time_s": 0.5, "memory_mb": 256}),
    ("x = bytearray(1 << 30)\nprint(len(x))\n", "memory_limit", None),
    ("import sys\nsys.stdout.write('x' * 100000)\n", "output_limit",
     {"time_s": 1, "memory_mb": 256, "output_bytes": 1000}),
])
def test_stdio_failure_verdicts(sb, src, verdict, limits):
    rep = judge(stdio_task(SUM_CASES, limits=limits), {"main.py": src}, sandbox=sb, early_exit=True)
    assert rep.verdict == verdict, [(c.status, c.message) for c in rep.cases]
    assert rep.stage == "ran" and rep.passed == 0 and rep.progress == 0.5
    assert rep.cases[0].status == verdict and rep.first_failure == 0
    if verdict == "wrong_answer":
        assert "expected '3'" in rep.cases[0].diff and "got '-1'" in rep.cases[0].diff
    if verdict == "runtime_error":
        assert "ValueError: boom" in rep.cases[0].message


FIRST_FAIL_SRC = textwrap.dedent("""
    a, b = map(int, input().split())
    if a == 5:
        while True:
            pass
    print(a + b if a != -4 else 1)
""")


def test_first_failing_case_decides_and_full_run_evaluates_all(sb):
    rep = judge(stdio_task(SUM_CASES, limits={"time_s": 0.5, "memory_mb": 256}), {"main.py": FIRST_FAIL_SRC},
                sandbox=sb)
    assert [c.status for c in rep.cases] == ["passed", "timeout", "wrong_answer"]
    assert rep.verdict == "timeout" and rep.first_failure == 1
    assert rep.passed == 1 and rep.progress == pytest.approx(0.5 + 0.5 / 3)


def test_early_exit_skips_cases_after_the_first_failure(sb):
    cases = [{"stdin": "5 7\n", "expected": "12\n"}] + SUM_CASES * 4
    full = judge(stdio_task(cases), {"main.py": "print(-1)\n"}, sandbox=sb)
    early = judge(stdio_task(cases), {"main.py": "print(-1)\n"}, sandbox=sb, early_exit=True)
    assert full.verdict == early.verdict == "wrong_answer"
    assert all(c.status != "skipped" for c in full.cases)
    assert early.cases[0].status == "wrong_answer"
    assert any(c.status == "skipped" for c in early.cases)
    assert early.passed == full.passed == 0


def test_stdio_float_checker_and_case_override(sb):
    cases = [{"stdin": "1 3\n", "expected": "0.333333333\n"},
             {"stdin": "2 3\n", "expected": "0.666666667\n", "checker": "exact"}]
    src = "a, b = map(int, input().split())\nprint(round(a / b, 7))\n"
    rep = judge(stdio_task(cases, checker={"type": "float", "abs_tol": 1e-6, "rel_tol": 1e-6}),
                {"main.py": src}, sandbox=sb)
    assert [c.status for c in rep.cases] == ["passed", "wrong_answer"] and rep.checker == "float@1"


PERM_CHECKER = textwrap.dedent("""
    import sys
    inp, out, ans = (open(p).read() for p in sys.argv[1:4])
    n = int(inp.split()[0])
    got = out.split()
    if sorted(got) == [str(i) for i in range(1, n + 1)]:
        sys.exit(0)
    if len(got) == n:
        print(0.5)
        sys.exit(7)
    print("not a permutation", file=sys.stderr)
    sys.exit(1)
""")


def test_program_checker(sb):
    cases = [{"stdin": "3\n", "expected": "1 2 3\n"}, {"stdin": "4\n", "expected": "1 2 3 4\n"},
             {"stdin": "2\n", "expected": "1 2\n"}]
    task = stdio_task(cases, checker={"type": "program", "code": PERM_CHECKER, "language": "python"})
    src = "n = int(input())\nprint(*(range(n, 0, -1) if n != 4 else [1] * 4) if n != 2 else 'x')\n"
    rep = judge(task, {"main.py": src}, sandbox=sb)
    assert [c.status for c in rep.cases] == ["passed", "wrong_answer", "wrong_answer"], rep.cases
    assert rep.cases[1].score == pytest.approx(0.5) and "partial" in rep.cases[1].message
    assert "not a permutation" in rep.cases[2].diff
    broken = stdio_task(cases[:1], checker={"type": "program", "code": "import sys\nsys.exit(3)\n"})
    assert judge(broken, {"main.py": src}, sandbox=sb).verdict == "sandbox_error"


def test_many_cases_one_build(sb):
    cases = [{"stdin": f"{i} {i + 1}\n", "expected": f"{2 * i + 1}\n"} for i in range(100)]
    rep = judge(stdio_task(cases), {"main.py": SUM_OK}, sandbox=sb)
    assert rep.verdict == "accepted" and rep.passed == 100


# --------------------------------------------------------------------------- function kind

ADD_CASES = [{"args": [1, 2], "expected": 3}, {"args": [5, 7], "expected": 12},
             {"args": [-4, 4], "expected": 0}, {"kwargs": {"a": 10, "b": 20}, "expected": 30}]


def fn(src, cases=ADD_CASES, sb=None, entry="add", **kw):
    return judge(fn_task(cases, entry=entry, **kw.pop("task_kw", {})), {"main.py": src}, sandbox=sb, **kw)


def test_function_accepted_and_wrong(sb):
    rep = fn("def add(a, b):\n    return a + b\n", sb=sb)
    assert rep.verdict == "accepted" and rep.passed == 4 and rep.checker == "values@1"
    rep = fn("def add(a, b):\n    return a * b\n", sb=sb)
    assert rep.verdict == "wrong_answer" and rep.passed == 0
    assert "expected 3, got 2" in rep.cases[0].diff


def test_function_exception_timeout_crash_then_continue(sb):
    src = textwrap.dedent("""
        import os
        def add(a, b):
            if a == 1:
                raise KeyError('nope')
            if a == 5:
                while True:
                    pass
            if a == -4:
                os._exit(0)
            return a + b
    """)
    rep = fn(src, sb=sb, task_kw={"limits": {"time_s": 0.5, "memory_mb": 256}})
    assert [c.status for c in rep.cases] == ["runtime_error", "timeout", "runtime_error", "passed"]
    assert "KeyError" in rep.cases[0].message and rep.verdict == "runtime_error"
    early = fn(src, sb=sb, early_exit=True, task_kw={"limits": {"time_s": 0.5, "memory_mb": 256}})
    assert early.verdict == "runtime_error" and early.cases[1].status == "skipped"


def test_function_eq_trick_object_fails(sb):
    src = textwrap.dedent("""
        class Anything:
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            __hash__ = object.__hash__
        class Liar(int):
            def __eq__(self, other): return True
            __hash__ = int.__hash__
        def add(a, b):
            return Anything() if a == 1 else Liar(99)
    """)
    rep = fn(src, sb=sb)
    assert rep.verdict == "wrong_answer" and rep.passed == 0, [(c.status, c.diff) for c in rep.cases]
    assert "unserialisable" in rep.cases[0].diff


def test_function_monkeypatching_json_and_printing_fake_frames_fail(sb):
    src = textwrap.dedent("""
        import json, os, sys
        json.dumps = lambda *a, **k: '12'
        json.JSONEncoder.encode = lambda self, o: '12'
        def add(a, b):
            # guesses at the frame format, on stdout, on fd 1 and on every low descriptor
            line = '@cg ' + '0' * 32 + ' {"i": %d, "s": "ok", "v": %d}\\n'
            print(line % (1, 12))
            for fd in range(1, 10):
                try:
                    os.write(fd, (line % (0, 3)).encode())
                except OSError:
                    pass
            return -1
    """)
    rep = fn(src, sb=sb)
    assert rep.verdict == "wrong_answer" and rep.passed == 0, [(c.status, c.diff) for c in rep.cases]


def test_function_huge_return_value_is_capped(sb):
    rep = fn("def add(a, b):\n    return 'x' * (8 << 20)\n", sb=sb, early_exit=True)
    assert rep.verdict == "output_limit" and "larger than" in rep.cases[0].message


def test_function_solution_method_and_value_types(sb):
    src = textwrap.dedent("""
        class Solution:
            def __init__(self):
                self.calls = 0
            def pairs(self, n):
                self.calls += 1
                assert self.calls == 1      # a fresh instance per case
                return [(i, float('nan') if i == 0 else i / 2) for i in range(n)], {2, 1}
    """)
    nan = float("nan")
    cases = [{"args": [2], "expected": [[[0, nan], [1, 0.5]], [1, 2]]}]
    # the expected set arrives as a list from JSON: a set is not a list
    rep = fn(src, cases=cases, sb=sb, entry="Solution.pairs")
    assert rep.verdict == "wrong_answer" and "expected [1, 2], got {1, 2}" in rep.cases[0].diff
    src2 = src.replace(", {2, 1}", ", [1, 2]")
    rep = fn(src2, cases=cases, sb=sb, entry="Solution.pairs")
    assert rep.verdict == "accepted", rep.cases[0].diff


def test_function_missing_entry_and_compile_error(sb):
    rep = fn("def plus(a, b):\n    return a + b\n", sb=sb)
    assert rep.verdict == "runtime_error" and "entry point 'add'" in rep.cases[0].message
    rep = fn("def add(a, b)\n    return a + b\n", sb=sb)
    assert rep.verdict == "compile_error" and "SyntaxError" in rep.compile_output


def test_function_expected_computed_by_reference(sb, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGYM_CACHE", str(tmp_path))
    task = fn_task([{"args": [3, 4]}, {"args": [2, 2], "expected": 4}],
                   solutions={"reference": {"files": {"main.py": "def add(a, b):\n    return (a + b, [a])\n"}}})
    rep = judge(task, {"main.py": "def add(a, b):\n    return [a + b, (a,)]\n"}, sandbox=sb)
    assert rep.cases[0].status == "passed"          # tuples from the reference vs lists: lenient
    assert rep.cases[1].status == "wrong_answer"


# --------------------------------------------------------------------------- script kind

SCRIPT_TESTS = [
    "assert add(1, 2) == 3\nassert add(2, 2) == 4\n",
    "def check(candidate):\n    assert candidate(5, 7) == 12\n    assert candidate(-1, 1) == 0\n",
    "import math\nassert math.isclose(add(0.1, 0.2), 0.3)\n",
]
GOOD_ADD = "def add(a, b):\n    return a + b\n"


def test_script_correct_solution_passes(sb):
    src = GOOD_ADD + textwrap.dedent("""
        import collections, typing, logging, dataclasses, functools, enum, heapq, re
        P = collections.namedtuple("P", "x y")
        T = typing.TypeVar("T")
        logging.getLogger("x").debug("hi")
        @dataclasses.dataclass
        class D:
            a: int
        E = enum.Enum("E", "A B")
        @functools.lru_cache(None)
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)
        assert fib(100) > 0
        print("debug output is fine")
    """)
    rep = judge(script_task(SCRIPT_TESTS), {"main.py": src}, sandbox=sb)
    assert rep.verdict == "accepted" and rep.passed == 3, [(c.status, c.message) for c in rep.cases]
    assert rep.checker.startswith("script@")


def test_script_wrong_solution_reports_the_test_line(sb):
    rep = judge(script_task(SCRIPT_TESTS[:2]), {"main.py": "def add(a, b):\n    return a - b\n"}, sandbox=sb)
    assert rep.verdict == "wrong_answer" and rep.passed == 0
    assert "assert add(1, 2) == 3" in rep.cases[0].message
    assert "assert candidate(5, 7) == 12" in rep.cases[1].message


def test_script_leetcode_style_class(sb):
    tests = ["s = Solution()\nassert s.twice([1, 2]) == [2, 4]\nassert s.k == 3\n"]
    task = script_task(tests, entry="Solution.twice")
    good = "class Solution:\n    k = 3\n    def twice(self, xs):\n        return [2 * x for x in xs]\n"
    assert judge(task, {"main.py": good}, sandbox=sb).verdict == "accepted"
    trick = textwrap.dedent("""
        class Any:
            def __eq__(self, o):
                return True
        class Solution:
            k = 3
            def twice(self, xs):
                return [Any(), Any()]
    """)
    rep = judge(task, {"main.py": trick}, sandbox=sb)
    assert rep.verdict == "wrong_answer" and "__eq__" in rep.cases[0].message


#: attempts to pass the add(a, b) script tests without a correct add
FORGERIES = {
    "os_exit": "import os\nos._exit(0)\n",
    "sys_exit": "import sys\nsys.exit(0)\n",
    "systemexit_in_test": "def add(a, b):\n    raise SystemExit(0)\n",
    "kill_self": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
    "fake_marker": "print('0' * 32 + ' PASS')\nprint('PASS')\nimport os\nos._exit(0)\n",
    "patch_assertion": ("import builtins\nclass Quiet(Exception):\n    pass\nbuiltins.AssertionError = Quiet\n"
                        "def add(a, b):\n    return 0\n"),
    "eq_object": ("class X:\n    def __eq__(s, o): return True\n    def __ne__(s, o): return False\n"
                  "    __hash__ = object.__hash__\ndef add(a, b):\n    return X()\n"),
    "int_subclass": ("class L(int):\n    def __eq__(s, o): return True\n    __hash__ = int.__hash__\n"
                     "def add(a, b):\n    return L(0)\n"),
    "patch_isclose": "import math\nmath.isclose = lambda *a, **k: True\ndef add(a, b):\n    return 0.0\n",
    "patch_in_call": "import math\ndef add(a, b):\n    math.isclose = lambda *a, **k: True\n    return 0.0\n",
    "frame_walk_traceback": textwrap.dedent("""
        def add(a, b):
            try:
                raise ValueError
            except ValueError as e:
                f = e.__traceback__.tb_frame
                while f is not None:
                    for k in list(f.f_locals):
                        if k in ("ok", "tamper"):
                            pass
                    f = f.f_back
            return 0
    """),
    "generator_frame": "def g():\n    yield 1\nf = g().gi_frame.f_back\n",
    "getframe": "import sys\nf = sys._getframe(0)\n",
    "inspect_stack": "import inspect\nframes = inspect.stack()\n",
    "gc_scan": "import gc\nstrings = [o for o in gc.get_objects() if isinstance(o, bytes)]\n",
    "proc_mem": "open('/proc/self/mem', 'rb')\n",
    "proc_fd_listing": "import os\nprint(os.listdir('/proc/self/fd'))\nopen('/proc/self/fd/0').read()\n",
    "dev_stdin": "open('/dev/stdin').read()\n",
    "reread_stdin": ("import os\ntry:\n    os.lseek(0, 0, 0)\nexcept OSError:\n    pass\n"
                     "data = os.read(0, 4096)\nif data:\n    print(data.split()[0].decode(), 'PASS')\n    os._exit(0)\n"
                     "def add(a, b):\n    return 0\n"),
    "guess_marker_format": ("import sys\nfor n in ('', '0' * 32, 'x' * 32):\n    print(n + ' PASS')\n"
                            "sys.stdout.flush()\ndef add(a, b):\n    return 0\n"),
    "ctypes": "import ctypes\nctypes.string_at(id(1), 8)\n",
    "settrace": "import sys\nsys.settrace(lambda *a: None)\n",
    "cprofile": "import cProfile\ncProfile.Profile().enable()\n",
    "thread": "import threading\nthreading.Thread(target=print).start()\n",
    "subprocess": "import subprocess\nsubprocess.run(['cat', '/proc/1/environ'])\n",
    "posixsubprocess_builtin": textwrap.dedent("""
        import _imp, importlib.machinery, os
        m = _imp.create_builtin(importlib.machinery.BuiltinImporter.find_spec('_posixsubprocess'))
        r, w = os.pipe()
        m.fork_exec(['/bin/true'], [b'/bin/true'], True, (w,), None, None, -1, -1, -1, -1, -1, -1,
                    r, w, True, False, -1, None, None, None, -1, None, False)
    """),
    "fork": "import os\nif os.fork() == 0:\n    os._exit(0)\n",
    "raise_pass_event": ("import sys\nsys.audit('codegym.pass')\nsys.audit('codegym.register')\n"
                         "def add(a, b):\n    return a + b\n"),
    "signal_handler_frames": ("import signal\nsignal.signal(signal.SIGALRM, lambda s, f: print(f.f_back.f_locals))\n"
                              "signal.alarm(1)\n"),
    "atexit_marker": "import atexit\natexit.register(lambda: print('x PASS'))\ndef add(a, b):\n    return 0\n",
    "write_extension": "open('evil.cpython-311-x86_64-linux-gnu.so', 'wb').write(b'\\x7fELF')\n",
    "marshal_code": "import marshal\nmarshal.loads(marshal.dumps(compile('1', 's', 'eval')))\n",
    "code_replace": "def f():\n    pass\nf.__code__ = f.__code__.replace(co_consts=(None,))\n",
    "reenter_driver": "import __main__\n__main__._codegym_script_driver()\n",
    "subclass_closure_scan": textwrap.dedent("""
        seen, todo = set(), [object]
        while todo:
            c = todo.pop()
            for s in type.__subclasses__(c):
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        for c in seen:
            for v in list(vars(c).values()):
                for cell in getattr(v, '__closure__', None) or ():
                    try:
                        x = cell.cell_contents
                    except ValueError:
                        continue
                    if isinstance(x, bytes) and x.endswith(b' PASS\\n'):
                        print(x.decode().strip())
                        import os
                        os._exit(0)
        def add(a, b):
            return 0
    """),
    "shadow_module": ("class FakeMath:\n    def isclose(self, *a, **k):\n        return True\nmath = FakeMath()\n"
                      "def add(a, b):\n    return 0.0\n"),
    "property_attribute": ("class Box:\n    @property\n    def val(self):\n        return 3\n"
                           "def add(a, b):\n    return Box()\n"),
}


@pytest.fixture(scope="module")
def forge_task():
    # all three test styles: plain asserts, HumanEval check(candidate), a test importing math
    return script_task(SCRIPT_TESTS)


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_script_forgeries_fail(sb, forge_task, name):
    rep = judge(forge_task, {"main.py": FORGERIES[name]}, sandbox=sb)
    assert rep.verdict not in ("accepted", "sandbox_error"), name
    assert rep.passed == 0, (name, [(c.status, c.message) for c in rep.cases])


@pytest.mark.parametrize("when", ["import", "call", "class_member"])
def test_script_monkeypatching_what_the_tests_use_is_caught(sb, forge_task, when):
    """Correct on the int tests, cheating on the float test by patching math.isclose --
    at import, during the call (a module function or a class member)."""
    patch = "import math\nmath.isclose = lambda *a, **k: True\n"
    body = {"import": patch + "def add(a, b):\n    return a + b if type(a) is int else 0.0\n",
            "call": ("import math\ndef add(a, b):\n    if type(a) is int:\n        return a + b\n"
                     "    math.isclose = lambda *a, **k: True\n    return 0.0\n"),
            "class_member": ("import math, collections\ndef add(a, b):\n    if type(a) is int:\n        return a + b\n"
                     "    collections.Counter.__eq__ = lambda *a: True\n"
                     "    math.isclose = lambda *a, **k: True\n    return 0.0\n")}[when]
    rep = judge(forge_task, {"main.py": body}, sandbox=sb)
    assert rep.verdict == "wrong_answer"
    if when != "import":
        assert [c.status for c in rep.cases] == ["passed", "passed", "wrong_answer"]
    assert "was modified" in rep.cases[-1].message


def test_script_driver_hook_blocks_what_it_claims(sb):
    """A correct add plus probes: each forbidden operation raises, and the run still passes."""
    probes = textwrap.dedent("""
        import sys, gc, os
        blocked = []
        def probe(name, f):
            try:
                f()
            except BaseException as e:
                blocked.append(name)
        probe("getframe", lambda: sys._getframe())
        probe("current_frames", lambda: sys._current_frames())
        probe("gc", lambda: gc.get_referrers(sys))
        probe("settrace", lambda: sys.settrace(None))
        probe("proc", lambda: open("/proc/self/maps"))
        probe("write", lambda: open("x.txt", "w"))
        probe("ctypes", lambda: __import__("ctypes"))
        def g():
            yield
        probe("gi_frame", lambda: g().gi_frame)
        assert sorted(blocked) == sorted(["getframe", "current_frames", "gc", "settrace", "proc", "write",
                                          "ctypes", "gi_frame"]), blocked
        def add(a, b):
            return a + b
    """)
    rep = judge(script_task(SCRIPT_TESTS[:1]), {"main.py": probes}, sandbox=sb)
    assert rep.verdict == "accepted", rep.cases[0].message


# --------------------------------------------------------------------------- repo kind


def repo_task(cases):
    return Task(id="t/repo", statement="s", kind="repo", language="python", tests={"hidden": cases}, limits=LIM)


def test_repo_command_reports(sb):
    summary = ("print('PASSED tests/test_a.py::test_one'); print('FAILED tests/test_a.py::test_two - boom');"
               "print('=== 1 failed, 1 passed in 0.1s ===')")
    junit = ("open('r.xml','w').write('<testsuites><testsuite><testcase classname=\"tests.test_a\" name=\"test_one\"/>"
             "<testcase classname=\"tests.test_a\" name=\"test_two\"><failure message=\"x\"/></testcase>"
             "</testsuite></testsuites>')")
    cases = [
        {"command": ["python3", "-c", summary], "tests": ["tests/test_a.py::test_one"]},
        {"command": ["python3", "-c", summary], "tests": ["tests/test_a.py::test_one", "tests/test_a.py::test_two"]},
        {"command": ["python3", "-c", summary], "tests": ["tests/test_a.py::test_missing"]},
        {"command": ["python3", "-c", junit + "#", "--junitxml=r.xml"], "tests": ["tests/test_a.py::test_one"]},
        {"command": ["python3", "-c", junit + "#", "--junitxml=r.xml"], "tests": ["tests/test_a.py::test_two"]},
        {"command": ["python3", "-c", "print('3 passed in 0.01s')"]},
        {"command": ["python3", "-c", "print('2 passed, 1 failed'); raise SystemExit(1)"]},
    ]
    rep = judge(repo_task(cases), {"src/mod.py": "X = 1\n"}, sandbox=sb)
    assert [c.status for c in rep.cases] == ["passed", "wrong_answer", "wrong_answer", "passed", "wrong_answer",
                                             "passed", "wrong_answer"], [(c.status, c.message) for c in rep.cases]
    assert "missing from the report" in rep.cases[2].message
    assert rep.verdict == "wrong_answer" and rep.first_failure == 1


def test_report_parsers():
    rep = parse_test_report("PASSED a.py::t1\nFAILED a.py::t2 - x\nERROR a.py::t3\n"
                                    "==== 1 failed, 1 passed, 1 error in 1s ====\n")
    assert rep.statuses == {"a.py::t1": "passed", "a.py::t2": "failed", "a.py::t3": "error"}
    assert rep.counts == {"failed": 1, "passed": 1, "error": 1}
    rep = parse_test_report("collected 4 items\n\n4 passed in 0.2s\n")
    assert rep.source == "counts" and rep.counts == {"passed": 4}
    xml = ('<testsuite><testcase classname="pkg.test_m.TestA" name="test_b[1]"/>'
           '<testcase classname="pkg.test_m" name="test_c"><skipped/></testcase>'
           '<testcase classname="pkg.test_m" name="test_d"><error/></testcase></testsuite>')
    rep = parse_test_report("", xml)
    assert rep.source == "junit"
    assert rep.status_of("pkg/test_m.py::TestA::test_b[1]") == "passed"
    assert rep.status_of("pkg/test_m.py::test_c") == "skipped"
    assert rep.status_of("pkg/test_m.py::test_d") == "error"
    assert rep.status_of("pkg/test_m.py::nope") is None


def test_sloppy_test_using_an_unimported_module_gets_the_real_one(sb):
    # tests written against a solution that imports math (MBPP style) still work ...
    task = script_task(["assert math.isclose(add(0.1, 0.2), 0.3)\n"])
    good = "import math\ndef add(a, b):\n    return a + b\n"
    assert judge(task, {"main.py": good}, sandbox=sb).verdict == "accepted"
    assert judge(task, {"main.py": GOOD_ADD}, sandbox=sb).verdict == "accepted"
    # ... and a solution cannot put its own `math` there
    fake = ("class M:\n    def isclose(self, *a, **k):\n        return True\nmath = M()\n"
            "def add(a, b):\n    return 7.0\n")
    assert judge(task, {"main.py": fake}, sandbox=sb).verdict == "wrong_answer"


def test_analyse_test_code():
    assert analyse_test_code("def check(candidate):\n    assert candidate(1)\n") == (True, [])
    assert analyse_test_code("def check(c):\n    pass\ncheck(f)\n")[0] is False
    assert analyse_test_code("def check(c):\n    pass\nif __name__ == '__main__':\n    check(f)\n")[0] is False
    call, imports = analyse_test_code("import numpy as np\nfrom math import isclose\nassert 1\n")
    assert call is False and imports == ["numpy", "math", "math.isclose"]
    assert implicit_modules("import re\nassert math.isclose(f(re), 1) and sys.maxsize\n") == ["math", "sys"]


# --------------------------------------------------------------------------- timing & examples


def test_timing_measures_perf_split(sb):
    task = Task(id="t/timed", statement="s", kind="stdio", language="python", limits=LIM,
                tests={"hidden": SUM_CASES[:1], "perf": [{"stdin": "7 8\n", "expected": "15\n"}]},
                perf={"repeats": 3, "warmups": 0}, starter={"main.py": SUM_OK},
                solutions={"reference": {"files": {"main.py": SUM_OK}}})
    rep = judge(task, {"main.py": SUM_OK}, sandbox=sb, timing=True)
    assert rep.verdict == "accepted" and rep.total == 2 and rep.cases[1].split == "perf"
    assert rep.timing is not None and rep.timing.ok and rep.timing.median > 0, rep.timing_error
    wrong_perf = judge(task, {"main.py": SUM_OK.replace("print(a + b)", "print(a + b if a != 7 else 0)")},
                       sandbox=sb, timing=True)
    assert wrong_perf.verdict == "wrong_answer" and wrong_perf.timing is None


def _timed_task():
    return Task(id="t/timed", statement="s", kind="stdio", language="python", limits=LIM,
                tests={"hidden": SUM_CASES[:1], "perf": [{"stdin": "7 8\n", "expected": "15\n"},
                                                         {"stdin": "2 2\n", "expected": "4\n"}]},
                perf={"repeats": 3, "warmups": 0}, starter={"main.py": SUM_OK},
                solutions={"reference": {"files": {"main.py": SUM_OK}}})


def test_perf_runs_launch_as_the_judge_and_check_every_output(sb):
    from codegym.judge.perf import perf_runs
    task = _timed_task()
    good = perf_runs(task, {"main.py": SUM_OK}, sb)
    # Python programs travel as the judge's extra files behind the launcher: the build is
    # shared, so the program's identity is its files' hash
    assert good.inputs[0].extra_files and good.inputs[0].argv == ["main.py"]
    bad_files = {"main.py": SUM_OK.replace("print(a + b)", "print(a + b if a != 7 else 0)")}
    bad = perf_runs(task, bad_files, sb)
    assert good.build.key == bad.build.key and good.files_key != bad.files_key
    assert perf_runs(task, {"main.py": SUM_OK}, sb).files_key == good.files_key
    for runs, want in ((good, [None, None]), (bad, ["wrong_answer", None])):
        for i, req in enumerate(runs.inputs):
            res = sb.run(runs.build, stdin=req.stdin, argv=req.argv, extra_files=req.extra_files)
            assert res.status == "ok"
            got = runs.verify(i, res)
            assert (got and got[0]) == want[i], got
    assert bad.failure is not None and bad.failure[:2] == (0, "wrong_answer")


def test_perf_runs_of_a_function_task_check_the_values(sb):
    from codegym.judge.perf import perf_runs
    task = fn_task([{"args": [1, 2], "expected": 3}, {"args": [40, 2], "expected": 42}])
    for src, want in (("def add(a, b):\n    return a + b\n", None),
                      ("def add(a, b):\n    return a + b if a < 10 else 0\n", ("wrong_answer", 1)),
                      ("def add(a, b):\n    return a + b if a < 40 else 1 // 0\n", ("runtime_error", 1))):
        runs = perf_runs(task, {"main.py": src}, sb)  # no perf split: the hidden one
        req = runs.inputs[0]
        res = sb.run(runs.build, stdin=req.stdin, limits=req.limits, extra_files=req.extra_files)
        got = runs.verify(0, res)
        assert (got and (got[0], runs.failure[0])) == want, (src, got)


def test_a_timed_run_that_answers_wrongly_fails_the_judge(sb, monkeypatch):
    """judge(timing=True): a wrong output in a timed run fails its case as a judged run would
    (forced here: a deterministic program cannot tell its timed runs from its judged ones)."""
    from codegym.judge import perf as judge_mod
    real = judge_mod.perf_runs
    calls = []

    def rigged(*a, **kw):
        runs = real(*a, **kw)
        check = runs.verify

        def verify(i, res):
            calls.append(i)
            if len(calls) == 3:  # the third timed run "answers wrongly"
                res = type(res)(**{**res.__dict__, "stdout": "999\n"})
            return check(i, res)
        runs.verify = verify
        return runs
    monkeypatch.setattr(judge_mod, "perf_runs", rigged)
    rep = judge(_timed_task(), {"main.py": SUM_OK}, sandbox=sb, timing=True)
    assert rep.verdict == "wrong_answer" and rep.passed == rep.total - 1, rep.message
    assert rep.timing is not None and not rep.timing.ok and rep.timing.failure == "wrong_answer"
    failed = [c for c in rep.cases if c.status != "passed"]
    assert len(failed) == 1 and failed[0].split == "perf" and "in a timed run" in failed[0].message


@pytest.mark.parametrize("name", ["bracket-depth", "digit-sum-queries", "residue-pairs", "run-length"])
def test_example_tasks_reference_accepted(sb, name, tmp_path, monkeypatch):
    from pathlib import Path

    from codegym import load_task
    monkeypatch.setenv("CODEGYM_CACHE", str(tmp_path))
    path = Path(__file__).resolve().parents[2] / "tasks" / "examples" / f"{name}.yaml"
    if not path.exists():
        pytest.skip(f"{path} is not there")
    task = load_task(path)
    rep = judge(task, task.solution("reference").files, sandbox=sb, split="all")
    assert rep.verdict == "accepted", rep.message
    for sol in task.solutions.values():
        if sol.expect != "accepted":
            assert judge(task, sol.files, sandbox=sb, split="all").verdict == sol.expect
    starter = judge(task, task.starter_files(), sandbox=sb, split="hidden", early_exit=True)
    assert starter.verdict != "accepted"


def test_script_javascript(sb):
    from codegym.sandbox import get_language
    if not get_language("javascript").available():
        pytest.skip("node is not installed")
    tests = ["const assert = require('assert');\nassert.strictEqual(add(1, 2), 3);\n"
             "assert.strictEqual(add(2, 2), 4);\n"]
    task = Task(id="t/js", statement="s", kind="script", language="javascript", entry_point="add",
                tests={"hidden": [{"code": c} for c in tests]}, limits={"time_s": 2, "memory_mb": 256})
    assert judge(task, {"main.js": "function add(a, b) { return a + b; }\n"}, sandbox=sb).verdict == "accepted"
    rep = judge(task, {"main.js": "function add(a, b) { return a - b; }\n"}, sandbox=sb)
    assert rep.verdict == "wrong_answer" and rep.passed == 0
    rep = judge(task, {"main.js": "console.log('0'.repeat(32) + ' PASS'); process.exit(0);\n"}, sandbox=sb)
    assert rep.verdict == "runtime_error" and rep.passed == 0
