"""`make demo` (``python -m codegym.cli.demo [--full]``): a tour of codegym in well under three minutes.

Validates the bundled suites, then plays a representative sample -- every family that
runs on this machine, every language of its tasks -- with the oracle (expert reference),
the baseline (the slow starter, or the slowest solution) and a mutant (a wrong answer)
side by side through the `codegym eval` machinery, each suite with its default reward
(``reward_mode: suite``). Its first line says how the programs are confined (bubblewrap; or
without isolation when the user opted in); without bubblewrap and without the opt-in it stops
there with the remedies. It prints one line per
finished episode (plain lines when the output is not a terminal), the table of
correctness, reward and measured speedup, and the path of the HTML report. ``--full``
plays every task. docs/eval.md describes the report.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from codegym.cli.main import main as cli
from codegym.evaluation.config import parse_config
from codegym.evaluation.runner import run_eval
from codegym.sandbox import IsolationUnavailable, make_sandbox
from codegym.tasks.suite import list_suites, load_suite

#: family -> (env id, the sample's tasks): the smallest baselines of each language
SAMPLE: dict[str, tuple[str, list[str]]] = {
    "perfcode": ("codegym/PerfCode-v0", ["perfcode/py-sum-numbers", "perfcode/c-column-stats",
                                         "perfcode/cpp-json-escape"]),
    "dmcoptim": ("codegym/DMCOptim-v0", ["dmcoptim/divisor-tally"]),
    "lcb": ("codegym/LCB-v0", ["lcb/divisible-digit-sums", "lcb/fenced-area"]),
    "examples": ("", ["examples/bracket-depth", "examples/residue-pairs"]),
    "swe": ("codegym/SWE-v0", ["swe/centsplit-lost-cent"]),
    "multiple_julia": ("codegym/MultiPLE-Julia-v0", ["multiple_julia/digital-root"]),
}
#: what each language of the bundled tasks needs on the machine
TOOLS = {"c": "gcc", "cpp": "g++", "julia": "julia", "javascript": "node"}
AGENTS = ["oracle", "baseline", {"name": "mutant", "spec": "mutant:output"}]


def _missing_tool(language: str) -> str | None:
    tool = TOOLS.get(language)
    return tool if tool and shutil.which(tool) is None else None


def plan_suites(full: bool, say) -> list[dict[str, Any]]:
    """The eval's suite entries: the sample (or every task), without the tasks whose
    language cannot run here (each skip is said, with the reason)."""
    entries = []
    for family, (env_id, ids) in SAMPLE.items():
        if family not in list_suites():
            continue
        tasks = list(load_suite(family))
        chosen = tasks if full else [t for t in tasks if t.id in ids]
        runnable = []
        for t in chosen:
            tool = _missing_tool(t.language)
            if tool:
                say(f"skip {t.id}: {t.language} needs `{tool}`, which is not installed")
            else:
                runnable.append(t.id)
        if runnable:
            entry: dict[str, Any] = {"ids": runnable, "label": family}
            entry.update({"env": env_id} if env_id else {"suite": family})
            entries.append(entry)
    return entries


def eval_config(suites: list[dict[str, Any]], workers: int) -> dict[str, Any]:
    """The `codegym eval` config of the demo (a mapping, as its YAML would be)."""
    return {"name": "codegym-demo", "agents": AGENTS, "suites": suites, "samples": 1, "seed": 0,
            "max_turns": 3, "reward_mode": "suite", "workers": workers, "sandbox": "local"}


def speedup(rec: dict[str, Any]) -> str:
    """The measured speedup over the baseline of a correct episode, from its staged reward
    (a candidate stopped at the slow bound is no faster than the baseline)."""
    staged = (rec.get("reward_details") or {}).get("staged") or {}
    times = staged.get("times")
    if not rec.get("correct") or not times:
        return "-"
    if staged.get("bound"):
        return "<=1.0x (stopped)"
    t, tb = times.get("t"), times.get("t_baseline")
    return f"{tb / t:.1f}x" if t and tb else "-"


def episode_line(rec: dict[str, Any]) -> str:
    return (f"{rec['agent']:>8}  {rec['task_id']:<34} {rec['verdict']:<14} reward {rec['final_reward']:.3f}"
            f"  speedup {speedup(rec):<17} {rec['episode_s']:.1f} s")


def demo_table(records: Sequence[dict[str, Any]], agents: Sequence[str]) -> Table:
    """One row per task; per agent: correct, reward, speedup over the baseline."""
    table = Table(title="codegym demo: each suite's default reward (PerfCode / DMC-Optim: staged, on measured speed)")
    table.add_column("task", no_wrap=True)
    table.add_column("lang")
    for a in agents:
        table.add_column(f"{a}\ncorrect", justify="center")
        table.add_column(f"{a}\nreward", justify="right")
        table.add_column(f"{a}\nspeedup", justify="right")
    by = {(r["task_id"], r["agent"]): r for r in records}
    for task in dict.fromkeys(r["task_id"] for r in records):
        lang = next((r.get("language") or "" for r in records if r["task_id"] == task), "")
        row = [task, lang]
        for a in agents:
            r = by.get((task, a))
            row += ["", "", ""] if r is None else [
                "yes" if r["correct"] else f"no ({r['verdict']})", f"{r['final_reward']:.3f}", speedup(r)]
        table.add_row(*row)
    return table


#: the demo's first line, by the local sandbox's isolation
CONFINEMENT = {
    "bwrap": "programs run in bubblewrap (no network, read-only system, only their run directory "
             "and a private /tmp writable)",
    "rlimits": "programs run WITHOUT isolation (rlimits only), as you asked by isolation='rlimits' "
               "or CODEGYM_UNSAFE_NO_ISOLATION=1: they can read and write your files and use the network",
}


def confinement_line() -> str:
    """The demo's first line: how the programs it plays are confined (IsolationUnavailable,
    naming the remedies, when they cannot be)."""
    isolation = make_sandbox("local").isolation
    return f"codegym demo: {CONFINEMENT.get(isolation, f'programs run with isolation={isolation}')}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m codegym.cli.demo", description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="play every task of every suite (long)")
    ap.add_argument("--out", default="out/demo", help="the eval's output directory (replaced)")
    ap.add_argument("--workers", type=int, default=2, help="episodes played at once (default 2)")
    args = ap.parse_args(argv)
    console = Console() if Console().is_terminal else Console(width=200)
    say = (lambda text: console.print(text)) if console.is_terminal else (lambda text: print(text, flush=True))
    t0 = time.monotonic()
    try:
        say(confinement_line())
    except IsolationUnavailable as e:
        print(f"codegym demo: {e}", file=sys.stderr)
        return 2
    say("codegym demo: validating the bundled suites ...")
    rc = cli(["tasks", "validate", "-q"])
    if rc != 0:
        return rc
    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    cfg = parse_config(eval_config(plan_suites(args.full, say), args.workers), "<demo>", base_dir=".")
    n_tasks = sum(len(cfg.tasks(i)) for i in range(len(cfg.suites)))
    say(f"playing {len(cfg.plan())} episodes ({len(cfg.agents)} agents, {n_tasks} tasks of "
        f"{len(cfg.suites)} families) with {args.workers} worker(s) ...")
    records: list[dict[str, Any]] = []

    def on_record(rec: dict[str, Any]) -> None:
        records.append(rec)
        if not console.is_terminal:  # the live display is rich's; elsewhere one plain line each
            say(episode_line(rec))

    summary = run_eval(cfg, out, progress=console.is_terminal, console=console, on_record=on_record)
    console.print(demo_table(records, [a.label for a in cfg.agents]))
    for p in summary.report_files:
        say(f"wrote {p}")
    say(f"{len(records)} episodes in {time.monotonic() - t0:.0f} s; the report: {out / 'report.html'}"
        + (f"; {summary.failed} episode(s) failed, see {out / 'errors.jsonl'}" if summary.failed else ""))
    return 0 if summary.complete else 1


if __name__ == "__main__":
    sys.exit(main())
