"""The sandbox's Python roots: build time and size per suite (from each root's marker), and what a
slot costs on a root against the default sandbox (the host's own system): slot start (bubblewrap +
fork server ready) and a warm hello-world run, medians over repeats. Prints a table with the load.

    python benchmarks/roots.py [--repeats 20] [--versions 3.9 3.11 3.13]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from codegym.core.limits import Limits
from codegym.sandbox.local import LocalSandbox
from codegym.sandbox.roots import PYTHON_SUITES, ensure_root, root_info


def measure(python: str | None, repeats: int) -> dict:
    sb = LocalSandbox(workers=1, python=python)
    try:
        slot = sb._slots[0]
        disk = Limits().disk_mb
        starts = []
        for _ in range(repeats):
            slot.stop()
            t0 = time.perf_counter()
            slot.start(disk)
            starts.append(time.perf_counter() - t0)
        b = sb.build("python", {"main.py": "print('hello')\n"})
        sb.run(b)
        runs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            r = sb.run(b)
            runs.append(time.perf_counter() - t0)
            assert r.stdout == "hello\n", r
        return {"start_ms": 1000 * statistics.median(starts), "run_ms": 1000 * statistics.median(runs)}
    finally:
        sb.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--versions", nargs="*", default=list(PYTHON_SUITES))
    args = ap.parse_args()
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| sandbox | Python | root build (s) | root size (MB) | slot start (ms, median) | hello run (ms, median) |")
    print("|---|---|---|---|---|---|")
    base = measure(None, args.repeats)
    print(f"| default (host) | host | - | - | {base['start_ms']:.0f} | {base['run_ms']:.1f} |")
    for v in args.versions:
        info = root_info(ensure_root(v, log=print))
        m = measure(v, args.repeats)
        print(f"| root {PYTHON_SUITES[v]} | {info.get('python_version', v)} | {info.get('build_s', '?')} | "
              f"{info.get('size_mb', '?')} | {m['start_ms']:.0f} | {m['run_ms']:.1f} |")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
