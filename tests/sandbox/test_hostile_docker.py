"""The hostile-program corpus (tests/hostile/) on the Docker backend.

Owns nothing of the corpus: programs, their declared verdicts, the host-side
checks and the judge-level forgeries all come from tests/test_hostile.py, whose
test functions run here unchanged with the isolation mode "docker" on a
one-container `DockerSandbox` (``bwrap_only`` programs run too: a container has
its own namespaces; JavaScript ones in codegym/node, so the corpus is the same on
both backends). Every verdict must be one the program declares, nothing may
escape (no file, process, connection or secret on the host), the next run in the
same container must start clean, and closing the sandbox must leave no container,
container process or descriptor behind.

Without an engine the tests skip with the reason printed (fail when ``CI=true``).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_hostile as th  # noqa: E402 - the corpus runner is reused, not copied
from test_docker_sandbox import docker_or_skip, labelled  # noqa: E402
from test_hostile import secrets  # noqa: E402,F401 - the fixture, reused

from codegym.sandbox.containers import LABEL_INSTANCE  # noqa: E402

MODE = "docker"


class DockerHost(th.Host):
    """`th.Host` whose one sandbox is a one-container docker sandbox."""

    def sandbox(self, mode: str):
        assert mode == MODE, mode
        if MODE not in self.sandboxes:
            from codegym.sandbox.docker import DockerSandbox
            fds_before = th.fd_targets()
            sb = DockerSandbox(workers=1)
            # warm up every image (Python, C/C++, JavaScript) so that baseline descriptor
            # counts include the attach sockets of their containers
            for lang, files in (("python", {"main.py": "print(1)"}),
                                ("c", {"main.c": "int main(void){return 0;}"}),
                                ("javascript", {"main.js": "console.log(1)"})):
                r = sb.execute(lang, files)
                assert r.status == "ok", r
            self.fds |= {t for t in th.fd_targets() - fds_before if t.startswith(("pipe:", "socket:"))}
            self.sandboxes[MODE] = sb
        return self.sandboxes[MODE]


def _container_pids(client, ids: list[str]) -> list[int]:
    pids = []
    for cid in ids:
        try:
            pid = client.api.inspect_container(cid)["State"]["Pid"]
        except Exception:  # noqa: BLE001 - already gone
            continue
        if pid:
            pids.append(pid)
    return pids


@pytest.fixture(scope="module")
def host():
    """The docker sandbox of this module; on teardown, proof that close() removed every
    container it made, that their processes are gone and its descriptors closed."""
    client = docker_or_skip()
    canary = "cgcanary" + uuid.uuid4().hex
    old = os.environ.get("CODEGYM_CANARY")
    os.environ["CODEGYM_CANARY"] = canary
    h = DockerHost(canary=canary, tmproot=Path("/nonexistent"))
    seen_ids: set[str] = set()
    try:
        yield h
    finally:
        sb = h.sandboxes.get(MODE)
        # this sandbox's own containers: the owner label is the process's, which other
        # sandboxes of the same test worker (other modules' fixtures) share
        owner = sb._instance if sb is not None else None
        if sb is not None:
            seen_ids |= set(sb.containers())
            pids = _container_pids(client, sorted(seen_ids))
            sb.close()
        if old is None:
            os.environ.pop("CODEGYM_CANARY", None)
        else:
            os.environ["CODEGYM_CANARY"] = old
    if owner is None:
        return
    problems = []
    left = labelled(client, **{LABEL_INSTANCE: owner})
    if left:
        problems.append(f"containers survived close(): {[c[:12] for c in left]}")
    end = time.monotonic() + 5
    while any(os.path.exists(f"/proc/{p}") for p in pids) and time.monotonic() < end:
        time.sleep(0.05)
    alive = [p for p in pids if os.path.exists(f"/proc/{p}")]
    if alive:
        problems.append(f"container processes remain after close(): {alive}")
    still = h.fds & th.fd_targets()
    if still:
        problems.append(f"descriptors the sandbox opened are still open after close(): {sorted(still)}")
    assert not problems, "\n".join(problems)


@pytest.mark.docker
@pytest.mark.timeout(180)
@pytest.mark.parametrize("path", th._PROGRAMS, ids=[p.name for p in th._PROGRAMS])
def test_hostile_program_docker(path: Path, host, secrets) -> None:  # noqa: F811
    """One corpus program on the docker backend: declared verdict, nothing escaped, host clean."""
    th.test_hostile_program(path, MODE, host, secrets)


@pytest.mark.docker
@pytest.mark.timeout(180)
@pytest.mark.parametrize("path", th._FORGERIES, ids=[p.name for p in th._FORGERIES])
def test_forgery_is_not_accepted_docker(path: Path, host, tmp_path, monkeypatch) -> None:
    """A judge-level forgery judged on the docker backend: never accepted, no case passed."""
    th.test_forgery_is_not_accepted(path, MODE, host, tmp_path, monkeypatch)
