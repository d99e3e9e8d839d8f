"""The judge's repo kind (codegym.judge.kinds.repo): resolution FULL / PARTIAL / NO of the
bundled tasks, and the hardening (edited tests, runner hijacks, configuration, crashes)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _repo_tasks import CENTS, IDS, SUITE, overlay, repo_task

from codegym.importers.swebench import grade
from codegym.judge.kinds.repo import grading_tree
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox
from codegym.tasks.repo import base_tree, reference_files, swe_data


@pytest.fixture(scope="module")
def sb():
    return make_sandbox("local")


@pytest.mark.parametrize("task_id", IDS)
def test_gold_resolves_and_noop_does_not(task_id, sb):
    task = SUITE.get(task_id)
    gold = grade(task, reference_files(task), sb)
    noop = grade(task, {}, sb)
    assert gold.resolution.status == "FULL" and gold.report.verdict == "accepted", gold.report.message
    assert gold.report.message.startswith("resolution FULL: FAIL_TO_PASS ")
    assert noop.resolution.status == "NO" and not noop.resolved
    assert all(s != "passed" for s in noop.resolution.fail_to_pass.values())
    assert all(s == "passed" for s in noop.resolution.pass_to_pass.values())   # the bug is the only failure
    assert noop.report.message.startswith("resolution NO: ")


def test_partial_fix_is_partial_and_broken_existing_test_is_no(sb):
    task = SUITE.get(CENTS)
    money = base_tree(task).files["centsplit/money.py"]
    # hands the lost cents to the first shares, not the largest remainders: 2 of 3 tests
    partial = money.replace(
        "        return [Money(self.minor * r // total, self.currency) for r in ratios]\n",
        "        shares = [self.minor * r // total for r in ratios]\n"
        "        for i in range(self.minor - sum(shares)):\n"
        "            shares[i] += 1\n"
        "        return [Money(s, self.currency) for s in shares]\n")
    assert partial != money
    g = grade(task, {"centsplit/money.py": partial}, sb)
    assert g.resolution.status == "PARTIAL", g.report.message
    assert g.resolution.fail_to_pass["tests.test_money.SplitTest.test_leftover_goes_to_largest_remainder"] == "failed"
    gold = reference_files(task)["centsplit/money.py"]
    broken = gold.replace('return f"{sign}{body} {self.currency.code}"', 'return f"{sign}{body}{self.currency.code}"')
    g = grade(task, {"centsplit/money.py": broken}, sb)
    assert g.resolution.status == "NO" and g.resolution.f2p_fraction < 1 and g.resolution.p2p_fraction < 1


def test_edited_or_added_tests_do_not_grade(sb):
    task = SUITE.get(CENTS)
    fake = ("import unittest\nclass SplitTest(unittest.TestCase):\n"
            + "".join(f"    def {t.rsplit('.', 1)[1]}(self): pass\n" for t in swe_data(task).fail_to_pass)
            + "class ParseTest(unittest.TestCase):\n    pass\n")
    g = grade(task, {"tests/test_money.py": fake, "tests/test_extra.py": "raise SystemExit\n"}, sb)
    assert g.resolution.status == "NO"
    case = g.report.cases[0]
    assert "test files restored" in case.message and "tests/test_money.py" in case.message


def test_files_that_hijack_the_runner_are_dropped(sb):
    task = SUITE.get(CENTS)
    d = swe_data(task)
    forged = "".join(f"print('{t.rsplit('.', 1)[1]} ({t}) ... ok')\n" for t in (*d.fail_to_pass, *d.pass_to_pass))
    forged += f"print('Ran {len(d.fail_to_pass) + len(d.pass_to_pass)} tests in 0.001s')\nprint('OK')\n"
    hijack = {"unittest.py": forged, "sitecustomize.py": forged, "tests/conftest.py": "x = 1\n"}
    tree, notes = grading_tree(task, hijack, "hidden")
    assert not set(hijack) & set(tree) and any("dropped" in n for n in notes)
    g = grade(task, hijack, sb)
    assert g.resolution.status == "NO"
    assert "dropped" in g.report.cases[0].message


def test_the_runners_configuration_and_hooks_are_graded_as_the_task_has_them(tmp_path):
    """conftest.py hooks and pytest configuration (addopts = -p plugin) can turn failing
    tests into passes: they are restored to the base (added ones removed); a setup.cfg or
    pyproject.toml is restored only when its pytest section changed."""
    repo = tmp_path / "repo"
    shutil.copytree(Path(SUITE.get(CENTS).source_path).parent / "centsplit-lost-cent" / "repo", repo)
    (repo / "conftest.py").write_text("collect_ignore = []\n")
    (repo / "setup.cfg").write_text("[metadata]\nname = centsplit\n\n[tool:pytest]\ntestpaths = tests\n")
    (repo / "pyproject.toml").write_text('[project]\nname = "centsplit"\n\n'
                                         '[tool.pytest.ini_options]\nminversion = "7"\n')
    task = repo_task(str(repo))
    base = base_tree(task).files
    force_pass = ("import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                  "    out = yield\n    out.get_result().outcome = 'passed'\n")
    hijack = {"conftest.py": force_pass, "tests/conftest.py": force_pass, "pytest.ini": "[pytest]\naddopts = -p evil\n",
              "evil.py": force_pass, "tox.ini": "[pytest]\naddopts = -p evil\n",
              "setup.cfg": base["setup.cfg"].replace("testpaths = tests", "addopts = -p evil"),
              "pyproject.toml": base["pyproject.toml"] + 'addopts = "-p evil"\n'}
    tree, notes = grading_tree(task, hijack, "hidden")
    for p in ("conftest.py", "setup.cfg", "pyproject.toml"):
        assert tree[p] == base[p], p
    assert not {"tests/conftest.py", "pytest.ini", "tox.ini"} & set(tree)
    assert tree["evil.py"] == force_pass  # a plain module: harmless once nothing loads it
    assert any("restored" in n and "conftest.py" in n for n in notes), notes
    # changes outside the pytest sections, or to settings that cannot pass a test, are the
    # candidate's to make
    legit = {"setup.cfg": base["setup.cfg"].replace("name = centsplit", "name = centsplit2")
             + "filterwarnings =\n    ignore::DeprecationWarning\n",
             "pyproject.toml": base["pyproject.toml"].replace('name = "centsplit"', 'name = "centsplit2"'),
             "tox.ini": "[tox]\nenvlist = py311\n\n[pytest]\nmarkers =\n    slow: slow tests\n"}
    tree, _ = grading_tree(task, legit, "hidden")
    for p, c in legit.items():
        assert tree[p] == c, p
    # a pytest section added where the base had none is a change too
    (repo / "pyproject.toml").unlink()
    task2 = repo_task(str(repo))
    tree, _ = grading_tree(task2, {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p evil"\n'}, "hidden")
    assert "pyproject.toml" not in tree
    tree, _ = grading_tree(task2, {"pyproject.toml": '[project]\nname = "x"\n'}, "hidden")
    assert tree["pyproject.toml"] == '[project]\nname = "x"\n'


def test_syntax_error_or_crash_is_a_failure_not_a_pass(sb):
    task = SUITE.get(CENTS)
    # the package does not import: the test modules are reported as import errors
    g = grade(task, overlay(task, {"centsplit/currency.py": "def broken(:\n"}), sb)
    assert g.resolution.status == "NO"
    assert set(g.resolution.pass_to_pass.values()) == {"missing"}
    assert "could not be imported" in g.report.cases[1].message
    pub = judge(task, {"centsplit/currency.py": "def broken(:\n"}, sandbox=sb, split="public")
    assert pub.verdict == "wrong_answer"
    # prints passing status lines for every listed test, then dies before the summary
    d = swe_data(task)
    lines = "".join(f"print('{t.rsplit('.', 1)[1]} ({t}) ... ok')\n" for t in (*d.fail_to_pass, *d.pass_to_pass))
    crash = overlay(task, {"centsplit/__init__.py": "import os, sys\n" + lines + "sys.stdout.flush(); os._exit(0)\n"})
    g = grade(task, crash, sb)
    assert g.resolution.status == "NO"
    assert set(g.resolution.fail_to_pass.values()) == {"incomplete"}
