"""Throughput of the local sandbox against the floor of a bare interpreter start.

Measures, for trivial programs, the time per execution (median over batches)
and executions per second on 1 and 2 concurrent workers:

1. a bare ``/usr/bin/python3 -I -S -c pass`` subprocess (the floor to beat), and
   the fork-from-warm-parent floor: a warm ``/usr/bin/python3`` that forks a
   child per execution, the child runs the program's code object and exits (no
   isolation, no limits, no I/O: what forking alone costs here),
2. the local sandbox with bubblewrap (fork servers inside namespaces),
3. the local sandbox without isolation (rlimits only, isolation="rlimits"),
4. a trivial C binary in both modes (and as a bare subprocess),

and, when codegym.judge.run and codegym.tasks.schema are available, the time to judge a
100-case stdio task and a 100-case function task.

    python benchmarks/sandbox_throughput.py [--batches 5] [--n 200] [--quick]

Numbers depend on the machine and on what else runs on it; the ratios to the
bare-subprocess floor measured in the same run are the meaningful part, and so
is the CPU column: the CPU time of every process involved (this host process,
the fork servers and the programs) per execution, from which "idle capacity"
(cores / CPU per execution) estimates the throughput of an otherwise idle
machine of this size.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

from codegym.sandbox import RunRequest
from codegym.sandbox.isolation import bwrap_available
from codegym.sandbox.local import LocalSandbox

PY_TRIVIAL = "pass\n"
C_TRIVIAL = "int main(void) { return 0; }\n"


_TICK = os.sysconf("SC_CLK_TCK")


def _proc_cpu(pid: int) -> float:
    """CPU seconds of a process and of its reaped children (from /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            v = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in v[11:15]) / _TICK
    except (OSError, IndexError, ValueError):
        return 0.0


def _server_pids(sb: LocalSandbox | None) -> list[int]:
    pids = []
    for slot in (sb._slots if sb is not None else []):
        if slot.proc is None:
            continue
        if sb.isolation == "bwrap":  # the server is bwrap's child (PID 1 inside)
            try:
                with open(f"/proc/{slot.proc.pid}/task/{slot.proc.pid}/children") as f:
                    pids += [int(x) for x in f.read().split()]
            except OSError:
                pass
        else:
            pids.append(slot.proc.pid)
    return pids


def cpu_now(sb: LocalSandbox | None) -> float:
    """CPU seconds used so far by this process, its reaped children and the sandbox's servers."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system + sum(_proc_cpu(p) for p in _server_pids(sb))


def batches(fn, n: int, k: int, sb: LocalSandbox | None = None) -> tuple[float, float, float]:
    """Run `fn(n)` k times; medians of (seconds per execution, executions/s, CPU seconds per execution).

    The CPU column counts every process involved (host, servers, programs), so it
    says what one execution costs even when other work shares the machine.
    """
    per, cpu = [], []
    for _ in range(k):
        c = cpu_now(sb)
        t = time.perf_counter()
        fn(n)
        per.append((time.perf_counter() - t) / n)
        cpu.append((cpu_now(sb) - c) / n)
    med = statistics.median(per)
    return med, 1.0 / med, statistics.median(cpu)


def bare(argv: list[str], workers: int):
    def one(_=None):
        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)

    def fn(n: int) -> None:
        if workers == 1:
            for _ in range(n):
                one()
        else:
            with ThreadPoolExecutor(workers) as ex:
                list(ex.map(one, range(n)))
    return fn


_FORK_FLOOR = textwrap.dedent("""
    import gc, os, sys, time
    n = int(sys.argv[1]); code = compile("pass", "main.py", "exec")
    gc.collect(); gc.freeze()
    t = time.perf_counter()
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            exec(code, {"__name__": "__main__"})
            os._exit(0)
        os.waitpid(pid, 0)
    print(time.perf_counter() - t)
""")


def fork_floor(workers: int):
    """`workers` warm parents forking children in parallel."""
    def fn(n: int) -> None:
        per = max(1, n // workers)
        procs = [subprocess.Popen(["/usr/bin/python3", "-I", "-S", "-c", _FORK_FLOOR, str(per)],
                                  stdout=subprocess.PIPE) for _ in range(workers)]
        for p in procs:
            p.communicate()
    return fn


def sandboxed(sb: LocalSandbox, build, workers: int):
    def fn(n: int) -> None:
        if workers == 1:
            for _ in range(n):
                r = sb.run(build)
                assert r.status == "ok", r
        else:
            res = sb.run_many(build, [RunRequest()] * n)
            assert all(r is not None and r.status == "ok" for r in res), res[0]
    return fn


def judge_rows(sb, k: int) -> list[tuple]:
    try:
        from codegym import load_task
        from codegym.judge.run import judge
    except ImportError:
        return [("judge 100-case stdio / function", "-", "skipped: judge not available", "", "", "", "")]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        stdio = os.path.join(d, "bench-stdio.yaml")
        func = os.path.join(d, "bench-function.yaml")
        cases = "".join(f"    - {{stdin: \"{i} {i + 1}\\n\", expected: \"{2 * i + 1}\\n\"}}\n" for i in range(100))
        with open(stdio, "w") as f:
            f.write(textwrap.dedent("""\
                id: bench/stdio-sum
                title: Sum of two numbers
                statement: Print a + b.
                kind: stdio
                language: python
                limits: {time_s: 2, memory_mb: 256}
                solutions:
                  reference: {language: python, files: {main.py: "a, b = map(int, input().split())\\nprint(a + b)\\n"}}
                tests:
                  hidden:
                """) + cases)
        fcases = "".join(f"    - {{args: [{i}, {i + 1}], expected: {2 * i + 1}}}\n" for i in range(100))
        with open(func, "w") as f:
            f.write(textwrap.dedent("""\
                id: bench/function-sum
                title: Sum of two numbers
                statement: Return a + b.
                kind: function
                language: python
                entry_point: add
                limits: {time_s: 2, memory_mb: 256}
                solutions:
                  reference: {language: python, files: {main.py: "def add(a, b):\\n    return a + b\\n"}}
                tests:
                  hidden:
                """) + fcases)
        for label, path in (("judge 100-case stdio task", stdio), ("judge 100-case function task", func)):
            try:
                task = load_task(path)
                files = task.solution("reference").files
                rep = judge(task, files, sandbox=sb, split="hidden")
                if rep.verdict != "accepted":
                    rows.append((label, "2", f"failed: {rep.verdict}", "", "", "", ""))
                    continue
                times, cpus = [], []
                for _ in range(k):
                    c = cpu_now(sb)
                    t = time.perf_counter()
                    judge(task, files, sandbox=sb, split="hidden")
                    times.append(time.perf_counter() - t)
                    cpus.append(cpu_now(sb) - c)
                med = statistics.median(times)
                rows.append((label, str(sb.workers), f"{med * 1000:.1f} ms / judge",
                             f"{100 / med:.0f} cases/s", "", f"{statistics.median(cpus) * 1000:.0f} / judge", ""))
            except Exception as e:  # report, do not hide, a failure of another module
                rows.append((label, "-", f"error: {type(e).__name__}: {e}"[:80], "", "", "", ""))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=5, help="batches per measurement (median reported)")
    ap.add_argument("--n", type=int, default=200, help="executions per batch")
    ap.add_argument("--quick", action="store_true", help="small batches (smoke test)")
    args = ap.parse_args()
    n, k = (40, 3) if args.quick else (args.n, args.batches)
    rows: list[tuple] = []
    load = os.getloadavg()[0]
    cores = os.cpu_count() or 1

    floor: dict[int, float] = {}
    for w in (1, 2):
        per, eps, cpu = batches(bare(["/usr/bin/python3", "-I", "-S", "-c", "pass"], w), max(10, n // 4), k)
        floor[w] = per
        rows.append(("bare subprocess: python3 -I -S -c pass", str(w), f"{per * 1000:.2f}", f"{eps:.0f}", "1.00x",
                     f"{cpu * 1000:.2f}", f"{cores / cpu:.0f}"))

    for w in (1, 2):
        per, eps, cpu = batches(fork_floor(w), n * 5, k)
        rows.append(("fork from a warm parent (no isolation)", str(w), f"{per * 1000:.2f}", f"{eps:.0f}",
                     f"{floor[w] / per:.2f}x", f"{cpu * 1000:.2f}", f"{cores / cpu:.0f}"))

    modes = (["bwrap"] if bwrap_available() else []) + ["rlimits"]
    cbin = None
    for mode in modes:
        sb = LocalSandbox(workers=2, isolation=mode)
        try:
            pyb = sb.build("python", {"main.py": PY_TRIVIAL})
            cb = sb.build("c", {"main.c": C_TRIVIAL}) if sb.build("c", {"main.c": C_TRIVIAL}).ok else None
            sb.run_many(pyb, [RunRequest()] * 20)
            for w in (1, 2):
                per, eps, cpu = batches(sandboxed(sb, pyb, w), n, k, sb)
                rows.append((f"sandbox ({sb.isolation}): trivial Python", str(w), f"{per * 1000:.2f}",
                             f"{eps:.0f}", f"{floor[w] / per:.2f}x", f"{cpu * 1000:.2f}", f"{cores / cpu:.0f}"))
            if cb is not None:
                if cbin is None:
                    fd, cbin = tempfile.mkstemp(prefix="codegym-bench-")
                    os.write(fd, cb.artifacts.files["main"][0])
                    os.close(fd)
                    os.chmod(cbin, 0o755)
                for w in (1, 2):
                    per, eps, cpu = batches(sandboxed(sb, cb, w), n, k, sb)
                    rows.append((f"sandbox ({sb.isolation}): trivial C binary", str(w), f"{per * 1000:.2f}",
                                 f"{eps:.0f}", f"{floor[w] / per:.2f}x", f"{cpu * 1000:.2f}", f"{cores / cpu:.0f}"))
        finally:
            if mode != modes[0]:
                sb.close()
            else:
                first = sb
    if cbin is not None and os.path.exists(cbin):
        for w in (1, 2):
            per, eps, cpu = batches(bare([cbin], w), n, k)
            rows.append(("bare subprocess: trivial C binary", str(w), f"{per * 1000:.2f}", f"{eps:.0f}",
                         f"{floor[w] / per:.2f}x", f"{cpu * 1000:.2f}", f"{cores / cpu:.0f}"))
    if cbin is not None:
        os.unlink(cbin)
    rows += judge_rows(first, k)
    first.close()

    title = (f"sandbox throughput on {cores} cores (load average at start {load:.1f}, end "
             f"{os.getloadavg()[0]:.1f}); median of {k} batches of {n}; CPU = host + servers + programs; "
             f"capacity = cores / CPU per execution")
    headers = ("what", "workers", "ms / execution", "executions / s", "vs bare python",
               "CPU ms / execution", f"idle {cores}-core capacity / s")
    try:
        from rich.console import Console
        from rich.table import Table
        t = Table(title=title)
        for h in headers:
            t.add_column(h, justify="left" if h == "what" else "right")
        for r in rows:
            t.add_row(*r)
        Console(width=200).print(t)
    except ImportError:
        print(title)
        widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
        for r in [headers] + rows:
            print("  ".join(str(c).ljust(wd) for c, wd in zip(r, widths)))


if __name__ == "__main__":
    main()
