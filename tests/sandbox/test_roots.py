"""Python roots (codegym.sandbox.roots): the version choice, the build's atomicity, and slots on
the roots of Python 3.9, 3.11 and 3.13 -- local (bubblewrap) and docker -- running programs,
the judge's stdio, function and repository kinds, and hostile programs as on the default sandbox.

Each root is built once per machine (minutes; cached under $CODEGYM_ROOTS). Without mmdebstrap
or a Debian mirror the tests that need a root skip with the reason (CI=true: they fail); without
a Docker engine the docker ones do.
"""

from __future__ import annotations

import ast
import os
import socket
import subprocess
import threading
import uuid
from pathlib import Path

import pytest
from _repo_tasks import CENTS, SUITE
from _tools import docker_or_skip, missing, need_bwrap

from codegym.core.limits import Limits
from codegym.importers.swebench import grade
from codegym.judge.harness import COMMAND_RUNNER, FUNCTION_DRIVER, SCRIPT_DRIVER
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox
from codegym.sandbox.forkserver.source import server_source
from codegym.sandbox.launcher import LAUNCHER
from codegym.sandbox.local import LocalSandbox
from codegym.sandbox.roots import (
    MARKER,
    PYTHON_SUITES,
    RootError,
    choose_python,
    debian_sources,
    ensure_root,
    find_root,
    roots_unbuildable,
)
from codegym.tasks.repo import reference_files
from codegym.tasks.schema import Task

HOSTILE = Path(__file__).with_name("hostile")
VERSIONS = tuple(PYTHON_SUITES)
#: /etc/debian_version's major number per suite
DEBIAN = {"bullseye": "11", "bookworm": "12", "trixie": "13"}


# --------------------------------------------------------------------------- without a root


@pytest.mark.parametrize(("asked", "got", "noted"), [
    (None, "3.11", False), ("3.9", "3.9", False), ("3.11.4", "3.11", False), ("python3.13", "3.13", False),
    ("3.6", "3.9", True), ("3.7", "3.9", True), ("3.8", "3.9", True), ("3.10", "3.11", True),
    ("3.12", "3.13", True), ("3.14", "3.13", True)])
def test_choose_python_nearest_and_notes(asked, got, noted):
    version, note = choose_python(asked)
    assert version == got and (note is not None) == noted
    if noted:
        assert f"Python {asked} has no root" in note and f"using {got}" in note
    if asked in ("3.10", "3.12"):
        assert "a tie goes to the newer" in note


@pytest.mark.parametrize("asked", ["3.10", "3.6", "3.12"])
def test_choose_python_strict_refuses_a_fallback(asked):
    with pytest.raises(RootError, match="strict"):
        choose_python(asked, strict=True)
    assert choose_python("3.9", strict=True) == ("3.9", None)


@pytest.mark.parametrize("asked", ["2.7", "banana", "3"])
def test_choose_python_refuses_what_is_no_python3(asked):
    with pytest.raises(RootError):
        choose_python(asked)


def test_a_failed_build_leaves_no_root_and_a_partial_one_is_never_used(tmp_path, monkeypatch):
    """A mirror that serves a broken suite: mmdebstrap fails, RootError names it, nothing is
    left but the log; a root directory without its marker (as a crash mid-rename could never
    leave, but a hand-made copy could) is not a root."""
    if roots_unbuildable() == "mmdebstrap is not installed (apt-get install mmdebstrap)":
        missing("mmdebstrap is not installed (apt-get install mmdebstrap)")
    archive = tmp_path / "archive"
    (archive / "dists" / "bullseye").mkdir(parents=True)
    (archive / "dists" / "bullseye" / "Release").write_text("Origin: nothing\n")
    roots = tmp_path / "roots"
    monkeypatch.setenv("CODEGYM_ROOTS", str(roots))
    # a killed build's leftovers, with a mount in them as a killed mmdebstrap leaves its binds:
    # unmounted, never walked into (the bound directory's file survives), then removed
    keep = tmp_path / "host-dir"
    keep.mkdir()
    (keep / "sentinel").write_text("host file\n")
    stale = roots / ".bullseye.r1.tmp-1" / "sys"
    stale.mkdir(parents=True)
    mounted = os.geteuid() == 0 and subprocess.run(["mount", "--bind", str(keep), str(stale)]).returncode == 0
    monkeypatch.setenv("CODEGYM_APT_MIRROR", f"file://{archive}")
    assert debian_sources("bullseye") == [f"deb file://{archive} bullseye main"]
    with pytest.raises(RootError, match="no Debian mirror serves trixie"):
        debian_sources("trixie")
    with pytest.raises(RootError, match="mmdebstrap failed building the bullseye root"):
        ensure_root("3.9")
    assert find_root("3.9") is None
    if mounted:
        assert (keep / "sentinel").read_text() == "host file\n"
        assert str(stale) not in Path("/proc/self/mountinfo").read_text()
    left = sorted(p.name for p in roots.iterdir())
    assert left == [".bullseye.r1.lock", ".bullseye.r1.log"], left
    (roots / "bullseye.r1" / "usr" / "bin").mkdir(parents=True)   # no marker: half-made
    assert find_root("3.9") is None
    with pytest.raises(RootError, match="no Python root for '3.10'"):
        ensure_root("3.10")


def test_what_runs_in_a_slot_is_python_39_syntax():
    """The fork server, the launcher and the judge's drivers run on every root's Python (3.9 -
    3.13): their syntax is 3.9's (the roots' runs below check the standard library they use)."""
    sources = {"forkserver": server_source().decode(), "launcher": LAUNCHER,
               "function": FUNCTION_DRIVER, "script": SCRIPT_DRIVER, "command": COMMAND_RUNNER}
    for name, src in sources.items():
        ast.parse(src, filename=name, feature_version=(3, 9))


# --------------------------------------------------------------------------- on a root


@pytest.fixture(scope="module", params=VERSIONS)
def root(request):
    need_bwrap()
    reason = roots_unbuildable()
    if reason:
        missing(reason)
    try:
        return ensure_root(request.param, log=print)
    except RootError as e:
        missing(f"the Python {request.param} root cannot be built: {e}")


def docker_sandbox(version: str):
    docker_or_skip()
    return make_sandbox("docker", python=version, workers=2)


@pytest.fixture(scope="module", params=["local", "docker"])
def rsb(request, root):
    """A sandbox of each backend on `root`."""
    sb = (make_sandbox("local", python=root.version, workers=2) if request.param == "local"
          else docker_sandbox(root.version))
    yield sb
    sb.close()


def test_a_root_needs_bubblewrap(root):
    """Without bubblewrap the slots would run on the host's own system: refused, not degraded."""
    with pytest.raises(RootError, match="needs bubblewrap"):
        LocalSandbox(workers=1, python=root.version, isolation="rlimits")


VERSION_PROGRAM = """import os, sys
print("%d.%d" % sys.version_info[:2], sys.executable, open("/etc/debian_version").read().strip())
"""


def test_programs_run_on_the_roots_python(rsb, root):
    r = rsb.execute("python", {"main.py": VERSION_PROGRAM}, limits=Limits(time_s=5, memory_mb=256))
    assert r.status == "ok", (r.stdout, r.stderr, r.message)
    version, exe, debian = r.stdout.split()
    assert version == root.version and exe == "/usr/bin/python3"
    assert debian.split(".")[0] == DEBIAN[root.suite] or debian.startswith(root.suite)
    c = rsb.execute("c", {"main.c": '#include <stdio.h>\nint main(void){puts("c ok");return 0;}\n'})
    assert (c.status, c.stdout) == ("ok", "c ok\n"), c.message


SUM = [{"stdin": "1 2\n", "expected": "3\n"}, {"stdin": "5 7\n", "expected": "12\n"}]
ADD = [{"args": [1, 2], "expected": 3}, {"kwargs": {"a": 10, "b": 20}, "expected": 30}]
LIM = {"time_s": 2, "memory_mb": 256}


def test_the_judge_on_a_root(rsb):
    stdio = Task(id="t/stdio", statement="s", kind="stdio", language="python", tests={"hidden": SUM}, limits=LIM)
    ok = judge(stdio, {"main.py": "a, b = map(int, input().split())\nprint(a + b)\n"}, sandbox=rsb)
    bad = judge(stdio, {"main.py": "a, b = map(int, input().split())\nprint(a - b)\n"}, sandbox=rsb)
    assert (ok.verdict, ok.passed) == ("accepted", 2), ok.message
    assert bad.verdict == "wrong_answer"
    fn = Task(id="t/fn", statement="s", kind="function", language="python", entry_point="add",
              tests={"hidden": ADD}, limits=LIM)
    ok = judge(fn, {"main.py": "def add(a, b):\n    return a + b\n"}, sandbox=rsb)
    bad = judge(fn, {"main.py": "def add(a, b):\n    return a * b\n"}, sandbox=rsb)
    assert (ok.verdict, ok.passed) == ("accepted", 2), ok.message
    assert bad.verdict == "wrong_answer"


def test_the_script_kind_needs_python_311(rsb, root):
    """Its defences are audit events Python 3.9 does not raise: refused there, never judged weakly."""
    task = Task(id="t/script", statement="s", kind="script", language="python", entry_point="add",
                tests={"hidden": [{"code": "import inspect\nassert add(1, 2) == 3\n"}]}, limits=LIM)
    rep = judge(task, {"main.py": "import dataclasses\ndef add(a, b):\n    return a + b\n"}, sandbox=rsb)
    if root.version == "3.9":
        assert rep.verdict == "sandbox_error" and "needs Python >= 3.11" in rep.cases[0].message
    else:
        assert rep.verdict == "accepted", [c.message for c in rep.cases]


def test_repository_tests_run_on_a_root(rsb):
    """The command runner runs ``python3 -m unittest`` on a checkout, with the root's Python."""
    task = SUITE.get(CENTS)
    gold = grade(task, reference_files(task), rsb)
    noop = grade(task, {}, rsb)
    assert gold.resolution.status == "FULL", gold.report.message
    assert noop.resolution.status == "NO", noop.report.message


# --------------------------------------------------------------------------- hostile programs


@pytest.fixture(scope="module")
def default_sb():
    sb = make_sandbox("local", workers=1)
    yield sb
    sb.close()


def _hostile(sb, name: str, token: str, port: int = 0):
    text = (HOSTILE / name).read_text()
    meta = dict(line[2:].split(": ", 1) for line in text.splitlines() if line.startswith("# ") and ": " in line)
    lim = dict(kv.split("=") for kv in meta["limits"].split())
    limits = Limits(**{k: (float(v) if "." in v else int(v)) for k, v in lim.items()})
    b = sb.build("python", {"main.py": text})
    r = sb.run(b, stdin=f"{port}\n", limits=limits, argv=[token, "/nonexistent-repo", "/nonexistent-dir"])
    return r, meta["verdict"].split("|")


@pytest.mark.parametrize("name", ["tcp_connect.py", "fork_bomb.py", "write_system.py", "write_host_tmp.py"])
def test_hostile_programs_get_the_default_sandboxs_verdicts(rsb, root, default_sb, name):
    token = uuid.uuid4().hex[:12]
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.2)
    got: list[bytes] = []

    def accept():
        try:
            conn, _ = srv.accept()
            got.append(conn.recv(100))
        except OSError:
            pass
    t = threading.Thread(target=accept, daemon=True)
    t.start()
    port = srv.getsockname()[1]
    try:
        r, allowed = _hostile(rsb, name, token, port)
        ref, _ = _hostile(default_sb, name, token, port)
    finally:
        t.join(2)
        srv.close()
    assert r.status in allowed and r.status == ref.status, (r.status, ref.status, r.stdout[-300:], r.message)
    assert "ESCAPED" not in r.stdout and not got, r.stdout[-500:]
    name_ = f"codegym-hostile-{token}"
    for d in ("/tmp", "/var/tmp", "/dev/shm", "/usr", "/usr/local/bin", "/etc", "/"):
        assert not os.path.exists(os.path.join(d, name_))
        assert not root.host_path(os.path.join(d, name_)).exists()  # the root itself is read-only
    assert (root.path / MARKER).is_file()
    after = rsb.execute("python", {"main.py": "import os; print(sorted(os.listdir('/tmp')))"})
    assert (after.status, after.stdout) == ("ok", "[]\n")
