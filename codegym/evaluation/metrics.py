"""Benchmark metrics of an eval, from its episode records (numpy only, no plotting).

`pass_at_k` (the unbiased estimator in its numerically stable product form),
`bootstrap_ci` (seeded percentile bootstrap of a mean over tasks), `head_to_head`,
`ranking`, `turn_stats`, and `compute_metrics(episodes, speed_results, ...)`: every
number of ``codegym eval`` / ``codegym report`` as one JSON-able dict. A task is keyed
``"<suite label>:<task id>"`` (`task_key`). docs/eval.md defines each metric and the
head-to-head rule (correctness first, then significant speed, else a tie).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task from n samples of which c are correct (k <= n).

    ``1 - C(n-c, k)/C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i)``; 1 when n - c < k.
    """
    n, c, k = int(n), int(c), int(k)
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1, dtype=float)))


def pass_at_k_many(ns: Sequence[int], cs: Sequence[int], k: int) -> np.ndarray:
    """pass@k of each task (arrays of n and c); NaN where n < k."""
    return np.array([pass_at_k(n, c, k) if n >= k else math.nan for n, c in zip(ns, cs)], dtype=float)


def bootstrap_ci(values: Sequence[float], n_boot: int = 1000, seed: int = 0,
                 level: float = 0.95) -> tuple[float, float, float]:
    """(mean, lo, hi): percentile bootstrap of the mean (deterministic given seed)."""
    a = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if a.size == 0:
        return math.nan, math.nan, math.nan
    est = float(a.mean())
    if a.size < 2:
        return est, est, est
    rng = np.random.default_rng(seed)
    means = a[rng.integers(0, a.size, size=(n_boot, a.size))].mean(axis=1)
    q = (1 - level) / 2
    lo, hi = np.quantile(means, [q, 1 - q])
    return est, float(lo), float(hi)


def task_key(ep: Mapping[str, Any]) -> str:
    return f"{ep['suite']}:{ep['task_id']}"


def _nan_to_none(x: Any) -> Any:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    if isinstance(x, dict):
        return {k: _nan_to_none(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_nan_to_none(v) for v in x]
    if isinstance(x, np.floating):
        return _nan_to_none(float(x))
    if isinstance(x, np.integer):
        return int(x)
    return x


def _perf(ep: Mapping[str, Any]) -> Mapping[str, Any]:
    return ep.get("perf") or {}


def correct_runnable(ep: Mapping[str, Any]) -> bool:
    """Correct and runnable: accepted, and (when timed) correct on the perf split and measurable."""
    if not ep.get("correct"):
        return False
    p = ep.get("perf")
    return bool(p.get("correct_runnable", True)) if p else True


# --------------------------------------------------------------------------- per-task tables


def _counts(episodes: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, tuple[int, int]]]:
    """agent -> task key -> (n samples, c correct)."""
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for ep in episodes:
        cell = out[ep["agent"]][task_key(ep)]
        cell[0] += 1
        cell[1] += bool(ep.get("correct"))
    return {a: {t: (v[0], v[1]) for t, v in d.items()} for a, d in out.items()}


def head_to_head(rates: Mapping[str, Mapping[str, float]], agents: Sequence[str], tasks: Sequence[str],
                 speed: Mapping[tuple[str, str, str], Mapping[str, Any]] | None = None
                 ) -> dict[tuple[str, str], dict[str, float]]:
    """Per ordered pair (a, b): per-task outcomes (+1 a wins, -1 b wins, 0 tie) and totals.

    `rates[agent][task]`: fraction of correct samples; `speed[(task, a, b)]`: a direct
    comparison with ``speedup = t(a)/t(b)`` and ``significant``."""
    speed = speed or {}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for a in agents:
        for b in agents:
            if a == b:
                continue
            outcomes: dict[str, int] = {}
            by_speed = 0
            for t in tasks:
                ra, rb = rates.get(a, {}).get(t), rates.get(b, {}).get(t)
                if ra is None or rb is None:
                    continue
                o = 0
                if ra > rb:
                    o = 1
                elif rb > ra:
                    o = -1
                elif ra > 0:
                    s = speed.get((t, a, b))
                    flip = 1
                    if s is None and (t, b, a) in speed:
                        s, flip = speed[(t, b, a)], -1
                    if s and s.get("significant") and s.get("speedup"):
                        # speedup = t(first)/t(second) > 1: the second is faster
                        o = -flip if s["speedup"] > 1 else flip
                        by_speed += 1
                outcomes[t] = o
            n = len(outcomes)
            w = sum(1 for o in outcomes.values() if o > 0)
            l_ = sum(1 for o in outcomes.values() if o < 0)
            out[(a, b)] = {"tasks": n, "wins": w, "losses": l_, "ties": n - w - l_,
                           "decided_by_speed": by_speed,
                           "win_rate": (w + 0.5 * (n - w - l_)) / n if n else math.nan,
                           "outcomes": outcomes}
    return out


def _scores(outcome_arr: np.ndarray) -> np.ndarray:
    """outcome_arr[a, b, t] in {-1, 0, 1} -> mean win rate of each agent over opponents."""
    m = outcome_arr.shape[0]
    wr = ((outcome_arr > 0) + 0.5 * (outcome_arr == 0)).mean(axis=2)  # [a, b]
    mask = ~np.eye(m, dtype=bool)
    return (wr * mask).sum(axis=1) / max(1, m - 1)


def _ranks(scores: np.ndarray) -> np.ndarray:
    """1 + number of agents with a strictly higher score (ties share the better rank)."""
    return 1 + (scores[None, :] > scores[:, None]).sum(axis=1)


def ranking(h2h: Mapping[tuple[str, str], Mapping[str, Any]], agents: Sequence[str], tasks: Sequence[str],
            n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> list[dict[str, Any]]:
    """Agents ordered by mean head-to-head win rate, with bootstrap CIs (tasks resampled)."""
    m, T = len(agents), len(tasks)
    if m == 0:
        return []
    arr = np.zeros((m, m, T), dtype=int)
    for i, a in enumerate(agents):
        for j, b in enumerate(agents):
            if i != j:
                oc = h2h[(a, b)]["outcomes"]
                arr[i, j] = [oc.get(t, 0) for t in tasks]
    if m == 1 or T == 0:
        return [{"agent": agents[0], "score": math.nan, "score_ci": [math.nan, math.nan], "rank": 1,
                 "rank_ci": [1, 1]}] if m == 1 else [
            {"agent": a, "score": math.nan, "score_ci": [math.nan, math.nan], "rank": 1, "rank_ci": [1, m]}
            for a in agents]
    est = _scores(arr)
    ranks = _ranks(est)
    rng = np.random.default_rng(seed)
    boot_s = np.empty((n_boot, m))
    boot_r = np.empty((n_boot, m))
    for b in range(n_boot):
        idx = rng.integers(0, T, size=T)
        s = _scores(arr[:, :, idx])
        boot_s[b], boot_r[b] = s, _ranks(s)
    q = (1 - level) / 2
    rows = []
    for i, a in enumerate(agents):
        rows.append({"agent": a, "score": float(est[i]),
                     "score_ci": [float(np.quantile(boot_s[:, i], q)), float(np.quantile(boot_s[:, i], 1 - q))],
                     "rank": int(ranks[i]),
                     "rank_ci": [int(np.floor(np.quantile(boot_r[:, i], q))),
                                 int(np.ceil(np.quantile(boot_r[:, i], 1 - q)))]})
    rows.sort(key=lambda r: (r["rank"], -r["score"], r["agent"]))
    return rows


def turn_stats(episodes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Turns used, edit formats used, share of unparseable actions and failed edits."""
    turns = np.array([ep.get("turns", 0) for ep in episodes], dtype=float)
    budget = np.array([ep.get("turns", 0) / ep["max_turns"] for ep in episodes if ep.get("max_turns")],
                      dtype=float)
    formats: Counter = Counter()
    n_steps = unparseable = failed = 0
    for ep in episodes:
        for st in ep.get("steps") or ():
            n_steps += 1
            formats.update(st.get("formats") or [])
            if st.get("error_kind") == "parse":
                unparseable += 1
            elif st.get("error_kind") == "apply":
                failed += 1
    return {
        "episodes": len(episodes),
        "turns_mean": float(turns.mean()) if turns.size else math.nan,
        "turns_median": float(np.median(turns)) if turns.size else math.nan,
        "turns_max": int(turns.max()) if turns.size else 0,
        "turn_budget_used": float(budget.mean()) if budget.size else math.nan,
        "steps": n_steps,
        "formats": dict(sorted(formats.items())),
        "unparseable_share": unparseable / n_steps if n_steps else math.nan,
        "failed_edit_share": failed / n_steps if n_steps else math.nan,
        "submitted_share": float(np.mean([bool(ep.get("submitted")) for ep in episodes])) if episodes else math.nan,
        "time_budget_hits": sum(bool(ep.get("budget_exceeded")) for ep in episodes),
        "tokens": int(sum((ep.get("usage") or {}).get("total_tokens", 0) or 0 for ep in episodes)),
    }


def _speed_summary(values: Sequence[float], significant: Sequence[bool]) -> dict[str, Any]:
    v = np.asarray([x for x in values if x and x > 0], dtype=float)
    if v.size == 0:
        return {"n": 0}
    qs = np.quantile(v, [0.1, 0.25, 0.5, 0.75, 0.9])
    return {"n": int(v.size), "geomean": float(np.exp(np.log(v).mean())), "median": float(qs[2]),
            "q10": float(qs[0]), "q25": float(qs[1]), "q75": float(qs[3]), "q90": float(qs[4]),
            "min": float(v.min()), "max": float(v.max()),
            "significant_faster_share": float(np.mean([bool(s) for s, x in zip(significant, values)
                                                       if x and x > 0])),
            "values": [float(x) for x in v]}


def _agent_row(eps: Sequence[Mapping[str, Any]], cnt: Mapping[str, tuple[int, int]], ks: Sequence[int],
               percentiles: Sequence[float], with_dist: Mapping[str, set[str]], n_boot: int, seed: int,
               level: float) -> dict[str, Any]:
    """The metrics of one agent's episodes (`cnt`: its per-task (n, c))."""
    ts = list(cnt)
    ns = [cnt[t][0] for t in ts]
    cs = [cnt[t][1] for t in ts]
    row: dict[str, Any] = {"episodes": len(eps), "tasks": len(ts), "correct": int(sum(cs))}
    pk = {}
    for k in ks:
        vals = pass_at_k_many(ns, cs, k)
        est, lo, hi = bootstrap_ci(vals, n_boot, seed, level)
        pk[str(k)] = {"value": est, "ci": [lo, hi], "tasks": int(np.sum(~np.isnan(vals)))}
    row["pass_at_k"] = pk
    # pass@1 per family / difficulty / language (per task, then averaged)
    for dim in ("family", "difficulty", "language"):
        groups: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        for ep in eps:
            g = str(ep.get(dim) or "-")
            cell = groups[g][task_key(ep)]
            cell[0] += 1
            cell[1] += bool(ep.get("correct"))
        row[f"pass1_by_{dim}"] = {g: {"value": float(np.mean([c / n for n, c in d.values()])),
                                      "tasks": len(d)} for g, d in sorted(groups.items())}
    cr = [correct_runnable(ep) for ep in eps]
    row["correct_runnable_rate"] = float(np.mean(cr)) if cr else math.nan
    # performance (only episodes the runner timed)
    timed = [ep for ep in eps if ep.get("perf")]
    row["timed_episodes"] = len(timed)
    top: dict[str, Any] = {}
    for x in percentiles:
        # tasks without a runtime distribution (no correct episode of any agent was
        # scored against one) are not part of this metric
        per_task: dict[str, list[int]] = defaultdict(list)
        for ep in eps:
            if task_key(ep) in with_dist[_pkey(x)]:
                per_task[task_key(ep)].append(int(bool(ep.get("correct"))
                                                  and bool(_perf(ep).get("top", {}).get(_pkey(x)))))
        vals = [float(np.mean(v)) for v in per_task.values()]
        est, lo, hi = bootstrap_ci(vals, n_boot, seed, level)
        top[_pkey(x)] = {"value": est, "ci": [lo, hi], "tasks": len(vals)}
    row["strict_top_pass1"] = top
    effs = [_perf(ep).get("efficiency") for ep in eps if correct_runnable(ep)]
    effs = [e for e in effs if e is not None]
    row["relative_efficiency"] = ({"mean": float(np.mean(effs)), "median": float(np.median(effs)),
                                   "clipped_mean": float(np.mean(np.clip(effs, 0, 1))), "n": len(effs)}
                                  if effs else {"n": 0})
    sp = [(_perf(ep).get("speedup"), _perf(ep).get("speedup_significant")) for ep in eps
          if correct_runnable(ep) and _perf(ep).get("speedup")]
    row["speedup"] = _speed_summary([s for s, _ in sp], [g for _, g in sp])
    row["turns"] = turn_stats(eps)
    return row


# --------------------------------------------------------------------------- everything


def compute_metrics(episodes: Sequence[Mapping[str, Any]],
                    speed_results: Sequence[Mapping[str, Any]] = (),
                    agents: Sequence[str] | None = None, ks: Sequence[int] = (1,),
                    percentiles: Sequence[float] = (30, 50, 70), n_boot: int = 1000, seed: int = 0,
                    level: float = 0.95) -> dict[str, Any]:
    """All metrics of an eval (see the module docstring); JSON-able (NaN -> None)."""
    agents = list(agents) if agents else list(dict.fromkeys(ep["agent"] for ep in episodes))
    tasks = list(dict.fromkeys(task_key(ep) for ep in episodes))
    counts = _counts(episodes)
    rates = {a: {t: c / n for t, (n, c) in counts.get(a, {}).items()} for a in agents}
    by_agent: dict[str, list[Mapping[str, Any]]] = {a: [] for a in agents}
    for ep in episodes:
        if ep["agent"] in by_agent:
            by_agent[ep["agent"]].append(ep)
    task_meta: dict[str, dict[str, Any]] = {}
    for ep in episodes:
        task_meta.setdefault(task_key(ep), {"suite": ep["suite"], "task_id": ep["task_id"],
                                             "difficulty": ep.get("difficulty"), "family": ep.get("family")})

    with_dist = {_pkey(x): {task_key(ep) for ep in episodes if ep.get("correct")
                            and _perf(ep).get("top", {}).get(_pkey(x)) is not None} for x in percentiles}
    per_agent = {a: _agent_row(by_agent[a], counts.get(a, {}), ks, percentiles, with_dist, n_boot, seed, level)
                 for a in agents}

    # saturation
    common = [t for t in tasks if all(t in counts.get(a, {}) for a in agents)]
    saturated = [t for t in common if all(counts[a][t][1] == counts[a][t][0] for a in agents)]
    unsolved = [t for t in common if all(counts[a][t][1] == 0 for a in agents)]
    rest = [t for t in common if t not in saturated]
    for a in agents:
        vals = [rates[a][t] for t in rest]
        est, lo, hi = bootstrap_ci(vals, n_boot, seed, level)
        per_agent[a]["pass1_unsaturated"] = {"value": est, "ci": [lo, hi], "tasks": len(vals)}

    speed = {(s["task"], s["a"], s["b"]): s for s in speed_results}
    h2h = head_to_head(rates, agents, common, speed)
    rank = ranking(h2h, agents, common, n_boot, seed, level)
    matrix = {a: {b: (h2h[(a, b)]["win_rate"] if a != b else None) for b in agents} for a in agents}
    pairs = [{"a": a, "b": b, **{k: v for k, v in h2h[(a, b)].items() if k != "outcomes"}}
             for i, a in enumerate(agents) for b in agents[i + 1:]]
    return _nan_to_none({
        "agents": agents,
        "tasks": [{"key": t, **task_meta[t]} for t in tasks],
        "ks": list(ks),
        "percentiles": [float(x) for x in percentiles],
        "per_agent": per_agent,
        "per_task": {a: {t: {"n": counts.get(a, {}).get(t, (0, 0))[0], "correct": counts.get(a, {}).get(t, (0, 0))[1],
                             "rate": rates[a].get(t)} for t in tasks} for a in agents},
        "saturation": {"common_tasks": len(common), "saturated": saturated, "unsolved": unsolved},
        "head_to_head": {"matrix": matrix, "pairs": pairs, "speed_comparisons": len(speed_results)},
        "ranking": rank,
        "bootstrap": {"samples": n_boot, "seed": seed, "level": level},
    })


def _pkey(x: float) -> str:
    return f"{float(x):g}"
