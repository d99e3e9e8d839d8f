"""The scaffold comparison of an eval: what each agent's correctness cost, and scaffolds head to head.

`scaffold_comparison(episodes, metrics)` (part of ``results.json`` under
``metrics.scaffolds`` when some agent is a scaffold, `codegym.agents.scaffold`):

- one row per agent: pass@1, speedup geomean over the baseline (timed evals), env
  steps, scaffold turns and model calls per episode, tokens per episode (prompt,
  completion, total) and per solved episode, the agent's wall time per episode
  (median and p90) and the scaffolds' exit statuses;
- one row per pair of scaffold agents: the head-to-head record (correctness first,
  then significant speed: `codegym.evaluation.metrics.head_to_head`) and, on the tasks
  both solved, the median ratios of their tokens and wall times (a / b).

`scaffold_rows` / `pair_rows` give the tables the report and summary.md show.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from codegym.evaluation.metrics import task_key


def _mean(xs: Sequence[float]) -> float | None:
    return float(np.mean(xs)) if len(xs) else None


def _tokens(ep: Mapping[str, Any], key: str) -> int:
    return int((ep.get("usage") or {}).get(key, 0) or 0)


def _agent_row(eps: Sequence[Mapping[str, Any]], per_agent: Mapping[str, Any]) -> dict[str, Any]:
    sc = [ep.get("scaffold") or {} for ep in eps]
    walls = [float(ep.get("agent_s") or 0.0) for ep in eps]
    solved = [ep for ep in eps if ep.get("correct")]
    total = [_tokens(ep, "total_tokens") for ep in eps]
    speed = (per_agent.get("speedup") or {})
    return {
        "kind": "scaffold" if any(sc) else "agent",
        "episodes": len(eps),
        "pass1": _mean([float(bool(ep.get("correct"))) for ep in eps]),
        "speedup_geomean": speed.get("geomean"), "speedup_n": speed.get("n", 0),
        "steps_mean": _mean([ep.get("turns", 0) for ep in eps]),
        "scaffold_turns_mean": _mean([s.get("turns", 0) for s in sc if s]),
        "model_calls_mean": _mean([s.get("model_calls", 0) for s in sc if s]),
        "prompt_tokens_mean": _mean([_tokens(ep, "prompt_tokens") for ep in eps]),
        "completion_tokens_mean": _mean([_tokens(ep, "completion_tokens") for ep in eps]),
        "total_tokens_mean": _mean(total),
        "tokens_per_solved": (sum(total) / len(solved)) if solved else None,
        "wall_s_median": float(np.median(walls)) if walls else None,
        "wall_s_p90": float(np.quantile(walls, 0.9)) if walls else None,
        "exit_statuses": dict(Counter(str(s.get("exit_status") or "-") for s in sc if s)),
    }


def _per_task(eps: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """task key -> mean tokens and wall time of the agent's correct episodes on it."""
    acc: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for ep in eps:
        if ep.get("correct"):
            acc[task_key(ep)].append((_tokens(ep, "total_tokens"), float(ep.get("agent_s") or 0.0)))
    return {t: {"tokens": float(np.mean([x[0] for x in v])), "wall": float(np.mean([x[1] for x in v]))}
            for t, v in acc.items()}


def _ratio(xs: Sequence[float]) -> float | None:
    v = [x for x in xs if x is not None and math.isfinite(x) and x > 0]
    return float(np.exp(np.median(np.log(v)))) if v else None


def scaffold_comparison(episodes: Sequence[Mapping[str, Any]], metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The comparison (see the module docstring); empty lists when no agent is a scaffold."""
    agents = list(metrics.get("agents") or [])
    by_agent: dict[str, list[Mapping[str, Any]]] = {a: [] for a in agents}
    for ep in episodes:
        if ep.get("agent") in by_agent:
            by_agent[ep["agent"]].append(ep)
    scaffolds = [a for a in agents if any(ep.get("scaffold") for ep in by_agent[a])]
    if not scaffolds:
        return {"scaffolds": [], "rows": {}, "pairs": []}
    rows = {a: _agent_row(by_agent[a], (metrics.get("per_agent") or {}).get(a) or {}) for a in agents}
    solved = {a: _per_task(by_agent[a]) for a in scaffolds}
    h2h = {(p["a"], p["b"]): p for p in (metrics.get("head_to_head") or {}).get("pairs") or []}
    pairs = []
    for i, a in enumerate(scaffolds):
        for b in scaffolds[i + 1:]:
            both = sorted(set(solved[a]) & set(solved[b]))
            rec = h2h.get((a, b)) or {}
            pairs.append({
                "a": a, "b": b, "tasks": rec.get("tasks"), "wins": rec.get("wins"), "losses": rec.get("losses"),
                "ties": rec.get("ties"), "win_rate": rec.get("win_rate"), "both_solved": len(both),
                "token_ratio": _ratio([solved[a][t]["tokens"] / solved[b][t]["tokens"] for t in both
                                       if solved[b][t]["tokens"] > 0]),
                "wall_ratio": _ratio([solved[a][t]["wall"] / solved[b][t]["wall"] for t in both
                                      if solved[b][t]["wall"] > 0]),
            })
    return {"scaffolds": scaffolds, "rows": rows, "pairs": pairs}


def _f(x: Any, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def scaffold_rows(sc: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per agent: correctness, speed, steps, turns, tokens, wall time."""
    head = ["agent", "kind", "episodes", "pass@1", "speedup geomean (n)", "env steps", "scaffold turns",
            "model calls", "prompt tok/ep", "completion tok/ep", "total tok/ep", "tok per solved",
            "wall s median", "wall s p90", "exit statuses"]
    rows = []
    for a, r in (sc.get("rows") or {}).items():
        pct = "–" if r["pass1"] is None else f"{100 * r['pass1']:.1f}%"
        sp = f"{_f(r['speedup_geomean'])}x ({r['speedup_n']})" if r.get("speedup_geomean") else "–"
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(r["exit_statuses"].items())) or "–"
        rows.append([a, r["kind"], str(r["episodes"]), pct, sp, _f(r["steps_mean"]), _f(r["scaffold_turns_mean"]),
                     _f(r["model_calls_mean"]), _f(r["prompt_tokens_mean"], 0), _f(r["completion_tokens_mean"], 0),
                     _f(r["total_tokens_mean"], 0), _f(r["tokens_per_solved"], 0), _f(r["wall_s_median"]),
                     _f(r["wall_s_p90"]), statuses])
    return head, rows


def pair_rows(sc: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per pair of scaffolds: head-to-head record and cost ratios on tasks both solved."""
    head = ["a", "b", "tasks", "a wins", "b wins", "ties", "win rate of a", "both solved",
            "tokens a/b (median)", "wall time a/b (median)"]
    rows = [[p["a"], p["b"], _f(p["tasks"]), _f(p["wins"]), _f(p["losses"]), _f(p["ties"]), _f(p["win_rate"]),
             str(p["both_solved"]), _f(p["token_ratio"]), _f(p["wall_ratio"])] for p in sc.get("pairs") or []]
    return head, rows
