"""What a repository task's environment costs: the cold build (the shared environment from the
registry, then the repository installed at its base commit), another instance of the same
repository and version (`SWEEnv.reset`: the workspace is ready while the instance's own install
runs in the background; then what a first test run waits for), the same instance again
(nothing built), and grading one candidate -- per instance, on the local backend and on
Docker; the median of several runs, each in a fresh environment folder.

    python benchmarks/swe_env_build.py [--runs 3] [--backends local,docker]
    python benchmarks/swe_env_build.py --records R.jsonl --repo-url '/work/.mirror/{repo_plus}/repo' \\
        --ids psf__requests-1963,psf__requests-2148

Without records, a small generated repository stands in (setuptools-scm, a console script,
pytest from the registry; three commits = three instances of one version). The load average
is printed next to the table: the numbers are the machine's at that load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import codegym  # noqa: F401
from codegym import load_suite
from codegym.envs.swe_env import SWEEnv
from codegym.importers.swebench import grade, import_swebench
from codegym.judge.kinds.repo import repo_image, run_env
from codegym.sandbox import make_sandbox
from codegym.tasks.repo import reference_files

PYTEST = ["python", "-m", "pytest", "-rA", "-p", "no:cacheprovider", "--junitxml=.codegym-junit.xml"]


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def synthetic_records(root: Path) -> list[dict]:
    """A repository with three bug-fix commits after a tagged release, as SWE-bench records."""
    repo = root / "bench+calc" / "repo"
    (repo / "src" / "calc").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pyproject.toml").write_text(textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=64", "setuptools-scm>=8"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "calc"
        dynamic = ["version"]
        dependencies = ["attrs"]
        [project.optional-dependencies]
        test = ["pytest", "hypothesis"]
        [project.scripts]
        calc = "calc:main"
        [tool.setuptools_scm]
        version_file = "src/calc/_version.py"
        """))
    (repo / "src" / "calc" / "__init__.py").write_text(
        "from calc._version import version\n\ndef add(a, b):\n    return a - b\n\n"
        "def mul(a, b):\n    return a ** b\n\ndef neg(a):\n    return a\n\ndef main():\n    print(version)\n")
    (repo / "tests" / "test_calc.py").write_text("import calc\n\ndef test_version():\n    assert calc.version\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "release")
    _git(repo, "tag", "v1.0.0")
    records = []
    for k, (fn, sig, bad, good, expr) in enumerate([("add", "a, b", "a - b", "a + b", "calc.add(2, 3) == 5"),
                                                    ("mul", "a, b", "a ** b", "a * b", "calc.mul(2, 3) == 6"),
                                                    ("neg", "a", "a", "-a", "calc.neg(2) == -2")]):
        base = _git(repo, "rev-parse", "HEAD").strip()
        src = (repo / "src" / "calc" / "__init__.py").read_text()
        fixed = src.replace(f"def {fn}({sig}):\n    return {bad}\n", f"def {fn}({sig}):\n    return {good}\n")
        test = "tests/test_calc.py"
        before = (repo / test).read_text()
        (repo / test).write_text(before + f"\n\ndef test_{fn}():\n    assert {expr}\n")
        test_patch = _git(repo, "diff", "HEAD")
        (repo / "src" / "calc" / "__init__.py").write_text(fixed)
        patch = _git(repo, "diff", "HEAD", "--", "src")
        _git(repo, "commit", "-qam", f"fix {fn}")
        records.append({"instance_id": f"bench__calc-{k + 1}", "repo": "bench/calc", "base_commit": base,
                        "environment_setup_commit": base, "version": "1.0", "patch": patch, "test_patch": test_patch,
                        "problem_statement": f"{fn} is wrong", "FAIL_TO_PASS": [f"{test}::test_{fn}"],
                        "PASS_TO_PASS": ["tests/test_calc.py::test_version"]})
    return records


def _environment(t, sb, backend: str) -> None:
    run_env(t, sandbox=sb)
    if backend == "docker":  # its images too
        repo_image(t, sb)


def measure(tasks: list, backend: str, envs: Path) -> dict[str, list[float]]:
    """One run in a fresh environment folder: seconds per step."""
    os.environ["CODEGYM_ENVS"] = str(envs)
    sb = make_sandbox(backend, workers=2)
    env = SWEEnv(tasks=tasks, max_turns=2, sandbox=sb)
    out: dict[str, list[float]] = {}
    try:
        for k, t in enumerate(tasks):
            t0 = time.perf_counter()
            if k == 0:  # nothing built: the shared environment and the instance, waited for
                _environment(t, sb, backend)
                out.setdefault("cold: environment and instance", []).append(time.perf_counter() - t0)
                continue
            env.reset(options={"task_id": t.id})  # the instance's own install goes to the background
            t1 = time.perf_counter()
            out.setdefault("other instance: reset (workspace ready)", []).append(t1 - t0)
            _environment(t, sb, backend)           # what a first test run then waits for
            out.setdefault("other instance: its install, waited", []).append(time.perf_counter() - t1)
            out.setdefault("other instance: install total", []).append(time.perf_counter() - t0)
        for t in tasks:
            t0 = time.perf_counter()
            env.reset(options={"task_id": t.id})
            _environment(t, sb, backend)
            out.setdefault("same instance again: reset and environment", []).append(time.perf_counter() - t0)
        for t in tasks:
            t0 = time.perf_counter()
            g = grade(t, reference_files(t), sb)
            out.setdefault("grade gold", []).append(time.perf_counter() - t0)
            out.setdefault("resolved", []).append(1.0 if g.resolved else 0.0)
    finally:
        env.close()
        sb.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--backends", default="local,docker")
    ap.add_argument("--records")
    ap.add_argument("--repo-url", default="/work/.mirror/{repo_plus}/repo")
    ap.add_argument("--ids")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="codegym-envbench-", dir="/var/tmp"))
    os.chmod(work, 0o755)
    try:
        if args.records:
            records = [json.loads(x) for x in Path(args.records).read_text().splitlines() if x.strip()]
            if args.ids:
                want = args.ids.split(",")
                records = [r for r in records if r["instance_id"] in want]
            url = args.repo_url
        else:
            records = synthetic_records(work / "mirrors")
            url = f"{work}/mirrors/{{repo_plus}}/repo"
        src = work / "records.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in records))
        rep = import_swebench(src, work / "suite", repo_url=url)
        tasks = list(load_suite(work / "suite"))
        print(f"{len(tasks)} instance(s): {', '.join(t.id.split('/')[-1] for t in tasks)}; {rep.summary().splitlines()[0]}",
              file=sys.stderr)
        load0 = os.getloadavg()[0]
        rows: dict[tuple[str, str], list[float]] = {}
        for backend in args.backends.split(","):
            for r in range(args.runs):
                got = measure(tasks, backend, work / f"envs-{backend}-{r}")
                for step, xs in got.items():
                    rows.setdefault((backend, step), []).extend(xs)
                print(f"{backend} run {r + 1}: " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in got.items()),
                      file=sys.stderr)
        load1 = os.getloadavg()[0]
        print(f"\n{len(tasks)} instances of one repository and version, {args.runs} run(s) per backend, "
              f"each in a fresh environment folder; load average {load0:.1f} at start, {load1:.1f} at end "
              f"({os.cpu_count()} cores)")
        print(f"{'backend':8} {'step (seconds per instance)':44} {'median':>8} {'min':>8} {'max':>8} {'n':>4}")
        for (backend, step), xs in rows.items():
            if step == "resolved":
                print(f"{backend:8} {'gold resolved (fraction)':44} {statistics.mean(xs):8.2f}")
                continue
            print(f"{backend:8} {step:44} {statistics.median(xs):8.2f} {min(xs):8.2f} {max(xs):8.2f} {len(xs):4d}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        subprocess.run(["rm", "-rf", "--one-file-system", str(work)], check=False)


if __name__ == "__main__":
    main()
