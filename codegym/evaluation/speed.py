"""The timing phase of an eval: the perf block of an episode and head-to-head speed.

`score_perf` measures a correct episode's final program: speedup over the baseline
(`TimedReward` in speedup mode), relative efficiency from baseline toward reference
(`StagedReward.times`) and the strict top-X% events (`TimedReward` in percentile
mode). `speed_phase` runs the interleaved comparisons of two agents' programs on the
tasks whose correctness ties (`compare_programs`) and stores them like episodes.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from codegym.evaluation.config import EvalConfig
from codegym.evaluation.metrics import correct_runnable, task_key
from codegym.evaluation.store import ResultStore
from codegym.judge.perf import Unscorable, perf_workload
from codegym.sandbox import make_sandbox
from codegym.tasks.schema import Task
from codegym.wrappers.measure import TimedRunFailed, TimingSettings, calibrated_compare
from codegym.wrappers.staged import StagedReward, improvement
from codegym.wrappers.timed import TimedReward


def _timed_kwargs(cfg: EvalConfig, seed: int) -> dict[str, Any]:
    t = cfg.timing
    assert t is not None
    return dict(metric=t.metric, repeats=t.repeats, max_pairs=t.max_pairs, warmups=t.warmups,
                budget_s=t.budget_s, alpha=t.alpha, max_noise=t.max_noise, retries=t.retries, seed=seed)


def score_perf(env, task: Task, cfg: EvalConfig, seed: int) -> dict[str, Any]:
    """The perf block of a correct episode (the env still holds its final workspace)."""
    t = cfg.timing
    assert t is not None
    base = env.unwrapped
    report = base.last_report or {}
    info = {"judge": report, "language": base.language, "submitted": True}
    out: dict[str, Any] = {"correct_runnable": True, "speedup": None, "speedup_ci": None,
                           "speedup_significant": None, "efficiency": None, "top": {}, "notes": []}
    kw = _timed_kwargs(cfg, seed)
    if t.speedup:
        _, ti = TimedReward(base, mode="speedup", against="baseline", **kw).score(info)
        out["metric"] = ti.get("metric")
        if not ti.get("correct"):
            # wrong on the perf split (or the judge failed): not correct and runnable
            out["correct_runnable"] = False
            out["notes"].append(ti.get("reason") or "not correct on the perf split")
            return out
        if ti.get("scorable"):
            cmp = (ti.get("comparisons") or [{}])[-1]
            out.update(speedup=ti.get("speedup", cmp.get("speedup")), speedup_ci=cmp.get("ci"),
                       speedup_significant=bool(cmp.get("significant")), against=ti.get("against"))
        else:
            out["notes"].append(f"speedup: {ti.get('reason')}")
    if t.efficiency:
        staged = StagedReward(base, metric=t.metric, repeats=t.repeats, warmups=t.warmups, budget_s=t.budget_s)
        try:
            times = staged.times(base.program(info))
            imp, _ = improvement(times)
            out["efficiency"] = imp
            out["times"] = times.to_dict()
        except Unscorable as e:
            out["notes"].append(f"efficiency: {e}")
    if t.percentiles:
        _percentile_events(out, base, info, t.percentiles, kw)
    return out


def _percentile_events(out: dict[str, Any], base, info: dict[str, Any], percentiles, kw: dict[str, Any]) -> None:
    _, ti = TimedReward(base, mode="percentile", percentiles=tuple(percentiles),
                        distribution="auto", **kw).score(info)
    keys = [f"{float(p):g}" for p in percentiles]
    if not ti.get("correct"):
        out["correct_runnable"] = False
    if ti.get("scorable"):
        out["top"] = {f"{float(e['percentile']):g}": bool(e["beats"]) for e in ti.get("percentiles") or ()}
    elif ti.get("comparisons"):
        out["top"] = {k: False for k in keys}  # measured, but too noisy to call it faster
        out["notes"].append(f"top-X%: {ti.get('reason')}")
    else:
        out["top"] = {k: None for k in keys}  # no runtime distribution for this task
        out["notes"].append(f"top-X%: {ti.get('reason')}")


def speed_jobs(cfg: EvalConfig, episodes: list[dict[str, Any]]) -> list[tuple[str, str, str, dict, dict]]:
    """(task key, a, b, episode of a, episode of b) for the pairs whose correctness ties
    above 0 on a task: the only ones speed can decide."""
    by: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for ep in episodes:
        by[(task_key(ep), ep["agent"])].append(ep)
    labels = [a.label for a in cfg.agents]
    jobs = []
    for tk in dict.fromkeys(task_key(ep) for ep in episodes):
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                ea, eb = by.get((tk, a)), by.get((tk, b))
                if not ea or not eb:
                    continue
                ra = sum(e["correct"] for e in ea) / len(ea)
                rb = sum(e["correct"] for e in eb) / len(eb)
                if ra != rb or ra == 0:
                    continue
                pa = sorted((e for e in ea if correct_runnable(e)), key=lambda e: e["sample"])
                pb = sorted((e for e in eb if correct_runnable(e)), key=lambda e: e["sample"])
                if pa and pb and pa[0].get("task_kind") in ("stdio", "function"):
                    jobs.append((tk, a, b, pa[0], pb[0]))
    return jobs


def compare_programs(cfg: EvalConfig, task: Task, ep_a: dict, ep_b: dict, a: str, b: str, seed: int) -> dict[str, Any]:
    """Interleaved comparison of two episodes' final programs: speedup = t(a)/t(b)."""
    t = cfg.timing
    assert t is not None
    sb = make_sandbox(cfg.sandbox) if cfg.sandbox else make_sandbox()
    settings = TimingSettings(metric=t.metric, repeats=t.repeats, max_pairs=t.max_pairs, warmups=t.warmups,
                              budget_s=t.budget_s, alpha=t.alpha)
    out: dict[str, Any] = {"speedup": None, "ci": None, "significant": False, "identical": False, "reason": ""}
    try:
        wa = perf_workload(task, ep_a["final_files"], ep_a["language"], sb)
        wb = perf_workload(task, ep_b["final_files"], ep_b["language"], sb)
        rec = calibrated_compare(sb, wa, wb, against=a, metric=settings.metric_for(task), settings=settings,
                                 max_noise=t.max_noise, retries=t.retries, seed=seed)
        out.update(speedup=rec.speedup, ci=list(rec.ci) if rec.ci else None, significant=rec.significant,
                   identical=rec.identical, n_pairs=rec.n_pairs)
    except TimedRunFailed as e:  # b's run failed (a's failure is reported as Unscorable)
        out["reason"] = f"{b}: {e}"
        out["failed"] = {"agent": b, "status": e.status}
    except Unscorable as e:
        out["reason"] = str(e)
    return out


def speed_phase(cfg: EvalConfig, store: ResultStore, bar) -> int:
    """Head-to-head speed comparisons for correctness ties; stored like episodes.
    `bar`: the run's rich progress display. Returns the number of comparisons run."""
    records = store.load()
    episodes = [r for r in records if r.get("kind") == "episode"]
    have = {r["key"] for r in records if r.get("kind") == "speed"}
    jobs = speed_jobs(cfg, episodes)
    todo = [j for j in jobs if f"speed|{j[0]}|{j[1]}|{j[2]}" not in have]
    if not todo:
        return 0
    tasks = {f"{cfg.suite_label(i)}:{t.id}": t for i in range(len(cfg.suites)) for t in cfg.tasks(i)}
    prog = bar.add_task("  head-to-head speed", total=len(todo), extra="")
    for n, (tk, a, b, ea, eb) in enumerate(todo):
        res = compare_programs(cfg, tasks[tk], ea, eb, a, b, seed=cfg.seed + n)
        store.append({"kind": "speed", "key": f"speed|{tk}|{a}|{b}", "task": tk, "a": a, "b": b,
                      "sample_a": ea["sample"], "sample_b": eb["sample"], **res})
        bar.advance(prog)
    return len(todo)
