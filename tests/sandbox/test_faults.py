"""Fault injection: the sandbox's infrastructure dies under a request; the program is never charged.

The in-flight moment is found by an event, never by a deadline: the program stops
itself (SIGSTOP) once it runs, after naming itself ``cg-<input>`` in /proc/self/comm
(a compiler is frozen with SIGSTOP the moment it appears below the sandbox's
processes). The `Injector` thread sees the stopped process in /proc below the
sandbox's slot processes (or containers) and then kills the fork server, the slot's
process or the container -- or lets the program go on (SIGCONT) -- following a plan
per program name. Kill once, twice, always; during a compile, a run, a timing run,
and under the judge: a correct solution whose every case is killed twice stays
accepted; killed always, the report is ``sandbox_error``, the staged reward is not
below a no-op's, and collect replays the episode, then drops it (no sample).

Wall limits are generous (the release never races them) and nothing asserts on time.
"""

from __future__ import annotations

import os
import signal
import threading
import uuid
from collections.abc import Callable

import pytest
from _tools import need_bwrap

from codegym.core.limits import Limits
from codegym.sandbox.local import LocalSandbox

#: a program that names itself after its input, stops until released, then sums its input
PY_STOPPER = ("import os, signal, sys\n"
              "data = sys.stdin.read()\n"
              "open('/proc/self/comm', 'w').write('cg-' + (data.split() or ['x'])[0][:12])\n"
              "os.kill(os.getpid(), signal.SIGSTOP)\n"
              "print(sum(int(x) for x in data.split()))\n")
C_STOPPER = ("#include <signal.h>\n#include <stdio.h>\n#include <string.h>\n#include <sys/prctl.h>\n"
             "int main(void){long s = 0, x; char name[16] = \"cg-\"; int first = 1;\n"
             " while (scanf(\"%ld\", &x) == 1) { if (first) { snprintf(name + 3, 12, \"%ld\", x); first = 0; }"
             " s += x; }\n"
             " prctl(PR_SET_NAME, name); raise(SIGSTOP); printf(\"%ld\\n\", s); return 0; }\n")
#: wall limits no release can race (the injector acts on events, at once)
LIM = Limits(time_s=5, wall_s=300)


# --------------------------------------------------------------------------- /proc


def _stat(pid: int) -> tuple[int, str, str] | None:
    """(ppid, state, comm) of a process, None when it is gone."""
    try:
        raw = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    rest = raw[raw.rfind(")") + 2:].split()
    return int(rest[1]), rest[0], raw[raw.find("(") + 1:raw.rfind(")")]


def below(roots: list[int]) -> list[tuple[int, list[int], str, str]]:
    """(pid, path from its root, state, comm) of every process below the roots."""
    kids: dict[int, list[tuple[int, str, str]]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _stat(int(d))
            if st:
                kids.setdefault(st[0], []).append((int(d), st[1], st[2]))
    out = []
    stack = [(r, [r]) for r in roots]
    while stack:
        pid, path = stack.pop()
        for kid, state, comm in kids.get(pid, ()):
            out.append((kid, path + [kid], state, comm))
            stack.append((kid, path + [kid]))
    return out


class Injector(threading.Thread):
    """Acts on every program that stops itself (or, `compiler`, on every cc1 it freezes)
    below `roots()`: the next action of its name's plan (``plan[comm]``, else
    ``plan["*"]``), else `default`; "kill" calls `kill(path)`, "go" resumes it."""

    def __init__(self, roots: Callable[[], list[int]], kill: Callable[[list[int]], None],
                 plan: dict[str, list[str]] | None = None, default: str = "go", compiler: bool = False):
        super().__init__(daemon=True)
        self.roots, self.kill, self.default, self.compiler = roots, kill, default, compiler
        self.plan = {k: list(v) for k, v in (plan or {}).items()}
        self.events: list[tuple[str, str]] = []  # (name, action)
        self.seen: set[int] = set()
        self.done = threading.Event()
        self.error: BaseException | None = None

    def __enter__(self) -> Injector:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.join()
        if self.error is not None:
            raise self.error

    def run(self) -> None:
        try:
            while not self.done.is_set():
                for pid, path, state, comm in below(self.roots()):
                    if pid in self.seen:
                        continue
                    if self.compiler and comm in ("cc1", "cc1plus"):
                        self.seen.add(pid)
                        os.kill(pid, signal.SIGSTOP)  # frozen mid-compile: the event
                        self.act(pid, path, "compile")
                    elif not self.compiler and state == "T" and comm.startswith("cg-"):
                        self.seen.add(pid)
                        self.act(pid, path, comm)
                self.done.wait(0.002)
        except BaseException as e:  # noqa: BLE001 - re-raised in the test thread
            self.error = e

    def act(self, pid: int, path: list[int], name: str) -> None:
        todo = self.plan.get(name) or self.plan.get("*")
        action = todo.pop(0) if todo else self.default
        self.events.append((name, action))
        if action == "kill":
            self.kill(path)
        else:
            os.kill(pid, signal.SIGCONT)

    def actions(self, name: str | None = None) -> list[str]:
        return [a for n, a in self.events if name is None or n == name]


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def kill_server(path: list[int]) -> None:
    """SIGKILL the fork server above the program (under bwrap: the root's child)."""
    root = _stat(path[0])
    _kill(path[1] if root and root[2] == "bwrap" else path[0])


def kill_slot(path: list[int]) -> None:
    """SIGKILL the slot's own process (bwrap, or the server in the rlimits mode)."""
    _kill(path[0])


def local_roots(sb: LocalSandbox) -> Callable[[], list[int]]:
    return lambda: [s.proc.pid for s in sb._slots if s.proc is not None]


@pytest.fixture(params=["bwrap", "rlimits"])
def mode(request):
    return request.param


def _sandbox(mode: str, workers: int = 1) -> LocalSandbox:
    if mode == "bwrap":
        need_bwrap()
    return LocalSandbox(workers=workers, isolation=mode)


# --------------------------------------------------------------------------- runs


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kills", [1, 2, 3], ids=["once", "twice", "always"])
def test_fork_server_killed_during_a_run(mode, kills):
    """Killed once or twice: the run is retried on fresh slots and gets its real answer;
    killed every time (3 attempts): sandbox_error, never a program verdict."""
    sb = _sandbox(mode)
    try:
        b = sb.build("python", {"main.py": PY_STOPPER})
        assert b.ok, b.result
        with Injector(local_roots(sb), kill_server, {"cg-7": ["kill"] * kills}) as inj:
            r = sb.run(b, stdin="7 8", limits=LIM)
        if kills < 3:
            assert (r.status, r.stdout) == ("ok", "15\n"), r
            assert inj.actions() == ["kill"] * kills + ["go"]
        else:
            assert r.status == "sandbox_error", r
            assert "infrastructure" in r.message and inj.actions() == ["kill"] * 3
            assert sb.stats["infra_gave_up"] == 1
        assert sb.stats["infra_faults"] == kills and sb.stats.get("program_broke_server", 0) == 0
        with Injector(local_roots(sb), kill_server) as inj:  # the sandbox still works
            assert sb.run(b, stdin="1 2", limits=LIM).stdout == "3\n"
        assert not [p for p in below(local_roots(sb)()) if p[2] == "T"], "a stopped program was left"
    finally:
        sb.close()


@pytest.mark.timeout(300)
def test_slot_process_killed_during_a_c_run():
    """The slot's own process (bwrap, in whose namespace the server is PID 1) killed
    twice under a C program: retried, and the program's real answer."""
    sb = _sandbox("bwrap")
    try:
        b = sb.build("c", {"main.c": C_STOPPER})
        assert b.ok, b.result
        with Injector(local_roots(sb), kill_slot, {"cg-40": ["kill", "kill"]}) as inj:
            r = sb.run(b, stdin="40 2", limits=LIM)
        assert (r.status, r.stdout) == ("ok", "42\n"), r
        assert inj.actions() == ["kill", "kill", "go"]
    finally:
        sb.close()


@pytest.mark.timeout(300)
def test_run_many_streams_survive_kills():
    """Pipelined run_many (the judge's path): a kill under one request retries it and
    re-runs the requests queued behind it; every request gets its real answer."""
    from codegym.sandbox.types import RunRequest
    sb = _sandbox("bwrap", workers=2)
    try:
        b = sb.build("python", {"main.py": PY_STOPPER})
        plan = {"cg-1": ["kill"], "cg-3": ["kill", "kill"], "cg-5": ["kill", "kill", "kill"]}
        with Injector(local_roots(sb), kill_server, plan) as inj:
            res = sb.run_many(b, [RunRequest(stdin=f"{i} {i}") for i in range(6)], limits=LIM)
        got = [(r.status, r.stdout) for r in res]
        assert got[:5] == [("ok", f"{2 * i}\n") for i in range(5)], got
        assert got[5][0] == "sandbox_error"
        assert inj.actions("cg-5") == ["kill"] * 3 and inj.actions("cg-3") == ["kill", "kill", "go"]
    finally:
        sb.close()


# --------------------------------------------------------------------------- compile and timing


def _slow_c(tag: str) -> str:
    """A C file whose compile takes a moment (its cc1 is seen and frozen)."""
    fns = "".join(f"static long f{i}(long x){{for(int k=0;k<{i % 7 + 3};k++) x = x * {i + 3} % 1000003 + k;"
                  f" return x;}}\n" for i in range(1500))
    calls = " + ".join(f"f{i}(n)" for i in range(0, 1500, 50))
    return (f"/* {tag} */\n#include <stdio.h>\n{fns}int main(void){{long n = 0; if (scanf(\"%ld\", &n) != 1) "
            f"return 1; printf(\"%ld\\n\", ({calls}) % 1000); return 0;}}\n")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kills", [1, 3], ids=["once", "always"])
def test_fork_server_killed_during_a_compile(kills):
    """The server killed while gcc runs: retried (the build compiles), or, every time,
    a build that failed with sandbox_error (not a compile_error)."""
    sb = _sandbox("bwrap")
    try:
        for _ in range(5):  # a compile that ended before the injector saw it: another source
            src = _slow_c(uuid.uuid4().hex)
            with Injector(local_roots(sb), kill_server, {"compile": ["kill"] * kills}, compiler=True) as inj:
                b = sb.build("c", {"main.c": src})
            if inj.events:
                break
        assert inj.actions()[:kills] == ["kill"] * kills
        if kills < 3:
            assert b.ok, b.result
            assert sb.run(b, stdin="5", limits=LIM).status == "ok"
        else:
            assert not b.ok and b.result.status == "sandbox_error", b.result
            assert b.result.phase == "compile"
    finally:
        sb.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kills", [1, 3], ids=["once", "always"])
def test_fork_server_killed_during_timing(kills):
    """A timed run killed: retried, the measurement is valid; killed every time, the
    measurement fails as sandbox_error (the sandbox's, not the program's)."""
    from codegym.timing.measurement import measure
    sb = _sandbox("bwrap")
    try:
        b = sb.build("python", {"main.py": PY_STOPPER})
        # the third timed run (the first sample's second pass) is the one killed
        plan = {"cg-9": ["go", "go"] + ["kill"] * kills}
        with Injector(local_roots(sb), kill_server, plan) as inj:
            m = measure(sb, b, ["9 1"], metric="cpu", warmups=1, repeats=2, max_repeats=2, min_of=1,
                        calibrate=False, limits=LIM)
        if kills < 3:
            assert m.ok and m.n == 2, m.reason
        else:
            assert not m.ok and m.failure == "sandbox_error", m
        assert inj.actions().count("kill") == kills
    finally:
        sb.close()


# --------------------------------------------------------------------------- judge, reward, collect


def _task():
    from codegym.tasks.schema import Task
    return Task(id="faults/sum", statement="Print the sum of the numbers.", kind="stdio", language="python",
                tests={"hidden": [{"stdin": "1 2", "expected": "3\n"}, {"stdin": "2 3", "expected": "5\n"}]},
                limits={"time_s": 5, "wall_s": 300}, solutions={"reference": {"files": {"main.py": PY_STOPPER}}})


@pytest.mark.timeout(600)
def test_judge_double_fault_is_not_charged_to_a_correct_program():
    """The issue's case: the worker killed twice under the same in-flight cases. Before:
    runtime_error 0/2 ("the program broke the sandbox supervisor"); now: accepted 2/2.
    Killed always: sandbox_error, the staged reward is a no-op's (0) and unscorable."""
    from codegym.judge.run import judge
    sb = _sandbox("bwrap", workers=2)
    task = _task()
    try:
        with Injector(local_roots(sb), kill_server, {"cg-1": ["kill", "kill"], "cg-2": ["kill", "kill"]}):
            rep = judge(task, {"main.py": PY_STOPPER}, sandbox=sb)
        assert (rep.verdict, rep.passed, rep.total) == ("accepted", 2, 2), rep.message
        with Injector(local_roots(sb), kill_server, default="kill"):
            rep = judge(task, {"main.py": PY_STOPPER}, sandbox=sb)
        assert rep.verdict == "sandbox_error" and rep.passed == 0, rep
        assert all(c.status in ("sandbox_error", "skipped", "passed") for c in rep.cases)
    finally:
        sb.close()


@pytest.mark.timeout(900)
def test_reward_and_collect_treat_sandbox_error_as_no_sample():
    """Every run killed: the staged reward of the episode is not below a no-op's and is
    marked unscorable / no sample; collect replays the episode (infra_retries), then
    drops it -- counted in its stats, absent from the trajectories and the JSONL."""
    import tempfile

    from codegym.agents import OracleAgent
    from codegym.envs.code_env import CodeEnv
    from codegym.rollout import collect
    from codegym.wrappers import StagedReward
    sb = _sandbox("bwrap", workers=2)
    task = _task()
    try:
        env = StagedReward(CodeEnv(tasks=[task], sandbox=sb, max_turns=1), timed=False)
        with Injector(local_roots(sb), kill_server, default="kill"):
            env.reset(options={"task_id": task.id})
            agent = OracleAgent()
            agent.reset(task=task, seed=0)
            *_, reward, _, _, info = env.step(agent.act("", {}))
            with tempfile.TemporaryDirectory() as d:
                out = os.path.join(d, "t.jsonl")
                got = collect([env], OracleAgent(), group_size=1, out=out, progress=False)
                assert not os.path.exists(out) or open(out).read() == ""
        assert info["judge"]["verdict"] == "sandbox_error" and info.get("no_sample") is True
        assert info["staged"]["scorable"] is False and reward >= 0.0  # no code earns 0.0
        assert list(got) == [] and got.stats == {"episodes": 0, "infra_retries": 2, "no_sample": 1}
        with Injector(local_roots(sb), kill_server, {"cg-1": ["kill", "kill"]}):
            again = collect([env], OracleAgent(), group_size=1, progress=False)
        assert [t.verdict for t in again] == ["accepted"] and again.stats["no_sample"] == 0
    finally:
        sb.close()
