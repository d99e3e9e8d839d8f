"""The fuzz suite's long mode: tests/fuzz with fresh random examples, many more of them.

`make test` runs tests/fuzz with a fixed, derandomized budget (a few hundred examples
per property, about a minute). This runs the same properties with ``CODEGYM_FUZZ=long``
(new random examples every run, the budget times ``--scale``, default 50) and prints,
per property: examples tried, seconds, examples per second and failures (a failure
prints hypothesis's minimal example and its ``@reproduce_failure`` blob above the table).

    python3 benchmarks/fuzz.py [--scale 50] [-k EXPR] [-n 2]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=50, help="examples = CI budget x scale")
    ap.add_argument("-k", default="", help="pytest -k expression (a subset of the properties)")
    ap.add_argument("-n", default="2", help="pytest-xdist workers")
    args = ap.parse_args()
    env = dict(os.environ, CODEGYM_FUZZ="long", CODEGYM_FUZZ_SCALE=str(args.scale))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/fuzz", "-n", args.n,
           "--hypothesis-show-statistics", "--timeout=0"] + (["-k", args.k] if args.k else [])
    p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    out = p.stdout + p.stderr
    rows = []
    for block in re.split(r"\n(?=tests/fuzz/\S+::\S+:\n)", out):
        m = re.match(r"(tests/fuzz/\S+::\S+):", block)
        if not m:
            continue
        secs = sum(float(x) for x in re.findall(r"phase \(([\d.]+) seconds\)", block))
        passing = sum(int(x) for x in re.findall(r"(\d+) passing examples", block))
        failing = sum(int(x) for x in re.findall(r"(\d+) failing examples", block))
        rows.append((m.group(1).split("::")[-1], passing + failing, secs, failing))
    if p.returncode != 0:
        print(out[-6000:])
    print(f"fuzz, long mode (scale {args.scale}); load average {os.getloadavg()[0]:.1f}\n")
    print("| property | examples | seconds | examples/s | failing |\n|---|---:|---:|---:|---:|")
    for name, n, secs, failing in sorted(rows):
        print(f"| {name} | {n} | {secs:.1f} | {n / secs if secs else 0:.0f} | {failing} |")
    print(f"\npytest exit code {p.returncode}")
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
