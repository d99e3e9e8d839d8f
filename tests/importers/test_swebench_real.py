"""The held-out check of issue 19: SWE-bench-schema instances made from real bug-fix commits
of public repositories (data/swebench_heldout.jsonl; none of them is in tasks/swe_real)
import with the instance data alone plus a repository mirror, and grade gold = resolved,
no-op = not resolved. Needs the mirrors (``/work/.mirror/<owner>+<name>/repo`` or
``$CODEGYM_MIRRORS``); skipped where they are absent. ``CODEGYM_SLOW=1`` grades every instance."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from codegym import load_suite
from codegym.importers.swebench import grade, import_swebench
from codegym.sandbox import make_sandbox
from codegym.tasks.repo import reference_files, swe_data

DATA = Path(__file__).parent / "data" / "swebench_heldout.jsonl"
MIRRORS = os.environ.get("CODEGYM_MIRRORS", "/work/.mirror")
RECORDS = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
REPOS = sorted({r["repo"] for r in RECORDS})


def _mirror(repo: str) -> Path:
    return Path(MIRRORS) / repo.replace("/", "+") / "repo"


pytestmark = pytest.mark.skipif(not all(_mirror(r).is_dir() for r in REPOS),
                                reason=f"repository mirrors absent under {MIRRORS}")


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("heldout") / "heldout"
    rep = import_swebench(DATA, out, repo_url=f"{MIRRORS}/{{repo_plus}}/repo")
    assert len(rep.written) == len(RECORDS) and not rep.skipped, rep.summary()
    return load_suite(out)


@pytest.fixture(scope="module")
def sb():
    return make_sandbox("local")


def test_instances_import_with_their_data_and_a_mirror(suite):
    assert len(REPOS) >= 3 or len(RECORDS) >= 3
    for t in suite:
        d = swe_data(t)
        assert d.install and d.install[0].startswith("pytest")      # found in the repository itself
        assert t.metadata.licence and "--junitxml=.codegym-junit.xml" in d.test_command


def _check(task, sb):
    gold = grade(task, reference_files(task), sb)
    noop = grade(task, {}, sb)
    assert gold.resolution.status == "FULL", gold.report.message
    assert noop.resolution.status != "FULL" and not noop.resolved


@pytest.mark.parametrize("repo", REPOS)
def test_first_instance_of_each_repository_grades(repo, suite, sb):
    _check(next(t for t in suite if swe_data(t).extra["repo"] == repo), sb)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("CODEGYM_SLOW") != "1", reason="2 grades per instance: set CODEGYM_SLOW=1")
@pytest.mark.parametrize("iid", [r["instance_id"] for r in RECORDS])
def test_every_instance_grades(iid, suite, sb):
    _check(next(t for t in suite if swe_data(t).extra["instance_id"] == iid), sb)
