"""Mining (issue 27 item 6): each commit's own test dependencies, node ids in the lists, a
package ``__init__.py`` the fix changes is the fix's (it was restored to the base when grading,
the cause of candidates whose FAIL_TO_PASS tests the miner saw pass and then failed its own
verification: toolz's e13d5e4f5c, 473ead8c15 ...), and a candidate left out says why."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest
from _repo_tasks import commit_files, git
from _tools import need_bwrap

from codegym import load_suite
from codegym.importers.mine import mine_repository, verification_problem
from codegym.sandbox import make_sandbox
from codegym.tasks.repo import base_tree


def _grade(status: str, f2p: dict, p2p: dict | None = None, message: str = "") -> SimpleNamespace:
    summary = f"resolution {status}: FAIL_TO_PASS {sum(v == 'passed' for v in f2p.values())}/{len(f2p)}, " \
              f"PASS_TO_PASS 0/0"
    res = SimpleNamespace(fail_to_pass=f2p, pass_to_pass=p2p or {}, summary=lambda: summary)
    return SimpleNamespace(resolved=status == "FULL", resolution=res,
                           report=SimpleNamespace(message=f"{summary}; {message}" if message else summary))


def test_verification_problem_says_why():
    ok = _grade("FULL", {"t::a": "passed"})
    no = _grade("NO", {"t::a": "passed"})
    assert verification_problem({"gold": ok, "noop": no, "tests_only": no, "tests_gutted": no}) == ""
    gold = _grade("NO", {"t::a": "missing", "t::b": "passed"},
                  message="case 0 (FAIL_TO_PASS): wrong_answer: errors outside tests: pkg.tests.test_a: "
                          "collection failure")
    why = verification_problem({"gold": gold, "noop": no, "tests_only": no, "tests_gutted": no})
    assert why.startswith("the gold patch does not resolve it (resolution NO: FAIL_TO_PASS 1/2, PASS_TO_PASS 0/0; "
                          "t::a missing): case 0 (FAIL_TO_PASS): wrong_answer: errors outside tests: ")
    assert verification_problem({"gold": ok, "noop": ok, "tests_only": no, "tests_gutted": no}) \
        .startswith("the unchanged repository passes its tests too")
    assert verification_problem({"gold": ok, "noop": no, "tests_only": no, "tests_gutted": ok}) \
        .startswith("gutted tests with a conftest.py that passes every report pass them")


TEST_A = "import six\n\nfrom pkg import a\n\n\ndef test_a():\n    assert a() == 1 and six.PY3\n"


@pytest.fixture
def history(tmp_path, monkeypatch):
    """A repository like toolz (tests inside the package) whose older commits declare a test
    dependency (six) that HEAD no longer does."""
    monkeypatch.setenv("CODEGYM_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "acme+mini"
    commit_files(repo, {"LICENSE": "Permission is hereby granted, free of charge, to any person obtaining a copy\n",
                        "pyproject.toml": '[project]\nname = "pkg"\ndependencies = ["six"]\n',
                        "pkg/__init__.py": "def a():\n    return 1\n", "pkg/tests/__init__.py": "",
                        "pkg/tests/test_a.py": TEST_A}, "base")
    # the fix exports a new function from the package's __init__.py
    fix = commit_files(repo, {"pkg/b.py": "def b():\n    return 2\n",
                              "pkg/__init__.py": "from .b import b\n\n\ndef a():\n    return 1\n",
                              "pkg/tests/test_b.py": "import six\n\nfrom pkg import b\n\n\ndef test_b():\n"
                                                     "    assert b() == 2 and six.PY3\n"}, "add b")
    # a fix whose module is named like the standard library's: grading drops such an added file
    shadow = commit_files(repo, {"calendar.py": "MINE = True\n", "pkg/c.py": "import calendar\n",
                                 "pkg/tests/test_c.py": "def test_c():\n    import calendar\n"
                                                        "    assert calendar.MINE\n"}, "add calendar")
    commit_files(repo, {"pyproject.toml": '[project]\nname = "pkg"\n',
                        "pkg/tests/test_a.py": TEST_A.replace("import six\n\n", "").replace(" and six.PY3", "")},
                 "drop six")
    return repo, fix, shadow


def test_mining_uses_each_commits_dependencies_and_says_why(history, tmp_path):
    need_bwrap()
    repo, fix, shadow = history
    out = tmp_path / "mined"
    rep = mine_repository(repo, out, name="acme/mini", sandbox=make_sandbox("local"), log=None)
    print(rep.summary())
    assert rep.candidates == 2
    assert rep.kept == [f"mined/mini-{fix[:10]}"], rep.summary()
    [(sha, why)] = rep.skipped
    assert sha == shadow and why.startswith("not verified: the gold patch does not resolve it (resolution NO")
    assert "calendar.py" in why, why        # the note: the added file was dropped
    t = load_suite(out).get(f"mined/mini-{fix[:10]}")
    swe = t.metadata.extra["swe"]
    assert swe["install"] == ["pytest", "six"]                      # the commit's, not HEAD's
    assert t.tests.hidden[0].tests == ["pkg/tests/test_b.py::test_b"]   # node ids, as SWE-bench lists them
    assert swe["mined"]["verified"] == {"gold": "FULL", "noop": "NO", "tests_only": "NO", "tests_gutted": "NO"}
    assert "def b():" not in base_tree(t).files.get("pkg/b.py", "")
    assert os.path.isfile(out / "repos" / "acme__mini.bundle")
    assert git(repo, "status", "--porcelain") == ""
