"""What each attack on the task loader costs now: time and extra memory per attack (issue 21).

Writes a suite of hostile task files (path escapes through every field that names a
file, symlinks, a FIFO, files over the caps, YAML alias bombs of depth 5-12, a
merge-key bomb, deep nesting, a huge scalar, a million values, duplicate keys, tags,
binary junk) next to a secret, then loads each one with `codegym.load_task` in a fresh
interpreter (codegym imported first: the baseline), several times, and prints per
attack: the outcome (the first error, ``file:line: field: message``), the median
seconds of `load_task`, and the extra peak memory (max RSS after minus before), next
to the same numbers for a normal bundled task measured in the same run. Targets:
every attack <= 1 s and <= 100 MB extra, with a file:line error; the secret never
appears.

    python3 benchmarks/untrusted_tasks.py [--repeats 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SECRET = "CODEGYM-BENCH-" + "SECRET"
BASE = "kind: stdio\nlanguage: python\nsolutions: {reference: {files: {main.py: 'print(1)'}}}\nstatement: s\n"
OK_TESTS = "tests: {hidden: [{stdin: '1', expected: '1'}]}\n"

ONE = r"""
import json, resource, sys, time
import codegym
from codegym.tasks.load import TaskValidationError, load_task
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
try:
    task = load_task(sys.argv[1])
    outcome, leaked = "loaded", SECRET in task.model_dump_json()
except TaskValidationError as e:
    outcome, leaked = str(e.errors[0]), SECRET in str(e)
except BaseException as e:  # noqa: BLE001 - an escape: what the benchmark reports
    outcome, leaked = f"EXCEPTION {type(e).__name__}: {e}"[:300], False
dt = time.perf_counter() - t0
extra = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps({"s": dt, "mb": extra, "outcome": outcome, "leaked": leaked}))
""".replace("SECRET", repr(SECRET))


def bomb(depth: int, width: int = 9) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{d}: &a{d} [{', '.join([f'*a{d - 1}'] * width)}]" for d in range(1, depth)]
    return "\n".join(lines) + "\n"


def attacks(root: Path) -> dict[str, Path]:
    """name -> task file (the suite is root/tasks/evil, the secret is root/secret.txt)."""
    (root / "secret.txt").write_text(SECRET + "\n")
    (root / "outside").mkdir()
    (root / "outside" / "t.yaml").write_text(BASE + OK_TESTS + f"title: {SECRET}\n")
    s = root / "tasks" / "evil"
    s.mkdir(parents=True)
    (s / "suite.yaml").write_text("suite: {description: attacks}\n")
    os.symlink(root / "secret.txt", s / "link.txt")
    os.symlink(root / "outside" / "t.yaml", s / "symlinked_task.yaml")
    os.mkfifo(s / "pipe.in")
    with open(s / "huge.md", "wb") as f:
        f.truncate(100 << 20)
    esc = "../../secret.txt"
    files = {
        "file: in starter": BASE + OK_TESTS + f"starter: {{main.py: {{file: ../../../../../..{root}/secret.txt}}}}\n",
        "file: in statement (up and down)": BASE.replace("statement: s\n", "") + OK_TESTS
        + "statement: {file: sub/../../../secret.txt}\n",
        "stdin_file": BASE + f"tests: {{hidden: [{{stdin_file: {esc}, expected: '1'}}]}}\n",
        "expected_file": BASE + f"tests: {{hidden: [{{stdin: '1', expected_file: {esc}}}]}}\n",
        "generator file": BASE + f"tests: {{hidden: [{{generator: {{file: {esc}, language: python}}}}]}}\n",
        "checker file (symlink)": BASE + OK_TESTS + "checker: {type: program, file: link.txt}\n",
        "glob climbing": BASE + "tests: {hidden: {glob: '../../*.txt'}}\n",
        "FIFO as stdin_file": BASE + "tests: {hidden: [{stdin_file: pipe.in, expected: '1'}]}\n",
        "100 MB statement file": BASE.replace("statement: s\n", "") + OK_TESTS + "statement: {file: huge.md}\n",
        "huge scalar (3 MB, under the cap)": BASE.replace("statement: s\n", "") + OK_TESTS
        + "statement: " + "x" * (3 << 20) + "\n",
        "a million values": BASE + OK_TESTS + "metadata: {tags: [" + ",".join(["t"] * 1_000_000) + "]}\n",
        "duplicate keys": BASE + OK_TESTS + "title: a\ntitle: b\n",
        "tag !!python/object/apply": BASE + OK_TESTS + "title: !!python/object/apply:os.system [id]\n",
        "binary junk": None,
        "deep nesting (flow, 100k)": BASE + OK_TESTS + "metadata: " + "[" * 100_000 + "]" * 100_000 + "\n",
        "deep nesting (block, 2k)": BASE + OK_TESTS + "metadata:\n" + "".join("  " * (i + 1) + "-\n"
                                                                            for i in range(2000)),
        "recursive alias": BASE + OK_TESTS + "metadata: &m {tags: *m}\n",
        "merge-key bomb": BASE + OK_TESTS + "m0: &m0 {a: 1}\n" + "".join(
            f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: 1}}\n" for i in range(1, 40)),
    }
    for d in range(5, 13):
        files[f"alias bomb, depth {d}"] = BASE + OK_TESTS + bomb(d)
    out = {}
    for i, (name, text) in enumerate(files.items()):
        p = s / f"a{i:02d}.yaml"
        if text is None:
            p.write_bytes(os.urandom(4096))
        else:
            p.write_text(text)
        out[name] = p
    out["symlinked task file"] = s / "symlinked_task.yaml"
    out["100 MB task file"] = s / "zz_big.yaml"
    with open(out["100 MB task file"], "wb") as f:
        f.truncate(100 << 20)
    return out


def run_one(path: Path, repeats: int) -> dict:
    runs = []
    for _ in range(repeats):
        p = subprocess.run([sys.executable, "-c", ONE, str(path)], capture_output=True, text=True, timeout=600,
                           cwd=REPO)
        try:
            runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            runs.append({"s": float("nan"), "mb": float("nan"), "outcome": f"CRASH rc={p.returncode}: "
                         f"{p.stderr[-300:]}", "leaked": False})
    return {"s": statistics.median(r["s"] for r in runs), "mb": max(r["mb"] for r in runs),
            "outcome": runs[-1]["outcome"], "leaked": any(r["leaked"] for r in runs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="codegym-attacks-") as d:
        baseline = run_one(REPO / "tasks" / "examples" / "digit-sum-queries.yaml", args.repeats)
        for name, path in attacks(Path(d)).items():
            r = run_one(path, args.repeats)
            r["attack"] = name
            rows.append(r)
            print(f"{name:<36} {r['s']:7.3f} s {r['mb']:7.1f} MB  {r['outcome'][:150]}", flush=True)
    print(f"\nbaseline (a normal task, tasks/examples/digit-sum-queries.yaml): {baseline['s']:.3f} s, "
          f"{baseline['mb']:.1f} MB extra; load average {os.getloadavg()[0]:.1f}\n")
    print("| attack | outcome | time (s) | x baseline | extra MB |\n|---|---|---:|---:|---:|")
    for r in rows:
        o = r["outcome"].replace("|", "\\|")
        o = o.split(": ", 1)[-1] if o.startswith("/") else o
        print(f"| {r['attack']} | {o[:110]} | {r['s']:.3f} | {r['s'] / max(baseline['s'], 1e-9):.1f} "
              f"| {r['mb']:.1f} |")
    bad = [r["attack"] for r in rows if r["s"] > 1 or r["mb"] > 100 or r["leaked"] or "EXCEPTION" in r["outcome"]
           or "CRASH" in r["outcome"]]
    print(f"\nover 1 s or 100 MB, leaked, or escaped: {bad or 'none'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"baseline": baseline, "rows": rows}, indent=2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
