"""Sustained load on the sandbox backends: throughput, latency, lost results, leaks.

Runs N executions at concurrency C (threads calling ``Sandbox.run``) for at most
D seconds on the local and the docker backend, with a mix of programs whose
verdicts are known in advance:

    70 %  Python echo (ok, output checked)
    20 %  C echo (ok, output checked)
     5 %  Python exception (runtime_error)
     5 %  C program writing past the output cap (output_limit)

and prints, per backend: executions done, throughput, p50/p99 latency (submit to
result, queueing included), results lost (an exception, a missing result, or a
verdict/output that is not the expected one), and after the sandbox is closed
what it left behind compared with before it was made: processes (descendants of
this process, and host processes of the sandbox's containers), this process's
file descriptors, temporary directories, containers labelled
``codegym.sandbox``, and this process's resident memory (before the run, after
it, after close -- memory should stay flat).

    python benchmarks/load.py                  # issue defaults: local 10,000 x 32, docker 2,000 x 32, <= 600 s
    python benchmarks/load.py --quick          # local 400, docker 200, <= 60 s each
    python benchmarks/load.py --backend docker --n 500 --concurrency 8

Targets: 0 lost results, 0 leaks, memory flat. Numbers depend on the machine
and its load; compare backends within one run.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

from codegym.core.limits import Limits

PY_ECHO = "import sys\ndata = sys.stdin.read()\nsys.stdout.write(data[::-1])\n"
PY_FAIL = "raise RuntimeError('expected failure')\n"
C_ECHO = ("#include <stdio.h>\n#include <string.h>\nint main(void){char b[256]; size_t n = fread(b, 1, sizeof b, stdin);"
          " for (size_t i = n; i > 0; i--) putchar(b[i-1]); return 0;}\n")
C_FLOOD = "#include <stdio.h>\nint main(void){for(;;) fputs(\"0123456789abcdef\", stdout);}\n"
LIMITS = Limits(time_s=2, wall_s=5, memory_mb=256, output_bytes=64 << 10)
MIX = (("py_echo", 70), ("c_echo", 20), ("py_fail", 5), ("c_flood", 5))
DEFAULTS = {"local": 10_000, "docker": 2_000}
QUICK = {"local": 400, "docker": 200}


@dataclass
class Outcome:
    backend: str
    n_target: int
    concurrency: int
    done: int = 0
    lost: int = 0
    lost_examples: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    latencies: list[float] = field(default_factory=list)
    leaks: dict[str, int] = field(default_factory=dict)
    rss_mb: tuple[float, float, float] = (0.0, 0.0, 0.0)
    statuses: dict[str, int] = field(default_factory=dict)
    skipped: str | None = None


# --------------------------------------------------------------------------- host observations

def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def descendants() -> set[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, stack = set(), [os.getpid()]
    while stack:
        for c in children.get(stack.pop(), []):
            if c not in out:
                out.add(c)
                stack.append(c)
    return out


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def temp_entries() -> set[str]:
    """Temporary directories of this process: the local sandbox's instance directories
    (``$TMP/codegym-sandbox-<uid>/<pid>-...``; other processes' are not counted)."""
    root = tempfile.gettempdir()
    out = set()
    for name in os.listdir(root):
        p = os.path.join(root, name)
        if name.startswith("codegym-sandbox-") and os.path.isdir(p):
            try:
                out |= {os.path.join(p, n) for n in os.listdir(p) if n.startswith(f"{os.getpid()}-")}
            except OSError:
                pass
    return out


def docker_client():
    try:
        import docker
        c = docker.from_env(timeout=60)
        c.api.headers["Connection"] = "close"  # no idle keep-alive sockets in the fd counts
        c.ping()
        return c
    except Exception:  # noqa: BLE001 - no engine: the docker backend is skipped
        return None


def labelled_containers(client) -> set[str]:
    """Containers of this process (label codegym.owner=<pid>-<start>; other processes' are not counted)."""
    if client is None:
        return set()
    from codegym.sandbox.isolation import proc_start
    owner = f"{os.getpid()}-{proc_start(os.getpid())}"
    return {c["Id"] for c in client.api.containers(all=True, filters={"label": [
        "codegym.sandbox=docker", f"codegym.owner={owner}"]})}


def container_pids(client, ids) -> set[int]:
    pids = set()
    for cid in ids:
        try:
            top = client.api.top(cid, ps_args="-o pid")
            pids |= {int(p[0]) for p in top.get("Processes") or []}
        except Exception:  # noqa: BLE001 - gone already
            pass
    return pids


# --------------------------------------------------------------------------- the load

def make_sandbox(backend: str, workers: int | None):
    if backend == "local":
        from codegym.sandbox.local import LocalSandbox
        return LocalSandbox(workers=workers)
    from codegym.sandbox.docker import DockerSandbox
    return DockerSandbox(workers=workers)


def expected(kind: str, stdin: str) -> tuple[str, str | None]:
    if kind in ("py_echo", "c_echo"):
        return "ok", stdin[::-1]
    return ("runtime_error", None) if kind == "py_fail" else ("output_limit", None)


def run_load(backend: str, n: int, concurrency: int, duration: float, workers: int | None,
             client, seed: int = 0) -> Outcome:
    out = Outcome(backend, n, concurrency)
    gc.collect()
    before = {"procs": descendants(), "fds": fd_count(), "tmp": temp_entries(),
              "containers": labelled_containers(client)}
    try:
        sb = make_sandbox(backend, workers)
    except Exception as e:  # noqa: BLE001 - e.g. no docker engine
        out.skipped = f"{type(e).__name__}: {e}"
        return out
    seen_containers: set[str] = set()
    try:
        builds = {"py_echo": sb.build("python", {"main.py": PY_ECHO}),
                  "py_fail": sb.build("python", {"main.py": PY_FAIL}),
                  "c_echo": sb.build("c", {"main.c": C_ECHO}),
                  "c_flood": sb.build("c", {"main.c": C_FLOOD})}
        for k, b in builds.items():
            if not b.ok:
                out.skipped = f"build {k} failed: {b.result.status} {b.result.message}"
                return out
        # warm every slot once so that RSS "before" includes the steady state
        for k in builds:
            sb.run(builds[k], stdin="warm", limits=LIMITS)
        rng = random.Random(seed)
        kinds = [k for k, w in MIX for _ in range(w)]
        plan = [(rng.choice(kinds), f"{i}:{rng.randrange(10**6)}") for i in range(n)]
        lock = threading.Lock()
        nxt = [0]
        statuses: dict[str, int] = {}
        deadline = time.monotonic() + duration
        gc.collect()
        rss1 = rss_mb()

        def worker() -> None:
            while True:
                with lock:
                    i = nxt[0]
                    if i >= n or time.monotonic() > deadline:
                        return
                    nxt[0] += 1
                kind, stdin = plan[i]
                t0 = time.monotonic()
                try:
                    r = sb.run(builds[kind], stdin=stdin, limits=LIMITS)
                    err = None
                except Exception as e:  # noqa: BLE001 - a lost result
                    r, err = None, f"{type(e).__name__}: {e}"
                dt = time.monotonic() - t0
                want_status, want_out = expected(kind, stdin)
                if err is None and r is None:
                    err = "no result"
                elif err is None and (r.status != want_status or (want_out is not None and r.stdout != want_out)):
                    err = f"{kind}: got {r.status} {r.stdout[:40]!r} ({r.message[:80]})"
                with lock:
                    out.done += 1
                    out.latencies.append(dt)
                    if r is not None:
                        statuses[r.status] = statuses.get(r.status, 0) + 1
                    if err is not None:
                        out.lost += 1
                        if len(out.lost_examples) < 5:
                            out.lost_examples.append(err)
                    if backend == "docker" and out.done % 50 == 0:
                        seen_containers.update(sb.containers())

        t0 = time.monotonic()
        threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        out.wall_s = time.monotonic() - t0
        out.statuses = statuses
        gc.collect()
        rss2 = rss_mb()
        if backend == "docker":
            seen_containers.update(sb.containers())
    finally:
        live_pids = container_pids(client, seen_containers) if client is not None else set()
        sb.close()
    time.sleep(0.5)  # let killed processes be reaped
    gc.collect()
    after_procs = descendants() - before["procs"]
    host_left = {p for p in live_pids if os.path.exists(f"/proc/{p}")}
    out.leaks = {"processes": len(after_procs) + len(host_left),
                 "fds": max(0, fd_count() - before["fds"]),
                 "temp_dirs": len(temp_entries() - before["tmp"]),
                 "containers": len(labelled_containers(client) - before["containers"])}
    out.rss_mb = (rss1, rss2, rss_mb())
    return out


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def print_table(rows: list[Outcome]) -> None:
    hdr = (f"{'backend':<8} {'done/target':>12} {'conc':>5} {'wall s':>7} {'exec/s':>7} {'p50 ms':>7} "
           f"{'p99 ms':>8} {'lost':>5} | {'procs':>5} {'fds':>4} {'tmp':>4} {'ctrs':>5} | RSS MB before/after/closed")
    print(hdr)
    print("-" * len(hdr))
    for o in rows:
        if o.skipped:
            print(f"{o.backend:<8} skipped: {o.skipped}")
            continue
        lat = [x * 1000 for x in o.latencies]
        tput = o.done / o.wall_s if o.wall_s else 0.0
        L = o.leaks
        print(f"{o.backend:<8} {f'{o.done}/{o.n_target}':>12} {o.concurrency:>5} {o.wall_s:>7.1f} {tput:>7.1f} "
              f"{statistics.median(lat):>7.1f} {pct(lat, 0.99):>8.1f} {o.lost:>5} | {L['processes']:>5} "
              f"{L['fds']:>4} {L['temp_dirs']:>4} {L['containers']:>5} | "
              f"{o.rss_mb[0]:.0f} / {o.rss_mb[1]:.0f} / {o.rss_mb[2]:.0f}")
    for o in rows:
        if o.statuses:
            print(f"  {o.backend} verdicts: " + ", ".join(f"{k}={v}" for k, v in sorted(o.statuses.items())))
        for e in o.lost_examples:
            print(f"  {o.backend} lost: {e}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=("local", "docker", "both"), default="both")
    ap.add_argument("--n", type=int, default=None, help="executions per backend (default: local 10000, docker 2000)")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--duration", type=float, default=None, help="seconds at most per backend (default 600)")
    ap.add_argument("--workers", type=int, default=None, help="sandbox slots/containers (default: CPU count)")
    ap.add_argument("--quick", action="store_true", help="local 400, docker 200, at most 60 s each")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    backends = ["local", "docker"] if a.backend == "both" else [a.backend]
    duration = a.duration or (60.0 if a.quick else 600.0)
    client = docker_client()
    rows = []
    for b in backends:
        n = a.n or (QUICK if a.quick else DEFAULTS)[b]
        if b == "docker" and client is None:
            o = Outcome(b, n, a.concurrency)
            o.skipped = "no Docker engine answers"
            rows.append(o)
            continue
        print(f"[load] {b}: {n} executions at concurrency {a.concurrency} (<= {duration:.0f} s) ...",
              file=sys.stderr, flush=True)
        rows.append(run_load(b, n, a.concurrency, duration, a.workers, client, a.seed))
    print(f"\nload: {os.cpu_count()} CPUs; mix " + ", ".join(f"{k} {w}%" for k, w in MIX)
          + f"; limits time_s={LIMITS.time_s:g} memory_mb={LIMITS.memory_mb} output_bytes={LIMITS.output_bytes}\n")
    print_table(rows)
    bad = any(o.lost or any(o.leaks.values()) for o in rows if not o.skipped)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
