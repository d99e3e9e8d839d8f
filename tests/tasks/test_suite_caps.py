"""A suite folder from a stranger is walked within a cap (issue 28: file counts per folder).

A folder of more entries than `MAX_SUITE_ENTRIES` is one error naming it, not a walk of
millions of files; hidden and ``_`` folders are not walked into; FIFOs named like task
files are not task files (never opened).
"""

from __future__ import annotations

import os

import pytest

import codegym.tasks.suite as suite_mod
from codegym.tasks.load import TaskValidationError
from codegym.tasks.suite import load_suite, suite_task_files

TASK = "kind: stdio\nlanguage: python\nstatement: s\ntests: {hidden: [{stdin: '1', expected: '1'}]}\n"


def test_a_suite_folder_of_too_many_entries_is_one_error(tmp_path, monkeypatch):
    s = tmp_path / "s"
    (s / "deep" / "er").mkdir(parents=True)
    (s / "t.yaml").write_text(TASK)
    for i in range(30):
        (s / "deep" / "er" / f"f{i}.txt").write_text("x")
    monkeypatch.setattr(suite_mod, "MAX_SUITE_ENTRIES", 20)
    with pytest.raises(TaskValidationError, match="more than 20 files and folders: too many for a suite folder") as e:
        load_suite(s)
    assert len(e.value.errors) == 1
    monkeypatch.setattr(suite_mod, "MAX_SUITE_ENTRIES", 200)
    assert [t.id for t in load_suite(s)] == ["s/t"]


def test_hidden_folders_and_fifos_are_not_task_files(tmp_path):
    s = tmp_path / "s"
    for d in ("_private", ".git", "sub"):
        (s / d).mkdir(parents=True)
        (s / d / "x.yaml").write_text(TASK)
    (s / "suite.yaml").write_text("suite: {description: d}\n")
    (s / ".hidden.yaml").write_text(TASK)
    os.mkfifo(s / "pipe.yaml")
    assert [p.relative_to(s).as_posix() for p in suite_task_files(s)] == ["sub/x.yaml"]
