"""The teacher tournament: teachers ranked by what execution verified (no LLM judge).

`tournament(episodes, teachers, ...)` takes eval episode records (every teacher on the
same tasks, seeds, turn budget and feedback: the eval's fairness) and gives, per teacher,
the verified pass rate -- the mean over tasks of the share of its samples accepted --
with a seeded percentile-bootstrap interval over tasks (`bootstrap_ci`), overall and per
family, difficulty and language. A task every teacher solves at the `saturation` rate
is *saturated*: it cannot tell teachers apart, so it is listed apart and left out of the
ranking (the teacher study's saturation effect). `tournament_markdown` renders it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from codegym.evaluation.metrics import bootstrap_ci, task_key

#: the breakdowns of the table
DIMENSIONS = ("family", "difficulty", "language")


def _ci(values: list[float], n_boot: int, seed: int, level: float) -> dict[str, Any]:
    mean, lo, hi = bootstrap_ci(values, n_boot, seed, level)
    return {"rate": mean, "lo": lo, "hi": hi, "tasks": len(values)}


def _task_meta(eps: list[Mapping[str, Any]]) -> dict[str, Any]:
    e = eps[0]
    return {"family": e.get("family") or e["task_id"].split("/", 1)[0], "difficulty": e.get("difficulty") or "-",
            "language": e.get("language") or "-"}


def tournament(episodes: Sequence[Mapping[str, Any]], teachers: Sequence[str], saturation: float = 1.0,
               n_boot: int = 1000, seed: int = 0, level: float = 0.95,
               rows: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The tournament table as JSON-able data (see the module docstring); `rows` are the
    synthesis rows (kept / copied / duplicate per episode) counted per teacher."""
    by_task: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    eps_of: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for ep in episodes:
        by_task[task_key(ep)][ep["agent"]].append(bool(ep.get("correct")))
        eps_of[task_key(ep)].append(ep)
    rates = {t: {a: sum(v) / len(v) for a, v in per.items()} for t, per in by_task.items()}
    meta = {t: _task_meta(eps_of[t]) for t in by_task}
    saturated = sorted(t for t, r in rates.items() if all(r.get(a, 0.0) >= saturation for a in teachers))
    contested = [t for t in sorted(rates) if t not in saturated]
    out: dict[str, Any] = {"teachers": list(teachers), "saturation": saturation, "tasks": len(rates),
                           "contested_tasks": len(contested), "bootstrap": {"samples": n_boot, "seed": seed,
                                                                           "level": level}}
    overall = {a: _ci([rates[t].get(a, 0.0) for t in contested], n_boot, seed, level) for a in teachers}
    everything = {a: _ci([rates[t].get(a, 0.0) for t in sorted(rates)], n_boot, seed, level) for a in teachers}
    counts = {a: _teacher_counts(a, episodes, rows) for a in teachers}
    # ties: more of the whole suite solved first, then fewer copies of the tasks' own solutions
    order = sorted(teachers, key=lambda a: (-(overall[a]["rate"] if not math.isnan(overall[a]["rate"]) else -1),
                                            -everything[a]["rate"], counts[a].get("copied", 0), a))
    ranking = []
    for k, a in enumerate(order):
        nxt = overall[order[k + 1]] if k + 1 < len(order) else None
        apart = bool(nxt and not math.isnan(overall[a]["lo"]) and overall[a]["lo"] > nxt["hi"])
        ranking.append({"rank": k + 1, "teacher": a, **overall[a], "all_tasks_rate": everything[a]["rate"],
                        "ahead_of_next": apart, **counts[a]})
    out["ranking"] = ranking
    out["by"] = {}
    for dim in DIMENSIONS:
        groups: dict[str, list[str]] = defaultdict(list)
        for t in contested:
            groups[str(meta[t][dim])].append(t)
        out["by"][dim] = {g: {a: _ci([rates[t].get(a, 0.0) for t in ts], n_boot, seed, level) for a in teachers}
                          for g, ts in sorted(groups.items())}
    out["saturated"] = [{"task": t, **meta[t], "rates": rates[t]} for t in saturated]
    return out


def _teacher_counts(a: str, episodes: Sequence[Mapping[str, Any]],
                    rows: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    mine = [e for e in episodes if e["agent"] == a]
    acc = [e for e in mine if e.get("correct")]
    revised = [e for e in acc if sum(bool(s.get("diff")) for s in e.get("steps") or ()) >= 2]
    out = {"episodes": len(mine), "accepted": len(acc), "accepted_after_revising": len(revised),
           "mean_turns_accepted": (sum(e.get("turns") or 0 for e in acc) / len(acc)) if acc else None}
    if rows is not None:
        r = [x for x in rows if x["teacher"] == a]
        out.update(kept=sum(x["kept"] for x in r), copied=sum(bool(x["copied_from"]) for x in r),
                   duplicates=sum(bool(x["duplicate_of"]) for x in r))
    return out


def _pct(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _cell(c: Mapping[str, Any]) -> str:
    return f"{_pct(c['rate'])} [{_pct(c['lo'])}, {_pct(c['hi'])}]"


def tournament_markdown(table: Mapping[str, Any]) -> str:
    """The table as markdown: ranking, per family / difficulty / language, saturated tasks."""
    lvl = int(round(100 * table["bootstrap"]["level"]))
    lines = [f"# Teacher tournament\n\n{table['contested_tasks']} contested task(s) of {table['tasks']}; verified "
             f"pass rate in %, {lvl} % bootstrap interval over tasks "
             f"({table['bootstrap']['samples']} resamples).\n",
             "| rank | teacher | pass rate | all tasks | accepted | kept | copies | duplicates | revised |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in table["ranking"]:
        lines.append(f"| {r['rank']} | {r['teacher']} | {_cell(r)} | {_pct(r['all_tasks_rate'])} | "
                     f"{r['accepted']}/{r['episodes']} | {r.get('kept', '-')} | {r.get('copied', '-')} | "
                     f"{r.get('duplicates', '-')} | {r['accepted_after_revising']} |")
    teachers = table["teachers"]
    for dim, groups in table["by"].items():
        lines += [f"\n## By {dim}\n", f"| {dim} | tasks | " + " | ".join(teachers) + " |",
                  "|---|---:|" + "---|" * len(teachers)]
        for g, cells in groups.items():
            n = next(iter(cells.values()))["tasks"] if cells else 0
            lines.append(f"| {g} | {n} | " + " | ".join(_cell(cells[a]) for a in teachers) + " |")
    lines += [f"\n## Saturated tasks ({len(table['saturated'])}): every teacher >= "
              f"{_pct(table['saturation'])} %, left out of the ranking\n"]
    for s in table["saturated"]:
        lines.append(f"- {s['task']} ({s['family']}, {s['difficulty']}, {s['language']})")
    return "\n".join(lines) + "\n"
