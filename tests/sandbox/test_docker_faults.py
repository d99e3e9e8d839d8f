"""The docker backend when things die: the container killed under a request, the sandbox's
own process killed, and the reaping of what dead owners left (`codegym images prune`).

Fault injection as in test_faults.py (the program stops itself, the injector sees it
below the container's PID 1 in /proc and kills the container through the engine, or
its runner from the host): once and twice the run is retried and gets its real
answer, always it is a sandbox_error; during a compile too. A sandbox whose process is
SIGKILLed leaves nothing: its runner sees the attach socket close, exits, and the
engine removes the container (waited for with the engine's own ``wait(removed)``).
Without an engine the tests skip (fail in CI).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_docker_sandbox import docker_or_skip, labelled  # noqa: E402
from test_faults import LIM, PY_STOPPER, Injector, _slow_c  # noqa: E402

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def client():
    return docker_or_skip()


@pytest.fixture
def dsb(client):
    from codegym.sandbox.docker import DockerSandbox
    sb = DockerSandbox(workers=1)
    yield sb
    sb.close()


def container_roots(sb, client):
    """The host pids of the sandbox's containers' PID 1 (the runner), by container id."""
    cache: dict[str, int] = {}

    def roots() -> list[int]:
        out = []
        for cid in sb.containers():
            if cid not in cache:
                try:
                    cache[cid] = client.api.inspect_container(cid)["State"]["Pid"]
                except Exception:  # noqa: BLE001 - removed meanwhile
                    continue
            out.append(cache[cid])
        return out
    roots.pids = cache  # type: ignore[attr-defined]
    return roots


def engine_kill(sb, client, roots):
    """Kill (through the engine) the container whose runner is path[0]."""
    def kill(path: list[int]) -> None:
        for cid, pid in roots.pids.items():
            if pid == path[0]:
                try:
                    client.api.kill(cid)
                except Exception:  # noqa: BLE001 - already dying
                    pass
    return kill


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kills", [1, 2, 3], ids=["once", "twice", "always"])
def test_container_killed_during_a_run(dsb, client, kills):
    b = dsb.build("python", {"main.py": PY_STOPPER})
    assert b.ok, b.result
    roots = container_roots(dsb, client)
    with Injector(roots, engine_kill(dsb, client, roots), {"cg-20": ["kill"] * kills}) as inj:
        r = dsb.run(b, stdin="20 22", limits=LIM)
    if kills < 3:
        assert (r.status, r.stdout) == ("ok", "42\n"), r
    else:
        assert r.status == "sandbox_error" and "infrastructure" in r.message, r
    assert inj.actions()[:kills] == ["kill"] * kills
    assert dsb.stats["infra_faults"] == kills


@pytest.mark.timeout(600)
def test_runner_killed_from_the_host_twice_during_a_javascript_run(dsb, client):
    """The container's PID 1 (the fork server) SIGKILLed from the host, twice, under a
    JavaScript program: retried in fresh containers, the real answer."""
    src = ("const fs = require('fs'); const d = fs.readFileSync(0, 'utf8').trim().split(/\\s+/);\n"
           "fs.writeFileSync('/proc/self/comm', 'cg-' + d[0]);\nprocess.kill(process.pid, 'SIGSTOP');\n"
           "console.log(d.map(Number).reduce((a, b) => a + b, 0));\n")
    b = dsb.build("javascript", {"main.js": src})
    assert b.ok, b.result
    roots = container_roots(dsb, client)

    def kill_runner(path: list[int]) -> None:
        subprocess.run(["kill", "-9", str(path[0])], check=False)
    with Injector(roots, kill_runner, {"cg-5": ["kill", "kill"]}) as inj:
        r = dsb.run(b, stdin="5 6", limits=LIM)
    assert (r.status, r.stdout) == ("ok", "11\n"), r
    assert inj.actions() == ["kill", "kill", "go"]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("kills", [1, 3], ids=["once", "always"])
def test_container_killed_during_a_compile(dsb, client, kills):
    roots = container_roots(dsb, client)
    for _ in range(5):  # a compile that ended before the injector saw it: another source
        with Injector(roots, engine_kill(dsb, client, roots), {"compile": ["kill"] * kills},
                      compiler=True) as inj:
            b = dsb.build("c", {"main.c": _slow_c(uuid.uuid4().hex)})
        if inj.events:
            break
    assert inj.actions()[:kills] == ["kill"] * kills
    if kills < 3:
        assert b.ok, b.result
    else:
        assert not b.ok and b.result.status == "sandbox_error", b.result


# --------------------------------------------------------------------------- reaping

_ORPHAN = """
import json, os, sys
from codegym.sandbox.docker import DockerSandbox
sb = DockerSandbox(workers=2)
for lang, files in (("python", {"main.py": "print(1)"}), ("c", {"main.c": "int main(void){return 0;}"})):
    assert sb.execute(lang, files).status == "ok"
print(json.dumps({"owner": sb._owner, "containers": sb.containers()}), flush=True)
os.kill(os.getpid(), 9)
"""


@pytest.mark.timeout(300)
def test_a_killed_sandbox_process_leaves_no_container(client):
    """SIGKILL the sandbox's process: its runners see the attach socket close and exit,
    and the engine removes their containers -- nothing stays, running or exited."""
    p = subprocess.run([sys.executable, "-c", _ORPHAN], capture_output=True, text=True, timeout=240)
    assert p.returncode == -9, p.stderr[-2000:]
    made = json.loads(p.stdout.splitlines()[-1])
    assert len(made["containers"]) == 2
    for cid in made["containers"]:
        _wait_removed(client, cid)  # the engine's event, no polling
    assert labelled(client, **{"codegym.owner": made["owner"]}) == []


def _dead_owner_container(client, tag: str) -> str:
    """A container labelled as the docker backend's, owned by a process that is gone."""
    from codegym.sandbox.containers import LABEL, LABEL_HOST, LABEL_OWNER
    c = client.api.create_container("codegym/python:3.11", command=["true"], labels={
        LABEL: "docker", LABEL_OWNER: f"999999999-{tag}", LABEL_HOST: socket.gethostname()})
    return c["Id"]


@pytest.mark.timeout(300)
def test_prune_command_and_the_next_start_reap_dead_owners(client, capsys):
    from codegym.cli.main import main as cli_main
    from codegym.sandbox.docker import DockerSandbox
    a = _dead_owner_container(client, uuid.uuid4().hex[:8])
    assert cli_main(["images", "prune", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"would remove {a[:12]}" in out
    assert client.api.inspect_container(a)["Id"] == a  # a dry run removes nothing
    assert cli_main(["images", "prune"]) == 0
    assert f"removed {a[:12]}" in capsys.readouterr().out
    assert not client.api.containers(all=True, filters={"id": a})
    b = _dead_owner_container(client, uuid.uuid4().hex[:8])
    sb = DockerSandbox(workers=1)  # its start sweeps what dead owners left
    try:
        _wait_removed(client, b)
        assert not client.api.containers(all=True, filters={"id": b})
    finally:
        sb.close()


def _wait_removed(client, cid: str) -> None:
    """Until the engine has removed `cid` (its own event; NotFound: already gone)."""
    try:
        client.api.wait(cid, timeout=120, condition="removed")
    except Exception:  # noqa: BLE001
        pass
