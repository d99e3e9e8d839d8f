"""SWE-bench import (codegym.importers.swebench) and ``codegym import swebench``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from _repo_tasks import CENTS, SUITE, make_mini_repo

from codegym import load_suite, load_task
from codegym.cli.imports import add_swebench_import
from codegym.cli.imports import register as register_imports
from codegym.importers.swebench import grade, import_swebench, repo_url_for, swebench_flavour, swebench_task
from codegym.sandbox import make_sandbox
from codegym.tasks.repo import UNITTEST_COMMAND, reference_files, swe_data


@pytest.fixture(scope="module")
def sb():
    return make_sandbox("local")


@pytest.fixture(scope="module")
def mini_repo(tmp_path_factory):
    """A two-commit git repository (the base is the first commit) plus its bundle and tarball;
    clones are cached in a temporary CODEGYM_CACHE while the module's tests use it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CODEGYM_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield make_mini_repo(tmp_path_factory.mktemp("src"))


def _instances(root: Path, base: str) -> list[dict]:
    t = SUITE.get(CENTS)
    d = swe_data(t)
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
    rep = import_swebench(src, out, test_command=list(UNITTEST_COMMAND),
                              repo_url=f"file://{root}/repo")
    # the local repository is stored in the suite (repos/*.bundle); an instance whose base
    # commit is not in it (the made-up Django one) is skipped, saying so
    assert rep.written == ["swebench/acme__centsplit-1"]
    assert [s[0] for s in rep.skipped] == ["record 2 (django__django-1)", "record 3 (broken__x-1)"]
    assert rep.skipped[0][1] == f"django__django-1: base commit abc is not in the repository file://{root}/repo"
    assert (out / "repos" / "acme__centsplit.bundle").is_file()
    assert "missing field base_commit" not in rep.skipped[1][1] and "missing field patch" in rep.skipped[1][1]
    suite = load_suite(out)
    t = suite.get("swebench/acme__centsplit-1")
    assert t.repo.url == "repos/acme__centsplit.bundle" and t.statement == SUITE.get(CENTS).statement
    assert t.metadata.extra["swe"]["instance_id"] == "acme__centsplit-1"
    assert (out / "acme__centsplit-1" / "gold.patch").read_text() == swe_data(t).patch
    assert swe_data(t).fail_to_pass == swe_data(SUITE.get(CENTS)).fail_to_pass
    assert t.tests.hidden[0].command == [*UNITTEST_COMMAND, "tests/test_money.py"]
    # default runners: Django's own, on dotted test modules
    dj = swebench_task(_instances(root, base)[1])[0]
    assert dj["tests"]["hidden"][0]["command"][-1] == "money.tests"
    assert dj["repo"]["url"] == "https://github.com/django/django.git" and "image" not in dj["repo"]
    assert dj["metadata"]["extra"]["swe"]["log_parser"] == "parse_log_django"   # SWE-bench's own reader
    # the imported task grades like the bundled one (module-level test targets)
    t = t.model_copy(update={"tests": t.tests.model_copy(update={"hidden": [
        c.model_copy(update={"command": list(UNITTEST_COMMAND)}) for c in t.tests.hidden]})})
    assert grade(t, reference_files(t), sb).resolution.status == "FULL"
    assert grade(t, {}, sb).resolution.status == "NO"


def test_cli_swebench_import(mini_repo, tmp_path, capsys):
    root, base = mini_repo
    src = tmp_path / "instances.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in _instances(root, base)[:1]) + "\n")
    parser = argparse.ArgumentParser(prog="codegym import")
    sub = parser.add_subparsers(dest="what", required=True)
    add_swebench_import(sub)
    args = parser.parse_args(["swebench", str(src), "--out", str(tmp_path / "s"), "--suite-name", "mine",
                              "--repo-url", f"file://{root}/repo", "--json"])
    codegym_cli = argparse.ArgumentParser(prog="codegym")  # `codegym import` registers the same command
    register_imports(codegym_cli.add_subparsers(dest="command"))
    assert codegym_cli.parse_args(["import", "swebench", str(src), "--out", "x"]).func is args.func
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["written"] == ["mine/acme__centsplit-1"]
    assert load_task(tmp_path / "s" / "acme__centsplit-1.yaml").id == "mine/acme__centsplit-1"


def test_flavours_templates_and_record_environments():
    base = {"instance_id": "o__n-1", "repo": "o/n", "base_commit": "c", "patch": "p", "test_patch": "t",
            "problem_statement": "s", "FAIL_TO_PASS": "[]"}
    assert swebench_flavour(base) == "swe-bench"
    assert swebench_flavour({**base, "install_config": {"test_cmd": "pytest -rA"}}) == "swe-rebench"
    assert swebench_flavour({**base, "repo": "swesmith/o__n.abc123"}) == "swe-smith"
    assert swebench_flavour({"task_id": "HumanEval/0", "prompt": "x"}) is None
    assert repo_url_for("/m/{repo_plus}/repo", "o/n") == "/m/o+n/repo"
    assert repo_url_for("https://x/{owner}/{name}.git", "o/n") == "https://x/o/n.git"


def test_rebench_install_config_and_options(mini_repo, tmp_path):
    root, base = mini_repo
    t = SUITE.get(CENTS)
    d = swe_data(t)
    rec = {"instance_id": "acme__centsplit-2", "repo": "acme/centsplit", "base_commit": base, "patch": d.patch,
           "test_patch": d.test_patch, "problem_statement": "s", "FAIL_TO_PASS": list(d.fail_to_pass),
           "install_config": {"pip_packages": ["pytest", "freezegun"], "test_cmd": "pytest -rA -x",
                              "install": "python -m pip install -e ."}}
    task, _ = swebench_task(rec, repo_url=f"{root}/repo", setup=["echo hi"], env={"TZ": "UTC"})
    swe = task["metadata"]["extra"]["swe"]
    assert swe["pip_packages"] == ["pytest", "freezegun"] and swe["env"] == {"TZ": "UTC"}
    assert swe["recipe"] == "swe-rebench" and swe["repo_install"] == "python -m pip install -e ."
    assert task["repo"]["setup"] == ["echo hi"]          # the install is a build step; setup runs per checkout
    assert task["tests"]["hidden"][0]["command"][:5] == ["python", "-m", "pytest", "-rA", "-x"]
    assert "--junitxml=.codegym-junit.xml" in task["tests"]["hidden"][0]["command"]
    # the packages a repository declares, read at the environment commit (here: none but pytest;
    # it has no packaging metadata, so it is not installed); --install adds to them
    rec.pop("install_config")
    task, _ = swebench_task(rec, repo_url=f"{root}/repo", install=["hypothesis"])
    swe = task["metadata"]["extra"]["swe"]
    assert swe["install"] == ["pytest", "hypothesis"] and "repo_install" not in swe and swe["recipe"] == "declared"
