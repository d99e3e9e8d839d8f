"""Special-judge generation (`codegym tasks gen-checker`) against a scripted local model.

The task prints any pair of positions whose values sum to a target: its reference and
an alternative solution print different, equally correct pairs, so the default token
checker rejects the alternative. The scripted server answers three checkers in turn:
one that accepts everything, one that crashes on malformed output, one that is right.
Only the right one is kept, written into the task YAML with its validation record,
after two rounds of feedback; the alternative solution is then accepted, a wrong one
still rejected, and the rest of the file is unchanged.
"""

from __future__ import annotations

import json

import pytest
import yaml
from _fake_openai import FakeOpenAIServer

from codegym.cli.main import main as cli_main
from codegym.evaluation.checkergen import RECORD_KEY, outputs_differ, validate_checker, validation_set, write_checker
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox
from codegym.tasks.load import load_task

REFERENCE = """\
import sys
data = sys.stdin.read().split()
n, t = int(data[0]), int(data[1])
a = list(map(int, data[2:2 + n]))
seen = {}
for j, x in enumerate(a):
    if t - x in seen:
        print(seen[t - x] + 1, j + 1)
        break
    seen.setdefault(x, j)
else:
    print(-1)
"""
#: also correct: the last pair found scanning from the end
ALTERNATIVE = """\
import sys
data = sys.stdin.read().split()
n, t = int(data[0]), int(data[1])
a = list(map(int, data[2:2 + n]))
for i in range(n - 1, -1, -1):
    for j in range(n - 1, i, -1):
        if a[i] + a[j] == t:
            print(i + 1, j + 1)
            raise SystemExit
print(-1)
"""
WRONG = REFERENCE.replace("print(seen[t - x] + 1, j + 1)", "print(seen[t - x] + 1, j)")

TASK = f"""\
# a pair-sum task: several answers are correct
id: multi/pair-sum
title: Pair with a given sum
statement: |
  Read n and t, then n integers a_1..a_n. Print two positions i < j with a_i + a_j = t
  (any such pair), or -1 if there is none.
kind: stdio
language: python
starter:
  main.py: |
    print(-1)
tests:
  public:
    - {{stdin: "4 5\\n1 4 2 3\\n", expected: "1 2\\n"}}
  hidden:
    - {{stdin: "5 6\\n1 5 2 4 3\\n", expected: "1 2\\n"}}
    - {{stdin: "3 100\\n1 2 3\\n", expected: "-1\\n"}}
    - {{stdin: "6 7\\n3 4 1 6 2 5\\n", expected: "1 2\\n"}}
    - {{stdin: "2 4\\n2 2\\n", expected: "1 2\\n"}}
solutions:
  reference:
    files:
      main.py: |
{''.join('        ' + ln + chr(10) for ln in REFERENCE.splitlines())}  alternative:
    files:
      main.py: |
{''.join('        ' + ln + chr(10) for ln in ALTERNATIVE.splitlines())}metadata:
  difficulty: easy
  tags: [multiple-answers]
"""

ACCEPT_ALL = "import sys\nsys.exit(0)\n"
CRASHES = """\
import sys
inp, out, ans = (open(p).read() for p in sys.argv[1:4])
i, j = map(int, out.split())          # crashes on "-1", empty or garbage output
n, t, *a = map(int, inp.split())
sys.exit(0 if i < j and a[i - 1] + a[j - 1] == t else 1)
"""
GOOD = """\
import sys
inp, out, ans = (open(p).read() for p in sys.argv[1:4])
n, t, *a = map(int, inp.split())
toks, want = out.split(), ans.split()
if want == ["-1"]:
    sys.exit(0 if toks == ["-1"] else 1)
if len(toks) != 2 or not all(x.lstrip("-").isdigit() for x in toks):
    sys.exit(1)
i, j = map(int, toks)
sys.exit(0 if 1 <= i < j <= n and a[i - 1] + a[j - 1] == t else 1)
"""


def reply(code: str) -> str:
    return f"Here is the checker.\n\n```python\n{code}```\n"


@pytest.fixture()
def task_file(tmp_path):
    p = tmp_path / "tasks" / "multi" / "pair-sum.yaml"
    p.parent.mkdir(parents=True)
    p.write_text(TASK)
    return p


@pytest.fixture(scope="module")
def sb():
    s = make_sandbox("local", workers=2)
    yield s
    s.close()


def test_validation_set_has_both_kinds(task_file, sb):
    task = load_task(task_file)
    samples = validation_set(task, sb)
    assert outputs_differ(samples)  # the two solutions disagree on a case
    origins = {s.origin.split(":")[0] for s in samples}
    assert {"solution", "layout", "perturb", "mutant"} <= origins
    assert any(s.accept and s.origin == "solution:alternative" for s in samples)
    assert not any(s.accept for s in samples if s.origin.startswith(("perturb", "mutant")))
    v = validate_checker(GOOD, samples, sb)
    assert v.ok and v.accepted == v.positives and v.rejected == v.negatives and v.crashes == 0
    bad = validate_checker(ACCEPT_ALL, samples, sb)
    assert not bad.ok and bad.rejected == 0 and bad.accepted == bad.positives
    crash = validate_checker(CRASHES, samples, sb)
    assert not crash.ok and crash.crashes > 0


def test_only_the_good_checker_is_kept(task_file, sb, capsys):
    task = load_task(task_file)
    alt = task.solution("alternative").files
    assert judge(task, alt, sandbox=sb).verdict == "wrong_answer"  # the token checker refuses it
    before = task_file.read_text()
    with FakeOpenAIServer([reply(ACCEPT_ALL), reply(CRASHES), reply(GOOD)]) as fake:
        rc = cli_main(["tasks", "gen-checker", str(task_file), "--agent",
                       f"llm:model=fake,base_url={fake.base_url},max_retries=0"])
        reqs = fake.requests
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "checker kept after 3 attempt(s)" in out
    assert len(reqs) == 3
    second, third = reqs[1]["messages"][-1]["content"], reqs[2]["messages"][-1]["content"]
    assert "accepted a wrong output" in second          # feedback on the accept-everything checker
    assert "the checker failed" in third and "Traceback" in third   # ... and on the crashing one
    assert "Pair with a given sum" in reqs[0]["messages"][1]["content"]

    data = yaml.safe_load(task_file.read_text())
    assert data["checker"] == {"type": "program", "language": "python", "code": GOOD}
    rec = data["metadata"]["extra"][RECORD_KEY]
    assert rec["ok"] and rec["attempts"] == 3 and rec["crashes"] == 0
    assert rec["accepted"] == rec["positives"] > 0 and rec["rejected"] == rec["negatives"] > 0
    assert data["metadata"]["tags"] == ["multiple-answers"] and data["metadata"]["difficulty"] == "easy"
    # everything but the two rewritten blocks is as it was written
    keep = [ln for ln in before.splitlines() if not ln.startswith(("metadata", "  difficulty", "  tags"))]
    assert all(ln in task_file.read_text().splitlines() for ln in keep)
    assert task_file.read_text().startswith("# a pair-sum task")

    task = load_task(task_file)
    assert judge(task, alt, sandbox=sb).verdict == "accepted"
    assert judge(task, task.solution("reference").files, sandbox=sb).verdict == "accepted"
    assert judge(task, {"main.py": WRONG}, sandbox=sb).verdict == "wrong_answer"


def test_no_valid_checker_leaves_the_task_alone(task_file, capsys):
    before = task_file.read_text()
    with FakeOpenAIServer([reply(ACCEPT_ALL), "I cannot write code today.", reply(CRASHES)]) as fake:
        rc = cli_main(["tasks", "gen-checker", str(task_file.parent), "--agent",
                       f"llm:model=fake,base_url={fake.base_url},max_retries=0"])
    out = capsys.readouterr().out
    assert rc == 1 and "FAIL multi/pair-sum: no valid checker in 3 attempt(s)" in out
    assert "no code" in out
    assert task_file.read_text() == before


def test_write_checker_keeps_the_file_and_restores_on_error(task_file):
    write_checker(task_file, GOOD, {"ok": True, "note": "x"})
    text = task_file.read_text()
    assert text.count("checker:") == 1 and "tests:" in text
    task = load_task(task_file)
    assert task.checker.type == "program" and task.metadata.extra[RECORD_KEY]["note"] == "x"
    # a second write replaces both blocks instead of adding new ones
    write_checker(task_file, GOOD.replace("sys.exit(1)", "sys.exit(1)  # v2"), {"ok": True, "note": "y"})
    again = task_file.read_text()
    assert again.count("checker:") == 1 and again.count("metadata:") == 1 and "# v2" in again
    assert json.dumps(load_task(task_file).metadata.extra[RECORD_KEY]) == json.dumps({"ok": True, "note": "y"})
