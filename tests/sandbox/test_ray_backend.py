"""Tests of the Ray backend (codegym.sandbox.ray) and Ray rollouts (codegym.rollout.ray_collect)
on a real local Ray cluster (``ray.init(num_cpus=2)``, started once for the module).

Covers: execution parity with the local backend, remote judge parity
(`RaySandbox.remote_call(judge, ...)`), builds and tasks sent once per worker, a hung
program bounded by the limits, back-pressure (in-flight bound seen from the driver and
from the actors), a worker SIGKILLed during a judge (result still correct, exactly once;
killed on every attempt: a sandbox_error, never a program verdict),
and episodes on Ray (parity with local collection, a worker killed mid-collection).
"""

from __future__ import annotations

import collections
import os
import signal
import sys
import textwrap
import threading
import time

import pytest

from codegym import load_suite, load_task
from codegym.core.limits import Limits
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox
from codegym.sandbox.raycluster import init_local

try:
    import ray
except ImportError as e:  # pragma: no cover - depends on the environment
    ray = None
    _RAY_MISSING = f"ray is not importable ({e}); pip install 'codegym[ray]'"

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def cluster():
    if ray is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(_RAY_MISSING + " (required in CI)")
        print(_RAY_MISSING)
        pytest.skip(_RAY_MISSING)
    started = not ray.is_initialized()
    if started:
        init_local(2)  # started again if its raylet misses Ray's 30 s wait (a loaded machine)
    yield
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def rsb(cluster):
    """Two actors of one local slot each, sharing the cluster with the other fixtures."""
    s = make_sandbox("ray", num_actors=2, actor_options={"num_cpus": 0.5})
    yield s
    s.close()


@pytest.fixture(scope="module")
def local():
    s = make_sandbox("local", workers=2)
    yield s
    s.close()


PROGRAMS = [
    ("python", {"main.py": "print(input()[::-1])"}, "abc\n", None),
    ("python", {"main.py": "import sys\nsys.stderr.write('boom')\nraise SystemExit(3)"}, "", None),
    ("python", {"main.py": "raise ValueError('x')"}, "", None),
    ("python", {"main.py": "x = bytearray(600 << 20)\nprint(len(x))"}, "", Limits(memory_mb=256)),
    ("python", {"main.py": "print('y' * 5000)"}, "", Limits(output_bytes=1000)),
    ("c", {"main.c": "#include <stdio.h>\nint main(void){int a,b;scanf(\"%d %d\",&a,&b);"
                     "printf(\"%d\\n\",a+b);return 0;}"}, "2 40\n", None),
    ("c", {"main.c": "int main(void){return oops;}"}, "", None),
    ("cpp", {"main.cpp": "#include <iostream>\nint main(){std::cout<<\"hi\"<<std::endl;}"}, "", None),
]


def _view(r):
    # a program killed at a limit may or may not have exited first (a race in any backend):
    # exit code and signal are compared only for runs that ended by themselves
    ended = r.status in ("ok", "runtime_error", "compile_error")
    return (r.status, r.exit_code if ended else "-", r.signal if ended else "-", r.stdout,
            r.stdout_truncated, r.phase)


def test_execute_parity_with_local(rsb, local):
    for lang, files, stdin, limits in PROGRAMS:
        a = local.execute(lang, files, stdin=stdin, limits=limits)
        b = rsb.execute(lang, files, stdin=stdin, limits=limits)
        assert _view(a) == _view(b), (lang, files, a.message, b.message)
    assert rsb.isolation == local.isolation
    assert rsb.workers == 2


def test_docker_inside_ray_actors(cluster, local):
    """backend="docker": each actor runs a docker sandbox; same results as local."""
    try:
        import docker  # noqa: F401

        from codegym.sandbox.docker import DockerUnavailable
    except ImportError as e:
        print(f"docker backend absent: {e}")
        pytest.skip(f"docker backend absent: {e}")
    try:
        sb = make_sandbox("ray", num_actors=1, backend="docker", actor_options={"num_cpus": 0.25})
    except Exception as e:  # the actor could not reach an engine
        if isinstance(e, DockerUnavailable) or "DockerUnavailable" in str(e):
            print(f"no Docker engine: {e}")
            pytest.skip(f"no Docker engine: {str(e)[:200]}")
        raise
    try:
        assert sb.isolation == "docker"
        probe = sb.execute("python", {"main.py": "print(1)"})
        if probe.status != "ok":
            pytest.skip(f"docker images missing: {probe.message[:200]}")
        for lang, files, stdin, limits in PROGRAMS[:3] + PROGRAMS[5:7]:
            a = local.execute(lang, files, stdin=stdin, limits=limits)
            b = sb.execute(lang, files, stdin=stdin, limits=limits)
            assert _view(a) == _view(b), (lang, files, a.message, b.message)
    finally:
        sb.close()


def test_hung_program_is_bounded_by_limits(rsb):
    t0 = time.monotonic()
    r = rsb.execute("python", {"main.py": "while True:\n    pass\n"}, limits=Limits(time_s=1))
    assert r.status == "timeout"
    # bounded by the sandbox's own deadline (wall limit + host margin), not by Ray
    assert time.monotonic() - t0 < Limits(time_s=1).wall() + 30


def test_build_shipped_once_per_worker(rsb):
    src = {"main.c": "#include <stdio.h>\nint main(void){int x;scanf(\"%d\",&x);printf(\"%d\\n\",x*x);}"}
    b = rsb.build("c", src)
    assert b.ok and rsb.build("c", src) is b  # cached in the driver by content hash
    before = {s["pid"]: s["counts"].get("build_fetches", 0) for s in rsb.worker_stats()}
    from codegym.sandbox import RunRequest
    outs = rsb.run_many(b, [RunRequest(stdin=f"{i}\n") for i in range(12)])
    assert [o.stdout for o in outs] == [f"{i * i}\n" for i in range(12)]
    after = {s["pid"]: s["counts"].get("build_fetches", 0) for s in rsb.worker_stats()}
    # each actor fetched the compiled build from the object store at most once
    assert all(after[p] - before.get(p, 0) <= 1 for p in after)


def test_judge_remote_parity(rsb, local):
    suite = load_suite("examples")
    for task in suite:
        name = task.reference_name or "reference"
        sol = task.solution(name)
        wrong = dict(task.starter_files())
        for files in (sol.files, wrong):
            a = judge(task, files, sandbox=local, split="hidden", language=sol.language)
            b = rsb.remote_call(judge, task, files, split="hidden", language=sol.language)
            c = judge(task, files, sandbox=rsb, split="hidden", language=sol.language)
            assert (a.verdict, a.passed, a.total) == (b.verdict, b.passed, b.total), task.id
            assert (a.verdict, a.passed, a.total) == (c.verdict, c.passed, c.total), task.id
            assert [x.status for x in a.cases] == [x.status for x in b.cases] == [x.status for x in c.cases]
        # the task travelled once per actor however many judges it served
        again = rsb.remote_call(judge, task, sol.files, split="hidden", language=sol.language)
        assert again.verdict == "accepted"
    fetches = [s["counts"].get("task_fetches", 0) for s in rsb.worker_stats()]
    assert sum(fetches) <= 2 * len(list(suite))


SLOW_TASK = textwrap.dedent("""\
    id: tests/slow-double
    title: Slow double
    statement: Print twice the number read; take your time.
    kind: stdio
    language: python
    languages: [python]
    starter:
      main.py: "print(0)\\n"
    tests:
      public:
        - {stdin: "1\\n", expected: "2\\n"}
      hidden:
        - {stdin: "1\\n", expected: "2\\n"}
        - {stdin: "2\\n", expected: "4\\n"}
        - {stdin: "3\\n", expected: "6\\n"}
        - {stdin: "4\\n", expected: "8\\n"}
    limits: {time_s: 2, memory_mb: 256}
    solutions:
      reference:
        files:
          main.py: |
            import time
            n = int(input())
            time.sleep(0.6)
            print(2 * n)
    """)


def held_judge(task, files, hold, **kw):
    """`judge`, held on its first attempt: the worker running it writes its pid to `hold`
    and waits there to be killed; a later attempt (`hold` exists) judges."""
    try:
        fd = os.open(hold, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return judge(task, files, **kw)
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    threading.Event().wait()


held_judge.__name__ = "judge"  # counted (and ledgered) as a judge call


def _held_pid(hold, guard_s: float = 300.0) -> int:
    """The pid a held call wrote to `hold` (waited for: no deadline decides the test;
    `guard_s` only turns a hang into a failure)."""
    end = time.monotonic() + guard_s
    while not (os.path.exists(hold) and open(hold).read()):
        assert time.monotonic() < end, "the held call never started"
        time.sleep(0.02)
    return int(open(hold).read())


def test_worker_killed_mid_judge_is_retried_exactly_once(cluster, tmp_path):
    path = tmp_path / "slow-double.yaml"
    path.write_text(SLOW_TASK)
    task = load_task(path)
    # the test module may not be importable on workers: ship held_judge by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    sb = make_sandbox("ray", num_actors=2, actor_options={"num_cpus": 0.25})
    try:
        pids = sb.worker_pids()
        assert len(set(pids)) == 2
        hold = str(tmp_path / "held-judge")
        fut = sb.remote_async(held_judge, task, task.solution("reference").files, hold, split="hidden")
        victim = _held_pid(hold)  # the actor in the middle of the judge, held there
        assert victim in pids
        os.kill(victim, signal.SIGKILL)
        rep = fut.result(timeout=120)
        assert (rep.verdict, rep.passed, rep.total) == ("accepted", 4, 4)
        judges = [r for r in sb.ledger.values() if r.kind == "judge"]
        assert len(judges) == 1
        rec = judges[0]
        assert rec.completed == 1 and rec.attempts == 2
        assert rec.pids[0] == victim and rec.pids[1] != victim
        assert sb.stats["workers_replaced"] == 1
        live = sb.worker_pids()
        assert victim not in live and len(live) == 2
        # the pool still answers, on both actors
        assert sb.execute("python", {"main.py": "print(1)"}).stdout == "1\n"
    finally:
        sb.close()


def held_n_judge(task, files, holddir, n, **kw):
    """`judge`, held (to be killed) on its first `n` attempts: attempt k writes its
    worker's pid to ``holddir/k`` and waits there; attempt n judges."""
    k = len(os.listdir(holddir))
    if k >= n:
        return judge(task, files, **kw)
    with open(os.path.join(holddir, str(k)), "w") as f:
        f.write(str(os.getpid()))
    threading.Event().wait()


held_n_judge.__name__ = "judge"


def test_worker_killed_on_every_attempt_is_a_sandbox_error(cluster, tmp_path):
    """The worker killed on every attempt of a judge (max_retries + 1 times): the call ends
    with its give-up value, a sandbox_error report, never a program verdict. (Killed
    once: test_worker_killed_mid_judge_is_retried_exactly_once.)"""
    from codegym.judge.report import JudgeReport
    path = tmp_path / "slow-double.yaml"
    path.write_text(SLOW_TASK)
    task = load_task(path)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    sb = make_sandbox("ray", num_actors=2, max_retries=1, actor_options={"num_cpus": 0.25})
    try:
        hold = tmp_path / "hold"
        hold.mkdir()
        fut = sb.remote_async(held_n_judge, task, task.solution("reference").files, str(hold), 99,
                              split="hidden", on_give_up=lambda why: JudgeReport("sandbox_error", 0, 0, message=why))
        for k in range(2):  # each attempt, once it holds (an event: its file), is killed
            os.kill(_held_pid(str(hold / str(k))), signal.SIGKILL)
        rep = fut.result(timeout=300)
        assert rep.verdict == "sandbox_error" and rep.passed == 0, rep
        assert sb.stats["workers_replaced"] == 2
    finally:
        sb.close()


def _max_overlap(spans):
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans], key=lambda x: (x[0], x[1]))
    cur = best = 0
    for _, d in events:
        cur += d
        best = max(best, cur)
    return best


def test_back_pressure_bounds_calls_in_flight(cluster):
    # 2 actors x 2 slots could run 4 at once: the bound of 2 must come from max_in_flight
    sb = make_sandbox("ray", num_actors=2, backend_kw={"workers": 2}, max_in_flight=2,
                      actor_options={"num_cpus": 0.25})
    try:
        assert sb.workers == 4 and sb.max_in_flight == 2
        prog = {"main.py": "import time\ntime.sleep(0.3)\nprint('z')"}
        sb.build("python", prog)
        results = []
        threads = [threading.Thread(target=lambda: results.append(sb.execute("python", prog)))
                   for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert [r.stdout for r in results] == ["z\n"] * 8
        assert sb.stats["max_in_flight_seen"] == 2
        spans = [sp for st in sb.worker_stats() for sp in st["spans"]]
        assert len(spans) >= 8
        assert _max_overlap(spans) <= 2  # what the actors saw: never more than 2 at once
    finally:
        sb.close()


# --------------------------------------------------------------------------- rollouts on Ray

def test_collect_ray_matches_local(cluster):
    from codegym.agents import OracleAgent
    from codegym.rollout import collect
    kw = {"suite": "examples"}
    loc = collect("codegym/Suite-v0", OracleAgent(), group_size=2, num_envs=1, seed=3,
                  env_kwargs=kw, progress=False)
    rem = collect("codegym/Suite-v0", OracleAgent(), group_size=2, num_envs=2, seed=3,
                  env_kwargs=kw, progress=False, backend="ray")
    assert [t.episode_key for t in loc] == [t.episode_key for t in rem]
    assert [(t.verdict, t.final_reward, len(t.steps)) for t in loc] == \
           [(t.verdict, t.final_reward, len(t.steps)) for t in rem]
    assert all(t.verdict == "accepted" for t in rem)


class HeldOracle:
    """The oracle; the first worker to act writes its pid to `hold` and waits there, in the
    middle of an episode, to be killed (a later act, `hold` existing, plays on)."""

    name = "held-oracle"

    def __init__(self, hold: str):
        from codegym.agents import OracleAgent
        self.inner = OracleAgent()
        self.hold = hold
        self.last_turn = None

    def reset(self, task=None, seed=None):
        self.inner.reset(task=task, seed=seed)

    def act(self, observation, info):
        try:
            fd = os.open(self.hold, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return self.inner.act(observation, info)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        threading.Event().wait()


def test_ray_collect_worker_killed_job_retried(cluster, tmp_path):
    from codegym.rollout.jobs import make_jobs
    from codegym.rollout.ray_collect import run_jobs_ray
    # the test module may not be importable on workers: ship the agent's class by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    suite = load_suite("examples")
    jobs = make_jobs(list(suite), group_size=1, seed=0)
    pids: list[int] = []
    seen: list[str] = []
    killed: list[int] = []

    hold = str(tmp_path / "held-episode")

    def on_result(traj):
        seen.append(traj.episode_key)
        if not killed:  # one worker finished an episode: the other is held in the middle of one
            victim = _held_pid(hold)
            assert victim in pids
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    stats: collections.Counter = collections.Counter()
    out = run_jobs_ray("codegym/Suite-v0", {"suite": "examples"}, HeldOracle(hold), jobs, 2,
                       on_result=on_result, worker_pids=pids.extend, stats=stats,
                       actor_options={"num_cpus": 0.25})
    assert killed and stats["retries"] >= 1
    assert sorted(seen) == sorted(j.episode_key for j in jobs)  # every job exactly once
    assert len(seen) == len(set(seen)) == len(jobs) == stats["episodes"]
    assert [t.episode_key for t in out] == [j.episode_key for j in jobs]
    assert all(t.verdict == "accepted" for t in out)
