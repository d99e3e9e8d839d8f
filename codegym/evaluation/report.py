"""Reports of an eval: ``results.json``, ``summary.md`` and one self-contained ``report.html``.

`write_report(dir)` (``codegym report DIR``) turns an eval directory (``manifest.json``
+ ``results.jsonl``, `codegym.evaluation.store`) into ``results.json`` (the manifest's
provenance and every metric of `codegym.evaluation.metrics.compute_metrics`),
``summary.md`` (Markdown tables for papers) and ``report.html``: one file with no
external resource (inline SVG plots made with matplotlib's Agg backend, inline styles
and filter script), described in docs/eval.md.
"""

from __future__ import annotations

import html
import io
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from codegym.evaluation.metrics import compute_metrics
from codegym.evaluation.scaffolds import pair_rows, scaffold_comparison, scaffold_rows
from codegym.evaluation.store import RESULTS_FILE, ResultStore, read_manifest

REPORT_FILE = "report.html"
RESULTS_JSON = "results.json"
SUMMARY_FILE = "summary.md"
#: the episode table keeps at most this many characters of a diff (the rest is elided)
MAX_DIFF_CHARS = 20000


def load_eval(out_dir: str | os.PathLike) -> tuple[dict[str, Any], list[dict], list[dict]]:
    """(manifest, episode records, speed comparison records) of an eval directory.

    Records of keys that are not in the current plan are kept (a report of an old run
    shows what it holds); a key stored twice keeps its first record."""
    out = Path(out_dir)
    manifest = read_manifest(out)
    seen: set[str] = set()
    episodes, speed = [], []
    for r in ResultStore(out / RESULTS_FILE).load(repair=False):
        if r.get("key") in seen:
            continue
        seen.add(r.get("key"))
        (episodes if r.get("kind") == "episode" else speed).append(r)
    order = {a: i for i, a in enumerate(manifest.get("agents") or [])}
    episodes.sort(key=lambda e: (e["suite"], e["task_id"], e["sample"], order.get(e["agent"], 1 << 30)))
    return manifest, episodes, speed


def build_results(out_dir: str | os.PathLike) -> dict[str, Any]:
    """The content of results.json (provenance + metrics)."""
    manifest, episodes, speed = load_eval(out_dir)
    cfg = manifest.get("config") or {}
    timing = cfg.get("timing") or {}
    boot = cfg.get("bootstrap") or {}
    agents = [a for a in manifest.get("agents") or [] if any(e["agent"] == a for e in episodes)]
    ks = [k for k in manifest.get("ks") or [1]]
    metrics = compute_metrics(episodes, speed, agents=agents or None, ks=ks,
                              percentiles=timing.get("percentiles") or (30, 50, 70) if timing else (),
                              n_boot=int(boot.get("samples", 1000)), seed=int(boot.get("seed", 0)),
                              level=float(boot.get("level", 0.95)))
    metrics["scaffolds"] = scaffold_comparison(episodes, metrics)
    prov = {k: manifest.get(k) for k in ("schema", "name", "codegym_version", "fingerprint", "config_source",
                                         "config", "task_hashes", "sessions", "seeds", "ks",
                                         "planned_episodes")}
    prov["stored_episodes"] = len(episodes)
    prov["timing"] = bool(timing and timing.get("enabled", True))
    return {"provenance": prov, "metrics": metrics}


# --------------------------------------------------------------------------- formatting


def _f(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _ci(v: Mapping[str, Any] | None, pct: bool = True) -> str:
    if not v or v.get("value") is None:
        return "–"
    val, ci = v["value"], v.get("ci") or [None, None]
    f = _pct if pct else _f
    if ci[0] is None or ci[0] == ci[1]:
        return f(val)
    return f"{f(val)} [{f(ci[0])}, {f(ci[1])}]"


def _main_rows(res: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    m = res["metrics"]
    ks = m["ks"]
    pcts = m["percentiles"] if res["provenance"].get("timing") else []
    head = ["agent", "episodes"] + [f"pass@{k}" for k in ks] + ["correct & runnable"]
    head += [f"strict top-{p:g}% pass@1" for p in pcts]
    if res["provenance"].get("timing"):
        head += ["rel. efficiency (mean, n)", "speedup geomean (n)"]
    head += ["score [CI]", "rank [CI]"]
    rank = {r["agent"]: r for r in m["ranking"]}
    rows = []
    for a in m["agents"]:
        pa = m["per_agent"][a]
        row = [a, str(pa["episodes"])] + [_ci(pa["pass_at_k"].get(str(k))) for k in ks]
        row.append(_pct(pa["correct_runnable_rate"]))
        row += [_ci(pa["strict_top_pass1"].get(f"{p:g}")) for p in pcts]
        if res["provenance"].get("timing"):
            eff = pa["relative_efficiency"]
            row.append(f"{_f(eff.get('mean'))} ({eff.get('n', 0)})")
            sp = pa["speedup"]
            row.append(f"{_f(sp.get('geomean'), 2)}x ({sp.get('n', 0)})" if sp.get("n") else "– (0)")
        r = rank.get(a, {})
        sc = r.get("score_ci") or [None, None]
        row.append(f"{_f(r.get('score'))} [{_f(sc[0])}, {_f(sc[1])}]")
        rc = r.get("rank_ci") or ["?", "?"]
        row.append(f"{r.get('rank', '–')} [{rc[0]}, {rc[1]}]")
        rows.append(row)
    return head, rows


def _h2h_rows(m: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    agents = m["agents"]
    head = ["win rate (row vs column)"] + agents
    rows = [[a] + ["–" if a == b else _pct(m["head_to_head"]["matrix"][a][b]) for b in agents] for a in agents]
    return head, rows


def _turn_rows(m: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["agent", "turns mean", "turns median", "turns max", "turn budget used", "edit formats",
            "unparseable", "failed edits", "submitted", "time-budget hits", "tokens"]
    rows = []
    for a in m["agents"]:
        t = m["per_agent"][a]["turns"]
        fmts = ", ".join(f"{k} {v}" for k, v in (t.get("formats") or {}).items()) or "–"
        rows.append([a, _f(t.get("turns_mean"), 2), _f(t.get("turns_median"), 1), str(t.get("turns_max")),
                     _pct(t.get("turn_budget_used")), fmts, _pct(t.get("unparseable_share")),
                     _pct(t.get("failed_edit_share")), _pct(t.get("submitted_share")),
                     str(t.get("time_budget_hits")), str(t.get("tokens"))])
    return head, rows


def _group_rows(m: Mapping[str, Any], dim: str) -> tuple[list[str], list[list[str]]]:
    groups = sorted({g for a in m["agents"] for g in m["per_agent"][a][f"pass1_by_{dim}"]})
    head = [dim] + m["agents"]
    rows = []
    for g in groups:
        row = [g]
        for a in m["agents"]:
            v = m["per_agent"][a][f"pass1_by_{dim}"].get(g)
            row.append(f"{_pct(v['value'])} ({v['tasks']})" if v else "–")
        rows.append(row)
    return head, rows


# --------------------------------------------------------------------------- markdown


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    out = ["| " + " | ".join(esc(h) for h in head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def render_markdown(res: Mapping[str, Any]) -> str:
    """summary.md: the main tables as Markdown."""
    p, m = res["provenance"], res["metrics"]
    cal = [s.get("calibration_factor") for s in p.get("sessions") or [] if s.get("calibration_factor")]
    parts = [f"# {p.get('name')}: codegym eval",
             "",
             f"codegym {p.get('codegym_version')}; {len(m['tasks'])} task(s), {len(m['agents'])} agent(s), "
             f"{p.get('stored_episodes')} of {p.get('planned_episodes')} episode(s); n = {len(p.get('seeds') or [])} "
             f"sample(s) per task; timing {'on' if p.get('timing') else 'off'}; calibration factor "
             f"{', '.join(f'{c:.4g} s' for c in cal) or 'not measured'}; "
             f"fingerprint `{(p.get('fingerprint') or '')[:16]}`.",
             f"Intervals: {100 * m['bootstrap']['level']:.0f}% percentile bootstrap over tasks "
             f"({m['bootstrap']['samples']} resamples, seed {m['bootstrap']['seed']}).",
             "", "## Results", "", _md_table(*_main_rows(res)),
             "", "## Ranking (mean head-to-head win rate)", "",
             _md_table(["rank [CI]", "agent", "score [CI]"],
                       [[f"{r['rank']} [{r['rank_ci'][0]}, {r['rank_ci'][1]}]", r["agent"],
                         f"{_f(r['score'])} [{_f(r['score_ci'][0])}, {_f(r['score_ci'][1])}]"] for r in m["ranking"]]),
             "", "## Head-to-head", "", _md_table(*_h2h_rows(m))]
    sat = m["saturation"]
    parts += ["", "## Saturation", "",
              f"{len(sat['saturated'])} of {sat['common_tasks']} task(s) solved by every agent on every sample"
              + (": " + ", ".join(f"`{t}`" for t in sat["saturated"]) if sat["saturated"] else "")
              + f"; {len(sat['unsolved'])} solved by none"
              + (": " + ", ".join(f"`{t}`" for t in sat["unsolved"]) if sat["unsolved"] else "") + ".",
              "", "pass@1 without the saturated tasks: "
              + "; ".join(f"{a} {_ci(m['per_agent'][a]['pass1_unsaturated'])}" for a in m["agents"]) + "."]
    for dim in ("family", "difficulty", "language"):
        parts += ["", f"## pass@1 by {dim}", "", _md_table(*_group_rows(m, dim))]
    parts += ["", "## Turn statistics", "", _md_table(*_turn_rows(m)), ""]
    if (m.get("scaffolds") or {}).get("scaffolds"):
        parts += ["## Scaffolds head to head", "", _md_table(*scaffold_rows(m["scaffolds"])), "",
                  _md_table(*pair_rows(m["scaffolds"])), ""]
    return "\n".join(parts)


# --------------------------------------------------------------------------- plots


def _svg(fig) -> str:
    """A matplotlib figure as an inline <svg> element (text kept as text)."""
    import matplotlib.pyplot as plt  # noqa: PLC0415 -- heavy: only when a report is drawn
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})  # reproducible files
    plt.close(fig)
    s = buf.getvalue()
    return s[s.index("<svg"):]


def _mpl():
    import matplotlib  # noqa: PLC0415 -- heavy: only when a report is drawn
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # noqa: PLC0415
    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False,
                         "axes.spines.right": False, "svg.hashsalt": "codegym"})
    return plt


def plot_pass_at_k(m: Mapping[str, Any]) -> str:
    plt = _mpl()
    agents, ks = m["agents"], m["ks"]
    fig, ax = plt.subplots(figsize=(max(4.5, 1.2 * len(agents) * len(ks) + 1.5), 3.2))
    width = 0.8 / max(1, len(agents))
    x = np.arange(len(ks))
    for i, a in enumerate(agents):
        vals, lo, hi = [], [], []
        for k in ks:
            v = m["per_agent"][a]["pass_at_k"].get(str(k)) or {}
            val = v.get("value")
            ci = v.get("ci") or [val, val]
            vals.append(val if val is not None else 0)
            lo.append((val - ci[0]) if val is not None and ci[0] is not None else 0)
            hi.append((ci[1] - val) if val is not None and ci[1] is not None else 0)
        bars = ax.bar(x + (i - (len(agents) - 1) / 2) * width, vals, width, yerr=[lo, hi], capsize=3, label=a)
        for b, v in zip(bars, vals):
            ax.annotate(f"{v:.2f}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom", fontsize=7,
                        xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(x, [f"pass@{k}" for k in ks])
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("fraction of tasks")
    ax.set_title("pass@k (bootstrap intervals over tasks)")
    ax.legend(fontsize=8, frameon=False, ncol=min(5, len(agents)), loc="upper center",
              bbox_to_anchor=(0.5, -0.12))
    return _svg(fig)


def plot_speedups(m: Mapping[str, Any]) -> str | None:
    agents = [a for a in m["agents"] if (m["per_agent"][a]["speedup"] or {}).get("n")]
    if not agents:
        return None
    plt = _mpl()
    data = [m["per_agent"][a]["speedup"]["values"] for a in agents]
    fig, ax = plt.subplots(figsize=(max(4.5, 1.3 * len(agents) + 1.5), 3.2))
    ax.boxplot(data, showfliers=False)
    ax.set_xticks(range(1, len(agents) + 1), agents)
    rng = np.random.default_rng(0)  # jitter only: seeded so the file is reproducible
    for i, d in enumerate(data, 1):
        ax.scatter(i + rng.uniform(-0.12, 0.12, len(d)), d, s=10, alpha=0.6)
    ax.set_yscale("log")
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_ylabel("speedup over baseline (log)")
    ax.set_title("speedup distribution (correct and runnable episodes)")
    return _svg(fig)


def plot_heatmap(m: Mapping[str, Any]) -> str:
    plt = _mpl()
    agents, tasks = m["agents"], [t["key"] for t in m["tasks"]]
    arr = np.array([[(m["per_task"][a].get(t) or {}).get("rate") if (m["per_task"][a].get(t) or {}).get("rate")
                     is not None else np.nan for t in tasks] for a in agents], dtype=float)
    fig, ax = plt.subplots(figsize=(min(24, max(5, 0.32 * len(tasks) + 2.5)), 0.45 * len(agents) + 2.6))
    im = ax.imshow(np.ma.masked_invalid(arr), aspect="auto", cmap="RdYlGn", vmin=0, vmax=1)
    ax.set_yticks(range(len(agents)), agents)
    ax.set_xticks(range(len(tasks)), [t.split(":", 1)[-1] for t in tasks], rotation=60, ha="right", fontsize=7)
    if len(tasks) * len(agents) <= 400:
        for i in range(len(agents)):
            for j in range(len(tasks)):
                if not np.isnan(arr[i, j]):
                    ax.text(j, i, f"{arr[i, j]:.2g}", ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.01, label="fraction correct")
    ax.set_title("per-task pass rate (agents x tasks)")
    return _svg(fig)


def plot_h2h(m: Mapping[str, Any]) -> str:
    plt = _mpl()
    agents = m["agents"]
    mat = m["head_to_head"]["matrix"]
    arr = np.array([[mat[a][b] if mat[a][b] is not None else np.nan for b in agents] for a in agents], dtype=float)
    fig, ax = plt.subplots(figsize=(1.0 * len(agents) + 2.5, 0.8 * len(agents) + 1.8))
    im = ax.imshow(np.ma.masked_invalid(arr), cmap="coolwarm_r", vmin=0, vmax=1)
    ax.set_xticks(range(len(agents)), agents, rotation=30, ha="right")
    ax.set_yticks(range(len(agents)), agents)
    for i in range(len(agents)):
        for j in range(len(agents)):
            if not np.isnan(arr[i, j]):
                ax.text(j, i, f"{arr[i, j]:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax, fraction=0.05, label="win rate of row vs column")
    ax.set_title("head-to-head (correctness, then speed)")
    return _svg(fig)


# --------------------------------------------------------------------------- html

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1400px;padding:1em 2em;color:#222}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4;position:sticky;top:0}tr:nth-child(even) td{background:#fafafa}
figure.plot{margin:1em 0;overflow-x:auto}figure.plot svg{max-width:100%;height:auto}
pre{background:#f7f7f7;padding:.5em;overflow-x:auto;max-height:30em;font-size:12px;margin:.3em 0}
.v-accepted{color:#176d2c;font-weight:600}.v-bad{color:#a4161a}.muted{color:#777}
#filter{padding:4px 8px;width:22em;margin:.4em 0}.kv td:first-child{font-weight:600}
"""  # noqa: E501 -- one CSS rule set per line

_JS = """
(function(){
  var input=document.getElementById('filter');
  var rows=Array.prototype.slice.call(document.querySelectorAll('#episodes tbody tr'));
  var count=document.getElementById('episode-count');
  function apply(){
    var q=input.value.toLowerCase(), shown=0;
    rows.forEach(function(r){var ok=!q||r.getAttribute('data-search').indexOf(q)>=0;r.style.display=ok?'':'none';if(ok)shown++;});
    count.textContent=shown+' of '+rows.length+' episode(s)';
  }
  input.addEventListener('input',apply);
  apply();
  document.body.setAttribute('data-ready','1');
})();
"""  # noqa: E501


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], id_: str | None = None, cls: str = "") -> str:
    e = html.escape
    out = [f"<table{f' id={e(id_)!r}' if id_ else ''}{f' class={e(cls)!r}' if cls else ''}><thead><tr>"]
    out += [f"<th>{e(str(h))}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _figure(id_: str, svg: str | None, caption: str, missing: str) -> str:
    if svg is None:
        return f'<p class="muted" id="{id_}-missing">{html.escape(missing)}</p>'
    return (f'<figure class="plot" id="{id_}">{svg}'
            f'<figcaption class="muted">{html.escape(caption)}</figcaption></figure>')


def _episode_rows(episodes: Sequence[Mapping[str, Any]]) -> str:
    e = html.escape
    out = []
    for ep in episodes:
        verdict = str(ep.get("verdict"))
        formats = sorted({f for st in ep.get("steps") or () for f in st.get("formats") or ()})
        errs = sum(1 for st in ep.get("steps") or () if st.get("error"))
        perf = ep.get("perf") or {}
        sp = perf.get("speedup")
        diff = ep.get("final_diff") or ""
        cut = len(diff) > MAX_DIFF_CHARS
        diff_html = (f"<details><summary>{len(diff.splitlines())} line(s)</summary><pre>"
                     f"{e(diff[:MAX_DIFF_CHARS])}{e(chr(10) + '... [diff cut]') if cut else ''}</pre></details>"
                     if diff else '<span class="muted">no change</span>')
        search = " ".join(str(x) for x in (ep["agent"], ep["suite"], ep["task_id"], verdict, ep.get("language")))
        cls = "v-accepted" if verdict == "accepted" else "v-bad"
        out.append(
            f'<tr data-search="{e(search.lower())}"><td>{e(ep["agent"])}</td><td>{e(ep["suite"])}</td>'
            f'<td>{e(ep["task_id"])}</td><td>{ep["sample"]}</td><td>{ep["seed"]}</td><td>{e(str(ep.get("language")))}</td>'
            f'<td class="{cls}">{e(verdict)}</td><td>{e(str(ep.get("passed")))}/{e(str(ep.get("total")))}</td>'
            f'<td>{_f(ep.get("final_reward"))}</td><td>{ep.get("turns")}</td><td>{e(", ".join(formats) or "–")}</td>'
            f'<td>{errs}</td><td>{_f(sp, 2) + "x" if sp else "–"}</td><td>{diff_html}</td></tr>')
    return "".join(out)


def render_html(res: Mapping[str, Any], episodes: Sequence[Mapping[str, Any]], manifest: Mapping[str, Any]) -> str:
    """report.html as a string (self-contained: no external resource)."""
    e = html.escape
    p, m = res["provenance"], res["metrics"]
    sessions = p.get("sessions") or []
    sess_rows = [[s.get("started"), (s.get("machine") or {}).get("host"), (s.get("machine") or {}).get("cpu"),
                  (s.get("machine") or {}).get("cpus"), s.get("sandbox"), s.get("isolation"),
                  _f(s.get("calibration_factor"), 5) if s.get("calibration_factor")
                  else s.get("calibration_error", "–")]
                 for s in sessions]
    sat = m["saturation"]
    timing_note = ("Timing was off for this eval (`timing:` in the config): no speed metrics."
                   if not p.get("timing") else "No correct and runnable timed episode.")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{e(str(p.get('name')))}: codegym eval</title>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{e(str(p.get('name')))} <span class='muted'>codegym eval</span></h1>",
        f"<p>codegym {e(str(p.get('codegym_version')))} · {len(m['tasks'])} task(s) · {len(m['agents'])} agent(s) · "
        f"{p.get('stored_episodes')} of {p.get('planned_episodes')} episode(s) · n = {len(p.get('seeds') or [])} "
        f"sample(s) per task · timing {'on' if p.get('timing') else 'off'} · fingerprint "
        f"<code>{e(str(p.get('fingerprint'))[:16])}</code></p>",
        "<h2 id='results'>Results</h2>", _table(*_main_rows(res), id_="summary"),
        f"<p class='muted'>Intervals: {100 * m['bootstrap']['level']:.0f}% percentile bootstrap over tasks "
        f"({m['bootstrap']['samples']} resamples, seed {m['bootstrap']['seed']}). pass@k: unbiased estimator "
        f"over n samples per task. Score: mean head-to-head win rate.</p>",
        _figure("plot-passk", plot_pass_at_k(m), "pass@k per agent with bootstrap intervals", ""),
        "<h2 id='speed'>Speed</h2>",
        _figure("plot-speedup", plot_speedups(m), "speedup over the task's baseline, log scale", timing_note),
        "<h2 id='tasks'>Per task</h2>",
        _figure("plot-heatmap", plot_heatmap(m), "fraction of correct samples per agent and task", ""),
        "<h2 id='h2h'>Head-to-head and ranking</h2>",
        _figure("plot-h2h", plot_h2h(m), "win rate of the row agent against the column agent", ""),
        _table(*_h2h_rows(m), id_="h2h-table"),
        _table(["rank [CI]", "agent", "score [CI]"],
               [[f"{r['rank']} [{r['rank_ci'][0]}, {r['rank_ci'][1]}]", r["agent"],
                 f"{_f(r['score'])} [{_f(r['score_ci'][0])}, {_f(r['score_ci'][1])}]"] for r in m["ranking"]],
               id_="ranking"),
        f"<p>Speed decided {sum(pp.get('decided_by_speed', 0) for pp in m['head_to_head']['pairs'])} task "
        f"comparison(s) ({m['head_to_head']['speed_comparisons']} interleaved comparison(s) run).</p>",
        "<h2 id='saturation'>Saturation</h2>",
        f"<p>{len(sat['saturated'])} of {sat['common_tasks']} task(s) are solved by every agent on every sample; "
        f"{len(sat['unsolved'])} by none.</p>",
        _table(["saturated task"], [[t] for t in sat["saturated"]], id_="saturated") if sat["saturated"] else "",
        _table(["agent", "pass@1 without saturated tasks"],
               [[a, _ci(m["per_agent"][a]["pass1_unsaturated"])] for a in m["agents"]]),
        "<h2 id='groups'>pass@1 by family, difficulty and language</h2>",
        _table(*_group_rows(m, "family")), _table(*_group_rows(m, "difficulty")), _table(*_group_rows(m, "language")),
        "<h2 id='turns'>Turn statistics</h2>", _table(*_turn_rows(m), id_="turns-table"),
        _scaffold_section(m),
        "<h2 id='episodes-h'>Episodes</h2>",
        "<input id='filter' type='search' placeholder='filter: agent, task, verdict, language'> "
        "<span id='episode-count' class='muted'></span>",
        "<table id='episodes'><thead><tr>" + "".join(
            f"<th>{h}</th>" for h in ("agent", "suite", "task", "sample", "seed", "language", "verdict", "tests",
                                      "reward", "turns", "formats", "errors", "speedup", "final diff"))
        + "</tr></thead><tbody>" + _episode_rows(episodes) + "</tbody></table>",
        "<h2 id='provenance'>Provenance</h2>",
        _table(["started", "host", "cpu", "cpus", "sandbox", "isolation", "calibration factor (s)"], sess_rows,
               id_="sessions"),
        f"<details><summary>config ({e(str(p.get('config_source')))})</summary><pre>"
        f"{e(manifest.get('config_text') or json.dumps(p.get('config'), indent=2))}</pre></details>",
        f"<details><summary>{len(p.get('task_hashes') or {})} task content hash(es)</summary><pre>"
        + e("\n".join(f"{h}  {k}" for k, h in sorted((p.get("task_hashes") or {}).items()))) + "</pre></details>",
        f"<script>{_JS}</script></body></html>",
    ]
    return "\n".join(parts)


def _scaffold_section(m: Mapping[str, Any]) -> str:
    sc = m.get("scaffolds") or {}
    if not sc.get("scaffolds"):
        return ""
    return ("<h2 id='scaffolds'>Scaffolds head to head</h2><p class='muted'>Correctness, speed, steps, scaffold "
            "turns, model tokens and the agent's wall time per episode; pairs: head-to-head record and, on tasks "
            "both solved, median cost ratios.</p>" + _table(*scaffold_rows(sc), id_="scaffold-table")
            + _table(*pair_rows(sc), id_="scaffold-pairs"))


def write_report(out_dir: str | os.PathLike) -> list[Path]:
    """Write results.json, summary.md and report.html into `out_dir`; returns their paths."""
    out = Path(out_dir)
    manifest, episodes, _ = load_eval(out)
    res = build_results(out)
    paths = [out / RESULTS_JSON, out / SUMMARY_FILE, out / REPORT_FILE]
    texts = [json.dumps(res, indent=2, default=str) + "\n", render_markdown(res), render_html(res, episodes, manifest)]
    for path, text in zip(paths, texts):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return paths


def _no_external(html_text: str) -> list[str]:
    """URLs a page would fetch (src=/href= to http(s) or //, @import, url(http...))."""
    pats = [r"""(?:src|href)\s*=\s*["'](?:https?:)?//[^"']+""", r"@import", r"url\(\s*['\"]?(?:https?:)?//"]
    return [mm.group(0) for pat in pats for mm in re.finditer(pat, html_text)]
