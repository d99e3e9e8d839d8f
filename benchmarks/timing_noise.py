"""How precise and how honest are codegym's timings? (codegym.timing)

Prints two tables, measured on this machine in the local sandbox:

1. Noise of `measure`: the coefficient of variation (CV) of the medians of
   repeated measurements of the same ~50 ms program (Python and C; metrics cpu,
   wall, and instructions for C), next to the baseline of the same run -- the
   CV of single executions, i.e. what a reward that times one run would see --
   and their ratio. Targets: <= 2 % Python, <= 1 % C, 0 for instructions.
2. Decisions of `compare`: the rate at which two identical programs (same code,
   different source text, so different builds) are called significantly
   different (target <= 1 %), and the rate at which a real 1.1x and 2x speedup
   is detected (target >= 95 %). The true speedup of each pair is measured
   separately (median of many min-of-5 samples) and printed.

Every figure is a median or a rate over repeated trials in the same run.
`--quick` shrinks the trial counts (~3 min); the full run takes ~10 min on
2 cores (more when the machine is loaded: wall-time rows then run to their
sample cap). Rows for wall and instructions use fewer measurements than cpu
rows by default (wall: slow to converge and known to be noisy; instructions:
exact). The programs read their size from stdin, so the compiler cannot
fold the work away.

    python3 benchmarks/timing_noise.py [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics as st
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from codegym import timing as T  # noqa: E402
from codegym.core.limits import Limits  # noqa: E402
from codegym.sandbox import make_sandbox  # noqa: E402
from codegym.timing.metrics import instructions_limits  # noqa: E402

PY_SRC = """import sys
n = int(sys.stdin.readline()) * {num} // {den}
s = 0
for i in range(n):
    s += i * i % 7
print(s)
# variant {tag}
"""

C_SRC = """#include <stdio.h>
/* variant {tag} */
int main(void) {{
    long n = 0;
    if (scanf("%ld", &n) != 1) return 1;
    n = n * {num} / {den};
    unsigned long s = 0;
    for (long i = 0; i < n; i++) s += (unsigned long)(i * i) % 7;
    printf("%lu\\n", s);
    return 0;
}}
"""

#: loop sizes giving ~50 ms (noise table) and ~10 ms (comparison trials) of CPU here
SIZES = {"python": {"noise": 560_000, "cmp": 110_000}, "c": {"noise": 45_000_000, "cmp": 9_000_000}}
SRC = {"python": PY_SRC, "c": C_SRC}
FILE = {"python": "main.py", "c": "main.c"}


def build(sb, lang: str, tag: str, factor: float = 1.0):
    """The program, doing 1/factor of the work (a speedup of `factor`)."""
    num, den = {1.0: (1, 1), 1.1: (10, 11), 2.0: (1, 2), 1.01: (100, 101)}[factor]
    b = sb.build(lang, {FILE[lang]: SRC[lang].format(tag=tag, num=num, den=den)})
    if not b.ok:
        raise SystemExit(f"{lang} program did not build: {b.result.message if b.result else ''}")
    return b


def cv(xs: list[float]) -> float:
    """Coefficient of variation of the finite values (nan if fewer than two)."""
    xs = [float(x) for x in xs if x is not None and math.isfinite(x)]
    if len(xs) < 2 or not st.mean(xs):
        return math.nan
    return st.stdev(xs) / st.mean(xs)


def pct(x: float) -> str:
    return f"{100 * x:.2f}%"


# --------------------------------------------------------------------------- table 1

NOISE_TARGET = {"python": 0.02, "c": 0.01}


def noise_rows(sb, langs: list[str], metrics: list[str], n_meas: int, n_other: int) -> list[dict]:
    rows = []
    for lang in langs:
        b = build(sb, lang, "noise")
        stdin = f"{SIZES[lang]['noise']}\n"
        for metric in metrics:
            if metric == "instructions":
                try:
                    T.check_metric(b, metric)
                except T.UnsupportedMetricError as e:
                    if lang == "c":
                        print(f"  [skip] {lang}/{metric}: {e}", file=sys.stderr)
                    continue
            k = n_meas if metric == "cpu" else n_other
            # baseline of the same run: single executions (what a one-run reward sees)
            singles = []
            for _ in range(k):
                if metric == "instructions":
                    r = sb.run(b, stdin=stdin, wrapper=T.VALGRIND_WRAPPER,
                               limits=instructions_limits(Limits()))
                    c = T.parse_valgrind_instructions(r.stderr)
                    singles.append(float(c.total) if c else math.nan)
                else:
                    r = sb.run(b, stdin=stdin)
                    singles.append(r.cpu_s if metric == "cpu" else r.wall_s)
            ms, secs = [], []
            for _ in range(k):
                t0 = time.monotonic()
                ms.append(T.measure(sb, b, [stdin], metric=metric))
                secs.append(time.monotonic() - t0)
            bad = [m.reason for m in ms if not m.ok]
            if bad:
                print(f"  [warn] {lang}/{metric}: {len(bad)} invalid measurements: {bad[0]}", file=sys.stderr)
            med = [m.median for m in ms if m.ok]
            norm = [m.normalized for m in ms if m.ok and m.normalized]
            target = 0.0 if metric == "instructions" else NOISE_TARGET[lang]
            row = {
                "lang": lang, "metric": metric, "measurements": len(med),
                "median_value": st.median(med) if med else None,
                "single_run_cv": cv(singles), "measure_cv": cv(med),
                "normalized_cv": cv(norm) if len(norm) > 1 else None,
                "ratio": (cv(med) / cv(singles)) if cv(singles) > 0 else None,
                "target": target,
                "samples_per_measure": st.median([m.n for m in ms]),
                "converged": sum(m.converged for m in ms) / len(ms),
                "s_per_measure": st.median(secs),
                "load": os.getloadavg()[0],
            }
            row["pass"] = bool(row["measure_cv"] <= target + 1e-15) and not bad
            rows.append(row)
            print(f"  {lang:6s} {metric:12s} single-run CV {pct(row['single_run_cv']):>7s}  "
                  f"measure CV {pct(row['measure_cv']):>7s}", file=sys.stderr, flush=True)
    return rows


def print_noise(rows: list[dict]) -> None:
    print("\nTable 1 -- noise of measure(): CV of the medians of repeated measurements "
          "of one ~50 ms program")
    print("(1-run CV = baseline of the same run: single executions; ratio = measure CV / 1-run CV; "
          "norm CV = of median/calibration; load = 1-min load average after the row)")
    hdr = (f"{'lang':7s} {'metric':12s} {'meas':>4s} {'value':>12s} {'1-run CV':>9s} "
           f"{'measure CV':>10s} {'ratio':>6s} {'norm CV':>8s} {'target':>7s} {'samples':>7s} "
           f"{'conv':>5s} {'s/meas':>6s} {'load':>5s}  ok")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        val = (f"{r['median_value']:.0f}" if r["metric"] == "instructions"
               else f"{1000 * r['median_value']:.2f} ms") if r["median_value"] else "-"
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        norm = pct(r["normalized_cv"]) if r["normalized_cv"] is not None else "-"
        print(f"{r['lang']:7s} {r['metric']:12s} {r['measurements']:4d} {val:>12s} "
              f"{pct(r['single_run_cv']):>9s} {pct(r['measure_cv']):>10s} {ratio:>6s} {norm:>8s} "
              f"{'<=' + pct(r['target']):>7s} {r['samples_per_measure']:7.0f} "
              f"{100 * r['converged']:4.0f}% {r['s_per_measure']:6.2f} {r['load']:5.1f}  "
              f"{'PASS' if r['pass'] else 'MISS'}")


# --------------------------------------------------------------------------- table 2

def true_speedup(sb, ba, bb, stdin: str, n: int = 15) -> float:
    """Reference speedup: median of n paired ratios of min-of-5 samples, runs interleaved."""
    ratios = []
    for i in range(n):
        best = {"a": math.inf, "b": math.inf}
        for j in range(5):
            for which in (("a", "b") if (i + j) % 2 == 0 else ("b", "a")):
                r = sb.run(ba if which == "a" else bb, stdin=stdin)
                best[which] = min(best[which], r.cpu_s)
        ratios.append(best["a"] / best["b"])
    return st.median(ratios)


def compare_rows(sb, langs: list[str], n_identical: int, n_detect: int, budget_s: float,
                 method: str) -> list[dict]:
    rows = []
    for lang in langs:
        n0 = SIZES[lang]["cmp"]
        ba = build(sb, lang, "a")
        cases = [("identical", 1.0, n_identical, "<=1%"), ("1.1x", 1.1, n_detect, ">=95%"),
                 ("2x", 2.0, n_detect, ">=95%")]
        for name, factor, trials, target in cases:
            bb = build(sb, lang, "b", factor)
            stdin = f"{n0}\n"
            truth = true_speedup(sb, ba, bb, stdin)
            sig, pairs, secs, speedups, invalid = 0, [], [], [], 0
            wrong_way = 0
            for _ in range(trials):
                t0 = time.monotonic()
                c = T.compare(sb, ba, bb, [stdin], metric="cpu", budget_s=budget_s, method=method,
                              calibrate=False)
                secs.append(time.monotonic() - t0)
                if not c.ok:
                    invalid += 1
                    continue
                pairs.append(c.n_pairs)
                speedups.append(c.speedup)
                if c.significant:
                    sig += 1
                    if factor > 1.0 and c.speedup < 1.0:
                        wrong_way += 1
            valid = trials - invalid
            rate = sig / valid if valid else math.nan
            ok = (rate <= 0.01) if factor == 1.0 else (rate >= 0.95 and wrong_way == 0)
            rows.append({"lang": lang, "case": name, "true_speedup": truth, "trials": valid,
                         "load": os.getloadavg()[0],
                         "significant_rate": rate, "wrong_direction": wrong_way, "target": target,
                         "median_pairs": st.median(pairs) if pairs else None,
                         "median_speedup": st.median(speedups) if speedups else None,
                         "s_per_trial": st.median(secs), "pass": ok and invalid == 0})
            print(f"  {lang:6s} {name:9s} significant {sig}/{valid}", file=sys.stderr, flush=True)
    return rows


def instr_rows(sb) -> list[dict]:
    """compare() on instruction counts: exact, one trial each."""
    rows = []
    ba = build(sb, "c", "a")
    try:
        T.check_metric(ba, "instructions")
    except T.UnsupportedMetricError as e:
        print(f"  [skip] instructions compare: {e}", file=sys.stderr)
        return rows
    n0 = 2_000_000
    for name, factor in (("identical", 1.0), ("1.01x", 1.01), ("1.1x", 1.1)):
        bb = build(sb, "c", "b", factor)
        c = T.compare(sb, ba, bb, [f"{n0}\n"], metric="instructions", calibrate=False)
        rows.append({"lang": "c", "case": name, "metric": "instructions", "speedup": c.speedup,
                     "ci": c.ci, "significant": c.significant, "ok": c.ok, "reason": c.reason})
    return rows


def print_compare(rows: list[dict], irows: list[dict], method: str) -> None:
    print(f"\nTable 2 -- compare(metric='cpu', method='{method}'): rate of 'significant' "
          "over repeated trials (~10 ms programs)")
    print("(case = cut in work; true = the pair's speedup measured separately: fixed start-up "
          "costs make a 2x cut in work less than 2x in time; wrong = significant the wrong way)")
    hdr = (f"{'lang':7s} {'case':10s} {'true':>6s} {'trials':>6s} {'signif.':>8s} {'target':>6s} "
           f"{'wrong':>5s} {'est.':>6s} {'pairs':>5s} {'s/trial':>7s} {'load':>5s}  ok")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        est = f"{r['median_speedup']:.3f}" if r["median_speedup"] else "-"
        pairs = f"{r['median_pairs']:.0f}" if r["median_pairs"] else "-"
        print(f"{r['lang']:7s} {r['case']:10s} {r['true_speedup']:6.3f} {r['trials']:6d} "
              f"{100 * r['significant_rate']:7.1f}% {r['target']:>6s} {r['wrong_direction']:5d} "
              f"{est:>6s} {pairs:>5s} {r['s_per_trial']:7.2f} {r['load']:5.1f}  "
              f"{'PASS' if r['pass'] else 'MISS'}")
    if irows:
        print("\ncompare(metric='instructions') (exact; C):")
        for r in irows:
            lo, hi = r["ci"] if r["ci"] else (math.nan, math.nan)
            print(f"  {r['case']:10s} speedup {r['speedup']:.6f}  ci [{lo:.6f}, {hi:.6f}]  "
                  f"significant={r['significant']}  ok={r['ok']} {r['reason']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer trials (~2-3 min)")
    ap.add_argument("--measurements", type=int,
                    help="measurements per cpu noise row (default 30; quick 10)")
    ap.add_argument("--other-measurements", type=int,
                    help="measurements per wall/instructions row (default 6: wall is known to be "
                         "noisy and slow to converge, instructions are exact; quick 4)")
    ap.add_argument("--identical", type=int,
                    help="identical-program trials per language (default 100; quick 20)")
    ap.add_argument("--detect", type=int, help="trials per speedup per language (default 20; quick 8)")
    ap.add_argument("--budget", type=float, default=8.0, help="budget_s of each compare trial")
    ap.add_argument("--method", default="wilcoxon", choices=["wilcoxon", "t", "bootstrap"])
    ap.add_argument("--langs", default="python,c")
    ap.add_argument("--skip-noise", action="store_true")
    ap.add_argument("--skip-compare", action="store_true")
    ap.add_argument("--json", help="also write the rows to this file")
    a = ap.parse_args(argv)
    n_meas = a.measurements or (10 if a.quick else 30)
    n_other = a.other_measurements or (4 if a.quick else 6)
    n_id = a.identical or (20 if a.quick else 100)
    n_det = a.detect or (8 if a.quick else 20)
    langs = [x.strip() for x in a.langs.split(",") if x.strip()]

    sb = make_sandbox("local")
    t0 = time.monotonic()
    cal = T.calibration_factor(sb)
    print(f"codegym timing benchmark: isolation={sb.isolation} cpus={os.cpu_count()} "
          f"calibration={1000 * cal:.2f} ms (cpu) load={os.getloadavg()[0]:.2f}")
    out: dict = {"calibration_s": cal}
    if not a.skip_noise:
        rows = noise_rows(sb, langs, ["cpu", "wall", "instructions"], n_meas, n_other)
        print_noise(rows)
        out["noise"] = rows
    if not a.skip_compare:
        crow = compare_rows(sb, langs, n_id, n_det, a.budget, a.method)
        irows = instr_rows(sb) if "c" in langs else []
        print_compare(crow, irows, a.method)
        out["compare"], out["compare_instructions"] = crow, irows
    print(f"\ntotal {time.monotonic() - t0:.0f} s, load average now {os.getloadavg()[0]:.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
