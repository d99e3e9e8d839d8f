"""How precise and how honest are codegym's timings on a loaded, drifting machine? (codegym.timing)

Runs two phases (default 20 and 40 minutes): quiet (whatever else the machine is
doing), then with a noisy neighbour -- a process burning one core in random bursts
(on and off for exponential times of mean 0.3 s). In each phase it goes round and
round, spreading every row's measurements over the whole phase so that the machine's
drift counts: per round, one `measure` of each ~50 ms program (Python and C, metric
cpu), one `compare` of each pair of programs (identical, and a real 1.1x cut in work),
one single run of each program (the 1-run baseline) and, every few rounds, an
instruction count of each program (C and Python: the `instructions` metric). Then it
prints, per phase, with the load average over it:

1. Noise of `measure`: CV of the medians of the repeated measurements (drift-corrected
   by the speed probe, the default), the same for the uncorrected (raw) medians and
   the normalised ones, next to the CV of single runs. Targets with the neighbour:
   Python <= 3 %, C <= 2 %, instruction counts exact (CV 0).
2. Decisions of `compare` (defaults: confidence sequence, alpha 0.01, <= 30 pairs):
   the rate of "significant" for identical programs (target <= 1 %) and for the 1.1x
   pair (target >= 95 %, never the wrong way), median pairs per decision; and the
   false-positive rate of the same sequential rule replayed on resampled real
   identical-program pairs (thousands of replays: the live trials alone cannot show 1 %).
3. What helps: the probe (CV raw vs corrected, table 1), spike rejection (how often,
   and how the rejected pairs' log-ratios spread next to the kept ones), the random
   order within pairs (the order effect in identical comparisons it cancels).
4. Near-ties against a kept baseline (issue 32): the baseline program's concurrent passes
   kept (`codegym.timing.keep`, measured again when the probe says the machine moved or
   after 10 minutes) and, per round, a new identical program and the 1.1x one looked at
   (`NearTie`, the futility rule only, up to 4 passes): how often and after how many
   passes the identical one is stopped (a tie decided cheaply), and how often the 1.1x
   one is (a real speedup lost: target <= 5 %), with how often the kept baseline was reused.

    python3 benchmarks/timing_noise.py [--minutes M] [--quick] [--ties-only] [--json FILE]

`--quick`: 3 minutes per phase. The programs read their size from stdin, so the
compiler cannot fold the work away.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import random
import signal
import statistics as st
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

try:
    import codegym.timing.kept as K  # noqa: E402
except ImportError:  # (a checkout from before issue 32: no kept measurements, no table 4)
    K = None  # type: ignore[assignment]
import codegym.timing.probe as P  # noqa: E402
from codegym import timing as T  # noqa: E402
from codegym.sandbox import make_sandbox  # noqa: E402
from codegym.timing.measurement import Sampler, as_requests  # noqa: E402
from codegym.timing.metrics import DEFAULT_MIN_EFFECT, DEFAULT_MIN_WORTH  # noqa: E402
from codegym.timing.sequential import log_wealth_paths  # noqa: E402

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

#: loop sizes giving ~50 ms of CPU here, for every table; instruction counts use a tenth
SIZES = {"python": 650_000, "c": 55_000_000}
SRC = {"python": PY_SRC, "c": C_SRC}
FILE = {"python": "main.py", "c": "main.c"}
NOISE_TARGET = {"python": 0.03, "c": 0.02}
ALPHA = 0.01  # compare's default


def build(sb, lang: str, tag: str, factor: float = 1.0):
    """The program, doing 1/factor of the work (a speedup of `factor`)."""
    num, den = {1.0: (1, 1), 1.1: (10, 11)}[factor]
    b = sb.build(lang, {FILE[lang]: SRC[lang].format(tag=tag, num=num, den=den)})
    if not b.ok:
        raise SystemExit(f"{lang} program did not build: {b.result.message if b.result else ''}")
    return b


def cv(xs) -> float:
    xs = [float(x) for x in xs if x is not None and math.isfinite(x)]
    if len(xs) < 2 or not st.mean(xs):
        return math.nan
    return st.stdev(xs) / st.mean(xs)


def pct(x: float | None, d: int = 2) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{100 * x:.{d}f}%"


# --------------------------------------------------------------------------- the neighbour

def _burn(seed: int, mean_on: float, mean_off: float) -> None:
    rng = random.Random(seed)
    while True:
        end = time.monotonic() + min(rng.expovariate(1 / mean_on), 5 * mean_on)
        x = 0
        while time.monotonic() < end:
            for i in range(2000):
                x += i * i
        time.sleep(min(rng.expovariate(1 / mean_off), 5 * mean_off))


class Neighbour:
    """A process burning one core in random bursts (exponential on/off times), until stopped."""

    def __init__(self, seed: int = 0, mean_on: float = 0.3, mean_off: float = 0.3):
        self.proc = mp.get_context("spawn").Process(target=_burn, args=(seed, mean_on, mean_off), daemon=True)

    def __enter__(self):
        self.proc.start()
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.join(5)


# --------------------------------------------------------------------------- one phase

def run_phase(sb, progs: dict, minutes: float, instr_every: int, log, ties_only: bool = False) -> dict:
    """Rounds of measurements until `minutes` are spent; every record of the phase. (Per round,
    two comparisons of the identical pair per language: its rate needs the most trials.)
    `ties_only`: table 4's near-ties alone (many more of them per minute)."""
    rec: dict = {"measure": [], "compare": [], "single": [], "instructions": [], "load": [], "ties": []}
    t_end = time.monotonic() + 60 * minutes
    rnd = 0
    while time.monotonic() < t_end:
        rec["load"].append(os.getloadavg()[0])
        if not ties_only:
            measure_round(sb, progs, rec, instr_every and rnd % instr_every == 0)
        for lang, p in progs.items():
            if K is not None:  # (a checkout from before issue 32 has no near-tie rule: no table 4)
                rec["ties"].extend(near_ties(sb, lang, p))
        rnd += 1
        done = [x for x in rec["compare"] if x["ok"]]
        log(f"  round {rnd}: load {os.getloadavg()[0]:.1f}, {len(rec['measure'])} measurements, "
            f"{len(done)} comparisons ({sum(x['significant'] for x in done if x['case'] == 'identical')} "
            f"identical significant), {len(rec['ties'])} near-ties")
    rec["load"].append(os.getloadavg()[0])
    return rec


def measure_round(sb, progs: dict, rec: dict, count: bool) -> None:
    """Tables 1-3's runs of one round: a single run, a measurement and three comparisons per
    language, and (`count`) an instruction count."""
    for lang, p in progs.items():
        r = sb.run(p["a"], stdin=p["stdin"])
        rec["single"].append({"lang": lang, "cpu": r.cpu_s})
        t0 = time.monotonic()
        m = T.measure(sb, p["a"], [p["stdin"]])
        rec["measure"].append({
            "lang": lang, "ok": m.ok, "reason": m.reason, "median": m.median,
            "raw_median": float(np.median(m.raw_samples)) if m.raw_samples else m.median,
            "normalized": m.normalized, "speed": m.speed, "n": m.n, "converged": m.converged,
            "s": time.monotonic() - t0})
    for lang, p in progs.items():
        for case in ("identical", "1.1x", "identical"):
            t0 = time.monotonic()
            c = T.compare(sb, p["a"], p[case], [p["stdin"]], calibrate=False, seed=len(rec["compare"]))
            rec["compare"].append({
                "lang": lang, "case": case, "ok": c.ok, "reason": c.reason, "speedup": c.speedup,
                "ci": c.ci, "significant": c.significant, "stopped": c.stopped, "n_pairs": c.n_pairs,
                "rejected": c.rejected, "log_ratios": c.log_ratios, "a_first": c.a_first,
                "rejected_log_ratios": c.rejected_log_ratios, "s": time.monotonic() - t0})
    if count:
        for lang, p in progs.items():
            t0 = time.monotonic()
            m = T.measure(sb, p["a"], [p["stdin_instr"]], metric="instructions", calibrate=False)
            rec["instructions"].append({"lang": lang, "ok": m.ok, "reason": m.reason,
                                        "samples": m.samples, "s": time.monotonic() - t0})


#: table 4: a new kept baseline every this many rounds, so that a share of the looks is seeded (cold)
SEED_EVERY = 3
_SEEDS: dict[str, int] = {}


def near_ties(sb, lang: str, p: dict) -> list[dict]:
    """One look-through of a fresh identical program and of the 1.1x one against the kept
    baseline passes of program a (the futility rule alone: no slow bound), as the rewards
    look (`codegym.wrappers.baseline.look_at`): the kept passes seeded by the looks
    (`KeptPasses`: one baseline pass before the first look when none is kept, one before
    each later look while fewer than KEPT_PASSES), every pass divided by the machine's
    slowness over it (`SpeedTrack`, where the checkout has it); a candidate the looks
    leave undecided is scored from them (`looked_times` and the staged reward's noise
    gate, where the checkout has it)."""
    if not hasattr(K, "KeptPasses"):
        return _near_ties_kept_up_front(sb, lang, p)
    tracked = hasattr(P, "SpeedTrack")  # (a checkout before the speed track: one reading right after each pass)
    track = P.SpeedTrack(sb, "cpu") if tracked else None
    speed = track.start() if tracked else K.slowness_now(sb, "cpu")

    def taker(b):
        if tracked:
            return K.pass_taker(sb, b, [p["stdin"]], "cpu", track=track)
        s = Sampler(sb, b, as_requests([p["stdin"]]), "cpu", None)

        def take():
            v = s.concurrent_pass()
            if v is None:
                raise RuntimeError(s.error or "a run failed")
            return v, K.slowness_now(sb, "cpu")
        return take

    out = []
    _SEEDS[lang] = _SEEDS.get(lang, 0) + 1  # every SEED_EVERY rounds the kept passes start afresh (cold)
    key = ("timing_noise", lang, _SEEDS[lang] // SEED_EVERY)
    base_take = taker(p["a"])
    for case in ("identical", "1.1x"):
        extra = {"recheck": (lambda: P.slowness_now(sb, "cpu"))} if tracked else {}
        base = K.KeptPasses(sb, key, "cpu", base_take, speed_now=speed, **extra)
        how, n0 = dict(base.how), base.n
        if base.n == 0:
            base.grow()
        build_ = build(sb, lang, f"tie{time.monotonic_ns()}", 1.1 if case == "1.1x" else 1.0)
        tie = K.NearTie(bound=None)
        take = taker(build_)
        looks, spent = 0, base.added
        bounded = hasattr(K, "LOOK_PASSES")  # (the cost bound: scored from the looks when they lean to a tie)
        ref = base.reference()
        while looks < K.MAX_LOOKS and not tie.stopped and not (tracked and tie.clear()):
            if looks and base.short:
                base.grow()
                spent += 1
                ref = base.reference()
            if bounded and spent >= K.LOOK_PASSES and tie.leans_tie(ref):
                break
            try:
                v, sp = take()
            except Exception:  # noqa: BLE001 -- a failed run: no decision
                break
            spent += 1
            tie.observe(v / (sp or 1.0), ref)
            looks += 1
        scored = None  # an undecided tie: scored from its looks ("faster" or "tie"), or "measured"
        if bounded and not tie.stopped and tie.looks:
            if tie.clear() or not tie.leans_tie(ref):
                scored = "measured"  # (the rewards measure it: table 2 gives that rule's errors)
            else:
                t, tb, noise, noise_b = K.looked_times(tie, ref, *K.pass_prior(sb))
                scored = "faster" if tb / t - 1.0 > math.hypot(noise, noise_b) else "tie"
        out.append({"lang": lang, "case": case, "stopped": tie.stopped, "looks": looks, "kept": how["kept"],
                    "why": how["why"], "scale": ref.scale, "kept_passes": n0, "added": base.added,
                    "scored": scored})
    return out


def _near_ties_kept_up_front(sb, lang: str, p: dict) -> list[dict]:
    """`near_ties` as a checkout before the seeded kept passes looked: the baseline's 5 passes
    after a warm-up measured up front, one probe run per candidate pass."""
    speed = K.slowness_now(sb, "cpu")

    def compute():
        ps = K.measure_passes(sb, p["a"], [p["stdin"]], n=5)
        return ps, ps.speed

    passes, how = K.keep(sb, ("timing_noise", lang), compute, speed_now=speed)
    ref = K.Reference.of_passes(passes)
    out = []
    for case in ("identical", "1.1x"):
        build_ = build(sb, lang, f"tie{time.monotonic_ns()}", 1.1 if case == "1.1x" else 1.0)
        tie = K.NearTie(bound=None)
        s = Sampler(sb, build_, as_requests([p["stdin"]]), "cpu", None)
        looks = 0
        while looks < 4 and not tie.stopped:
            v = s.concurrent_pass()
            if v is None:
                break
            tie.observe(v / (K.slowness_now(sb, "cpu", runs=1) or 1.0), ref)
            looks += 1
        out.append({"lang": lang, "case": case, "stopped": tie.stopped, "looks": looks, "kept": how["kept"],
                    "why": how["why"], "scale": ref.scale, "kept_passes": len(passes.seconds), "added": 0})
    return out


def tie_rows(rec: dict) -> list[dict]:
    rows = []
    for lang in NOISE_TARGET:
        for case in ("identical", "1.1x"):
            xs = [t for t in rec["ties"] if t["lang"] == lang and t["case"] == case]
            if not xs:
                continue
            stopped = [t for t in xs if t["stopped"]]
            rows.append({"lang": lang, "case": case, "trials": len(xs), "stopped": len(stopped) / len(xs),
                         "median_looks": st.median(t["looks"] for t in stopped) if stopped else None,
                         "one_look": sum(bool(t["stopped"]) and t["looks"] == 1 for t in xs) / len(xs),
                         "kept": sum(t["kept"] for t in xs) / len(xs),
                         "remeasured": sorted({t["why"].split(" (")[0] for t in xs if t["why"] and t["why"] != "first"}),
                         "scale": st.median(t["scale"] for t in xs),
                         "undecided": sum(t.get("scored") in ("faster", "tie") for t in xs) / len(xs),
                         "measured": sum(t.get("scored") == "measured" for t in xs) / len(xs),
                         "scored_faster": sum(t.get("scored") == "faster" for t in xs) / len(xs),
                         "lost": sum(bool(t["stopped"]) or t.get("scored") == "tie" for t in xs) / len(xs),
                         "short": [t for t in xs if (t.get("kept_passes") or 0) < 5],
                         "pass": (sum(bool(t["stopped"]) or t.get("scored") == "tie" for t in xs) / len(xs) <= 0.05)
                         if case == "1.1x" else
                         (sum(t.get("scored") == "faster" for t in xs) / len(xs) <= 0.01)})
    return rows


# --------------------------------------------------------------------------- analysis

def noise_rows(rec: dict) -> list[dict]:
    rows = []
    for lang in NOISE_TARGET:
        ms = [m for m in rec["measure"] if m["lang"] == lang]
        if not ms:
            continue
        ok = [m for m in ms if m["ok"]]
        singles = [s["cpu"] for s in rec["single"] if s["lang"] == lang]
        row = {"lang": lang, "metric": "cpu", "measurements": len(ok), "invalid": len(ms) - len(ok),
               "median_ms": 1000 * st.median(m["median"] for m in ok) if ok else None,
               "single_run_cv": cv(singles), "measure_cv": cv(m["median"] for m in ok),
               "raw_cv": cv(m["raw_median"] for m in ok), "normalized_cv": cv(m["normalized"] for m in ok),
               "speed_range": (min(m["speed"] for m in ok if m["speed"]), max(m["speed"] for m in ok if m["speed"]))
               if any(m["speed"] for m in ok) else None,
               "samples": st.median(m["n"] for m in ok) if ok else None,
               "converged": sum(m["converged"] for m in ok) / max(1, len(ok)),
               "s_per_measure": st.median(m["s"] for m in ms), "target": NOISE_TARGET[lang]}
        row["pass"] = bool(ok) and row["measure_cv"] <= row["target"] and not row["invalid"]
        rows.append(row)
    for lang in NOISE_TARGET:
        ms = [m for m in rec["instructions"] if m["lang"] == lang]
        if not ms:
            continue
        vals = [v for m in ms if m["ok"] for v in m["samples"]]
        native = [r["median_ms"] for r in rows if r["lang"] == lang and r.get("median_ms")]
        rows.append({"lang": lang, "metric": "instructions", "measurements": sum(m["ok"] for m in ms),
                     "invalid": sum(not m["ok"] for m in ms), "value": st.median(vals) if vals else None,
                     "distinct": len(set(vals)), "measure_cv": cv(vals) if len(vals) > 1 else math.nan,
                     "s_per_measure": st.median(m["s"] for m in ms),
                     # a counted run does a tenth of the timed program's work
                     "native_ms": native[0] / 10 if native else None,
                     "reasons": [m["reason"] for m in ms if not m["ok"]][:2],
                     "pass": bool(vals) and len(set(vals)) == 1 and all(m["ok"] for m in ms)})
    return rows


def replay_false_positive(d_pool: list[float], trials: int, max_pairs: int = 30, seed: int = 0) -> float | None:
    """The sequential rule of `compare` (look after every pair; significant once the
    interval lies beyond +-min_effect, futile once inside +-min_worth) replayed on
    sequences resampled from real identical-program log-ratios: its false-positive rate.
    (On the wealth at the band's edges and centre: a centre is outside the interval
    exactly when its wealth crossed 1/alpha.)"""
    if len(d_pool) < 10:
        return None
    rng = np.random.default_rng(seed)
    e, w = math.log1p(DEFAULT_MIN_EFFECT["cpu"]), math.log1p(DEFAULT_MIN_WORTH["cpu"])
    bar = math.log(1 / ALPHA)
    pool = np.asarray(d_pool)
    # centre the pool: the replay asks about two builds of equal speed, whatever bias real builds had
    pool = pool - np.median(pool)
    false = 0
    for _ in range(trials):
        d = rng.choice(pool, size=max_pairs, replace=True)
        paths = log_wealth_paths(d, [-w, -e, 0.0, e, w]) >= bar
        sig = paths[1] & paths[2] & paths[3]   # the whole band [-e, e] excluded
        fut = paths[0] & paths[4]              # both +-w excluded (the interval inside them)
        t_sig = int(np.argmax(sig)) if sig.any() else max_pairs
        t_fut = int(np.argmax(fut)) if fut.any() else max_pairs
        false += t_sig < max_pairs and t_sig <= t_fut
    return false / trials


def robust_scale(x) -> float | None:
    x = np.asarray(list(x), dtype=float)
    if len(x) < 3:
        return None
    return float(1.4826 * np.median(np.abs(x - np.median(x))))


def compare_rows(rec: dict, replays: int) -> list[dict]:
    rows = []
    for lang in NOISE_TARGET:
        for case in ("identical", "1.1x"):
            cs = [c for c in rec["compare"] if c["lang"] == lang and c["case"] == case]
            if not cs:
                continue
            ok = [c for c in cs if c["ok"]]
            sig = [c for c in ok if c["significant"]]
            wrong = [c for c in sig if case == "1.1x" and c["speedup"] < 1.0]
            pooled = [x for c in ok for x in c["log_ratios"]]
            rate = len(sig) / len(ok) if ok else math.nan
            row = {"lang": lang, "case": case, "trials": len(ok), "invalid": len(cs) - len(ok),
                   "significant_rate": rate, "wrong_direction": len(wrong),
                   "true_speedup": math.exp(float(np.median(pooled))) if pooled else None,
                   "median_speedup": st.median(c["speedup"] for c in ok) if ok else None,
                   "median_pairs": st.median(c["n_pairs"] for c in ok) if ok else None,
                   "undecided": sum(c["stopped"] in ("max_pairs", "budget") for c in ok),
                   "s_per_trial": st.median(c["s"] for c in cs),
                   "rejected_share": (sum(c["rejected"] for c in ok)
                                      / max(1, sum(c["rejected"] + c["n_pairs"] for c in ok)))}
            if case == "identical":
                row["target"] = "<=1%"
                row["replay_rate"] = replay_false_positive(pooled, replays)
                row["pass"] = bool(ok) and rate <= 0.01 and not row["invalid"]
            else:
                row["target"] = ">=95%"
                row["pass"] = bool(ok) and rate >= 0.95 and not wrong and not row["invalid"]
            rows.append(row)
    return rows


def helps_rows(rec: dict) -> list[dict]:
    """Spike rejection and the random order within pairs, from the comparisons' own data."""
    rows = []
    for lang in NOISE_TARGET:
        ok = [c for c in rec["compare"] if c["lang"] == lang and c["ok"]]
        if not ok:
            continue
        # log-ratios around each comparison's own estimate, so that both cases pool
        kept = [x - math.log(c["speedup"]) for c in ok for x in c["log_ratios"]]
        rej = [x - math.log(c["speedup"]) for c in ok for x in c["rejected_log_ratios"]]
        ident = [c for c in ok if c["case"] == "identical"]
        af = [x for c in ident for x, f in zip(c["log_ratios"], c["a_first"]) if f]
        bf = [x for c in ident for x, f in zip(c["log_ratios"], c["a_first"]) if not f]
        order = (float(np.mean(af)) - float(np.mean(bf))) / 2 if af and bf else None
        se = (math.sqrt(np.var(af, ddof=1) / len(af) + np.var(bf, ddof=1) / len(bf)) / 2
              if len(af) > 1 and len(bf) > 1 else None)
        rows.append({"lang": lang, "kept_pairs": len(kept), "rejected_pairs": len(rej),
                     "kept_scale": robust_scale(kept), "rejected_scale": robust_scale(rej),
                     "order_effect": order, "order_effect_se": se})
    return rows


# --------------------------------------------------------------------------- printing

def print_ties(trows: list[dict]) -> None:
    print("\nTable 4 -- near-ties against a kept baseline (futility rule alone, <= 4 concurrent passes, "
          "alpha 0.1, worth 5 %)")
    print("(stopped: the share of candidates the rule stopped as no speedup worth rewarding -- for the "
          "identical program a tie decided, for the 1.1x one a real speedup lost (target <= 5 %); kept: "
          "the share of looks that reused the kept baseline; scale: the kept reference's scale; seeded: "
          "stopped / trials among those that began with fewer than 5 kept passes -- the first submissions; "
          "undecided: neither stopped nor clearly faster, leaning to a tie, scored from the looks; measured: "
          "undecided leaning to a speedup, or clearly faster (the rewards measure those); scored faster: "
          "of all trials, those the looks' score found faster (identical: a false speedup, target <= 1 %); "
          "lost: stopped or scored as a tie (1.1x: a real speedup lost, target <= 5 %))")
    hdr = (f"{'lang':7s} {'case':10s} {'trials':>6s} {'stopped':>8s} {'1 look':>7s} {'looks':>5s} {'kept':>6s} "
           f"{'scale':>6s} {'seeded':>7s} {'undecided':>9s} {'measured':>8s} {'sc.faster':>9s} {'lost':>6s}  ok")
    print(hdr)
    print("-" * len(hdr))
    for r in trows:
        ok = "" if r["pass"] is None else ("PASS" if r["pass"] else "MISS")
        print(f"{r['lang']:7s} {r['case']:10s} {r['trials']:6d} {pct(r['stopped'], 1):>8s} {pct(r['one_look'], 0):>7s} "
              f"{r['median_looks'] or 0:5.0f} {pct(r['kept'], 0):>6s} {pct(r['scale'], 1):>6s} "
              f"{sum(bool(t['stopped']) for t in r['short']):>3d}/{len(r['short']):<3d} "
              f"{pct(r['undecided'], 0):>9s} {pct(r['measured'], 0):>8s} {pct(r['scored_faster'], 1):>9s} "
              f"{pct(r['lost'], 1):>6s}  {ok}"
              + (f"  (measured again: {', '.join(r['remeasured'])})" if r["remeasured"] else ""))


def print_phase(name: str, rec: dict, nrows: list[dict], crows: list[dict], hrows: list[dict], minutes: float) -> None:
    loads = rec["load"]
    print(f"\n=== phase: {name} -- {minutes:.1f} min, load average (1 min) over the phase: "
          f"mean {st.mean(loads):.2f}, min {min(loads):.2f}, max {max(loads):.2f} ===")
    print("\nTable 1 -- noise of measure(): CV of the medians of repeated measurements of one ~50 ms program")
    print("(measure CV: drift-corrected medians, the default; raw CV: the same measurements' uncorrected "
          "medians; norm CV: normalized; 1-run CV: single runs; speed: range of the probe's slowness)")
    hdr = (f"{'lang':7s} {'metric':12s} {'meas':>4s} {'value':>13s} {'1-run CV':>9s} {'measure CV':>10s} "
           f"{'raw CV':>7s} {'norm CV':>8s} {'target':>7s} {'samples':>7s} {'conv':>5s} {'s/meas':>7s}  "
           f"{'speed':>11s}  ok")
    print(hdr)
    print("-" * len(hdr))
    for r in nrows:
        if r["metric"] == "instructions":
            val = f"{r['value']:.0f}" if r["value"] else "-"
            print(f"{r['lang']:7s} {'instructions':12s} {r['measurements']:4d} {val:>13s} {'-':>9s} "
                  f"{pct(r['measure_cv']):>10s} {'-':>7s} {'-':>8s} {'exact':>7s} {'2':>7s} {'-':>5s} "
                  f"{r['s_per_measure']:7.2f}  {'':11s}  {'PASS' if r['pass'] else 'MISS'}"
                  f"  ({r['distinct']} distinct count(s) over {r['measurements']} measurements of 2 counted "
                  f"runs; {r['s_per_measure'] / 2:.2f} s per counted run of a {r['native_ms'] or math.nan:.1f} "
                  "ms program)")
            for reason in r.get("reasons") or []:
                print(f"      {reason[:200]}")
            continue
        sp = f"{r['speed_range'][0]:.3f}-{r['speed_range'][1]:.3f}" if r["speed_range"] else "-"
        print(f"{r['lang']:7s} {'cpu':12s} {r['measurements']:4d} {r['median_ms']:10.2f} ms "
              f"{pct(r['single_run_cv']):>9s} {pct(r['measure_cv']):>10s} {pct(r['raw_cv']):>7s} "
              f"{pct(r['normalized_cv']):>8s} {'<=' + pct(r['target'], 0):>7s} {r['samples']:7.0f} "
              f"{100 * r['converged']:4.0f}% {r['s_per_measure']:7.2f}  {sp:>11s}  {'PASS' if r['pass'] else 'MISS'}")
    print("\nTable 2 -- compare() (confidence sequence, alpha 0.01, <= 30 pairs, ~50 ms programs): "
          "rate of 'significant'")
    print("(true: pooled median of the trials' per-pair ratios; replay: the same sequential rule on "
          "2000+ sequences resampled from the real identical pairs; rej: pairs re-measured after a load spike)")
    hdr = (f"{'lang':7s} {'case':10s} {'true':>6s} {'trials':>6s} {'signif.':>8s} {'target':>6s} {'wrong':>5s} "
           f"{'replay':>7s} {'est.':>6s} {'pairs':>5s} {'undec.':>6s} {'rej':>5s} {'s/trial':>7s}  ok")
    print(hdr)
    print("-" * len(hdr))
    for r in crows:
        rep = pct(r.get("replay_rate"), 2) if r.get("replay_rate") is not None else "-"
        print(f"{r['lang']:7s} {r['case']:10s} {r['true_speedup'] or math.nan:6.3f} {r['trials']:6d} "
              f"{pct(r['significant_rate'], 1):>8s} {r['target']:>6s} {r['wrong_direction']:5d} {rep:>7s} "
              f"{r['median_speedup'] or math.nan:6.3f} {r['median_pairs'] or 0:5.0f} {r['undecided']:6d} "
              f"{pct(r['rejected_share'], 1):>5s} {r['s_per_trial']:7.2f}  {'PASS' if r['pass'] else 'MISS'}")
    print("\nTable 3 -- what the pair design does (from the comparisons above)")
    print("(scale: 1.4826 MAD of per-pair log-ratios around each comparison's estimate; order effect: "
          "half the mean log-ratio when A ran first minus when B did, identical programs -- what a fixed "
          "order would add to every estimate)")
    for r in hrows:
        ks, rs = r["kept_scale"], r["rejected_scale"]
        oe, se = r["order_effect"], r["order_effect_se"]
        print(f"  {r['lang']:7s} kept pairs {r['kept_pairs']:5d} (scale {pct(ks)})   rejected {r['rejected_pairs']:4d} "
              f"(scale {pct(rs)})   order effect {pct(oe, 3)} +- {pct(se, 3)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=None,
                    help="minutes per phase (default: 20 quiet, 40 with the neighbour; quick 3)")
    ap.add_argument("--neighbour-minutes", type=float, default=None,
                    help="minutes of the neighbour phase (default: as --minutes)")
    ap.add_argument("--quick", action="store_true", help="3 minutes per phase")
    ap.add_argument("--phases", default="quiet,neighbour", help="quiet,neighbour (either or both)")
    ap.add_argument("--instr-every", type=int, default=4, help="count instructions every N rounds (0: never)")
    ap.add_argument("--replays", type=int, default=4000, help="resampled identical comparisons per row")
    ap.add_argument("--langs", default="python,c")
    ap.add_argument("--ties-only", action="store_true", help="table 4 alone (near-ties against a kept baseline)")
    ap.add_argument("--json", help="also write every record and row to this file")
    a = ap.parse_args(argv)
    # a plain `kill` must still stop the neighbour (the `with` block's exit)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    default_minutes = {"quiet": 20.0, "neighbour": 40.0}
    langs = [x.strip() for x in a.langs.split(",") if x.strip()]

    sb = make_sandbox("local")
    t0 = time.monotonic()
    ref = P.reference(sb)
    print(f"codegym timing benchmark: isolation={sb.isolation} cpus={os.cpu_count()} probe={1000 * ref[0]:.2f} ms "
          f"calibration={1000 * ref[1]:.2f} ms (cpu) load={os.getloadavg()[0]:.2f}", flush=True)
    progs = {}
    for lang in langs:
        n = SIZES[lang]
        progs[lang] = {"a": build(sb, lang, "a"), "identical": build(sb, lang, "b"),
                       "1.1x": build(sb, lang, "b", 1.1), "stdin": f"{n}\n", "stdin_instr": f"{n // 10}\n"}
    out: dict = {"phases": {}}

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    for phase in [p.strip() for p in a.phases.split(",") if p.strip()]:
        minutes = a.minutes or (3.0 if a.quick else default_minutes.get(phase, 20.0))
        if phase == "neighbour" and a.neighbour_minutes:
            minutes = a.neighbour_minutes
        log(f"phase {phase}: {minutes:g} min")
        tp = time.monotonic()
        if phase == "neighbour":
            with Neighbour(seed=22):
                rec = run_phase(sb, progs, minutes, a.instr_every, log, a.ties_only)
        else:
            rec = run_phase(sb, progs, minutes, a.instr_every, log, a.ties_only)
        spent = (time.monotonic() - tp) / 60
        nrows, crows, hrows = noise_rows(rec), compare_rows(rec, a.replays), helps_rows(rec)
        print_phase(phase, rec, nrows, crows, hrows, spent)
        trows = tie_rows(rec)
        if trows:
            print_ties(trows)
        sys.stdout.flush()
        out["phases"][phase] = {"minutes": spent, "load": rec["load"], "noise": nrows, "compare": crows,
                                "helps": hrows, "ties": trows, "records": rec}
    print(f"\ntotal {(time.monotonic() - t0) / 60:.1f} min, load average now {os.getloadavg()[0]:.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
