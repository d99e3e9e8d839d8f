"""Judge throughput of the docker backend next to the local one, on the same judge workloads.

Three workloads, each judged through `codegym.judge.judge` by 2 threads on a sandbox of 2
workers (`LocalSandbox(workers=2)`, `make_sandbox("docker", workers=2)`):

- ``one-test``: 200 Python stdio tasks of one test each (every one a task of its own: what
  a backend does per task shows here);
- ``stdio``: 10 Python stdio problems x 100 tests;
- ``cpp``: 200 C++ tests, 10 programs x 20 tests (each program compiled in the round).

Every round makes its tasks and programs afresh (new task ids, a comment in each program),
so builds, per-task work and container choice count in every round; the rounds of the two
backends interleave, in alternating order. Printed: tests/s per backend and workload
(median over rounds), p50 of one judge, and docker / local: the median of the rounds'
ratios (each docker round ran next to a local one), and every round's ratio. The load
average is printed too: on a shared machine the ratios measured in the same run are the
meaningful part.

``--backends local,docker,docker-attach`` adds the docker backend over its previous
transport (the engine's attach socket, `DockerSandbox(transport="attach")`) to the same
interleaved rounds: the transport's effect measured in one run.

    python benchmarks/docker_judge.py [--rounds 3] [--workloads one-test,stdio,cpp]
                                      [--backends local,docker]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from codegym import load_task
from codegym.judge.run import judge

PY_SOLUTION = "a, b = map(int, input().split())\nprint(a + b)\n"
CPP_SOLUTION = ("#include <iostream>\nint main() { long long a, b; std::cin >> a >> b; "
                "std::cout << a + b << std::endl; return 0; }\n")


def _task_yaml(tid: str, language: str, solution: str, n_tests: int, offset: int) -> str:
    fname = "main.py" if language == "python" else "main.cpp"
    tests = "".join(f"    - {{stdin: \"{offset + i} {i + 1}\\n\", expected: \"{offset + 2 * i + 1}\\n\"}}\n"
                    for i in range(n_tests))
    sol = solution.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return textwrap.dedent(f"""\
        id: {tid}
        title: Sum of two numbers
        statement: Print a + b.
        kind: stdio
        language: {language}
        limits: {{time_s: 2, memory_mb: 256}}
        solutions:
          reference: {{language: {language}, files: {{{fname}: "{sol}"}}}}
        tests:
          hidden:
        """) + tests


def workload(name: str, tag: str, folder: Path) -> list[tuple]:
    """(task, files, language) items of one workload, made afresh under `tag`."""
    specs = {"one-test": (200, 1, "python"), "stdio": (10, 100, "python"), "cpp": (10, 20, "cpp")}[name]
    n_tasks, n_tests, lang = specs
    items = []
    for i in range(n_tasks):
        tid = f"bench/{name}-{tag}-{i}"
        path = folder / f"{name}-{tag}-{i}.yaml"
        base = PY_SOLUTION if lang == "python" else CPP_SOLUTION
        comment = f"# {tag} {i}\n" if lang == "python" else f"// {tag} {i}\n"
        path.write_text(_task_yaml(tid, lang, base + comment, n_tests, i))
        task = load_task(path)
        items.append((task, dict(task.solution("reference").files), lang))
    return items


def run(sb, items: list[tuple]) -> tuple[float, int, float, dict]:
    """(wall seconds, tests, p50 seconds per judge, verdicts) of judging `items` with 2 threads."""
    times: list[float] = []
    verdicts: dict[str, int] = {}

    def one(it):
        t0 = time.perf_counter()
        rep = judge(it[0], it[1], sandbox=sb, split="hidden", language=it[2])
        times.append(time.perf_counter() - t0)
        return rep

    t0 = time.perf_counter()
    with ThreadPoolExecutor(2) as ex:
        reps = list(ex.map(one, items))
    wall = time.perf_counter() - t0
    for r in reps:
        verdicts[r.verdict] = verdicts.get(r.verdict, 0) + 1
    return wall, sum(r.total for r in reps), statistics.median(times), verdicts


BACKENDS = {"local": {}, "docker": {}, "docker-attach": {"transport": "attach"}}


def make_backend(name: str):
    """The sandbox of one backend name (`BACKENDS`), 2 workers."""
    from codegym.sandbox import make_sandbox
    from codegym.sandbox.local import LocalSandbox

    if name == "local":
        return LocalSandbox(workers=2)
    return make_sandbox("docker", workers=2, **BACKENDS[name])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workloads", default="one-test,stdio,cpp")
    ap.add_argument("--backends", default="local,docker", help=f"local first, then any of {list(BACKENDS)[1:]}")
    args = ap.parse_args(argv)
    names = [w.strip() for w in args.workloads.split(",") if w.strip()]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if backends[:1] != ["local"] or len(backends) < 2 or not set(backends) <= set(BACKENDS):
        ap.error(f"--backends: local, then one or more of {list(BACKENDS)[1:]}")
    sbs: dict = {}
    try:
        for b in backends:
            sbs[b] = make_backend(b)
        return _measure(sbs, names, args.rounds)
    finally:
        for sb in sbs.values():
            sb.close()


def _measure(sbs: dict, names: list[str], rounds: int) -> int:
    rates: dict[tuple[str, str], list[float]] = {}
    p50s: dict[tuple[str, str], list[float]] = {}
    bad: list[str] = []
    load0 = os.getloadavg()
    print(f"judge workloads, 2 threads on 2 workers; {os.cpu_count()} CPUs; load {load0[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        for w in names:  # warm-up: images, servers, the launcher's build
            for sb in sbs.values():
                run(sb, workload(w, "warm", folder)[:4])
        for k in range(rounds):
            order = list(sbs) if k % 2 == 0 else list(sbs)[::-1]
            for w in names:
                for backend in order:
                    items = workload(w, f"r{k}{backend}", folder)
                    wall, tests, p50, verdicts = run(sbs[backend], items)
                    rates.setdefault((backend, w), []).append(tests / wall)
                    p50s.setdefault((backend, w), []).append(p50)
                    if set(verdicts) - {"accepted"}:
                        bad.append(f"{backend} {w} round {k}: {verdicts}")
                    print(f"  round {k + 1} {w:8s} {backend:13s} {tests / wall:8.1f} tests/s  p50 "
                          f"{1000 * p50:7.1f} ms  load {os.getloadavg()[0]:.1f}", flush=True)
    others = [b for b in sbs if b != "local"]
    print("\n| workload | " + " | ".join(f"{b} tests/s" for b in sbs) + " | "
          + " | ".join(f"{b} / local" for b in others) + " | " + " | ".join(f"{b} p50 ms" for b in sbs) + " |")
    print("|---" * (2 * len(sbs) + len(others) + 1) + "|")
    worst = float("inf")
    for w in names:
        med = {b: statistics.median(rates[(b, w)]) for b in sbs}
        # the ratio of each round (a backend's round ran next to local's), its median: with
        # the machine's load changing between rounds a ratio of the two medians can pair a
        # busy round of one backend with a quiet one of the other
        ratios = {b: statistics.median(x / y for x, y in zip(rates[(b, w)], rates[("local", w)]))
                  for b in others}
        # the target is the default docker backend's (any other one's when it is not measured)
        worst = min(worst, ratios["docker"] if "docker" in ratios else min(ratios.values()))
        print(f"| {w} | " + " | ".join(f"{med[b]:.1f}" for b in sbs) + " | "
              + " | ".join(f"{ratios[b]:.2f}x" for b in others) + " | "
              + " | ".join(f"{1000 * statistics.median(p50s[(b, w)]):.1f}" for b in sbs) + " |")
    print(f"tests/s and p50: median of {rounds} rounds; x / local: median of the rounds' ratios; load average {load0[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    for b in others:  # (the rounds of a backend and of local ran next to each other)
        print(f"{b} / local per round: " + "; ".join(
            f"{w} " + ", ".join(f"{x / y:.2f}" for x, y in zip(rates[(b, w)], rates[("local", w)])) for w in names))
    for b in others:
        print(f"{b}: transport {getattr(sbs[b], 'transport', 'attach')}, stats {dict(sbs[b].stats)}")
    for b in bad:
        print(f"NOT ACCEPTED {b}")
    return 0 if worst >= 0.8 and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
