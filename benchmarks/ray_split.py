"""One judge of a task with many cases: its cases on one Ray node, or split over two.

A Ray cluster of two nodes is started on this machine (``ray start --head`` + ``ray
start --address``, one CPU each: `codegym.sandbox.raycluster.LocalCluster`), with one
sandbox actor per node. Configurations, all judging the same accepted program on the
same generated task (`--cases` stdio cases, each a run of `--work` loop iterations):

==========  ===============================================================
local       LocalSandbox(workers=1) in this process (the reference verdicts)
ray-1node   the whole judge on one actor (``judge_remote``): one node's CPU
ray-2nodes  the judge in this process, its cases split in one chunk per node
            (`codegym.judge.chunks`): two nodes' CPUs
==========  ===============================================================

Runs are interleaved (local, 1 node, 2 nodes, local, ...) so drift hits them alike; the
table gives the median seconds per judge over `--runs` and the speedup of two nodes
over one measured in the same run. Every judge must give the same verdict and case
statuses as local. Two nodes on a 2-core machine can at best halve the time.

    python benchmarks/ray_split.py [--cases 2000] [--work 20000] [--runs 5] [--language python|c]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import ray
import yaml

from codegym import load_task
from codegym.judge.remote import judge_remote
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox
from codegym.sandbox.raycluster import LocalCluster

PY = "import sys\nn = int(sys.stdin.readline())\nacc = 0\nfor i in range({work}):\n    acc = (acc * 31 + i) % 1000003\nprint(2 * n)\n"
C = ("#include <stdio.h>\nint main(void){long n; if(scanf(\"%ld\",&n)!=1) return 1; unsigned long acc=0;"
     "for(long i=0;i<{work};i++) acc=(acc*31+i)%1000003; printf(\"%ld\\n\", 2*n + (long)(acc*0)); return 0;}\n")


def make_task(tmp: Path, cases: int, work: int, language: str):
    main, code = ("main.py", PY) if language == "python" else ("main.c", C)
    src = code.replace("{work}", str(work))
    data = {"id": "bench/double", "title": "double", "statement": "Print 2n.", "kind": "stdio",
            "language": language, "starter": {main: src},
            "tests": {"hidden": [{"stdin": f"{i}\n", "expected": f"{2 * i}\n"} for i in range(cases)]},
            "limits": {"time_s": 10, "memory_mb": 256},
            "solutions": {"reference": {"language": language, "files": {main: src}}}}
    p = tmp / "double.yaml"
    p.write_text(yaml.safe_dump(data))
    return load_task(p), {main: src}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--work", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--language", choices=("python", "c"), default="python")
    args = ap.parse_args(argv)
    print(f"load average before: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as d:
        task, files = make_task(Path(d), args.cases, args.work, args.language)
        t0 = time.monotonic()
        with LocalCluster([{"num_cpus": 1}, {"num_cpus": 1}]) as cluster:
            cluster.connect()
            print(f"cluster of 2 nodes up in {time.monotonic() - t0:.1f} s", flush=True)
            local = make_sandbox("local", workers=1)
            rsb = make_sandbox("ray", num_actors=2, actor_options={"num_cpus": 1})
            runs = {"local": (lambda: judge(task, files, sandbox=local)),
                    "ray-1node": (lambda: judge_remote(rsb, task, files)),
                    "ray-2nodes": (lambda: judge(task, files, sandbox=rsb))}
            ref = runs["local"]()  # warm-up of every configuration (builds, actors, caches)
            for f in runs.values():
                f()
            nodes = {e["node"] for e in list(rsb.chunk_log)[-2:]}
            times: dict[str, list[float]] = {k: [] for k in runs}
            for _ in range(args.runs):
                for name, f in runs.items():
                    t = time.perf_counter()
                    rep = f()
                    times[name].append(time.perf_counter() - t)
                    same = rep.verdict == ref.verdict and [c.status for c in rep.cases] == [c.status for c in ref.cases]
                    if not same:
                        print(f"MISMATCH {name}: {rep.verdict} vs {ref.verdict}", file=sys.stderr)
                        return 1
            rsb.close()
            local.close()
            ray.shutdown()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"\n{args.cases} {args.language} cases x {args.work} iterations, verdict {ref.verdict}, "
          f"{args.runs} runs each, chunks on {len(nodes)} distinct nodes")
    print(f"{'configuration':<12} {'median s':>9} {'min s':>8} {'max s':>8} {'cases/s':>9} {'vs 1 node':>10}")
    for k in runs:
        print(f"{k:<12} {med[k]:>9.2f} {min(times[k]):>8.2f} {max(times[k]):>8.2f} "
              f"{args.cases / med[k]:>9.0f} {med['ray-1node'] / med[k]:>9.2f}x")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
