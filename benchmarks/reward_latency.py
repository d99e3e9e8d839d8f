"""What a timed reward costs next to one perf pass of the same candidate (PerfCode, DMC-Optim).

For every task of ``codegym/PerfCode-v0`` and ``codegym/DMCOptim-v0`` (plain `gym.make(id)`:
the suites' default reward), five candidates are submitted in one step each, and beside
each one the same program is judged once on the perf split (`judge(task, files,
split="perf")`, the floor: correctness on the large inputs costs that much), in the same
run, the two in alternating order:

- ``baseline-like`` (twice): the task's baseline with a comment added -- a new program
  (its own build, nothing identical to skip) at the baseline's speed, the near-tie a
  policy mostly submits. The first one of a task is ``cold`` (whatever the reward keeps
  per task is not there yet), the second ``warm``;
- ``faster``: the task's reference solution;
- ``slower``: the baseline with ~25 % of its recorded time burnt up front on every input;
- ``wrong``: the reference with its output changed (`MutantAgent`, kind ``output``).

Each program is submitted with a unique comment, so that every reward and every perf pass
builds its program afresh (a compile counts on both sides). Printed: per task and
candidate the reward, its wall time, the perf pass's wall time and their ratio; per
family and candidate the median and p95 of the ratio; the reward ordering checks
(faster > each baseline-like > wrong on every task with a >= 1.5x recorded gap); and,
with ``--grpo``, a GRPO batch (8 tasks x 8 samples of mixed candidates, 8 envs in
threads as a vector env or `collect` would run them) with rewards per minute. The load
average is printed with every phase: on a shared machine the ratios measured in the
same run are the meaningful part.

It uses only names main had before issue 32, so the same script measures the code of
another checkout: ``PYTHONPATH=/path/to/checkout python benchmarks/reward_latency.py``.

    python benchmarks/reward_latency.py [--suite perfcode|dmcoptim] [--limit N] [--grpo] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gymnasium as gym

import codegym  # noqa: F401  (registers the ids)
from codegym.agents import MutantAgent
from codegym.edits.render import render_action
from codegym.judge import judge
from codegym.tasks.runtimes import task_entry
from codegym.tasks.suite import load_suite
from codegym.wrappers.measure import recorded_runtimes

FAMILIES = {"perfcode": "codegym/PerfCode-v0", "dmcoptim": "codegym/DMCOptim-v0"}
#: the recorded gap from which the faster candidate must out-earn the baseline-like ones
GAP = 1.5
CANDIDATES = ("baseline-like", "faster", "slower", "wrong", "baseline-like")
#: the slower candidate burns this fraction of the baseline's recorded time per input first
SLOWER = 0.25
COMMENT = {"python": "# {tag}\n", "c": "/* {tag} */\n", "cpp": "// {tag}\n"}

PY_BURN = ("import time as _bench_time\n_bench_t0 = _bench_time.process_time()\n"
           "while _bench_time.process_time() - _bench_t0 < {s:.4f}:\n    pass\n")
C_BURN = ("\n#include <time.h>\n__attribute__((constructor)) static void bench_slower(void) {{\n"
          "    clock_t t0 = clock(); volatile unsigned long x = 0;\n"
          "    while ((double)(clock() - t0) / CLOCKS_PER_SEC < {s:.4f}) x++;\n}}\n")


def main_file(task, language: str) -> str:
    return task.main_file_for(language) or next(iter(task.solution(task.reference_name).files))


def solution(task, name: str) -> tuple[str, dict[str, str]]:
    sol = task.solution(name)
    return (sol.language or task.language), {k: str(v) for k, v in sol.files.items()}


def tagged(task, language: str, files: dict[str, str], tag: str) -> dict[str, str]:
    """`files` with a comment naming `tag` at the end of the main file (a new program, same behaviour)."""
    out = dict(files)
    mf = main_file(task, language)
    text = out[mf]
    out[mf] = text + ("" if text.endswith("\n") else "\n") + COMMENT[language].format(tag=tag)
    return out


def per_input_seconds(task) -> float:
    rt, _ = recorded_runtimes(task, "cpu")
    tb = rt.get(task.baseline_name) or rt.get("starter") or 0.2
    n = max(1, len(task.cases("perf")))
    return float(tb) / n


def candidate_files(task, kind: str) -> tuple[str, dict[str, str]]:
    """(language, files) of one candidate kind (before tagging)."""
    if kind == "faster":
        return solution(task, task.reference_name)
    if kind == "wrong":
        lang, files = solution(task, task.reference_name)
        mf = main_file(task, lang)
        files[mf] = MutantAgent(kinds=["output"], seed=0).mutate(files[mf], lang, "output", task.kind == "stdio",
                                                                 task.entry_point)
        return lang, files
    if task.baseline_name in task.solutions:  # (else the starter files are the baseline)
        lang, files = solution(task, task.baseline_name)
    else:
        lang, files = task.language, {k: str(v) for k, v in task.starter_files().items()}
    if kind == "slower":
        mf = main_file(task, lang)
        burn = SLOWER * per_input_seconds(task)
        if lang == "python":
            files[mf] = PY_BURN.format(s=burn) + files[mf]
        else:
            files[mf] = files[mf] + C_BURN.format(s=burn)
    return lang, files


def submit(env, task_id: str, language: str, files: dict[str, str]) -> tuple[float, float, dict]:
    """(reward, wall seconds of the submitting step, the step's info)."""
    obs, info = env.reset(options={"task_id": task_id, "language": language})
    task = env.unwrapped.task
    current = dict(env.unwrapped.workspace.files)
    changes = {p: c for p, c in files.items() if current.get(p) != c}
    action = render_action(changes, "code_block", current, main_file(task, language), submit=True)
    t0 = time.perf_counter()
    obs, r, term, trunc, info = env.step(action)
    while not (term or trunc):
        obs, r, term, trunc, info = env.step("submit")
    return float(r), time.perf_counter() - t0, info


def perf_pass(env, task, language: str, files: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    rep = judge(task, files, sandbox=env.unwrapped.sandbox, split="perf", language=language)
    return time.perf_counter() - t0, rep.verdict


def how_decided(info: dict) -> str:
    st = info.get("staged") or info.get("timing") or {}
    if not st.get("times") and st.get("stage") != "correct":
        return st.get("stage") or "-"
    b = st.get("bound") or {}
    if b:
        return b.get("rule") or "bound"
    if (st.get("times") or {}).get("source") == "looks":
        return "looks"  # a near-tie the looks did not decide, scored from them
    return "measured"


def looks_of(info: dict) -> dict:
    """How many looks the near-tie rules took and what the kept baseline was (when the info says)."""
    st = info.get("staged") or info.get("timing") or {}
    lk = (st.get("bound") or {}).get("looks") or st.get("looks") or {}
    kept = (st.get("bound") or {}).get("kept") or lk.get("kept") or {}
    return {"looks": len(lk.get("looks") or ()), "kept_passes": kept.get("passes"), "added": kept.get("added"),
            "why": kept.get("why")}


def pctl(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100 * len(xs) + 0.5)) - 1))]


def gap_of(task) -> float | None:
    rec, _ = task_entry(task)
    return rec.ratio if rec is not None else None


def process_setup(env, suite: str, tasks: list, run_id: str) -> float:
    """Wall seconds of one reward that pays what a process pays once (the calibration workload,
    the speed probe's reference): the reference solution of a task outside the sample (the last
    one when the sample is the whole suite), so that no task's cold row carries them."""
    chosen = {t.id for t in tasks}
    others = [t for t in load_suite(suite) if t.id not in chosen] or tasks[-1:]
    task = others[-1]
    lang, files = candidate_files(task, "faster")
    _, wall, _ = submit(env, task.id, lang, tagged(task, lang, files, f"setup {run_id}"))
    return wall


def per_task(args, run_id: str) -> list[dict]:
    rows = []
    serial = 0
    for suite in args.suite or list(FAMILIES):
        env = gym.make(FAMILIES[suite])
        tasks = list(load_suite(suite))
        if args.tasks:
            tasks = [t for t in tasks if any(p in t.id for p in args.tasks)]
        tasks = tasks[: args.limit or None]
        rows_setup = process_setup(env, suite, tasks, run_id)
        print(f"[{suite}] process set-up: {rows_setup:.2f} s (one reward of a faster candidate of a task outside "
              "the sample: the calibration workload and the speed probe's reference, once per process)", flush=True)
        for i, task in enumerate(tasks):
            row = {"suite": suite, "task": task.id, "language": task.language, "gap": gap_of(task), "load": [
                os.getloadavg()[0]], "cands": []}
            for j, kind in enumerate(CANDIDATES):
                lang, files = candidate_files(task, kind)
                serial += 1
                rf = tagged(task, lang, files, f"reward {run_id} {serial}")
                pf = tagged(task, lang, files, f"perf {run_id} {serial}")
                if (i + j) % 2 == 0:
                    r, rw, info = submit(env, task.id, lang, rf)
                    pw, pv = perf_pass(env, task, lang, pf)
                else:
                    pw, pv = perf_pass(env, task, lang, pf)
                    r, rw, info = submit(env, task.id, lang, rf)
                label = kind if kind != "baseline-like" else ("baseline-like cold" if j == 0 else "baseline-like warm")
                row["cands"].append({"kind": label, "reward": r, "reward_s": rw, "perf_s": pw, "perf_verdict": pv,
                                     "ratio": rw / pw if pw > 0 else None, "how": how_decided(info),
                                     "verdict": (info.get("judge") or {}).get("verdict"), **looks_of(info)})
            row["load"].append(os.getloadavg()[0])
            c = {x["kind"]: x for x in row["cands"]}
            fails = []
            bl = [c["baseline-like cold"]["reward"], c["baseline-like warm"]["reward"]]
            if row["gap"] and row["gap"] >= GAP and not all(c["faster"]["reward"] > b for b in bl):
                fails.append("faster <= baseline-like")
            if not all(b > c["wrong"]["reward"] for b in bl):
                fails.append("baseline-like <= wrong")
            row["failed"] = fails
            rows.append(row)
            print(f"[{suite} {i + 1}/{len(tasks)}] {task.id} (load {row['load'][0]:.1f}): " + "  ".join(
                f"{x['kind']} {x['reward']:.3f} {x['reward_s']:.2f}s/{x['perf_s']:.2f}s={x['ratio']:.1f}x {x['how']}"
                for x in row["cands"]) + (f"  FAILED {fails}" if fails else ""), flush=True)
        env.close()
    return rows


def summary(rows: list[dict]) -> list[dict]:
    out = []
    for suite in dict.fromkeys(r["suite"] for r in rows):
        for kind in ("baseline-like warm", "baseline-like cold", "faster", "slower", "wrong"):
            xs = [c for r in rows if r["suite"] == suite for c in r["cands"] if c["kind"] == kind and c["ratio"]]
            if not xs:
                continue
            ratios = [c["ratio"] for c in xs]
            out.append({"suite": suite, "kind": kind, "n": len(xs), "median": statistics.median(ratios),
                        "p95": pctl(ratios, 95), "max": max(ratios),
                        "reward_s_median": statistics.median(c["reward_s"] for c in xs),
                        "perf_s_median": statistics.median(c["perf_s"] for c in xs)})
    return out


def grpo(args, run_id: str) -> dict:
    """8 tasks x 8 samples (4 baseline-like, faster, slower, 2 wrong), shuffled, on 8 envs in threads."""
    rng = random.Random(7)
    tasks = []
    for suite in ("perfcode", "dmcoptim"):
        ts = list(load_suite(suite))
        step = len(ts) / 4
        tasks += [(suite, ts[int(k * step)]) for k in range(4)]
    mix = ["baseline-like"] * 4 + ["faster", "slower", "wrong", "wrong"]
    samples = []
    for suite, task in tasks:
        for k, kind in enumerate(mix):
            lang, files = candidate_files(task, kind)
            samples.append((suite, task, kind, lang, tagged(task, lang, files, f"grpo {run_id} {task.id} {k}")))
    rng.shuffle(samples)
    local = threading.local()
    lock = threading.Lock()
    results = []

    def one(s):
        suite, task, kind, lang, files = s
        envs = getattr(local, "envs", None)
        if envs is None:
            envs = local.envs = {}
        if suite not in envs:
            envs[suite] = gym.make(FAMILIES[suite])
        r, w, info = submit(envs[suite], task.id, lang, files)
        with lock:
            results.append({"task": task.id, "kind": kind, "reward": r, "wall_s": w, "how": how_decided(info),
                            **looks_of(info)})

    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=8) as ex:
        list(ex.map(one, samples))
    wall = time.perf_counter() - t0
    return {"samples": len(samples), "wall_s": wall, "rewards_per_min": 60 * len(samples) / wall,
            "load": [load0, os.getloadavg()[0]], "results": results,
            "per_kind_median_s": {k: statistics.median(x["wall_s"] for x in results if x["kind"] == k)
                                  for k in dict.fromkeys(mix)}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", action="append", choices=sorted(FAMILIES), help="(repeatable; default both)")
    ap.add_argument("--limit", type=int, help="first N tasks of each suite")
    ap.add_argument("--tasks", nargs="+", help="only task ids containing one of these")
    ap.add_argument("--grpo", action="store_true", help="also the GRPO batch (8 tasks x 8 samples)")
    ap.add_argument("--no-tasks", action="store_true", help="skip the per-task table (with --grpo)")
    ap.add_argument("--json", help="write every row here")
    args = ap.parse_args(argv)
    run_id = f"{os.getpid()}-{int(time.time())}"
    code = str(Path(codegym.__file__).resolve().parent.parent)
    print(f"reward latency: codegym from {code}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}", flush=True)
    out: dict = {"code": code, "load_start": os.getloadavg()}
    failures = 0
    if not args.no_tasks:
        t0 = time.monotonic()
        rows = per_task(args, run_id)
        out["rows"], out["summary"] = rows, summary(rows)
        print(f"\nratio = the reward's wall time / one perf pass of the same candidate (judge(split='perf')); "
              f"{time.monotonic() - t0:.0f} s, load now {os.getloadavg()[0]:.1f}")
        print("| family | candidate | n | median | p95 | max | reward s (median) | perf pass s (median) |")
        print("|---|---|---|---|---|---|---|---|")
        for s in out["summary"]:
            print(f"| {s['suite']} | {s['kind']} | {s['n']} | {s['median']:.2f} | {s['p95']:.2f} | {s['max']:.2f} "
                  f"| {s['reward_s_median']:.2f} | {s['perf_s_median']:.2f} |")
        gapped = [r for r in rows if r["gap"] and r["gap"] >= GAP]
        failures = sum(bool(r["failed"]) for r in rows)
        print(f"ordering: faster > both baseline-like > wrong on {len(rows) - failures}/{len(rows)} tasks "
              f"({len(gapped)} with a recorded gap >= {GAP}x)")
        for r in rows:
            for f in r["failed"]:
                print(f"  FAILED {r['task']}: {f}")
    if args.grpo:
        g = grpo(args, run_id)
        out["grpo"] = g
        print(f"\nGRPO batch: {g['samples']} samples (8 tasks x 8), 8 envs in threads: {g['wall_s']:.0f} s, "
              f"{g['rewards_per_min']:.1f} rewards/min; load {g['load'][0]:.1f} -> {g['load'][1]:.1f}; median "
              "s per kind: " + ", ".join(f"{k} {v:.1f}" for k, v in g["per_kind_median_s"].items()))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
