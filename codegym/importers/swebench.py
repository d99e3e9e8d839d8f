"""SWE-bench in codegym: instance records -> a suite of repo tasks, and a candidate's grade.

`import_swebench` reads SWE-bench instances (JSON list, JSON lines, optionally gzip) and
writes a suite folder (`swebench_task`: one instance -> task mapping and sibling files);
`codegym import swebench` is its command (`codegym.cli.imports`). `grade` judges a
candidate on the hidden split and answers SWE-bench's resolution (`SWEGrade`); it lives
here, above the judge's entry, because the repo kind the entry calls cannot call it back.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegym.importers.common import ImportReport, read_records, task_name, write_suite
from codegym.judge import judge
from codegym.judge.kinds.repo import Resolution, resolution
from codegym.tasks.repo import FAIL_TO_PASS, PASS_TO_PASS, SWEError, patch_paths

__all__ = ["swebench_task", "import_swebench", "SWEGrade", "grade"]


#: SWE-bench's test runners of repositories that do not use plain pytest
#: (argv prefix; the test targets derived from the test patch are appended)
_REPO_COMMANDS: dict[str, tuple[str, ...]] = {
    "django/django": ("./tests/runtests.py", "--verbosity", "2", "--settings=test_sqlite", "--parallel", "1"),
    "sympy/sympy": ("bin/test", "-C", "--verbose"),
}
_PYTEST_COMMAND = ("pytest", "-rA", "-p", "no:cacheprovider")


def _id_list(value: Any, field_name: str, iid: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise SWEError(f"{iid}: {field_name} is not JSON: {value[:80]!r}") from None
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise SWEError(f"{iid}: {field_name} must be a list of test ids")
    return list(value)


def _test_targets(repo: str, test_patch: str) -> list[str]:
    """What SWE-bench passes its runner: the test files of the test patch (Django:
    dotted module names under tests/)."""
    modified, added, _removed = patch_paths(test_patch)
    files = sorted(p for p in modified | added if p.endswith(".py"))
    if repo == "django/django":
        out = []
        for p in files:
            p = p[len("tests/"):] if p.startswith("tests/") else p
            out.append(p[:-3].replace("/", "."))
        return out
    return files


def _instance_image(iid: str) -> str:
    # SWE-bench's published evaluation images (namespace "swebench" on Docker Hub)
    return f"swebench/sweb.eval.x86_64.{iid.lower().replace('__', '_1776_')}:latest"


def swebench_task(rec: Mapping[str, Any], *, suite: str = "swebench", test_command: Sequence[str] | None = None,
                  repo_url: str = "https://github.com/{repo}.git") -> tuple[dict, dict[str, str]]:
    """One SWE-bench instance -> (task mapping, sibling files {relative path: text}).
    `repo_url` is formatted with the record's ``repo`` (``owner/name``): a mirror or a
    local clone can stand in for GitHub."""
    iid = str(rec.get("instance_id") or "")
    for k in ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement"):
        if not rec.get(k):
            raise SWEError(f"{iid or '?'}: missing field {k}")
    name = task_name(iid)
    repo = str(rec["repo"])
    f2p = _id_list(rec.get("FAIL_TO_PASS"), "FAIL_TO_PASS", iid)
    p2p = _id_list(rec.get("PASS_TO_PASS"), "PASS_TO_PASS", iid)
    if not f2p:
        raise SWEError(f"{iid}: FAIL_TO_PASS is empty")
    patch_paths(rec["patch"])  # both must be readable diffs
    prefix = tuple(test_command) if test_command else _REPO_COMMANDS.get(repo, _PYTEST_COMMAND)
    command = [*prefix, *_test_targets(repo, str(rec["test_patch"]))]
    hidden = [{"name": FAIL_TO_PASS, "command": command, "tests": f2p}]
    if p2p:
        hidden.append({"name": PASS_TO_PASS, "command": command, "tests": p2p})
    extra = {"patch": {"file": f"{name}/gold.patch"}, "test_patch": {"file": f"{name}/test.patch"},
             "instance_id": iid}
    for k in ("version", "environment_setup_commit", "created_at", "hints_text"):
        if rec.get(k) not in (None, ""):
            extra[k] = str(rec[k])
    task = {
        "id": f"{suite}/{name}",
        "title": f"{repo}: {iid}",
        "statement": {"file": f"{name}/issue.md"},
        "kind": "repo",
        "language": "python",
        "repo": {"url": repo_url.format(repo=repo), "commit": str(rec["base_commit"]),
                 "image": _instance_image(iid)},
        "tests": {"hidden": hidden},
        "metadata": {"source": "swe-bench", "url": f"https://github.com/{repo}", "tags": [repo],
                     "extra": {"swe": extra}},
    }
    files = {f"{name}/gold.patch": str(rec["patch"]), f"{name}/test.patch": str(rec["test_patch"]),
             f"{name}/issue.md": str(rec["problem_statement"])}
    return task, files


def import_swebench(path: str | os.PathLike, out_dir: str | os.PathLike, *, suite: str | None = None,
                    ids: Sequence[str] | None = None, limit: int | None = None,
                    test_command: Sequence[str] | None = None, validate: bool = True,
                    repo_url: str = "https://github.com/{repo}.git"):
    """Import SWE-bench instances (JSON list, JSON lines, optionally gzip) into a suite
    folder: ``suite.yaml``, ``<name>.yaml`` per instance and ``<name>/{issue.md,
    gold.patch, test.patch}``. Returns a `codegym.importers.common.ImportReport`.

    Ids are ``<suite>/<instance_id>`` (suite: the folder name by default). Tests run
    SWE-bench's way: the test files of the test patch, with pytest ``-rA`` (Django's and
    SymPy's own runners for those repositories) or `test_command`; the repositories need
    their environment (``repo.image``: SWE-bench's evaluation image) to run."""
    t0 = time.monotonic()
    out = Path(out_dir)
    suite = suite or out.name
    report = ImportReport(source=str(path), out_dir=str(out))
    records = read_records(path)
    wanted = set(ids) if ids else None
    tasks: list[dict] = []
    siblings: dict[str, str] = {}
    for rec in records:
        iid = str(rec.get("instance_id", "?")) if isinstance(rec, Mapping) else "?"
        if wanted is not None and iid not in wanted:
            continue
        if limit is not None and len(tasks) >= limit:
            break
        try:
            if not isinstance(rec, Mapping):
                raise SWEError("record is not a JSON object")
            task, files = swebench_task(rec, suite=suite, test_command=test_command, repo_url=repo_url)
        except SWEError as e:
            report.skipped.append((iid, str(e)))
            continue
        tasks.append(task)
        siblings.update(files)
        report.count(str(rec.get("repo")))
    for rel, text in siblings.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    defaults = {"kind": "repo", "language": "python",
                "limits": {"time_s": 600, "memory_mb": 8192, "processes": 512, "disk_mb": 8192,
                           "output_bytes": 1 << 25, "open_files": 4096, "file_size_mb": 1024}}
    write_suite(out, tasks, name=suite, defaults=defaults, validate=validate,
                description=f"SWE-bench instances imported from {Path(path).name}")
    report.written = [t["id"] for t in tasks]
    report.elapsed_s = time.monotonic() - t0
    return report


# =========================================================================== grading


@dataclass
class SWEGrade:
    """`grade`'s answer: the resolution and the judge report it comes from."""

    resolution: Resolution
    report: Any

    @property
    def resolved(self) -> bool:
        return self.resolution.resolved

    def to_dict(self) -> dict:
        return {**self.resolution.to_dict(), "report": self.report.to_dict()}


def grade(task, files: Mapping[str, Any], sandbox=None) -> SWEGrade:
    """Judge `files` (an overlay of the base repository, None deletes) on the hidden split
    and return the SWE-bench resolution."""
    rep = judge(task, files, sandbox=sandbox, split="hidden")
    return SWEGrade(resolution(task, rep), rep)
