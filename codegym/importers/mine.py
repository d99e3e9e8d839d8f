"""Mining SWE tasks from a repository's history (`codegym tasks mine`; docs/swe.md, "Mining").

`candidate_commits` walks the commits (no merges) that change both source and test
files (`classify_path`) and splits each into a test patch and a gold patch (everything
else). `measure` runs the changed test files on the parent with the test patch applied,
before and after the gold patch, twice each (a test whose status differs between two
runs of the same tree is flaky and left out), in the environment the commit itself
declares: FAIL_TO_PASS are the tests that fail before and pass after, PASS_TO_PASS those
that pass in every run (pytest node ids, as SWE-bench lists them). `mine_repository` writes a
task (YAML + patches + statement) per commit with FAIL_TO_PASS tests and keeps it only
when `verify` says the gold patch resolves it, the no-op does not, and a candidate that
only edits tests (the test patch itself; gutted tests with a conftest that passes every
report) does not either; a candidate left out says why in the report
(`verification_problem`). `codegym.importers.minepack` stores the repositories compactly.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.core.git import git_text
from codegym.core.limits import Limits
from codegym.importers.common import task_name
from codegym.importers.minepack import pack_suite
from codegym.importers.repodeps import PERMISSIVE, merge_requirements, repo_environment
from codegym.importers.swebench import PYTEST_COMMAND, SWEGrade, grade
from codegym.importers.yamlout import task_yaml, write_suite
from codegym.judge.kinds.repo import RunEnv, run_commands
from codegym.judge.logs.junit import nodeid_to_junit
from codegym.judge.logs.pytest import parse_pytest, parse_results
from codegym.sandbox import make_sandbox
from codegym.sandbox.envbuild import EnvBuildError
from codegym.sandbox.repoenv import PythonEnvSpec, build_env
from codegym.sandbox.types import Sandbox
from codegym.tasks.patches import apply_patch
from codegym.tasks.repo import (
    FAIL_TO_PASS,
    PASS_TO_PASS,
    RepoSource,
    base_tree,
    git_dir,
    reference_files,
    source_of,
    swe_data,
)
from codegym.tasks.schema import Task

_TEST_RE = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_tests?|tests?|conftest)\.py$")
#: limits of mined tasks (suite defaults)
DEFAULT_LIMITS = {"time_s": 120, "memory_mb": 4096, "processes": 256, "disk_mb": 1024, "wall_factor": 2,
                  "output_bytes": 1 << 24, "open_files": 1024}
#: the tampering candidate's conftest.py: every test report made a pass
TAMPER_CONFTEST = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
'''


def classify_path(path: str) -> str:
    """``test`` (a test module, a conftest, anything under tests/), ``source`` (other Python
    files) or ``other`` (docs, changelogs, data)."""
    if _TEST_RE.search(path):
        return "test"
    return "source" if path.endswith(".py") else "other"


@dataclass
class Candidate:
    """A commit that changes source and tests: the parent is the task's base."""

    commit: str
    parent: str
    date: str
    subject: str
    body: str
    test_patch: str
    gold_patch: str
    test_files: list[str]
    source_files: list[str]


def candidate_commits(gdir: str | os.PathLike, since: str | None = None, until: str | None = None,
                      rev: str = "HEAD") -> Iterator[Candidate]:
    """Commits of `rev`'s history (newest first, no merges) that change at least one source
    file and one Python test file, with no binary change."""
    args = ["log", "--no-merges", "--format=%H%x1f%P%x1f%cI%x1f%s%x1f%b%x1e", "--no-renames"]
    if since:
        args.append(f"--since={since}")
    if until:
        args.append(f"--until={until}")
    for entry in git_text([*args, "--end-of-options", rev], gdir).split("\x1e"):
        parts = entry.strip("\n").split("\x1f")
        if len(parts) < 5 or not parts[1] or " " in parts[1]:
            continue
        commit, parent, date, subject, body = parts
        changed = [rec.split("\t", 2) for rec in
                   git_text(["diff", "--no-renames", "--numstat", "-z", parent, commit], gdir).split("\0") if rec]
        if any(c[0] == "-" for c in changed):  # a binary file
            continue
        paths = [c[2] for c in changed if len(c) == 3]
        tests = [p for p in paths if classify_path(p) == "test"]
        sources = [p for p in paths if classify_path(p) == "source"]
        if not sources or not any(p.endswith(".py") for p in tests):
            continue
        others = [p for p in paths if p not in tests]
        yield Candidate(commit, parent, date, subject.strip(), body.strip(),
                        git_text(["diff", "--no-renames", "--full-index", parent, commit, "--", *tests], gdir),
                        git_text(["diff", "--no-renames", "--full-index", parent, commit, "--", *others], gdir),
                        tests, sources)


@dataclass
class Measured:
    """The test runs of one candidate: FAIL_TO_PASS, PASS_TO_PASS, flaky ids, and why it was
    left out (``reason``; empty when it makes a task)."""

    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    reason: str = ""
    before: dict[str, str] = field(default_factory=dict)
    after: dict[str, str] = field(default_factory=dict)


def pytest_command(files: Sequence[str], prefix: Sequence[str] = PYTEST_COMMAND) -> list[str]:
    """The command that runs `files` (pytest with its junit report by default)."""
    return [*prefix, *files]


def _statuses(runs, what: str) -> tuple[list[dict[str, str]], str]:
    out = []
    for run in runs:
        if run.status != "ok":
            return [], f"{what}: {run.status}: {run.message[:200]}"
        res = parse_results(run.output, run.junit)
        if not res.complete:
            return [], f"{what}: the test run did not finish: {run.output[-200:]!r}"
        out.append(dict(res.statuses))
    return out, ""


def _node_ids(runs) -> dict[str, str]:
    """{junit id: pytest node id} of the tests pytest's own report lines name (``-rA``), where
    one node id has that junit id: mined lists hold node ids, as SWE-bench's do."""
    found: dict[str, set[str]] = {}
    for run in runs:
        for nid in parse_pytest(run.output).statuses:
            if "::" in nid:
                found.setdefault(nodeid_to_junit(nid), set()).add(nid)
    return {j: next(iter(n)) for j, n in found.items() if len(n) == 1}


def measure(cand: Candidate, source: RepoSource, command: Sequence[str], tenv: RunEnv, sandbox: Sandbox, limits,
            runs: int = 2) -> Measured:
    """Run `command` on the parent + test patch, before and after the gold patch, `runs`
    times each (one checkout per side)."""
    base = base_tree(source).files
    try:
        before = {**base, **apply_patch(base, cand.test_patch)}
        after = {**before, **apply_patch(before, cand.gold_patch)}
    except ValueError as e:
        return Measured(reason=f"patches do not apply: {e}")
    before = {p: c for p, c in before.items() if c is not None}
    after = {p: c for p, c in after.items() if c is not None}
    b, why = _statuses(run_commands(sandbox, before, [command] * runs, limits, tenv), "before")
    if why:
        return Measured(reason=why)
    after_runs = run_commands(sandbox, after, [command] * runs, limits, tenv)
    a, why = _statuses(after_runs, "after")
    if why:
        return Measured(reason=why)
    node = _node_ids(after_runs)
    ids = set().union(*b, *a)
    flaky = sorted(t for t in ids if len({r.get(t) for r in b}) > 1 or len({r.get(t) for r in a}) > 1)
    m = Measured(flaky=flaky, before=b[0], after=a[0])
    for t in sorted(ids - set(flaky)):
        was, now = b[0].get(t), a[0].get(t)
        if now == "passed" and was != "passed":
            m.fail_to_pass.append(node.get(t, t))
        elif now == "passed" and was == "passed":
            m.pass_to_pass.append(node.get(t, t))
    if not m.fail_to_pass:
        m.reason = "no test fails before and passes after"
    return m


def verify(task: Task, sandbox: Sandbox) -> dict[str, str]:
    """Grade the gold patch, the no-op, the test patch alone and gutted tests with a
    conftest that passes every report: {name: resolution status}. A good task answers
    FULL for gold and NO (or PARTIAL) for the others (`verification_problem`)."""
    return {name: g.resolution.status for name, g in verify_grades(task, sandbox).items()}


def verify_grades(task: Task, sandbox: Sandbox) -> dict[str, SWEGrade]:
    """`verify`'s four grades, whole (the reports say why)."""
    data = swe_data(task)
    base = base_tree(task).files
    test_only = {p: c for p, c in apply_patch(base, data.test_patch).items()}
    gutted = {p: "def test_nothing():\n    pass\n" for p, c in test_only.items() if c is not None}
    gutted["conftest.py"] = TAMPER_CONFTEST
    return {name: grade(task, files, sandbox) for name, files in
            (("gold", reference_files(task)), ("noop", {}), ("tests_only", test_only), ("tests_gutted", gutted))}


_PASSED_ANYWAY = {"noop": "the unchanged repository passes its tests too",
                  "tests_only": "the test patch alone passes them",
                  "tests_gutted": "gutted tests with a conftest.py that passes every report pass them"}


def verification_problem(grades: Mapping[str, SWEGrade]) -> str:
    """Why a task fails `verify` (one line), or "" when it passes: the gold patch's failing
    tests and the first cause its report gives, or which other candidate resolves it."""
    gold = grades["gold"]
    if not gold.resolved:
        res = gold.resolution
        bad = [f"{t} {s}" for t, s in {**res.fail_to_pass, **res.pass_to_pass}.items() if s != "passed"]
        message = gold.report.message.split("; ", 1)[1] if "; " in gold.report.message else gold.report.message
        lines = [x.strip() for x in message.splitlines() if x.strip()]
        notes = list(dict.fromkeys(x.strip() for c in getattr(gold.report, "cases", None) or ()
                                   for x in (c.message or "").splitlines() if x.strip().startswith("note:")))
        cause = "; ".join([*lines[:1], *notes])
        return (f"the gold patch does not resolve it ({res.summary()}; {', '.join(bad[:3])}"
                f"{' ...' if len(bad) > 3 else ''}): {cause[:500]}")
    for name, why in _PASSED_ANYWAY.items():
        if grades[name].resolved:
            return f"{why} ({grades[name].resolution.summary()})"
    return ""


@dataclass
class MineReport:
    """What a mining run did: tasks kept, candidates skipped (commit, reason), timings."""

    repo: str
    out_dir: str
    kept: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    licence: str | None = None
    elapsed_s: float = 0.0
    candidates: int = 0

    def summary(self) -> str:
        lines = [f"{self.repo}: {self.candidates} candidate commit(s), {len(self.kept)} task(s) kept in "
                 f"{self.out_dir} ({self.elapsed_s:.0f} s); licence {self.licence}"]
        for sha, why in self.skipped[:15]:
            lines.append(f"  skipped {sha[:12]}: {why}")
        if len(self.skipped) > 15:
            lines.append(f"  ... and {len(self.skipped) - 15} more")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"repo": self.repo, "out_dir": self.out_dir, "kept": self.kept, "candidates": self.candidates,
                "skipped": [list(s) for s in self.skipped], "licence": self.licence, "elapsed_s": self.elapsed_s}


def _statement(cand: Candidate, repo: str, f2p: Sequence[str]) -> str:
    shown = "\n".join(f"- `{t}`" for t in f2p[:20]) + (f"\n- ... ({len(f2p) - 20} more)" if len(f2p) > 20 else "")
    body = f"\n\n{cand.body}" if cand.body else ""
    return (f"{cand.subject}{body}\n\n---\n\nThis change to {repo} came with tests. Make the code of the "
            f"repository behave as they expect; these tests fail now and must pass (the existing tests "
            f"must keep passing):\n\n{shown}\n")


def _task_doc(cand: Candidate, m: Measured, *, suite: str, name: str, repo: str, url: str, command: list[str],
              install: Sequence[str], env: Mapping[str, str], licence: str | None) -> dict[str, Any]:
    modified = sorted(p for p in _targets(cand) if f"--- a/{p}\n" in cand.test_patch)
    public = [{"name": "existing-tests", "command": [*command_prefix(command), *modified]}] if modified else []
    hidden = [{"name": FAIL_TO_PASS, "command": command, "tests": m.fail_to_pass}]
    if m.pass_to_pass:
        hidden.append({"name": PASS_TO_PASS, "command": command, "tests": m.pass_to_pass})
    swe: dict[str, Any] = {"patch": {"file": f"{name}/gold.patch"}, "test_patch": {"file": f"{name}/test.patch"},
                           "repo": repo, "install": list(install),
                           "upstream": {"commit": cand.commit, "parent": cand.parent},
                           "mined": {"runs_each": 2, "flaky": m.flaky[:50], "tests_before": len(m.before),
                                     "tests_after": len(m.after)}}
    if env:
        swe["env"] = dict(env)
    return {"id": f"{suite}/{name}", "title": f"{repo}: {cand.subject[:100]}",
            "statement": {"file": f"{name}/issue.md"}, "repo": {"url": url, "commit": cand.parent},
            "tests": {"public": public, "hidden": hidden},
            "metadata": {"source": "mined", "licence": licence, "release_date": cand.date[:10], "tags": [repo],
                         "url": f"https://github.com/{repo}/commit/{cand.commit}", "extra": {"swe": swe}}}


def command_prefix(command: Sequence[str]) -> list[str]:
    """The runner part of a test command (up to the first test file)."""
    out = []
    for a in command:
        if a.endswith(".py") and not a.startswith("-"):
            break
        out.append(a)
    return out


def _targets(cand: Candidate) -> list[str]:
    """The test files to run: the Python test files the commit leaves (not conftest.py or
    package markers; pytest collects a file named on its command line whatever its name)."""
    gone = set(re.findall(r"^--- a/(.+)\n\+\+\+ /dev/null$", cand.test_patch, re.M))
    return sorted(p for p in cand.test_files if p.endswith(".py") and p not in gone
                  and p.rsplit("/", 1)[-1] not in ("conftest.py", "__init__.py"))


def _label(repo: str) -> str:
    """owner/name of a repository path or URL (``/mirrors/pytoolz+toolz/repo`` -> ``pytoolz/toolz``)."""
    parts = [p for p in re.split(r"[/:]", repo.rstrip("/")) if p and p not in ("repo", ".git")]
    last = parts[-1].removesuffix(".git") if parts else "repo"
    if "+" in last:
        return last.replace("+", "/", 1)
    return f"{parts[-2]}/{last}" if len(parts) >= 2 else last


def _write_task(out: Path, doc: Mapping[str, Any], files: Mapping[str, str]) -> Path:
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    path = out / f"{str(doc['id']).rsplit('/', 1)[-1]}.yaml"
    path.write_text(task_yaml(doc), encoding="utf-8")
    return path


def _remove_task(path: Path) -> None:
    folder = path.with_suffix("")
    for f in sorted(folder.glob("*")) if folder.is_dir() else ():
        f.unlink()
    if folder.is_dir():
        folder.rmdir()
    path.unlink(missing_ok=True)


def mine_repository(repo: str | os.PathLike, out_dir: str | os.PathLike, *, name: str | None = None,
                    since: str | None = None, until: str | None = None, max_tasks: int | None = None,
                    max_commits: int | None = None, install: Sequence[str] | None = None,
                    env: Mapping[str, str] | None = None, prefix: Sequence[str] = PYTEST_COMMAND,
                    suite: str | None = None, licence: str | None = None, sandbox: Sandbox | None = None, runs: int = 2,
                    log: Callable[[str], None] | None = print) -> MineReport:
    """Mine SWE tasks from `repo` (a local clone or mirror, bare or not, or a git URL) into the
    suite folder `out_dir` (created; its ``suite.yaml`` written when absent; tasks already
    there are kept and their commits skipped). `name`: owner/name (default from the path).
    The repository's licence (its LICENSE file at HEAD) must be permissive (`PERMISSIVE`)
    unless `licence` names it. The tests' packages: pytest and what the repository declares
    at each candidate commit (its own, not HEAD's: older commits need others), `install`
    added (a distribution named again takes `install`'s version); `env` adds variables
    (``PYTHONPATH=src`` for a src layout is found by itself). A candidate whose environment
    cannot be built, whose tests do not change, or that fails `verify` is in the report's
    skipped list with the reason (`verification_problem`)."""
    t0 = time.monotonic()
    say = log or (lambda _m: None)
    src = str(repo)
    source = source_of(src, None, Path.cwd())
    gdir = git_dir(source)
    label = name or _label(src)
    out = Path(out_dir)
    suite = suite or out.name
    report = MineReport(repo=label, out_dir=str(out))
    head = git_text(["rev-parse", "HEAD"], gdir).strip()
    found = repo_environment(gdir, head)
    report.licence = licence or found["licence"]
    if report.licence not in PERMISSIVE and not licence:
        raise ValueError(f"{label}: licence {report.licence or 'not recognised'} (LICENSE file at {head[:12]}): "
                         f"mined tasks redistribute its code; name it with --licence after checking it")
    environments: dict[tuple, RunEnv] = {}

    def environment(commit: str) -> tuple[RunEnv, list[str], dict[str, str]]:
        """The tests' environment at `commit`: what it declares, `install` added (built once per
        package list)."""
        declared = repo_environment(gdir, commit)
        packages = merge_requirements(declared["install"], install or ())
        variables = {**declared["env"], **(env or {})}
        if tuple(packages) not in environments:
            pyenv = build_env(PythonEnvSpec(repo=label, packages=tuple(packages), trusted=tuple(install or ())),
                              log=say)
            environments[tuple(packages)] = RunEnv(tuple(pyenv.path_dirs()), pyenv.env_vars(), (), None,
                                                   pyenv.path.name)
        tenv = environments[tuple(packages)]
        return RunEnv(tenv.path, {**tenv.env, **variables}, (), None, tenv.describe), packages, variables

    sandbox = sandbox or make_sandbox("local")
    limits = Limits(**DEFAULT_LIMITS)
    out.mkdir(parents=True, exist_ok=True)
    if not (out / "suite.yaml").exists():
        write_suite(out, [], name=suite, description="SWE tasks mined from repository histories "
                    "(codegym tasks mine)", defaults={"kind": "repo", "language": "python", "limits": DEFAULT_LIMITS})
    slug = task_name(label.split("/")[-1]).lower()
    for cand in candidate_commits(gdir, since, until):
        if max_tasks is not None and len(report.kept) >= max_tasks:
            break
        if max_commits is not None and report.candidates >= max_commits:
            break
        tname = f"{slug}-{cand.commit[:10]}"
        if (out / f"{tname}.yaml").exists():
            continue
        report.candidates += 1
        targets = _targets(cand)
        if not targets:
            report.skipped.append((cand.commit, "no test module left to run"))
            continue
        command = pytest_command(targets, prefix)
        try:
            tenv, packages, variables = environment(cand.commit)
        except (EnvBuildError, ValueError, OSError) as e:
            report.skipped.append((cand.commit, f"the environment its files declare cannot be built: "
                                                f"{' '.join(str(e).split())[:300]}"))
            say(f"  {cand.commit[:10]} skipped: {report.skipped[-1][1][:160]}")
            continue
        m = measure(cand, RepoSource(source.kind, source.location, cand.parent), command, tenv, sandbox, limits,
                    runs)
        if m.reason:
            report.skipped.append((cand.commit, m.reason))
            say(f"  {cand.commit[:10]} skipped: {m.reason[:160]}")
            continue
        doc = _task_doc(cand, m, suite=suite, name=tname, repo=label, url=source.location, command=command,
                        install=packages, env=variables, licence=report.licence)
        path = _write_task(out, doc, {f"{tname}/issue.md": _statement(cand, label, m.fail_to_pass),
                                      f"{tname}/gold.patch": cand.gold_patch,
                                      f"{tname}/test.patch": cand.test_patch})
        grades = verify_grades(_inline_task(doc, out, tname), sandbox)
        verdicts = {k: g.resolution.status for k, g in grades.items()}
        problem = verification_problem(grades)
        if problem:
            _remove_task(path)
            report.skipped.append((cand.commit, f"not verified: {problem}"))
            say(f"  {cand.commit[:10]} not verified: {problem[:300]}")
            continue
        doc["metadata"]["extra"]["swe"]["mined"]["verified"] = verdicts
        _write_task(out, doc, {})
        report.kept.append(doc["id"])
        say(f"  {cand.commit[:10]} kept: {len(m.fail_to_pass)} FAIL_TO_PASS, {len(m.pass_to_pass)} PASS_TO_PASS, "
            f"{len(m.flaky)} flaky")
    if report.kept:
        say(pack_suite(out))  # the repositories into the suite folder: repos/<owner>__<name>.bundle
    report.elapsed_s = time.monotonic() - t0
    return report


def _inline_task(doc: Mapping[str, Any], out: Path, name: str) -> Task:
    """The task of `doc` with its files inlined and its repository where it is now (a
    mirror outside the suite folder, until `pack_suite` moves it in)."""
    data = json.loads(json.dumps(doc))
    swe = data["metadata"]["extra"]["swe"]
    data["statement"] = (out / name / "issue.md").read_text(encoding="utf-8")
    swe["patch"] = (out / name / "gold.patch").read_text(encoding="utf-8")
    swe["test_patch"] = (out / name / "test.patch").read_text(encoding="utf-8")
    data.update({"kind": "repo", "language": "python", "limits": dict(DEFAULT_LIMITS)})
    return Task.model_validate(data)
