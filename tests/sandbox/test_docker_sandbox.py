"""The Docker backend (codegym.sandbox.docker) on a real engine.

Verdicts of Python, C, C++ and JavaScript programs (and parity with the local backend
on the same programs: every language that runs locally), the container's isolation (no network, read-only root, no
capabilities, non-root), recycling after damage and after `max_runs`, per-task
containers, and cleanup on close. Without an engine (or the default images) the
tests skip with the reason printed, except in CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import json
import uuid

import pytest
from _tools import docker_or_skip

from codegym.core.limits import Limits


@pytest.fixture(scope="module")
def client():
    return docker_or_skip()


@pytest.fixture(scope="module")
def dsb(client):
    from codegym.sandbox.docker import DockerSandbox
    sb = DockerSandbox(workers=2)
    yield sb
    sb.close()


@pytest.fixture(scope="module")
def lsb():
    from codegym.sandbox import make_sandbox
    return make_sandbox("local")


def labelled(client, **labels) -> list[str]:
    """Ids of the docker backend's containers with these labels (one API call: no
    per-container inspect that could race with a removal)."""
    from codegym.sandbox.containers import LABEL
    flt = [f"{LABEL}=docker"] + [f"{k}={v}" for k, v in labels.items()]
    return [c["Id"] for c in client.api.containers(all=True, filters={"label": flt})]


# --------------------------------------------------------------------------- verdicts

PROGRAMS = {
    "python": {
        "ok": "print(sum(map(int, input().split())))",
        "runtime_error": "raise ValueError('boom')",
        "timeout": "while True: pass",
        "memory_limit": "x = bytearray(600 << 20)\nprint(len(x))",
        "output_limit": "import sys\nwhile True: sys.stdout.write('x' * 4096)",
    },
    "c": {
        "ok": "#include <stdio.h>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",a+b);return 0;}",
        "runtime_error": "#include <stdlib.h>\nint main(){int *p = 0; return *p + 1;}",
        "timeout": "int main(){volatile unsigned long x=0; for(;;) x++; }",
        "memory_limit": "#include <stdlib.h>\n#include <string.h>\nint main(){for(int i=0;i<64;i++){"
                        "char *p=malloc(32<<20); if(!p) return 3; memset(p,1,32<<20);} return 0;}",
        "output_limit": "#include <stdio.h>\nint main(){for(;;) fputs(\"xxxxxxxxxxxxxxxx\", stdout);}",
        "compile_error": "int main(){ return undefined_name; }",
    },
    "cpp": {
        "ok": "#include <iostream>\nint main(){long a,b; std::cin>>a>>b; std::cout<<a+b<<std::endl;}",
        "runtime_error": "#include <stdexcept>\nint main(){ throw std::runtime_error(\"boom\"); }",
        "timeout": "int main(){ volatile long x = 0; while (true) x++; }",
        "memory_limit": "#include <vector>\n#include <cstdio>\nint main(){std::vector<std::vector<char>> v;"
                        " for(int i=0;i<64;i++) v.emplace_back(32<<20, 1); std::printf(\"%zu\\n\", v.size());}",
        "output_limit": "#include <iostream>\nint main(){ for(;;) std::cout << \"xxxxxxxxxxxxxxxx\"; }",
        "compile_error": "int main() { this is not c++; }",
    },
    "javascript": {
        "ok": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
              "console.log(a + b);",
        "runtime_error": "throw new Error('boom');",
        "timeout": "for (;;) {}",
        "memory_limit": "const k = []; for (let i = 0; i < 64; i++) k.push(Buffer.alloc(32 << 20, 1));\n"
                        "console.log(k.length);",
        "output_limit": "const fs = require('fs'); const b = Buffer.alloc(1 << 16, 120); for (;;) fs.writeSync(1, b);",
        "compile_error": "function ( {",
    },
}
MAIN = {"python": "main.py", "c": "main.c", "cpp": "main.cpp", "javascript": "main.js"}
#: the timeout programs spin, so the CPU limit stops them; the wall limit is generous so that a
#: loaded machine does not turn the others (memory_limit: 256 MB to fill) into wall-clock timeouts
LIMITS = Limits(time_s=1, wall_s=20, memory_mb=256, output_bytes=64 << 10)
CASES = [(lang, status) for lang, progs in PROGRAMS.items() for status in progs]


@pytest.mark.docker
@pytest.mark.parametrize("lang, expected", CASES, ids=[f"{a}-{b}" for a, b in CASES])
def test_verdict_matches_expected_and_local(lang: str, expected: str, dsb, lsb) -> None:
    files = {MAIN[lang]: PROGRAMS[lang][expected]}
    r = dsb.execute(lang, files, stdin="2 40\n", limits=LIMITS)
    assert r.status == expected, (r.status, r.message, r.stderr[-500:])
    if expected == "ok":
        assert r.stdout.strip() == "42"
    if expected == "output_limit":
        assert r.stdout_truncated and len(r.stdout) <= LIMITS.output_bytes
    if expected == "compile_error":
        assert r.phase == "compile" and "error" in r.stderr.lower()
    local = lsb.execute(lang, files, stdin="2 40\n", limits=LIMITS)
    assert local.status == r.status, f"local says {local.status} ({local.message}), docker {r.status}"


@pytest.mark.docker
def test_run_many_and_build_cache(dsb) -> None:
    from codegym.sandbox.types import RunRequest
    b = dsb.build("c", {"main.c": PROGRAMS["c"]["ok"]})
    assert b.ok, b.result
    again = dsb.build("c", {"main.c": PROGRAMS["c"]["ok"]})
    assert again is b  # cached by content hash
    reqs = [RunRequest(stdin=f"{i} {i}\n") for i in range(6)]
    out = dsb.run_many(b, reqs, limits=LIMITS)
    assert [r.stdout.strip() for r in out] == [str(2 * i) for i in range(6)]


@pytest.mark.docker
def test_a_container_forks_as_small_a_runner_as_a_local_slot(dsb, lsb) -> None:
    """Every run forks the runner's heap: the container's runner starts as a local slot's
    (its source compiled and exec'd), not as a script, whose parser left ~3 MB more heap
    behind (a trivial program's peak RSS 12 MB in a container, 9 MB locally)."""
    version = "import sys\nprint(sys.version.split()[0])"
    if dsb.execute("python", {"main.py": version}).stdout != lsb.execute("python", {"main.py": version}).stdout:
        pytest.skip("the image's Python is not the local slots' (their heaps differ anyway)")
    prog = {"main.py": "print(int(input()) + 1)"}
    d = min(dsb.execute("python", prog, stdin="1\n").max_rss_mb for _ in range(3))
    loc = min(lsb.execute("python", prog, stdin="1\n").max_rss_mb for _ in range(3))
    assert d <= loc + 1.5, (d, loc)


@pytest.mark.docker
def test_timed_runs_get_a_random_layout_in_containers_too(dsb) -> None:
    """The container's fork server is the local one: `randomize_layout` moves a Python
    program's code (a copy) and objects from run to run, and changes nothing else."""
    b = dsb.build("python", {"main.py": "import sys\nx = object()\nprint(id(sys._getframe().f_code), id(x))\n"})
    assert b.ok, b.result
    fixed = {dsb.run(b).stdout.split()[0] for _ in range(3)}
    moved = [dsb.run(b, randomize_layout=True) for _ in range(8)]
    assert all(r.status == "ok" for r in moved), moved[0]
    # (a run may land in either of the two containers: two fixed layouts at most)
    assert len(fixed) <= 2 and len({r.stdout.split()[0] for r in moved}) > 2


def test_stdin_bytes_pass_untouched(dsb) -> None:
    """Bytes that a TTY attach would treat as detach keys (ctrl-p ctrl-q) reach the program."""
    data = bytes(range(256)) * 4
    r = dsb.execute("python", {"main.py": "import sys\nd = sys.stdin.buffer.read()\n"
                                          "print(len(d), d == bytes(range(256)) * 4)"}, stdin=data)
    assert (r.status, r.stdout) == ("ok", "1024 True\n")


# --------------------------------------------------------------------------- isolation

PROBE = r"""
import json, os, socket
out = {"uid": os.getuid(), "nets": sorted(os.listdir("/sys/class/net")), "writes": {}}
for d in ("/", "/usr", "/etc", "/opt/codegym", "/var", "/box", "/tmp"):
    p = os.path.join(d, "probe-file")
    try:
        with open(p, "w") as f:
            f.write("x")
        os.unlink(p)
        out["writes"][d] = "ok"
    except OSError as e:
        out["writes"][d] = e.strerror
for host in (("1.1.1.1", 53), ("127.0.0.1", 2375)):
    s = socket.socket()
    s.settimeout(1)
    try:
        s.connect(host)
        out.setdefault("connected", []).append(host[0])
    except OSError as e:
        out.setdefault("errors", []).append(e.strerror or str(e))
    finally:
        s.close()
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
out["capeff"] = status["CapEff"].strip()
out["nnp"] = status["NoNewPrivs"].strip()
print(json.dumps(out))
"""


@pytest.mark.docker
def test_no_network_readonly_root_no_privileges(dsb) -> None:
    r = dsb.execute("python", {"main.py": PROBE}, limits=Limits(time_s=2, wall_s=8))
    assert r.status == "ok", (r.message, r.stderr)
    seen = json.loads(r.stdout)
    assert seen["nets"] == ["lo"]
    assert "connected" not in seen, seen
    assert seen["uid"] != 0
    assert int(seen["capeff"], 16) == 0 and seen["nnp"] == "1"
    for d in ("/", "/usr", "/etc", "/opt/codegym", "/var"):
        assert seen["writes"][d] != "ok", (d, seen["writes"])
    assert seen["writes"]["/box"] == "ok" and seen["writes"]["/tmp"] == "ok"


@pytest.mark.docker
def test_container_configuration(dsb, client) -> None:
    dsb.execute("python", {"main.py": "print(1)"})
    ids = dsb.containers()
    assert ids
    for cid in ids:
        hc = client.api.inspect_container(cid)["HostConfig"]
        cfg = client.api.inspect_container(cid)["Config"]
        assert hc["NetworkMode"] == "none"
        assert hc["ReadonlyRootfs"] is True
        assert hc["CapDrop"] == ["ALL"]
        assert "no-new-privileges" in hc["SecurityOpt"]
        assert hc["Memory"] > 0 and hc["MemorySwap"] == hc["Memory"]
        assert hc["PidsLimit"] and hc["PidsLimit"] > 0
        assert hc["NanoCpus"] > 0
        assert cfg["User"] and not cfg["User"].startswith("0")
        assert hc["Privileged"] is False


# --------------------------------------------------------------------------- pool behaviour


@pytest.mark.docker
def test_recycled_after_damage(client) -> None:
    """A container killed from outside (damage) is replaced; the run is not lost."""
    from codegym.sandbox.docker import DockerSandbox
    with DockerSandbox(workers=1) as sb:
        prog = {"main.py": "print(input())"}
        assert sb.execute("python", prog, stdin="a\n").stdout == "a\n"
        (first,) = sb.containers()
        client.api.kill(first)
        r = sb.execute("python", prog, stdin="b\n")
        assert (r.status, r.stdout) == ("ok", "b\n"), r
        (second,) = sb.containers()
        assert second != first
        assert sb.stats["slot_restarts"] >= 1


@pytest.mark.docker
def test_recycled_after_max_runs_and_not_shared_between_tasks(client) -> None:
    from codegym.sandbox.containers import LABEL_SCOPE
    from codegym.sandbox.docker import DockerSandbox
    # one container at most: task b can only get one by replacing task a's
    with DockerSandbox(workers=1, max_containers=1, max_runs=2) as sb:
        prog = {"main.py": "print(7)"}
        seen = set()
        for _ in range(4):
            assert sb.execute("python", prog).stdout == "7\n"
            seen.update(sb.containers())
        assert len(seen) >= 2 and sb.stats["recycled"] >= 1
        a, b = sb.for_task("suite/a"), sb.for_task("suite/b")
        assert a.execute("python", prog).stdout == "7\n"
        (ca,) = sb.containers()
        assert client.api.inspect_container(ca)["Config"]["Labels"][LABEL_SCOPE] == "suite/a"
        assert b.execute("python", prog).stdout == "7\n"
        (cb,) = sb.containers()
        assert cb != ca  # the one slot's container of task a was not reused for task b
        assert client.api.inspect_container(cb)["Config"]["Labels"][LABEL_SCOPE] == "suite/b"


@pytest.mark.docker
def test_tasks_without_an_image_of_their_own_share_the_pools_containers(client, tmp_path) -> None:
    """Issue 32: judging a task that needs no image of its own does no per-task container
    or image work: the pool's long-lived container per language image serves every such
    task (each run carries its files; the server wipes what a run leaves), and a run's
    verdict does not depend on which task ran before it in that container."""
    from codegym import load_task
    from codegym.judge import judge
    from codegym.sandbox.containers import LABEL_SCOPE
    from codegym.sandbox.docker import DockerSandbox
    tasks = []
    for i in range(4):
        p = tmp_path / f"t{i}.yaml"
        p.write_text(f"id: bench/share-{i}\ntitle: t\nstatement: s\nkind: stdio\nlanguage: python\n"
                     f"solutions:\n  reference: {{language: python, files: {{main.py: \"print(input())\"}}}}\n"
                     f"tests:\n  hidden:\n  - {{stdin: \"{i}\\n\", expected: \"{i}\\n\"}}\n")
        tasks.append(load_task(p))
    leftover = "open('/tmp/left', 'w').write('x')\nprint(input())"
    with DockerSandbox(workers=1, max_containers=1) as sb:
        for t in tasks:
            assert judge(t, {"main.py": "print(input())"}, sandbox=sb).verdict == "accepted"
            assert judge(t, {"main.py": leftover}, sandbox=sb).verdict == "accepted"
            assert judge(t, {"main.py": "import os\nprint('seen' if os.path.exists('/tmp/left') else input())"},
                         sandbox=sb).verdict == "accepted"
        assert sb.stats["containers_started"] == 1, dict(sb.stats)
        (cid,) = sb.containers()
        assert client.api.inspect_container(cid)["Config"]["Labels"][LABEL_SCOPE] == ""


@pytest.mark.docker
def test_containers_compete_for_the_cpu_like_host_processes(client) -> None:
    """With the cgroupfs driver each container's cgroup sits at the top of the hierarchy
    (weighed like one host process, as a local slot is), not under the engine's one group."""
    from codegym.sandbox.docker import DockerSandbox
    with DockerSandbox(workers=1) as sb:
        assert sb.execute("python", {"main.py": "print(1)"}).stdout == "1\n"
        (cid,) = sb.containers()
        parent = client.api.inspect_container(cid)["HostConfig"].get("CgroupParent")
        if client.info().get("CgroupDriver") == "cgroupfs":
            assert sb.cgroup_parent == "/" and parent == "/"
        else:
            assert sb.cgroup_parent is None
    with DockerSandbox(workers=1, cgroup_parent=None) as sb:
        assert sb.cgroup_parent is None and sb.execute("python", {"main.py": "print(2)"}).stdout == "2\n"


RUNNER_SOCKET_PROBE = """
import os, socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect('/opt/codegym/host.sock')
    print('connected')
except OSError as e:
    print(type(e).__name__)
"""


@pytest.mark.docker
def test_frames_bypass_the_engine_and_fall_back_to_the_attach_socket(client) -> None:
    """Transport "socket": the runner connects to a unix socket of this host mounted into its
    container (the engine out of the frames' way), which takes no second connection -- a
    program of the container cannot talk to the host in the runner's place. An engine that
    refuses the bind mount (here: a runner file it cannot see), or a host where no socket
    can be made, switches the sandbox to the attach socket, one request at a time;
    `transport="attach"` asks for it."""
    import os

    from codegym.sandbox.docker import DockerSandbox
    from codegym.sandbox.types import RunRequest
    with DockerSandbox(workers=1) as sb:
        assert sb.transport == "socket" and sb.pipeline >= 2
        r = sb.execute("python", {"main.py": RUNNER_SOCKET_PROBE})
        assert (r.status, r.stdout) == ("ok", "ConnectionRefusedError\n"), r
        assert os.listdir(sb._dir) == ["forkserver.py"]  # (each listener is gone once accepted)
        b = sb.build("python", {"main.py": "print(input())"})
        assert [x.stdout for x in sb.run_many(b, [RunRequest(stdin=f"{i}\n") for i in range(6)])] == \
            [f"{i}\n" for i in range(6)]
        d = sb._dir
    assert not os.path.exists(d)
    with DockerSandbox(workers=1) as sb:
        sb._runner_file = lambda: "/nonexistent/codegym/forkserver.py"  # type: ignore[method-assign]
        assert sb.execute("python", {"main.py": "print(3)"}).stdout == "3\n"
        assert (sb.transport, sb.pipeline) == ("attach", 1)
    with DockerSandbox(workers=1) as sb:  # no socket can be made here (a TMPDIR too long for one)
        def no_socket(uid: int):
            raise OSError("AF_UNIX path too long")
        sb._listener = no_socket  # type: ignore[method-assign]
        assert sb.execute("python", {"main.py": "print(4)"}).stdout == "4\n"
        assert (sb.transport, sb.pipeline) == ("attach", 1)
    with DockerSandbox(workers=1, transport="attach") as sb:
        b = sb.build("python", {"main.py": "print(input())"})
        assert [x.stdout for x in sb.run_many(b, [RunRequest(stdin=f"{i}\n") for i in range(3)])] == \
            ["0\n", "1\n", "2\n"]
        assert sb.stats["containers_started"] == 1
    with pytest.raises(ValueError):
        DockerSandbox(workers=1, transport="pipe")


@pytest.mark.docker
def test_close_removes_every_container(client) -> None:
    from codegym.sandbox.docker import DockerSandbox
    sb = DockerSandbox(workers=2)
    b = sb.build("python", {"main.py": "import time; time.sleep(0.2); print(1)"})
    from codegym.sandbox.types import RunRequest
    assert [r.status for r in sb.run_many(b, [RunRequest()] * 2)] == ["ok", "ok"]
    mine = set(sb.containers())
    assert len(mine) == 2 and mine <= set(labelled(client))
    sb.close()
    after = set(labelled(client))
    assert not (after & mine), "containers survived close()"


@pytest.mark.docker
def test_missing_image_is_a_clear_sandbox_error(client) -> None:
    from codegym.sandbox.docker import DockerSandbox
    with DockerSandbox(workers=1, images={"python": "codegym/does-not-exist:0"}) as sb:
        r = sb.execute("python", {"main.py": "print(1)"})
        assert r.status == "sandbox_error"
        assert "does-not-exist" in r.message and "build" in r.message


def test_no_engine_is_a_clear_error(monkeypatch) -> None:
    pytest.importorskip("docker")
    from codegym.sandbox.docker import DockerSandbox, DockerUnavailable
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(DockerUnavailable, match="Docker engine"):
        DockerSandbox(workers=1)


def test_a_repository_task_runs_in_the_image_its_dockerfile_builds(dsb, client) -> None:
    """`repo.dockerfile`: the docker backend builds the task's image once (no network, no
    pull) and the judge runs the task's tests in containers of that image."""
    from codegym import load_suite
    from codegym.judge.run import judge
    from codegym.tasks import repo as swe

    base = load_suite("swe").get("swe/centsplit-lost-cent")
    # a Dockerfile of its own each run, so that the image is built here, not found from an
    # earlier run (a cached image hid a build that failed on every fresh machine)
    dockerfile = f"FROM codegym/python:3.11\nRUN echo codegym {uuid.uuid4().hex} > /opt/codegym-task-image\n"
    task = base.model_copy(update={"repo": base.repo.model_copy(update={"dockerfile": dockerfile})})
    tag = dsb.image_from_dockerfile(dockerfile)
    assert tag.startswith("codegym/task:") and dsb.image_from_dockerfile(dockerfile) == tag
    rep = judge(task, dict(swe.reference_files(task)), sandbox=dsb, split="hidden")
    assert rep.verdict == "accepted", rep.message
    image_id = client.images.get(tag).id
    used = client.containers.list(all=True, filters={"label": "codegym.sandbox=docker"})
    assert any(c.attrs["Image"] == image_id for c in used)
    bad = base.model_copy(update={"repo": base.repo.model_copy(update={"dockerfile": "FROM codegym/absent:none\n"})})
    rep = judge(bad, dict(swe.reference_files(bad)), sandbox=dsb, split="hidden")
    assert rep.verdict == "sandbox_error" and "could not be built" in rep.message
    client.images.remove(tag, force=True)  # its tag (a few bytes over codegym/python:3.11)


def test_a_host_program_brings_the_files_its_binary_names(tmp_path) -> None:
    """Debian's node loads some builtins from /usr/share/nodejs (its binary names them):
    the codegym/node image made from such a host node must carry them (no engine needed)."""
    from codegym.sandbox.images import runtime_files
    lexer = tmp_path / "share" / "nodejs" / "cjs-module-lexer" / "lexer.js"
    lexer.parent.mkdir(parents=True)
    lexer.write_text("module.exports = {};\n")
    lib = tmp_path / "libnode.so.108"
    lib.write_bytes(b"\0\0NODE_OPENSSL_CONF_NAME=nodejs_conf\0NODE_SHARED_BUILTIN_CJS_MODULE_LEXER_LEXER_PATH="
                    + str(lexer).encode() + b"\", \"NODE_SHARED_BUILTIN_UNDICI_UNDICI_PATH=/nonexistent/undici.js\0")
    exe = tmp_path / "node"
    exe.write_bytes(b"\x7fELF no names here")
    assert runtime_files(exe, [("libnode.so.108", lib)]) == [lexer]      # the existing ones only
    assert runtime_files(exe, []) == []
