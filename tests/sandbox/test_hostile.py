"""The hostile-program corpus: every program in tests/hostile/ must be contained.

Owns the corpus runner. Each file in ``tests/hostile/`` is one attack (Python
``.py``, C ``.c`` or JavaScript ``.js``) whose leading comment block declares its metadata::

    # attack: what it tries
    # verdict: timeout|runtime_error      allowed ExecResult statuses
    # limits: time_s=0.5 wall_s=1.5 memory_mb=128
    # stdin: {port}                         ({port}: the TCP server of this test)
    # check: output_bounded, no_heartbeat  named host-side checks (CHECKS below)
    # bwrap_only: true                      + `reason:`; skipped in the rlimits-only mode
    # rlimits_needs_root: true              contained in the rlimits mode only by the slots' own
    #                                       uids, which exist only when the host runs as root
    # template: true                        @TOKEN@ @REPO@ @HOSTDIR@ @SECRET_ID@ are substituted
    # compile_limits: time_s=2 wall_s=6     build with these instead of COMPILE_LIMITS

Every program runs in both isolation modes (bubblewrap, and rlimits only) on a
one-slot sandbox per mode, with argv ``TOKEN REPO HOSTDIR TESTPID HOST_PIDNS``
(a random token that names every file the program tries to leave behind, the
repository root, a mode-700 directory holding this test's secrets, the pid of
this process and its PID namespace). Whatever the program, the test asserts:

- the status is one of the declared verdicts, never ``sandbox_error``;
- no output line says ``ESCAPED`` (programs print it when an attack worked);
- no file named after the token exists on the host (/, /tmp, /usr, /etc, the
  repository, ...), no process carrying the token is alive, this process has
  no new children, zombies or descriptors, and no host mount mentions the token;
- the next execution in the same sandbox works and starts from a clean run
  directory and an empty private /tmp.

The judge-level forgeries (a candidate that tries to make the judge accept it
without solving the task) live in tests/hostile/forge_*.py and run through
`codegym.judge.run.judge` on tiny tasks built here.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from _tools import need_bwrap

from codegym.core.limits import COMPILE_LIMITS, Limits

HOSTILE = Path(__file__).with_name("hostile")
#: corpus file suffix -> language, and the language's main file
LANGUAGES = {".py": "python", ".c": "c", ".js": "javascript"}
MAIN_FILES = {"python": "main.py", "c": "main.c", "javascript": "main.js"}
REPO = Path(__file__).resolve().parents[2]
MODES = ("bwrap", "rlimits")
#: the wall limit of the programs whose declared verdict is not a timeout (see `load_program`)
LOADED_WALL_S = 30.0
#: the secret marker is split so that neither this file nor the corpus contains it whole
SECRET_PREFIX = "CODEGYM" + "-SECRET-"

# --------------------------------------------------------------------------- the corpus


@dataclass
class Program:
    """One corpus file and its declared metadata."""

    path: Path
    meta: dict[str, str]
    language: str
    verdicts: tuple[str, ...]
    limits: Limits
    checks: tuple[str, ...]
    bwrap_only: bool
    kind: str = "sandbox"   # "sandbox" or a judge task kind for forge_* programs

    @property
    def name(self) -> str:
        return self.path.name

    def source(self, subst: dict[str, str]) -> str:
        text = self.path.read_text()
        if self.meta.get("template") == "true":
            for k, v in subst.items():
                text = text.replace(f"@{k}@", v)
        return text


_INT_FIELDS = {"memory_mb", "output_bytes", "processes", "file_size_mb", "open_files", "disk_mb"}


def parse_header(path: Path) -> dict[str, str]:
    """Metadata from the leading `#` / `//` comment lines (`key: value`)."""
    meta: dict[str, str] = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^\s*(#|//)\s?(.*)$", line)
        if not m:
            break
        kv = re.match(r"^([a-z_]+):\s*(.*)$", m.group(2))
        if kv:
            meta[kv.group(1)] = kv.group(2).strip()
    return meta


def parse_limits(text: str) -> dict:
    """`time_s=1 memory_mb=64` -> keyword arguments of Limits."""
    lim: dict = {}
    for item in text.split():
        k, _, v = item.partition("=")
        lim[k] = int(v) if k in _INT_FIELDS else float(v)
    return lim


def load_program(path: Path) -> Program:
    meta = parse_header(path)
    if "verdict" not in meta or "attack" not in meta:
        raise ValueError(f"{path.name}: header must declare `attack:` and `verdict:`")
    lim = parse_limits(meta.get("limits", ""))
    parse_limits(meta.get("compile_limits", ""))
    checks = tuple(c.strip() for c in meta.get("check", "").split(",") if c.strip())
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise ValueError(f"{path.name}: unknown checks {unknown}")
    verdicts = tuple(v.strip() for v in meta["verdict"].split("|"))
    if "timeout" not in verdicts and "wall_s" in lim:
        # a wall-clock kill is not this program's verdict: on a loaded machine (the tests share
        # two cores with whatever else runs) its declared wall limit must not make one; the
        # CPU and memory limits, which decide it, stay as declared
        lim["wall_s"] = max(lim["wall_s"], LOADED_WALL_S)
    return Program(path=path, meta=meta, language=LANGUAGES[path.suffix], verdicts=verdicts,
                   limits=Limits(**lim), checks=checks,
                   bwrap_only=meta.get("bwrap_only", "false") == "true",
                   kind=meta.get("kind", "sandbox"))


def corpus() -> list[Path]:
    return sorted(p for p in HOSTILE.iterdir() if p.suffix in LANGUAGES and not p.name.startswith("."))


# --------------------------------------------------------------------------- host observations


def _proc_stat(pid: str) -> tuple[int, str] | None:
    """(ppid, state) of a process, None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = raw[raw.rfind(")") + 2:].split()
    return int(rest[1]), rest[0]


def descendants(root: int | None = None) -> dict[int, str]:
    """pid -> state of every process below `root` (default: this process)."""
    root = root or os.getpid()
    children: dict[int, list[tuple[int, str]]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _proc_stat(d)
            if st:
                children.setdefault(st[0], []).append((int(d), st[1]))
    out: dict[int, str] = {}
    stack = [root]
    while stack:
        for pid, state in children.get(stack.pop(), []):
            if pid not in out:
                out[pid] = state
                stack.append(pid)
    return out


def processes_with(token: str) -> list[tuple[int, str]]:
    """Live (non-zombie) processes anywhere on the host whose argv mentions `token`."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmd:
            st = _proc_stat(d)
            if st and st[1] != "Z":
                found.append((int(d), cmd.replace(b"\0", b" ").decode(errors="replace")[:200]))
    return found


def wait_gone(token: str, seconds: float = 2.0) -> list[tuple[int, str]]:
    """Processes carrying `token` that are still alive after a short grace period."""
    end = time.monotonic() + seconds
    while True:
        left = processes_with(token)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def host_sentinels(token: str, hostdir: Path) -> list[str]:
    """Files named after the token where a program must never manage to put them."""
    dirs = ["/", "/tmp", "/var/tmp", "/dev/shm", "/usr", "/usr/local/bin", "/etc", "/root",
            str(REPO), str(REPO / "tests"), str(REPO / "tests" / "hostile"), str(hostdir)]
    hits = []
    for d in dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        hits += [os.path.join(d, n) for n in names if token in n]
    return hits


def remove_paths(paths: list[str]) -> None:
    for p in paths:
        with contextlib.suppress(OSError):
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.unlink(p)


def kill_pids(pids: list[int]) -> None:
    """Clean up after a hole: kill the escaped processes this test caused, by pid."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def mounts_with(token: str) -> list[str]:
    return [ln for ln in Path("/proc/self/mountinfo").read_text().splitlines() if token in ln]


class Listener:
    """A TCP server on 127.0.0.1 and an abstract unix socket; counts connections."""

    def __init__(self, token: str):
        self.accepted: list[str] = []
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.port = self.tcp.getsockname()[1]
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(f"\0codegym-hostile-{token}")
        self.unix.listen(16)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        import select
        while not self._stop.is_set():
            r, _, _ = select.select([self.tcp, self.unix], [], [], 0.05)
            for s in r:
                with contextlib.suppress(OSError):
                    conn, addr = s.accept()
                    self.accepted.append(f"{'tcp' if s is self.tcp else 'unix'} {addr!r}")
                    conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.tcp.close()
        self.unix.close()


# --------------------------------------------------------------------------- fixtures


def fd_targets() -> set[str]:
    """What this process's descriptors point at (pipe:[inode], socket:[inode], paths)."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            out.add(os.readlink(f"/proc/self/fd/{fd}"))
    return out


@dataclass
class Host:
    """What the module set up: the sandboxes, the canary, the private temp root, and
    the descriptors the sandboxes opened in this process (to prove close() closes them)."""

    canary: str
    tmproot: Path
    sandboxes: dict[str, object] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    fds: set[str] = field(default_factory=set)

    def sandbox(self, mode: str):
        if mode in self.errors:
            pytest.fail(f"could not create the {mode} sandbox: {self.errors[mode]}")
        if mode == "bwrap":
            need_bwrap()
        if mode not in self.sandboxes:
            from codegym.sandbox import make_sandbox
            # the sandbox's own directories go to a private temp root, so that after
            # close() we can prove it left nothing behind
            saved = tempfile.tempdir
            tempfile.tempdir = str(self.tmproot)
            fds_before = fd_targets()
            try:
                sb = make_sandbox("local", isolation=mode, workers=1)
            except Exception as e:  # noqa: BLE001 - reported as the test failure
                self.errors[mode] = f"{type(e).__name__}: {e}"
                pytest.fail(f"could not create the {mode} sandbox: {self.errors[mode]}")
            finally:
                tempfile.tempdir = saved
            if sb.isolation != mode:
                sb.close()
                self.errors[mode] = f"asked for {mode}, got isolation={sb.isolation}"
                pytest.skip(f"{mode} isolation is not available here: {self.errors[mode]}")
            # warm up: start the slot so that baseline process/fd counts include it
            r = sb.execute("python", {"main.py": "print(1)"}, limits=Limits(time_s=2))
            assert r.status == "ok", r
            self.fds |= {t for t in fd_targets() - fds_before if t.startswith(("pipe:", "socket:"))}
            self.sandboxes[mode] = sb
        return self.sandboxes[mode]


@pytest.fixture(scope="module")
def host():
    """The module's sandboxes; on teardown, proof that closing them left the host as it was:
    nothing in their temp root, no process that belongs to them, no descriptor they opened."""
    if not Path("/proc/self/mountinfo").exists():
        pytest.skip("needs Linux /proc")
    # the canary is in the environment before any sandbox exists (it must not leak in)
    canary = "cgcanary" + uuid.uuid4().hex
    old = os.environ.get("CODEGYM_CANARY")
    os.environ["CODEGYM_CANARY"] = canary
    # not under pytest's basetemp: that is mode 700 and the slots' own uids must traverse it
    tmproot = Path(tempfile.mkdtemp(prefix="codegym-hostile-root-"))
    os.chmod(tmproot, 0o711)
    h = Host(canary=canary, tmproot=tmproot)
    try:
        yield h
    finally:
        for sb in h.sandboxes.values():
            sb.close()
        if old is None:
            os.environ.pop("CODEGYM_CANARY", None)
        else:
            os.environ["CODEGYM_CANARY"] = old
    problems = []
    # allowed: empty top-level directories (the sandbox's per-user root stays, by design)
    left = sorted(str(p.relative_to(tmproot)) for p in tmproot.rglob("*")
                  if p.parent != tmproot or not p.is_dir())
    if left:
        problems.append(f"the sandboxes left entries in their temp root after close(): {left[:10]}")
    # every slot process (bwrap or fork server) names the temp root in its argv
    alive = wait_gone(str(tmproot), 5.0)
    if alive:
        problems.append(f"sandbox processes remain after close(): {alive}")
        kill_pids([pid for pid, _ in alive])
    still = h.fds & fd_targets()
    if still:
        problems.append(f"descriptors the sandboxes opened are still open after close(): {sorted(still)}")
    shutil.rmtree(tmproot, ignore_errors=True)
    assert not problems, "\n".join(problems)


@pytest.fixture
def secrets(tmp_path):
    """A mode-700 host directory holding the hidden tests, and a copy in the repository."""
    token = uuid.uuid4().hex[:16]
    secret = SECRET_PREFIX + uuid.uuid4().hex
    hostdir = tmp_path / "host"
    (hostdir / "tasks").mkdir(parents=True)
    os.chmod(tmp_path, 0o700)
    os.chmod(hostdir, 0o700)
    (hostdir / "secret.txt").write_text(secret + "\n")
    (hostdir / "tasks" / "hidden.yaml").write_text(
        f"tests:\n  hidden:\n    - stdin: '1 2'\n      expected: '{secret}'\n")
    secret_id = uuid.uuid4().hex[:16]  # not the token: the token marks forbidden files
    repo_copy = HOSTILE / f".secret-{secret_id}.yaml"
    repo_copy.write_text(f"tests:\n  hidden:\n    - {{stdin: '1 2', expected: '{secret}'}}\n")
    try:
        yield token, secret, hostdir, secret_id
    finally:
        repo_copy.unlink(missing_ok=True)


# --------------------------------------------------------------------------- named checks


@dataclass
class Ctx:
    """One run of one corpus program: what it produced and what the checks need."""

    program: Program
    mode: str
    host: Host
    sb: object
    token: str
    secret: str
    hostdir: Path
    argv: list[str]
    subst: dict[str, str]
    result: object
    elapsed: float
    ended: float
    rss_before_kb: int
    listener: Listener | None
    failures: list[str]

    def output(self) -> str:
        r = self.result
        return f"{r.stdout}\n{r.stderr}\n{r.message}"


def check_host_responsive(c: Ctx) -> None:
    try:
        subprocess.run(["true"], timeout=30, check=True)
    except (subprocess.SubprocessError, OSError) as e:
        c.failures.append(f"the host cannot start a process after the run: {e}")


def check_no_heartbeat(c: Ctx) -> None:
    # the daemon waits 0.5 s before its first heartbeat, then writes every 0.1 s
    time.sleep(max(0.0, c.ended + 1.0 - time.monotonic()))
    alive = processes_with(c.token)
    if alive:
        c.failures.append(f"daemon still alive {time.monotonic() - c.ended:.1f} s after the run: {alive}")
        kill_pids([p for p, _ in alive])
    beats = host_sentinels(c.token, c.hostdir)
    if beats:
        c.failures.append(f"heartbeat files appeared on the host: {beats}")
        remove_paths(beats)


def check_output_bounded(c: Ctx) -> None:
    r, cap = c.result, c.program.limits.output_bytes
    for name in ("stdout", "stderr"):
        n = len(getattr(r, name).encode("utf-8", "surrogateescape"))
        if n > cap:
            c.failures.append(f"{name} holds {n} bytes, over output_bytes={cap}")
    if not (r.stdout_truncated or r.stderr_truncated):
        c.failures.append("no stream is marked truncated")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - c.rss_before_kb) / 1024
    if grown_mb > 64:
        c.failures.append(f"the test process's peak RSS grew by {grown_mb:.0f} MiB during a flood")


def check_secret_hidden(c: Ctx) -> None:
    if c.secret in c.output() or c.secret[len(SECRET_PREFIX):] in c.output():
        c.failures.append("the hidden-test secret appears in the program's output")


def check_canary_hidden(c: Ctx) -> None:
    if c.host.canary in c.output():
        c.failures.append("the parent's CODEGYM_CANARY value appears in the program's output")


def check_no_connection(c: Ctx) -> None:
    time.sleep(0.1)
    if c.listener is not None and c.listener.accepted:
        c.failures.append(f"the host's listeners accepted connections: {c.listener.accepted}")


def check_other_build(c: Ctx) -> None:
    pass  # a pre-run step (see attack): another build holding the secret is in the store


def check_no_new_mounts(c: Ctx) -> None:
    pass  # done for every program (see run_checks); named for the header's sake


def check_bounded_wall(c: Ctx) -> None:
    bound = c.program.limits.wall() + 10.0
    if c.program.language == "c":
        cl = c.program.meta.get("compile_limits")
        bound += Limits(**parse_limits(cl)).wall() if cl else COMPILE_LIMITS.wall()
    if c.elapsed > bound:
        c.failures.append(f"execute() took {c.elapsed:.1f} s, over the limits' wall bound {bound:.0f} s")


def check_rerun_clean(c: Ctx) -> None:
    files = {MAIN_FILES[c.program.language]: c.program.source(c.subst)}
    r = c.sb.execute(c.program.language, files, limits=c.program.limits, argv=c.argv)
    if "POISONED" in r.stdout or "clean start" not in r.stdout:
        c.failures.append(f"a second run of the same build was affected by the first: {r.status} {r.stdout[:300]!r}")
    for line in r.stdout.splitlines():
        if "ESCAPED" in line:
            c.failures.append(f"second run: {line}")


def check_no_shadow_leak(c: Ctx) -> None:
    try:
        lines = [ln for ln in Path("/etc/shadow").read_text().splitlines() if ln.strip()]
    except OSError:
        return  # the test itself cannot read it: nothing to compare with
    out = c.output()
    hashes = [f[1] for f in (ln.split(":") for ln in lines) if len(f) > 1 and len(f[1]) > 3]
    if any(ln in out for ln in lines) or any(h in out for h in hashes):
        c.failures.append("/etc/shadow content leaked into the output (not shown here)")


CHECKS = {
    "host_responsive": check_host_responsive,
    "no_heartbeat": check_no_heartbeat,
    "output_bounded": check_output_bounded,
    "secret_hidden": check_secret_hidden,
    "canary_hidden": check_canary_hidden,
    "no_connection": check_no_connection,
    "no_new_mounts": check_no_new_mounts,
    "other_build": check_other_build,
    "bounded_wall": check_bounded_wall,
    "rerun_clean": check_rerun_clean,
    "no_shadow_leak": check_no_shadow_leak,
}

PROBE = """\
import json, os, sys, tempfile
tok = sys.argv[1]
def ls(d):
    try:
        return sorted(os.listdir(d))
    except OSError as e:
        return ["<%s>" % e.strerror]
print(json.dumps({"sum": sum(range(10)), "cwd": ls("."), "tmpdir": ls(tempfile.gettempdir()),
                  "tokens": [d + "/" + n for d in ("/tmp", "/dev/shm", "/var/tmp") for n in ls(d) if tok in n]}))
"""


def check_next_run(c: Ctx) -> None:
    """The same sandbox (one slot) still works, with a clean run directory and /tmp."""
    r = c.sb.execute("python", {"main.py": PROBE}, argv=[c.token], limits=Limits(time_s=2, memory_mb=256))
    if r.status != "ok":
        c.failures.append(f"the next execution failed: {r.status} {r.message} {r.stderr[-500:]}")
        return
    try:
        seen = json.loads(r.stdout)
    except ValueError:
        c.failures.append(f"the next execution printed garbage: {r.stdout[:200]!r}")
        return
    if seen["sum"] != 45:
        c.failures.append(f"the next execution computed {seen['sum']}")
    if seen["cwd"] != ["main.py"]:
        c.failures.append(f"the next run's directory is not pristine: {seen['cwd'][:10]}")
    if seen["tmpdir"]:
        c.failures.append(f"the next run's private /tmp is not empty: {seen['tmpdir'][:10]}")
    if c.mode == "bwrap" and seen["tokens"]:
        c.failures.append(f"files of the previous run survive in the next run's /tmp: {seen['tokens']}")


def run_checks(c: Ctx, procs_before: dict[int, str], fds_before: int) -> None:
    r, p = c.result, c.program
    if r.status not in p.verdicts:
        c.failures.append(f"status {r.status!r} not in the expected {'|'.join(p.verdicts)} "
                          f"(message: {r.message!r}; exit {r.exit_code}, signal {r.signal})")
    if r.status == "sandbox_error":
        c.failures.append("sandbox_error is the infrastructure's verdict, never a program's")
    for line in c.output().splitlines():
        if "ESCAPED" in line:
            c.failures.append(f"program reports: {line.strip()[:300]}")
    for name in p.checks:
        CHECKS[name](c)
    check_next_run(c)
    alive = wait_gone(c.token)
    if alive:
        c.failures.append(f"processes of the run outlived it: {alive}")
        kill_pids([pid for pid, _ in alive])
    files = host_sentinels(c.token, c.hostdir)
    if files:
        c.failures.append(f"files written outside the sandbox: {files}")
        remove_paths(files)
    mounts = mounts_with(c.token)
    if mounts:
        c.failures.append(f"host mount table changed: {mounts}")
    # this process: no new children, no zombies, no leaked descriptors
    end = time.monotonic() + 2.0
    while True:
        now = descendants()
        new = {pid: st for pid, st in now.items() if pid not in procs_before}
        zombies = {pid for pid, st in now.items() if st == "Z"}
        grew = len(now) > len(procs_before)
        if not ((grew and new) or zombies) or time.monotonic() > end:
            break
        time.sleep(0.05)
    if grew and new:
        c.failures.append(f"new processes under the test process: {sorted(new)} "
                          f"(before {len(procs_before)}, after {len(now)})")
    if zombies:
        c.failures.append(f"unreaped zombies under the test process: {sorted(zombies)}")
    if fd_count() > fds_before:
        c.failures.append(f"descriptors of the test process grew from {fds_before} to {fd_count()}")


# --------------------------------------------------------------------------- the test

_PROGRAMS = [p for p in corpus() if not p.name.startswith("forge_")]


def _record(row: dict) -> None:
    """Append one result row to $CODEGYM_HOSTILE_REPORT (for the corpus table), if set."""
    path = os.environ.get("CODEGYM_HOSTILE_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(row) + "\n")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", _PROGRAMS, ids=[p.name for p in _PROGRAMS])
def test_hostile_program(path: Path, mode: str, host: Host, secrets) -> None:
    """One corpus program in one isolation mode: declared verdict, nothing escaped, host clean."""
    program = load_program(path)
    if mode == "rlimits" and program.bwrap_only:
        reason = program.meta.get("reason", "needs namespaces")
        print(f"skip {program.name} in rlimits mode: {reason}")
        _record({"program": program.name, "mode": mode, "status": "skipped", "reason": reason})
        pytest.skip(f"bwrap_only: {reason}")
    if mode == "rlimits" and program.meta.get("rlimits_needs_root") == "true" and os.geteuid() != 0:
        reason = "without root the rlimits mode runs programs under the test's own uid"
        print(f"skip {program.name} in rlimits mode: {reason}")
        pytest.skip(reason)
    if program.language == "c" and shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    if program.language == "javascript" and shutil.which("node") is None:
        print(f"skip {program.name}: node is not installed")
        pytest.skip("node is not installed")
    sb = host.sandbox(mode)
    result, failures, elapsed = attack(program, mode, sb, host, secrets)
    _record({"program": program.name, "mode": mode, "status": result.status, "expected": "|".join(program.verdicts),
             "elapsed": round(elapsed, 2), "failures": failures, "message": result.message[:200]})
    shown = (f"\nstdout: {result.stdout[:600]!r}\nstderr: {result.stderr[-600:]!r}"
             if not any("/etc/shadow" in f for f in failures) else "\n(output withheld: it holds host secrets)")
    assert not failures, f"{program.name} [{mode}] status={result.status}:\n  " + "\n  ".join(failures) + shown


def attack(program: Program, mode: str, sb, host: Host, secrets) -> tuple[object, list[str], float]:
    """Run one corpus program on `sb` and every host-side check: (result, failures, seconds)."""
    token, secret, hostdir, secret_id = secrets
    argv = [token, str(REPO), str(hostdir), str(os.getpid()), os.readlink("/proc/self/ns/pid")]
    subst = {"TOKEN": token, "REPO": str(REPO), "HOSTDIR": str(hostdir), "SECRET_ID": secret_id}
    files = {MAIN_FILES[program.language]: program.source(subst)}
    listener = Listener(token) if ("{port}" in program.meta.get("stdin", "")
                                   or "no_connection" in program.checks) else None
    stdin = program.meta.get("stdin", "")
    if listener is not None:
        stdin = stdin.replace("{port}", str(listener.port))
    stdin = stdin.replace("\\n", "\n")
    if "other_build" in program.checks:
        # what a reference solution or a test generator looks like in the build store
        other = sb.build("python", {"main.py": f"# expected: {secret}\nprint({secret!r})\n"})
        assert other.ok, other.result
    if program.meta.get("compile_limits"):
        # build first with the declared compiler limits; execute() then hits the cached build
        sb.build(program.language, files, limits=Limits(**parse_limits(program.meta["compile_limits"])))
    procs_before = descendants()
    fds_before = fd_count()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    failures: list[str] = []
    try:
        t0 = time.monotonic()
        result = sb.execute(program.language, files, stdin=stdin, limits=program.limits, argv=argv)
        ended = time.monotonic()
        c = Ctx(program=program, mode=mode, host=host, sb=sb, token=token, secret=secret, hostdir=hostdir,
                argv=argv, subst=subst, result=result, elapsed=ended - t0, ended=ended, rss_before_kb=rss_before,
                listener=listener, failures=failures)
        run_checks(c, procs_before, fds_before)
    finally:
        if listener is not None:
            listener.close()
    return result, failures, ended - t0


def test_corpus_headers() -> None:
    """Every corpus file parses, declares a known verdict, and the corpus covers its languages."""
    from codegym.sandbox.types import STATUSES
    progs = [load_program(p) for p in _PROGRAMS]
    assert len(progs) >= 30
    for p in progs:
        assert set(p.verdicts) <= set(STATUSES) - {"sandbox_error"}, p.name
        if p.bwrap_only:
            assert p.meta.get("reason"), f"{p.name}: bwrap_only needs a `reason:`"
    langs = {p.language for p in progs}
    assert langs == set(LANGUAGES.values())


class _NoSandbox:
    """A deliberately unsafe stand-in: runs the program as a plain child process with the
    test's own environment, /tmp and network. Used only to prove the checks can fail."""

    isolation = "none"

    def execute(self, language, files, stdin="", limits=None, argv=()):
        from codegym.sandbox.types import ExecResult
        limits = limits or Limits()
        d = Path(tempfile.mkdtemp(prefix="codegym-nosandbox-"))
        try:
            for rel, text in files.items():
                (d / rel).write_text(text)
            (d / "in").write_text(stdin)
            with open(d / "in") as fin, open(d / "out", "w+") as fout, open(d / "err", "w+") as ferr:
                # files, not pipes: a child that keeps the streams open cannot hang us
                p = subprocess.Popen(["python3", "main.py", *argv], cwd=d, stdin=fin, stdout=fout,
                                     stderr=ferr, start_new_session=True)
                try:
                    code = p.wait(timeout=limits.wall())
                    status = "ok" if code == 0 else "runtime_error"
                except subprocess.TimeoutExpired:
                    p.kill()
                    code = p.wait()
                    status = "timeout"
                fout.seek(0)
                ferr.seek(0)
                return ExecResult(status=status, exit_code=code, stdout=fout.read(), stderr=ferr.read())
        finally:
            shutil.rmtree(d, ignore_errors=True)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name, expect", [
    ("canary_env.py", "CODEGYM_CANARY value appears"),
    ("tcp_connect.py", "listeners accepted connections"),
    ("write_host_tmp.py", "files written outside the sandbox"),
    ("pipe_holder.py", "processes of the run outlived it"),
])
def test_checks_catch_an_unsandboxed_run(name: str, expect: str, host: Host, secrets) -> None:
    """The host-side checks are not vacuous: without a sandbox these attacks are caught
    (and cleaned up: escaped processes are killed by pid, escaped files removed)."""
    program = load_program(HOSTILE / name)
    _, failures, _ = attack(program, "none", _NoSandbox(), host, secrets)
    assert any(expect in f for f in failures), failures


# --------------------------------------------------------------------------- judge-level forgeries

_FORGERIES = [p for p in corpus() if p.name.startswith("forge_")]
#: verdicts a JudgeReport may carry (codegym.judge.run); a forgery must never get "accepted"
JUDGE_VERDICTS = ("accepted", "wrong_answer", "runtime_error", "timeout", "memory_limit",
                  "output_limit", "compile_error", "no_code", "sandbox_error")


def forge_task(kind: str, name: str):
    """The tiny task a forgery attacks. "secret" tasks expect random values nobody can compute."""
    from codegym.tasks.schema import Task
    limits = {"time_s": 2, "memory_mb": 256}
    if name == "reference":
        # expected outputs omitted: the judge computes them with the reference solution,
        # which maps each input to a random secret (nothing else can produce them)
        table = {str(i): uuid.uuid4().hex for i in range(3)}
        if kind == "function":
            ref = f"def solve(i):\n    return {table!r}[str(i)]\n"
            return Task(id="hostile/secret-ref-fn", statement="Return the secret.", kind="function",
                        language="python", entry_point="solve", limits=limits,
                        tests={"hidden": [{"args": [i]} for i in range(3)]},
                        solutions={"reference": {"language": "python", "files": {"main.py": ref}}})
        ref = f"import sys\nprint({table!r}[sys.stdin.read().strip()])\n"
        cases = [{"stdin": f"{i}\n"} for i in range(3)]
        return Task(id="hostile/secret-ref", statement="Print the secret.", kind="stdio",
                    languages=["python", "c"], tests={"hidden": cases}, limits=limits,
                    solutions={"reference": {"language": "python", "files": {"main.py": ref}}})
    if name == "secret":
        values = [uuid.uuid4().hex for _ in range(3)]
        if kind == "function":
            cases = [{"args": [i], "expected": v} for i, v in enumerate(values)]
            return Task(id="hostile/secret-fn", statement="Return the secret.", kind="function",
                        language="python", entry_point="solve", tests={"hidden": cases}, limits=limits)
        cases = [{"stdin": f"{i}\n", "expected": v + "\n"} for i, v in enumerate(values)]
        return Task(id="hostile/secret-io", statement="Print the secret.", kind="stdio",
                    languages=["python", "c"], tests={"hidden": cases}, limits=limits)
    if kind == "function":
        cases = [{"args": [1, 2], "expected": 3}, {"args": [5, 7], "expected": 12},
                 {"args": [-4, 4], "expected": 0}]
        return Task(id="hostile/add-fn", statement="Add two numbers.", kind="function",
                    language="python", entry_point="add", tests={"hidden": cases}, limits=limits)
    if kind == "script":
        cases = [{"code": "assert add(1, 2) == 3\n"},
                 {"code": "assert all(add(i, i) == 2 * i for i in range(5))\n"},
                 {"code": "assert isinstance(add(2, 2), int)\nassert len([add(0, 0)]) == 1\nassert add(2, 2) == 4\n"}]
        return Task(id="hostile/add-script", statement="Define add(a, b).", kind="script",
                    language="python", entry_point="add", tests={"hidden": cases}, limits=limits)
    raise ValueError(f"no forge task {kind}/{name}")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", _FORGERIES, ids=[p.name for p in _FORGERIES])
def test_forgery_is_not_accepted(path: Path, mode: str, host: Host, tmp_path, monkeypatch) -> None:
    """A candidate that does not solve the task gets no accepted verdict and no passed case."""
    from codegym.judge.run import judge
    monkeypatch.setenv("CODEGYM_CACHE", str(tmp_path / "cache"))  # computed expectations stay private
    program = load_program(path)
    if program.language == "c" and shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    task = forge_task(program.kind, program.meta.get("task", ""))
    sb = host.sandbox(mode)
    main = "main.c" if program.language == "c" else "main.py"
    fds_before = fd_count()
    rep = judge(task, {main: path.read_text()}, sandbox=sb, split="hidden", language=program.language)
    failures = []
    if rep.verdict == "accepted":
        failures.append("the forgery was ACCEPTED")
    if rep.passed:
        failures.append(f"{rep.passed}/{rep.total} cases passed without solving the task")
    if rep.verdict not in program.verdicts:
        failures.append(f"verdict {rep.verdict!r} not in the expected {'|'.join(program.verdicts)}")
    if fd_count() > fds_before:
        failures.append(f"descriptors of the test process grew from {fds_before} to {fd_count()}")
    _record({"program": program.name, "mode": mode, "status": rep.verdict, "expected": "|".join(program.verdicts),
             "passed": rep.passed, "total": rep.total, "failures": failures})
    assert not failures, (f"{program.name} [{mode}] verdict={rep.verdict} passed={rep.passed}/{rep.total}:\n  "
                          + "\n  ".join(failures) + "\ncases: "
                          + "; ".join(f"{c.status}: {(c.message or '')[:200]}" for c in rep.cases))


def test_forgery_headers() -> None:
    progs = [load_program(p) for p in _FORGERIES]
    assert len(progs) >= 10
    for p in progs:
        assert p.kind in ("function", "script", "stdio"), p.name
        assert set(p.verdicts) <= set(JUDGE_VERDICTS) - {"accepted", "sandbox_error"}, p.name
        forge_task(p.kind, p.meta.get("task", ""))
