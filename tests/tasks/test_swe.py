"""Repository (SWE-style) tasks: the bundled suite, repository sources, patches, hardened
grading, report parsing, SWE-bench import, and the SWE environment end to end."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tarfile
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import codegym  # noqa: F401 (registers the ids)
from codegym import load_suite, load_task
from codegym.tasks import repo as swe
from codegym.edits.parse import EDIT_FORMATS, render_action
from codegym.agents import BaselineAgent, OracleAgent
from codegym.envs.swe_env import ENV_KWARGS, SWEEnv, extract_repo_tools
from codegym.judge.run import judge
from codegym.rollout.runner import run_episode
from codegym.sandbox import make_sandbox
from codegym.tasks.schema import Task

TEST_ID = "codegym-test/SWE-v0"
if TEST_ID not in gym.registry:
    gym.register(TEST_ID, entry_point="codegym.envs.swe_env:SWEEnv", kwargs=dict(ENV_KWARGS))

SUITE = load_suite("swe")
TASKS = list(SUITE)
IDS = [t.id for t in TASKS]


@pytest.fixture(scope="module")
def sb():
    return make_sandbox("local")


@pytest.fixture(scope="module")
def env():
    e = gym.make(TEST_ID)
    yield e
    e.close()


def _git(cwd, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def _overlay(task, changes: dict) -> dict:
    """Gold files (or the base's) with `changes` over them."""
    return {**{p: c for p, c in swe.reference_files(task).items()}, **changes}


CENTS = "swe/centsplit-lost-cent"


# --------------------------------------------------------------------------- the bundled suite


def test_bundled_suite_has_original_repositories_with_patches():
    assert len(TASKS) >= 5
    for t in TASKS:
        d = swe.swe_data(t)
        assert t.kind == "repo" and t.metadata.source == "original"
        assert swe.repo_source(t).kind == "dir"
        assert d.patch and d.test_patch and d.fail_to_pass and d.pass_to_pass
        assert not set(d.fail_to_pass) & set(d.pass_to_pass)
        modified, added, _ = swe.patch_paths(d.patch)
        assert not any(p.startswith("tests/") for p in modified | added), "gold patches fix code, not tests"
        assert all(p.startswith("tests/") for p in set().union(*swe.patch_paths(d.test_patch)[:2]))
        base = swe.base_tree(t).files
        assert not any(p.endswith((".yaml", ".yml")) for p in base), "a .yaml in a repo would be read as a task"


@pytest.mark.parametrize("task_id", IDS)
def test_gold_resolves_and_noop_does_not(task_id, sb):
    task = SUITE.get(task_id)
    gold = swe.grade(task, swe.reference_files(task), sb)
    noop = swe.grade(task, {}, sb)
    assert gold.resolution.status == "FULL" and gold.report.verdict == "accepted", gold.report.message
    assert gold.report.message.startswith("resolution FULL: FAIL_TO_PASS ")
    assert noop.resolution.status == "NO" and not noop.resolved
    assert all(s != "passed" for s in noop.resolution.fail_to_pass.values())
    assert all(s == "passed" for s in noop.resolution.pass_to_pass.values())   # the bug is the only failure
    assert noop.report.message.startswith("resolution NO: ")


def test_partial_fix_is_partial_and_broken_existing_test_is_no(sb):
    task = SUITE.get(CENTS)
    money = swe.base_tree(task).files["centsplit/money.py"]
    # hands the lost cents to the first shares, not the largest remainders: 2 of 3 tests
    partial = money.replace(
        "        return [Money(self.minor * r // total, self.currency) for r in ratios]\n",
        "        shares = [self.minor * r // total for r in ratios]\n"
        "        for i in range(self.minor - sum(shares)):\n"
        "            shares[i] += 1\n"
        "        return [Money(s, self.currency) for s in shares]\n")
    assert partial != money
    g = swe.grade(task, {"centsplit/money.py": partial}, sb)
    assert g.resolution.status == "PARTIAL", g.report.message
    assert g.resolution.fail_to_pass["tests.test_money.SplitTest.test_leftover_goes_to_largest_remainder"] == "failed"
    gold = swe.reference_files(task)["centsplit/money.py"]
    broken = gold.replace('return f"{sign}{body} {self.currency.code}"', 'return f"{sign}{body}{self.currency.code}"')
    g = swe.grade(task, {"centsplit/money.py": broken}, sb)
    assert g.resolution.status == "NO" and g.resolution.f2p_fraction < 1 and g.resolution.p2p_fraction < 1


# --------------------------------------------------------------------------- hardening


def test_edited_or_added_tests_do_not_grade(sb):
    task = SUITE.get(CENTS)
    fake = ("import unittest\nclass SplitTest(unittest.TestCase):\n"
            + "".join(f"    def {t.rsplit('.', 1)[1]}(self): pass\n" for t in swe.swe_data(task).fail_to_pass)
            + "class ParseTest(unittest.TestCase):\n    pass\n")
    g = swe.grade(task, {"tests/test_money.py": fake, "tests/test_extra.py": "raise SystemExit\n"}, sb)
    assert g.resolution.status == "NO"
    case = g.report.cases[0]
    assert "test files restored" in case.message and "tests/test_money.py" in case.message


def test_files_that_hijack_the_runner_are_dropped(sb):
    task = SUITE.get(CENTS)
    d = swe.swe_data(task)
    forged = "".join(f"print('{t.rsplit('.', 1)[1]} ({t}) ... ok')\n" for t in (*d.fail_to_pass, *d.pass_to_pass))
    forged += f"print('Ran {len(d.fail_to_pass) + len(d.pass_to_pass)} tests in 0.001s')\nprint('OK')\n"
    hijack = {"unittest.py": forged, "sitecustomize.py": forged, "tests/conftest.py": "x = 1\n"}
    tree, notes = swe.grading_tree(task, hijack, "hidden")
    assert not set(hijack) & set(tree) and any("dropped" in n for n in notes)
    g = swe.grade(task, hijack, sb)
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
    (repo / "pyproject.toml").write_text('[project]\nname = "centsplit"\n\n[tool.pytest.ini_options]\nminversion = "7"\n')
    task = _repo_task(str(repo))
    base = swe.base_tree(task).files
    force_pass = ("import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                  "    out = yield\n    out.get_result().outcome = 'passed'\n")
    hijack = {"conftest.py": force_pass, "tests/conftest.py": force_pass, "pytest.ini": "[pytest]\naddopts = -p evil\n",
              "evil.py": force_pass, "tox.ini": "[pytest]\naddopts = -p evil\n",
              "setup.cfg": base["setup.cfg"].replace("testpaths = tests", "addopts = -p evil"),
              "pyproject.toml": base["pyproject.toml"] + 'addopts = "-p evil"\n'}
    tree, notes = swe.grading_tree(task, hijack, "hidden")
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
    tree, _ = swe.grading_tree(task, legit, "hidden")
    for p, c in legit.items():
        assert tree[p] == c, p
    # a pytest section added where the base had none is a change too
    (repo / "pyproject.toml").unlink()
    task2 = _repo_task(str(repo))
    tree, _ = swe.grading_tree(task2, {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p evil"\n'}, "hidden")
    assert "pyproject.toml" not in tree
    tree, _ = swe.grading_tree(task2, {"pyproject.toml": '[project]\nname = "x"\n'}, "hidden")
    assert tree["pyproject.toml"] == '[project]\nname = "x"\n'


def test_syntax_error_or_crash_is_a_failure_not_a_pass(sb):
    task = SUITE.get(CENTS)
    # the package does not import: the test modules are reported as import errors
    g = swe.grade(task, _overlay(task, {"centsplit/currency.py": "def broken(:\n"}), sb)
    assert g.resolution.status == "NO"
    assert set(g.resolution.pass_to_pass.values()) == {"missing"}
    assert "could not be imported" in g.report.cases[1].message
    pub = judge(task, {"centsplit/currency.py": "def broken(:\n"}, sandbox=sb, split="public")
    assert pub.verdict == "wrong_answer"
    # prints passing status lines for every listed test, then dies before the summary
    d = swe.swe_data(task)
    lines = "".join(f"print('{t.rsplit('.', 1)[1]} ({t}) ... ok')\n" for t in (*d.fail_to_pass, *d.pass_to_pass))
    crash = _overlay(task, {"centsplit/__init__.py": "import os, sys\n" + lines + "sys.stdout.flush(); os._exit(0)\n"})
    g = swe.grade(task, crash, sb)
    assert g.resolution.status == "NO"
    assert set(g.resolution.fail_to_pass.values()) == {"incomplete"}


UNITTEST_OUTPUT = """\
tests.test_broken (unittest.loader._FailedTest.tests.test_broken) ... ERROR
test_bad (tests.test_m.T.test_bad) ... FAIL
test_doc (tests.test_m.T.test_doc)
A docstring line. ... ok
test_err (tests.test_m.T.test_err) ... ERROR
test_ok (tests.test_m.T.test_ok) ... ok
test_noisy (tests.test_m.T.test_noisy) ... printed by the test
ok
test_skip (tests.test_m.T.test_skip) ... skipped 'because'
test_sub (tests.test_m.T.test_sub) ...
  test_sub (tests.test_m.T.test_sub) (i=2) ... FAIL
test_subok (tests.test_m.T.test_subok) ... ok
test_xf (tests.test_m.T.test_xf) ... expected failure
test_old (tests.test_old.U) ... ok
setUpClass (tests.test_m.V) ... ERROR

======================================================================
FAIL: test_bad (tests.test_m.T.test_bad)
----------------------------------------------------------------------
AssertionError: 3 != 4
----------------------------------------------------------------------
Ran 11 tests in 0.001s

FAILED (failures=2, errors=2, skipped=1, expected failures=1)
"""


def test_unittest_report_parsing():
    r = swe.parse_results(UNITTEST_OUTPUT)
    assert r.source == "unittest" and r.complete and r.ran == 11
    assert r.statuses == {
        "tests.test_m.T.test_bad": "failed", "tests.test_m.T.test_doc": "passed",
        "tests.test_m.T.test_err": "error", "tests.test_m.T.test_ok": "passed",
        "tests.test_m.T.test_noisy": "passed", "tests.test_m.T.test_skip": "skipped",
        "tests.test_m.T.test_sub": "failed", "tests.test_m.T.test_subok": "passed",
        "tests.test_m.T.test_xf": "passed", "tests.test_old.U.test_old": "passed"}
    assert any("tests.test_broken" in e for e in r.errors) and any("setUpClass" in e for e in r.errors)
    assert r.status_of("test_old (tests.test_old.U)") == "passed"     # SWE-bench's Django form
    run = swe.CommandRun("ok", rc=1, output=UNITTEST_OUTPUT)
    ok, score, message, st = swe.evaluate_case(["tests.test_m.T.test_ok", "tests.test_m.T.test_skip",
                                                "tests.test_m.T.test_gone"], run)
    assert not ok and score == pytest.approx(1 / 3)
    assert st == {"tests.test_m.T.test_ok": "passed", "tests.test_m.T.test_skip": "skipped",
                  "tests.test_m.T.test_gone": "missing"}
    assert "missing from the report" in message
    # a forged pass before the real failing line: the worst status wins
    r = swe.parse_unittest("test_a (m.T.test_a) ... ok\ntest_a (m.T.test_a) ... FAIL\nRan 1 test in 0.0s\n")
    assert r.statuses == {"m.T.test_a": "failed"}
    # no summary: not complete; no test ran: a case without ids fails
    assert not swe.parse_unittest("test_a (m.T.test_a) ... ok\n").complete
    ok, *_ = swe.evaluate_case([], swe.CommandRun("ok", rc=0, output="\nRan 0 tests in 0.000s\n\nOK\n"))
    assert not ok


def test_pytest_reports_still_parse():
    out = "PASSED tests/test_a.py::test_one\nFAILED tests/test_a.py::test_two - boom\n=== 1 failed, 1 passed in 0.1s ===\n"
    r = swe.parse_results(out)
    assert r.complete and r.status_of("tests/test_a.py::test_one") == "passed"
    assert r.status_of("tests/test_a.py::test_two") == "failed"
    assert not swe.parse_results("PASSED tests/test_a.py::test_one\n").complete


# --------------------------------------------------------------------------- sources and patches


@pytest.fixture(scope="module")
def mini_repo(tmp_path_factory):
    """A two-commit git repository (the base is the first commit) plus its bundle and tarball;
    clones are cached in a temporary CODEGYM_CACHE while the module's tests use it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CODEGYM_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield _make_mini_repo(tmp_path_factory.mktemp("src"))


def _make_mini_repo(root: Path):
    repo = root / "repo"
    shutil.copytree(Path(SUITE.get(CENTS).source_path).parent / "centsplit-lost-cent" / "repo", repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD").strip()
    (repo / "LATER.md").write_text("a later commit\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "later")
    _git(repo, "bundle", "create", str(root / "repo.bundle"), "--all")
    with tarfile.open(root / "repo.tar.gz", "w:gz") as tf:
        tf.add(repo, arcname="centsplit-1.0", filter=lambda ti: None if "/.git" in ti.name else ti)
    return root, base


def _repo_task(url: str, commit: str | None = None) -> Task:
    t = SUITE.get(CENTS)
    data = t.to_yaml_dict()
    data["repo"] = {"url": url, "commit": commit}
    data["metadata"]["extra"]["swe"] = {"patch": swe.swe_data(t).patch, "test_patch": swe.swe_data(t).test_patch}
    return Task.model_validate(data)


def test_repository_sources_give_the_same_base(mini_repo):
    root, base = mini_repo
    plain = swe.base_tree(SUITE.get(CENTS))
    for url, commit, kind in [(f"file://{root}/repo", base, "git"), (str(root / "repo.bundle"), base, "bundle"),
                              (str(root / "repo"), base, "dir")]:
        t = _repo_task(url, commit)
        assert swe.repo_source(t).kind == kind
        assert swe.base_tree(t).digest == plain.digest, url
    tree = swe.base_tree(_repo_task(str(root / "repo.tar.gz")))
    assert swe.repo_source(_repo_task(str(root / "repo.tar.gz"))).kind == "tarball"
    assert set(tree.files) == set(plain.files) | {"LATER.md"}      # the tarball is the later state
    head = swe.base_tree(_repo_task(str(root / "repo.bundle")))  # no commit: HEAD
    assert "LATER.md" in head.files
    with pytest.raises(swe.SWEError):
        swe.repo_source(_repo_task(str(root / "nowhere")))


def test_apply_patch_modifies_adds_and_deletes():
    files = {"a.txt": "one\ntwo\n", "gone.txt": "x\n"}
    patch = ("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
             "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"
             "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n"
             "@@ -1 +0,0 @@\n-x\n")
    assert swe.apply_patch(files, patch) == {"a.txt": "one\nTWO\n", "new.txt": "hi\n", "gone.txt": None}
    with pytest.raises(swe.SWEError, match="does not apply"):
        swe.apply_patch({"a.txt": "other\n"}, patch)


# --------------------------------------------------------------------------- SWE-bench import


def _instances(root: Path, base: str) -> list[dict]:
    t = SUITE.get(CENTS)
    d = swe.swe_data(t)
    return [
        {"instance_id": "acme__centsplit-1", "repo": "acme/centsplit", "base_commit": base,
         "patch": d.patch, "test_patch": d.test_patch, "problem_statement": t.statement,
         "FAIL_TO_PASS": json.dumps(list(d.fail_to_pass)), "PASS_TO_PASS": list(d.pass_to_pass),
         "version": "1.0", "environment_setup_commit": base},
        {"instance_id": "django__django-1", "repo": "django/django", "base_commit": "abc",
         "patch": d.patch, "test_patch": d.test_patch.replace("tests/test_money.py", "tests/money/tests.py"),
         "problem_statement": "x", "FAIL_TO_PASS": '["test_a (money.tests.T)"]', "PASS_TO_PASS": "[]"},
        {"instance_id": "broken__x-1", "repo": "a/b", "base_commit": "c"},
    ]


def test_import_swebench_writes_a_loadable_suite_that_grades(mini_repo, tmp_path, sb):
    root, base = mini_repo
    src = tmp_path / "instances.json"
    src.write_text(json.dumps(_instances(root, base)))
    out = tmp_path / "swebench"
    rep = swe.import_swebench(src, out, test_command=list(swe.UNITTEST_COMMAND),
                              repo_url=f"file://{root}/repo")
    assert rep.written == ["swebench/acme__centsplit-1", "swebench/django__django-1"]
    assert [s[0] for s in rep.skipped] == ["broken__x-1"]
    suite = load_suite(out)
    t = suite.get("swebench/acme__centsplit-1")
    assert t.repo.commit == base and t.statement == SUITE.get(CENTS).statement
    assert (out / "acme__centsplit-1" / "gold.patch").read_text() == swe.swe_data(t).patch
    assert swe.swe_data(t).fail_to_pass == swe.swe_data(SUITE.get(CENTS)).fail_to_pass
    assert t.tests.hidden[0].command == [*swe.UNITTEST_COMMAND, "tests/test_money.py"]
    # default runners: Django's own, on dotted test modules
    dj = swe.swebench_task(_instances(root, base)[1])[0]
    assert dj["tests"]["hidden"][0]["command"][-1] == "money.tests"
    assert dj["repo"]["url"] == "https://github.com/django/django.git" and "_1776_" in dj["repo"]["image"]
    # the imported task grades like the bundled one (module-level test targets)
    t = t.model_copy(update={"tests": t.tests.model_copy(update={"hidden": [
        c.model_copy(update={"command": list(swe.UNITTEST_COMMAND)}) for c in t.tests.hidden]})})
    assert swe.grade(t, swe.reference_files(t), sb).resolution.status == "FULL"
    assert swe.grade(t, {}, sb).resolution.status == "NO"


def test_cli_swebench_import(mini_repo, tmp_path, capsys):
    root, base = mini_repo
    src = tmp_path / "instances.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in _instances(root, base)[:1]) + "\n")
    parser = argparse.ArgumentParser(prog="codegym import")
    sub = parser.add_subparsers(dest="what", required=True)
    swe.add_swebench_import(sub)
    assert swe.register_import is swe.add_swebench_import
    args = parser.parse_args(["swebench", str(src), "--out", str(tmp_path / "s"), "--suite-name", "mine",
                              "--repo-url", f"file://{root}/repo", "--json"])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["written"] == ["mine/acme__centsplit-1"]
    assert load_task(tmp_path / "s" / "acme__centsplit-1.yaml").id == "mine/acme__centsplit-1"


# --------------------------------------------------------------------------- the environment


def test_check_env(env):
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)
        check_env(env.unwrapped, skip_render_check=False)


def test_registered_id_builds_the_swe_env():
    # needs codegym/envs/__init__.py: ENV_IDS["codegym/SWE-v0"] with entry point
    # "codegym.envs.swe_env:SWEEnv" (see the report of codegym/swe.py's author)
    env = gym.make("codegym/SWE-v0")
    try:
        assert isinstance(env.unwrapped, SWEEnv)
    finally:
        env.close()


@pytest.mark.parametrize("k", range(len(IDS)))
def test_oracle_resolves_every_task_and_baseline_none(env, k):
    task_id = IDS[k]
    fmt = EDIT_FORMATS[k % len(EDIT_FORMATS)]
    rec = run_episode(env, OracleAgent(format=fmt), seed=k, options={"task_id": task_id})
    assert rec["return"] == 1.0 and rec["verdict"] == "accepted", (fmt, rec["final_observation"])
    assert "resolution FULL" in rec["final_observation"]
    assert rec["steps"][0]["diff"] and rec["steps"][0]["diff_units"]
    rec = run_episode(env, BaselineAgent(), seed=k, options={"task_id": task_id})
    assert rec["return"] == 0.0 and "resolution NO" in rec["final_observation"]
    # the gold patch itself (a git diff) is a valid action
    obs, info = env.reset(options={"task_id": task_id})
    assert info["task_hash"] == SUITE.get(task_id).content_hash
    obs, reward, term, trunc, info = env.step(swe.gold_patch(SUITE.get(task_id)) + "\nsubmit\n")
    assert info["error"] is None and reward == 1.0 and info["swe"]["resolution"] == "FULL"


def test_repository_tools_and_feedback(env):
    obs, info = env.reset(options={"task_id": CENTS})
    assert "## Issue" in obs and "centsplit/money.py" in obs and "python3 -m unittest" in obs
    action = ('Let me look.\n{"name": "search", "arguments": {"pattern": "def allocate", "path": "centsplit"}}\n'
              '<tool_call>{"name": "view_file", "arguments": {"path": "centsplit/money.py", "start_line": 79, '
              '"end_line": 84}}</tool_call>\n```json\n[{"name": "list_files", "arguments": {"path": "tests"}}, '
              '{"name": "view_file", "arguments": {"path": "tests"}}]\n```\n')
    obs, reward, term, trunc, info = env.step(action)
    assert info["error"] is None and not term and reward == 0.0
    assert "centsplit/money.py:79: def allocate" in obs
    assert "79  " in obs and "tests/test_money.py" in obs
    assert [c["name"] for c in info["edits"]["tool_calls"]] == ["search", "view_file", "list_files", "view_file"]
    obs, *_, info = env.step('{"name": "run_tests", "arguments": {"tests": '
                             '"tests.test_money.SplitTest.test_even_split tests.test_money.SplitTest.test_nope"}}')
    assert "passed  tests.test_money.SplitTest.test_even_split" in obs
    assert "not found in the report  tests.test_money.SplitTest.test_nope" in obs
    # an edit runs the existing tests as feedback; breaking one shows it
    obs, *_, info = env.step("centsplit/money.py\n<<<<<<< SEARCH\n"
                             '        return f"{sign}{body} {self.currency.code}"\n=======\n'
                             '        return f"{sign}{body}{self.currency.code}"\n>>>>>>> REPLACE\n')
    assert info["diff"] and info["judge"]["split"] == "public" and info["judge"]["verdict"] == "wrong_answer"
    assert "centsplit/money.py" in info["cumulative_diff"]
    # repository tools mixed with an edit tool in one JSON value are refused, nothing applies
    obs, *_, info = env.step('[{"name": "search", "arguments": {"pattern": "x"}}, '
                             '{"name": "write_file", "arguments": {"path": "a.py", "content": "x"}}]')
    assert info["error"] and "separate" in info["error"] and not info["diff"]
    assert "centsplit/money.py" in info["cumulative_diff"]
    assert env.reset(options={"task_id": CENTS})[1]["cumulative_diff"] == ""


def test_extract_repo_tools_keeps_offsets():
    text = 'x\n{"name": "search", "arguments": {"pattern": "a"}}\n```python path=a.py\n{"name": "search"}\n```\n'
    calls, rest, err = extract_repo_tools(text)
    assert err is None and [c.name for c in calls] == ["search"] and len(rest) == len(text)
    assert rest.startswith("x\n ") and '{"name": "search"}\n```' in rest    # code block content untouched
    _, _, err = extract_repo_tools('{"name": "search", "arguments": {"pattern": "a", "bogus": 1}}')
    assert "unknown argument 'bogus'" in err


def test_fork_and_deleted_files(env):
    env.reset(options={"task_id": CENTS})
    base = env.unwrapped
    fork = base.fork()
    try:
        diff = render_action({"README.md": None}, "unified_diff", fork.workspace.files, "")
        obs, *_, info = fork.step(diff)
        assert info["error"] is None, info["error"]
        assert not fork.workspace.exists("README.md") and base.workspace.exists("README.md")
        assert fork._judge_files()["README.md"] is None
    finally:
        fork.close()
