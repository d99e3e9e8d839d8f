"""Importers judge like the benchmarks' own harnesses: one test per rule of docs/importers.md.

LiveCodeBench (its import string, ``==`` with a returned tuple as a list, floats exact, the
stdin decimal rule, 6 s, its own few-shot answers), the DeepSeek LeetCode contest set (its
import block, Python's ``==``: a tuple is not a list, the linked-list problems run as
DeepSeek runs them, 25 hand-written solutions accepted and their wrong variants rejected),
EvalPlus (expected values computed on the trusted side, the special oracles and the float
rule on the host, tagged tuple inputs, the references judged after the import with the
limits they need raised) and MultiPL-E (program = prompt + completion + tests, exit 0).
Tests that read /work/shared/benchmarks skip when it is absent.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import pytest

from codegym.importers.humaneval import import_humaneval
from codegym.importers.lcb import LCB_IMPORT_STRING, LCB_PREAMBLE, import_lcb
from codegym.importers.leetcode import DEEPSEEK_IMPORT_HELPER, DEEPSEEK_PREAMBLE, import_leetcode_contest
from codegym.importers.multiple import import_multiple
from codegym.judge import judge
from codegym.judge.checkers import make_checker
from codegym.judge.checkers.values import make_value_checker
from codegym.sandbox import make_sandbox
from codegym.tasks.load import load_task
from codegym.tasks.suite import load_suite

sys.path.insert(0, str(Path(__file__).parent / "data"))
from leetcode_solutions import SOLUTIONS  # noqa: E402 -- test data next to this file

BENCH = Path("/work/shared/benchmarks")
LEETCODE = BENCH / "leetcode_contest" / "leetcode-contest-20240121-Jul.jsonl.gz"
LCB_FEWSHOT = [BENCH / "livecodebench" / "fewshot_func.json", BENCH / "livecodebench" / "fewshot_stdin.json"]


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared benchmark files are not on this machine)")
    return path


@pytest.fixture(scope="module")
def sb():
    return make_sandbox()


# --------------------------------------------------------------------------- LiveCodeBench

#: lcb_runner/evaluation/testing_util.py `import_string`, copied by hand from LiveCodeBench
LCB_UPSTREAM = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\nfrom heapq import *\n"
    "from bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\nfrom statistics import *\n"
    "from itertools import *\nfrom functools import *\nfrom operator import *\nfrom io import *\nfrom sys import *\n"
    "from json import *\nfrom builtins import *\nfrom typing import *\nimport string\nimport re\nimport datetime\n"
    "import collections\nimport heapq\nimport bisect\nimport copy\nimport math\nimport random\nimport statistics\n"
    "import itertools\nimport functools\nimport operator\nimport io\nimport sys\nimport json\n"
    "sys.setrecursionlimit(50000)\n")


def _lcb_file(tmp_path: Path, records: list[dict]) -> Path:
    p = tmp_path / "lcb.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return p


def _lcb_functional(qid: str, fn: str, tests: list[tuple[str, str]], starter_args: str = "self, x") -> dict:
    return {"question_id": qid, "question_title": qid, "question_content": f"Problem {qid}.",
            "platform": "leetcode", "contest_date": "2024-01-01T00:00:00", "difficulty": "easy",
            "starter_code": f"class Solution:\n    def {fn}({starter_args}):\n        ",
            "public_test_cases": json.dumps([{"input": i, "output": o, "testtype": "functional"}
                                             for i, o in tests]),
            "private_test_cases": "[]", "metadata": json.dumps({"func_name": fn})}


def _lcb_stdin(qid: str, tests: list[tuple[str, str]]) -> dict:
    return {"question_id": qid, "question_title": qid, "question_content": f"Problem {qid}.",
            "platform": "atcoder", "contest_date": "2024-01-01T00:00:00", "difficulty": "easy", "starter_code": "",
            "public_test_cases": json.dumps([{"input": i, "output": o, "testtype": "stdin"} for i, o in tests]),
            "private_test_cases": "[]", "metadata": "{}"}


def test_lcb_preamble_is_livecodebench_import_string():
    assert LCB_IMPORT_STRING == LCB_UPSTREAM
    assert LCB_PREAMBLE.startswith(LCB_UPSTREAM) and LCB_PREAMBLE.endswith("sys.set_int_max_str_digits(50000)\n")


def test_lcb_fewshot_answers_pass_and_need_the_preamble(tmp_path, sb):
    """LCB's own few-shot answers (which use List[int] without importing it) are accepted."""
    suites = []
    for i, src in enumerate(map(need, LCB_FEWSHOT)):   # (an import replaces its --out folder: one each)
        rep = import_lcb(src, tmp_path / f"few{i}")
        assert rep.counts["references_accepted"] == 2 and not rep.skipped, rep.summary()
        suites.append(load_suite(tmp_path / f"few{i}"))
    assert sum(map(len, suites)) == 4 and {t.kind for s in suites for t in s} == {"function", "stdio"}
    t = next(s for s in suites if "lcb/fewshot-func-1" in s.ids).get("lcb/fewshot-func-1")
    answer = t.solution("reference").files
    assert "List[int]" in answer["main.py"] and "import" not in answer["main.py"]
    assert judge(t, answer, sandbox=sb).verdict == "accepted"
    bare = t.model_copy(update={"preamble": None})   # what codegym did before: NameError: List
    rep = judge(bare, answer, sandbox=sb)
    assert rep.verdict == "runtime_error" and "name 'List' is not defined" in rep.cases[0].message


def test_lcb_functional_compares_with_eq_and_a_returned_tuple_as_a_list(tmp_path, sb):
    rec = _lcb_functional("1", "f", [("[1, 2]", "[1, [2, 3]]"), ("[0, 0]", "[0, [2, 3]]")], "self, x")
    import_lcb(_lcb_file(tmp_path, [rec]), tmp_path / "out", verify=False)
    t = load_suite(tmp_path / "out").get("lcb/1")
    assert t.preamble == LCB_PREAMBLE and t.checker.seq_lenient == "top"
    head = "class Solution:\n    def f(self, x: List[int]):\n        return "
    assert judge(t, {"main.py": head + "[x[0], [2, 3]]\n"}, sandbox=sb).verdict == "accepted"
    assert judge(t, {"main.py": head + "(x[0], [2, 3])\n"}, sandbox=sb).verdict == "accepted"     # top tuple
    assert judge(t, {"main.py": head + "[x[0], (2, 3)]\n"}, sandbox=sb).verdict == "wrong_answer"  # nested one


def test_lcb_floats_are_exact_unless_asked(tmp_path, sb):
    rec = _lcb_functional("2", "half", [("0.6", "0.3")])
    import_lcb(_lcb_file(tmp_path, [rec]), tmp_path / "exact", verify=False)
    import_lcb(_lcb_file(tmp_path, [rec]), tmp_path / "tol", float_tol=1e-6, verify=False)
    sloppy = "class Solution:\n    def half(self, x):\n        return 0.1 + 0.2\n"   # 0.30000000000000004
    exact = load_suite(tmp_path / "exact").get("lcb/2")
    assert judge(exact, {"main.py": sloppy}, sandbox=sb).verdict == "wrong_answer"
    assert judge(load_suite(tmp_path / "tol").get("lcb/2"), {"main.py": sloppy}, sandbox=sb).verdict == "accepted"
    one = "class Solution:\n    def half(self, x):\n        return x / 2\n"
    assert judge(exact, {"main.py": one}, sandbox=sb).verdict == "accepted"


def test_lcb_stdin_rule_lines_then_decimals(tmp_path, sb):
    rec = _lcb_stdin("abc1_a", [("3\n", "1.50\n2 3\n")])
    import_lcb(_lcb_file(tmp_path, [rec]), tmp_path / "out", verify=False)
    t = load_suite(tmp_path / "out").get("lcb/abc1_a")
    assert t.kind == "stdio" and t.checker.type == "decimal_lines" and t.limits.time_s == 6.0

    def verdict(out: str) -> str:
        return judge(t, {"main.py": f"input()\nprint({out!r}, end='')\n"}, sandbox=sb).verdict
    assert verdict("1.5\n2 3\n") == "accepted"            # Decimal("1.5") == Decimal("1.50")
    assert verdict("\n  1.50  \n2  3\n\n") == "accepted"   # the whole output and each line stripped
    assert verdict("1.500000001\n2 3\n") == "wrong_answer"  # no tolerance
    assert verdict("1.50 2 3\n") == "wrong_answer"         # another number of lines
    c = make_checker("decimal_lines")
    assert c.check("1e2", "100").ok and not c.check("yes", "Yes").ok


def test_lcb_stdin_programs_run_after_the_preamble(tmp_path, sb):
    rec = _lcb_stdin("abc2_a", [("12 18\n", "6\n")])
    import_lcb(_lcb_file(tmp_path, [rec]), tmp_path / "out", verify=False)
    t = load_suite(tmp_path / "out").get("lcb/abc2_a")
    # gcd, Counter and the recursion limit come from LCB's import string
    deep = ("def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n"
            "a, b = map(int, input().split())\nassert depth(20000) == 20000\nprint(gcd(a, b) * len(Counter('x')))\n")
    assert judge(t, {"main.py": deep}, sandbox=sb).verdict == "accepted"
    crash = "a = 1\nb = 2\nraise ValueError('line three')\n"
    rep = judge(t, {"main.py": crash}, sandbox=sb)
    assert rep.verdict == "runtime_error" and "line 3" in rep.cases[0].message, rep.cases[0].message


def test_lcb_time_limit_is_six_seconds_per_test(tmp_path, sb):
    rec = _lcb_functional("3", "f", [("1", "1")])
    import_lcb(_lcb_file(tmp_path, [rec]), tmp_path / "out", verify=False)
    assert load_suite(tmp_path / "out").get("lcb/3").limits.time_s == 6.0
    import_lcb(_lcb_file(tmp_path, [rec]), tmp_path / "fast", verify=False, time_s=0.5)   # the same rule, sooner
    t = load_suite(tmp_path / "fast").get("lcb/3")
    spin = "class Solution:\n    def f(self, x):\n        while True:\n            pass\n"
    assert judge(t, {"main.py": spin}, sandbox=sb).verdict == "timeout"


def test_lcb_unreadable_records_are_skipped_with_line_and_field(tmp_path):
    good = _lcb_functional("9", "f", [("1", "1")])
    bad = dict(good)
    del bad["question_id"]
    src = tmp_path / "mixed.jsonl"
    src.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n{not json\n" + json.dumps(bad) + "\n")
    rep = import_lcb(src, tmp_path / "out", verify=False)
    assert rep.written == ["lcb/9"]
    assert ("line 2", "missing field 'question_id'") in rep.skipped and ("line 4", "missing field 'question_id'") \
        in rep.skipped
    assert any(w == "line 3" and "not valid JSON" in why for w, why in rep.skipped)
    assert rep.reasons["missing field 'question_id'"] == 2 and "missing field 'question_id': 2" in rep.summary()


def test_lcb_importer_names_the_leetcode_importer():
    from codegym.importers.common import ImportError_
    with pytest.raises(ImportError_, match="codegym import leetcode-contest"):
        import_lcb(need(LEETCODE), "/nonexistent-out")


# --------------------------------------------------------------------------- LeetCode contest (DeepSeek)


@pytest.fixture(scope="module")
def leetcode(tmp_path_factory):
    """The problems that have solutions in tests/importers/data, imported."""
    out = tmp_path_factory.mktemp("lc") / "leetcode-contest"
    rep = import_leetcode_contest(need(LEETCODE), out, ids=list(SOLUTIONS))
    return out, rep


def test_deepseek_preamble_is_import_helper():
    lines = [ln for ln in DEEPSEEK_PREAMBLE.split("\n") if ln and not ln.startswith(("try:", "except", "    pass"))]
    assert [ln.strip() for ln in lines] == list(DEEPSEEK_IMPORT_HELPER)
    # numpy (not in the sandbox's interpreter) is imported only where it exists
    ns: dict = {}
    exec(DEEPSEEK_PREAMBLE, ns)
    assert ns["List"] and ns["Counter"] and ns["math"]


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_leetcode_solution_accepted_and_wrong_variant_rejected(leetcode, sb, name):
    out, _ = leetcode
    t = load_task(out / f"{name}.yaml")
    right, wrong = SOLUTIONS[name]
    good = judge(t, {"main.py": right}, sandbox=sb)
    assert good.verdict == "accepted", (good.message, [c.message for c in good.cases if not c.passed][:1])
    assert judge(t, {"main.py": wrong}, sandbox=sb).verdict == "wrong_answer"


def test_leetcode_eq_tells_a_tuple_from_a_list(leetcode, sb):
    out, _ = leetcode
    t = load_task(out / "weekly-contest-374-find-the-peaks.yaml")
    assert t.checker.seq_lenient is False and t.preamble == DEEPSEEK_PREAMBLE
    as_tuple = SOLUTIONS["weekly-contest-374-find-the-peaks"][0].replace("return [i for", "return tuple(i for") \
        .replace("m[i + 1]]", "m[i + 1])")
    assert judge(t, {"main.py": as_tuple}, sandbox=sb).verdict == "wrong_answer"
    assert t.limits.time_s == 10.0


# --------------------------------------------------------------------------- EvalPlus


def _evalplus_file(tmp_path: Path, recs: list[dict]) -> Path:
    p = tmp_path / "plus.jsonl.gz"
    with gzip.open(p, "wt", encoding="utf-8") as fh:
        for r in recs:
            fh.write(json.dumps(r) + "\n")
    return p


def _rec(task_id: str, prompt: str, solution: str, entry: str, base: list, plus: list, atol: float = 0) -> dict:
    return {"task_id": task_id, "prompt": prompt, "canonical_solution": solution, "entry_point": entry,
            "base_input": base, "plus_input": plus, "atol": atol, "test": "", "contract": ""}


def test_evalplus_expected_values_come_from_the_trusted_side(tmp_path, sb, monkeypatch):
    """Every EvalPlus task is a function task: the reference never runs in the candidate's
    process; a value too large to write is computed by the judge, cached by content."""
    monkeypatch.setenv("CODEGYM_CACHE", str(tmp_path / "cache"))
    big = _rec("Demo/7", 'def spread(n: int) -> list:\n    """n numbers"""\n', "    return list(range(n))\n",
               "spread", [[3]], [[5000]])
    rep = import_humaneval(_evalplus_file(tmp_path, [big]), tmp_path / "out", sandbox=sb)
    assert rep.counts["references_accepted"] == 1, rep.summary()
    t = load_suite(tmp_path / "out").get("Demo_7")
    assert t.kind == "function" and t.checker.type == "evalplus"
    plus = next(c for c in t.cases("hidden") if c.name == "plus-0")
    assert not plus.has_expected            # > INLINE_MAX: left to the judge's reference run
    assert list((tmp_path / "cache").rglob("*.json")), "the computed value is cached on disk"
    ok = t.starter["main.py"] + "    return [i for i in range(n)]\n"
    off = t.starter["main.py"] + "    return list(range(1, n + 1))\n"
    assert judge(t, {"main.py": ok}, sandbox=sb).verdict == "accepted"
    assert judge(t, {"main.py": off}, sandbox=sb).verdict == "wrong_answer"


def test_evalplus_comparison_rules_on_the_host():
    ep = make_value_checker({"type": "evalplus", "abs_tol": 0})
    assert not ep.check_value([1, 2], (1, 2)).ok          # EvalPlus: out == exp, a tuple is not a list
    assert ep.check_value(1.0, 1).ok                      # 1 == 1.0
    assert ep.check_value(0.3, 0.1 + 0.2).ok              # floats expected: atol 1e-6 forced
    assert not ep.check_value(0.3, 0.31).ok
    assert not ep.check_value(1.0000001, 1).ok            # under a tolerance the types must match
    tol = make_value_checker({"type": "evalplus", "abs_tol": 0.01})
    assert tol.check_value([1.0, 2.0], [1.005, 2.0]).ok and not tol.check_value([1.0, 2.0], [1.005]).ok
    root = make_value_checker({"type": "evalplus", "abs_tol": 1e-4, "args": ["poly_root"]})
    assert root.check_value(99.0, -0.5, [[1, 2]]).ok and not root.check_value(-0.5, 0.5, [[1, 2]]).ok
    seteq = make_value_checker({"type": "evalplus", "abs_tol": 0, "args": ["set_eq"]})
    assert seteq.check_value((3, 1), [1, 3]).ok
    not_none = make_value_checker({"type": "evalplus", "abs_tol": 0, "args": ["not_none"]})
    from codegym.judge.checkers.values import Repr
    assert not_none.check_value(True, Repr("<re.Match object>", "Match")).ok and not not_none.check_value(True, None).ok


def test_evalplus_tuple_inputs_reach_the_candidate_as_tuples(tmp_path, sb):
    rec = _rec("Mbpp/63", '"""max difference of pairs"""\n',
               "def max_difference(test_list):\n    return max(abs(a - b) for a, b in test_list)\n",
               "max_difference", [[[[3, 5], [1, 7]]]], [[[[10, 3]]]])
    import_humaneval(_evalplus_file(tmp_path, [rec]), tmp_path / "out", sandbox=sb)
    t = load_suite(tmp_path / "out").get("Mbpp_63")
    assert t.kind == "function" and isinstance(t.cases("hidden")[0].args[0][0], dict)   # tagged in the file
    strict = "def max_difference(test_list):\n    assert all(type(p) is tuple for p in test_list)\n" \
             "    return max(abs(a - b) for a, b in test_list)\n"
    assert judge(t, {"main.py": strict}, sandbox=sb).verdict == "accepted"


def test_import_verification_raises_the_limits_a_reference_needs(tmp_path, sb):
    """The reference of Demo/8 needs ~300 MB: imported at 128 MB, its task is fixed to 256, then
    512 MB; a reference that is wrong is reported, not fixed."""
    hungry = ("    block = bytearray(300 << 20)\n    for i in range(0, len(block), 4096):\n        block[i] = 1\n"
              "    return n + len(block) - len(block)\n")
    recs = [_rec("Demo/8", 'def ident(n: int) -> int:\n    """n"""\n', hungry, "ident", [[1]], [[2]]),
            _rec("Demo/9", 'def two(n: int) -> int:\n    """2"""\n', "    return 2\n", "two", [[1]], [[2]])]
    rep = import_humaneval(_evalplus_file(tmp_path, recs), tmp_path / "out", sandbox=sb, memory_mb=128)
    assert rep.counts["references_accepted"] == 2 and rep.counts["limits_raised"] >= 1, rep.summary()
    assert load_suite(tmp_path / "out").get("Demo_8").limits.memory_mb >= 256
    assert any("memory limit raised" in n for n in rep.notes)


# --------------------------------------------------------------------------- MultiPL-E


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_multiple_program_is_prompt_completion_tests_and_passes_on_exit_0(tmp_path, sb):
    rec = {"name": "HumanEval_0_add", "language": "js", "prompt": "function add(a, b){\n",
           "tests": "const assert = require('node:assert');\nfunction test() {\n  let candidate = add;\n"
                    "  assert.deepEqual(candidate(1, 2), 3);\n}\ntest();\n", "stop_tokens": ["\nfunction "]}
    src = tmp_path / "humaneval-js.jsonl"
    src.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    import_multiple(src, tmp_path / "out")
    t = load_suite(tmp_path / "out").get("humaneval-js/HumanEval_0_add")
    assert t.kind == "script" and t.cases("public") == [] and t.limits.time_s == 6.0
    assert judge(t, {"main.js": rec["prompt"] + "  return a + b;\n}\n"}, sandbox=sb).verdict == "accepted"
    assert judge(t, {"main.js": rec["prompt"] + "  return a - b;\n}\n"}, sandbox=sb).verdict == "wrong_answer"
    crash = judge(t, {"main.js": rec["prompt"] + "  process.exit(0);\n}\n"}, sandbox=sb)
    assert crash.verdict != "accepted"   # exit 0 before the tests ran: no marker
