"""What repository tests run with (codegym.judge.kinds.repo, codegym.sandbox.repoenv): a
per-repository environment built once (pytest from the registry), setup commands once per
checkout, variables, a missing test tool named as a sandbox_error, threads under the
default limits of an import, the environment read-only inside the sandbox."""

from __future__ import annotations

import os

import pytest

from codegym.importers.swebench import grade
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox
from codegym.sandbox.repoenv import PythonEnvSpec, build_env, find_env
from codegym.tasks.schema import Task

#: the SWE-bench importer's default limits (what an imported instance runs under)
IMPORT_LIMITS = {"time_s": 600, "memory_mb": 8192, "processes": 512, "disk_mb": 8192,
                 "output_bytes": 1 << 25, "open_files": 4096, "file_size_mb": 1024}
PYTEST = ["python", "-m", "pytest", "-rA", "-p", "no:cacheprovider", "--junitxml=.codegym-junit.xml"]

THREADS_TEST = '''import threading

def test_64_threads():
    n = 64
    barrier = threading.Barrier(n + 1)   # every thread alive at once
    threads = [threading.Thread(target=barrier.wait) for _ in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    for t in threads:
        t.join()

def test_src_on_path():
    import pkg
    assert pkg.VALUE == 1
'''


@pytest.fixture(scope="module")
def sb():
    return make_sandbox("local")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("r") / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_threads.py").write_text(THREADS_TEST)
    (root / "tests" / "test_setup.py").write_text(
        "import os\n\ndef test_setup_ran_once():\n    assert open('setup-count.txt').read() == 'x\\n'\n\n"
        "def test_env_is_read_only():\n    import pytest, os\n"
        "    d = os.path.dirname(pytest.__file__)\n"
        "    try:\n        open(os.path.join(d, 'x'), 'w')\n    except OSError:\n        return\n"
        "    raise AssertionError('the environment is writable')\n")
    return root


def _task(url, install=("pytest",), command=PYTEST, setup=(), env=None, limits=None) -> Task:
    swe = {"repo": "codegym/tests-env"}
    if install:
        swe["install"] = list(install)
    if env:
        swe["env"] = env
    f2p = ["tests/test_threads.py::test_64_threads", "tests/test_threads.py::test_src_on_path"]
    return Task.model_validate({
        "id": "t/env", "kind": "repo", "language": "python", "statement": "s",
        "repo": {"url": str(url), "setup": list(setup)}, "limits": limits or IMPORT_LIMITS,
        "tests": {"hidden": [
            {"name": "FAIL_TO_PASS", "command": [*command, "tests/test_threads.py"], "tests": f2p},
            {"name": "PASS_TO_PASS", "command": [*command, "tests/test_setup.py"],
             "tests": ["tests/test_setup.py::test_setup_ran_once", "tests/test_setup.py::test_env_is_read_only"]}]},
        "metadata": {"extra": {"swe": swe}}})


def test_environment_threads_setup_once_and_variables(repo, sb):
    task = _task(repo, setup=["echo x >> setup-count.txt"], env={"PYTHONPATH": "src"})
    g = grade(task, {}, sb)
    assert g.resolution.status == "FULL", g.report.message
    env = find_env(PythonEnvSpec(repo="codegym/tests-env", packages=("pytest",)))
    assert env is not None and any(x.startswith("pytest==") for x in env.installed)
    # the same key is the same environment: nothing is built again
    assert build_env(env.spec) is env or build_env(env.spec).path == env.path
    # without the variable the checkout's src/ is not importable: a real failure, not an error
    g = grade(_task(repo, setup=["echo x >> setup-count.txt"]), {}, sb)
    assert g.resolution.status == "PARTIAL"
    assert g.resolution.fail_to_pass == {"tests/test_threads.py::test_64_threads": "passed",
                                         "tests/test_threads.py::test_src_on_path": "failed"}


def test_64_threads_start_under_the_default_limits_of_a_python_run(sb):
    """An in-process Python run keeps a large main stack (deep recursion) and its threads take
    8 MiB each, counted outside the memory limit: 64 threads start at the default 512 MiB (the
    process count is raised: every thread counts). Test runners the repo kind starts get a
    shell's 8 MiB stack (test_environment_threads_setup_once_and_variables: 64 threads in pytest)."""
    from codegym.sandbox import Limits
    src = ("import threading, sys, functools\n"
           "n = 64\nb = threading.Barrier(n + 1)\nts = [threading.Thread(target=b.wait) for _ in range(n)]\n"
           "[t.start() for t in ts]\nb.wait()\n[t.join() for t in ts]\n"
           "sys.setrecursionlimit(10**6)\n"
           "@functools.lru_cache(None)\ndef f(k):\n    return 0 if k == 0 else f(k - 1) + 1\n"
           "print('ok', f(100000))\n")
    r = sb.execute(language="python", files={"main.py": src}, limits=Limits(processes=70, time_s=30))
    assert r.status == "ok" and r.stdout.strip() == "ok 100000", (r.status, r.stderr[-500:])


def test_missing_test_tool_is_a_sandbox_error_naming_it(repo, sb):
    # no environment: the sandbox's own Python has no pytest
    rep = judge(_task(repo, install=(), command=["python3", *PYTEST[1:]]), {}, sandbox=sb, split="hidden")
    assert rep.verdict == "sandbox_error", rep.message
    assert "module 'pytest' is not installed" in rep.cases[0].message
    rep = judge(_task(repo, install=()), {}, sandbox=sb, split="hidden")   # no `python` without an environment
    assert rep.verdict == "sandbox_error" and "program 'python' is not installed" in rep.cases[0].message
    rep = judge(_task(repo, install=(), command=["pytest-nope", "-rA"]), {}, sandbox=sb, split="hidden")
    assert rep.verdict == "sandbox_error" and "pytest-nope" in rep.cases[0].message
    # a setup command's program missing: the same
    rep = judge(_task(repo, setup=["no-such-tool --x"]), {}, sandbox=sb, split="hidden")
    assert rep.verdict == "sandbox_error" and "setup" in rep.cases[0].message


def test_an_environment_that_cannot_be_built_is_a_sandbox_error(repo, sb, monkeypatch, tmp_path):
    monkeypatch.setenv("CODEGYM_ENVS", str(tmp_path / "envs"))
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    rep = judge(_task(repo, install=("codegym-no-such-package-xyz==0",)), {}, sandbox=sb, split="hidden")
    assert rep.verdict == "sandbox_error" and "environment could not be built" in rep.cases[0].message
    assert not any(p.name.startswith("codegym") for p in (tmp_path / "envs").iterdir() if not p.name.startswith("."))
    assert os.environ["PIP_NO_INDEX"] == "1"
