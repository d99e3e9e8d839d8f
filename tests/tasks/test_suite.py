"""Tests of codegym.tasks.suite: finding, loading, filtering and sampling suites."""

from __future__ import annotations

import os
import random
import shutil
import textwrap
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from codegym import Suite, TaskValidationError, load_suite
from codegym.tasks.suite import check_suite, list_suites, resolve_suite, suite_task_files, tasks_roots

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "tasks" / "examples"
EXAMPLE_IDS = ["examples/best-window-mean", "examples/bracket-depth",
               "examples/digit-sum-queries", "examples/residue-pairs", "examples/run-length"]

TASK = """
statement: s
tests:
  hidden:
    - stdin: "1"
      expected: "1"
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


@pytest.fixture
def examples() -> Suite:
    return load_suite(EXAMPLES)


def test_load_by_name_path_and_file(monkeypatch, examples):
    monkeypatch.delenv("CODEGYM_TASKS", raising=False)
    assert REPO / "tasks" in tasks_roots()
    assert "examples" in list_suites()
    by_name = load_suite("examples")
    assert by_name.name == "examples" and by_name.ids == EXAMPLE_IDS == examples.ids
    assert by_name.description.startswith("Small original tasks")
    assert len(by_name) == 5 and [t.id for t in by_name] == EXAMPLE_IDS
    single = load_suite(EXAMPLES / "bracket-depth.yaml")
    assert single.ids == ["examples/bracket-depth"] and single.name == "examples"
    assert load_suite(EXAMPLES / "suite.yaml").ids == EXAMPLE_IDS
    with pytest.raises(FileNotFoundError, match="no suite or task file 'nope'.*examples"):
        load_suite("nope")


def test_env_var_root(monkeypatch, tmp_path):
    write(tmp_path / "alpha" / "one.yaml", TASK)
    write(tmp_path / "alpha" / "_data" / "ignored.yaml", "not: a task\n")
    write(tmp_path / "alpha" / "group" / "two.yaml", TASK)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("CODEGYM_TASKS", str(tmp_path))
    assert tasks_roots() == [tmp_path]
    assert list_suites() == ["alpha"]
    assert resolve_suite("alpha") == tmp_path / "alpha"
    assert [p.name for p in suite_task_files(tmp_path / "alpha")] == ["two.yaml", "one.yaml"]
    assert load_suite("alpha").ids == ["alpha/group/two", "alpha/one"]


def test_get_contains_getitem(examples):
    t = examples.get("examples/bracket-depth")
    assert examples.get("bracket-depth") is t  # bare name, unambiguous
    assert examples["examples/bracket-depth"] is t and examples[1] is t
    assert "examples/bracket-depth" in examples and "examples/x" not in examples
    with pytest.raises(KeyError, match="no task 'missing'"):
        examples.get("missing")


def test_filters(examples):
    assert examples.filter(ids=["examples/run-length"]).ids == ["examples/run-length"]
    assert examples.filter(ids="examples/b*").ids == ["examples/best-window-mean",
                                                      "examples/bracket-depth"]
    assert examples.filter(tags="strings").ids == ["examples/bracket-depth", "examples/run-length"]
    assert examples.filter(tags=["counting", "prefix-sums"]).ids == [
        "examples/digit-sum-queries", "examples/residue-pairs"]
    assert examples.filter(difficulty="MEDIUM").ids == ["examples/best-window-mean",
                                                        "examples/residue-pairs"]
    # best-window-mean accepts every language (no `languages:`); aliases are understood
    assert examples.filter(languages="c").ids == ["examples/best-window-mean",
                                                  "examples/digit-sum-queries",
                                                  "examples/residue-pairs"]
    assert examples.filter(languages=["c++"]).ids == examples.filter(languages="cpp").ids
    assert examples.filter(since="2025-06-01").ids == ["examples/best-window-mean",
                                                       "examples/residue-pairs",
                                                       "examples/run-length"]
    assert examples.filter(since=date(2025, 3, 10), until="2025-06-01").ids == [
        "examples/bracket-depth", "examples/residue-pairs"]
    assert examples.filter(kinds=["function", "script"]).ids == ["examples/bracket-depth",
                                                                 "examples/run-length"]
    chained = examples.filter(languages="python").filter(difficulty="easy", tags="strings")
    assert chained.ids == ["examples/bracket-depth", "examples/run-length"]
    assert isinstance(chained, Suite) and chained.name == "examples"
    assert len(examples.filter(tags="no-such-tag")) == 0
    with pytest.raises(ValueError, match="since must be a date"):
        examples.filter(since="last year")


def test_sample(examples):
    assert examples.sample(3) is examples.sample(3)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    assert [examples.sample(rng_a).id for _ in range(8)] == [examples.sample(rng_b).id for _ in range(8)]
    seen = {examples.sample(random.Random(i)).id for i in range(60)}
    assert seen == set(EXAMPLE_IDS)
    assert examples.sample().id in EXAMPLE_IDS
    with pytest.raises(ValueError, match="empty"):
        examples.filter(tags="no-such-tag").sample(0)
    with pytest.raises(TypeError):
        examples.sample("seed")


def test_duplicate_ids_name_both_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # errors name files relative to the working directory
    d = tmp_path / "dup"
    write(d / "a.yaml", "id: dup/same\n" + TASK.lstrip("\n"))
    write(d / "b.yaml", "title: B\nid: dup/same\n" + TASK.lstrip("\n"))
    with pytest.raises(TaskValidationError) as ei:
        load_suite(d)
    assert [str(e) for e in ei.value.errors] == [
        "dup/b.yaml:2: id: duplicate task id 'dup/same' (also in dup/a.yaml)"]


def test_all_files_errors_collected(tmp_path):
    d = tmp_path / "bad"
    write(d / "a.yaml", TASK + "kind: nonsense\n")
    write(d / "b.yaml", TASK.replace('stdin: "1"', "stdin: 1"))
    write(d / "c.yaml", TASK)
    check = check_suite(d)
    assert [len(errs) for _, _, errs in check.results] == [1, 1, 0]
    assert [t.id for t in check.tasks] == ["bad/c"]
    with pytest.raises(TaskValidationError) as ei:
        load_suite(d)
    msgs = [str(e) for e in ei.value.errors]
    assert msgs[0].endswith("/bad/a.yaml:6: kind: expected one of 'stdio', 'function', 'script' or 'repo'")
    assert msgs[1].endswith("/bad/b.yaml:4: tests.hidden[0].stdin: expected string")


def test_loading_is_cached_by_mtime(tmp_path):
    d = tmp_path / "cached"
    shutil.copytree(EXAMPLES, d)
    first = load_suite(d)
    again = load_suite(d)
    assert all(a is b for a, b in zip(first, again))  # nothing re-parsed
    path = d / "run-length.yaml"
    st = path.stat()
    path.write_text(path.read_text().replace("difficulty: easy", "difficulty: hard"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    third = load_suite(d)
    assert third.get("cached/run-length").difficulty == "hard"
    assert third.get("cached/bracket-depth") is first.get("cached/bracket-depth")
