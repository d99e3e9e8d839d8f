"""Import HumanEval / HumanEval+ / MBPP+ and judge every canonical solution; print a table.

    python benchmarks/evalplus_fidelity.py                      # full plus sets
    python benchmarks/evalplus_fidelity.py --max-plus 50        # the default test's subset
    python benchmarks/evalplus_fidelity.py --datasets humanevalplus --keep /tmp/hep

Fidelity: a faithful import accepts every canonical solution (164/164 HumanEval and
HumanEval+, 378/378 MBPP+). Columns: tasks, task kinds, test cases, seconds spent
importing (reference runs in the sandbox + YAML writing), loading the suite
(YAML parsing + validation, the dominant cost for the full plus sets), and judging
(all tasks in parallel over the sandbox's slots). Needs /work/shared/benchmarks.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

from codegym.importers.humaneval import import_humaneval
from codegym.importers.references import judge_references
from codegym.sandbox import make_sandbox
from codegym.tasks.suite import load_suite

BENCH = Path("/work/shared/benchmarks")
SOURCES = {
    "humaneval": (BENCH / "humaneval" / "HumanEval.jsonl.gz", "plain"),
    "humanevalplus": (BENCH / "humaneval_plus" / "HumanEvalPlus-v0.1.10.jsonl.gz", "plus"),
    "mbppplus": (BENCH / "mbpp_plus" / "MbppPlus-v0.2.0.jsonl.gz", "plus"),
}


def run(name: str, out: Path, max_plus: int | None, sandbox) -> dict:
    src, mode = SOURCES[name]
    t0 = time.monotonic()
    report = import_humaneval(src, out / name, mode=mode, max_plus=max_plus, sandbox=sandbox, validate=False,
                              verify=False)   # the references are judged below, timed
    t_import = time.monotonic() - t0
    suite = load_suite(out / name)
    t_load = time.monotonic() - t0 - t_import
    results = judge_references(suite, sandbox=sandbox)
    t_judge = time.monotonic() - t0 - t_import - t_load
    verdicts = Counter(r.verdict for _, r in results)
    bad = [(tid, r.verdict, r.message[:160]) for tid, r in results if r.verdict != "accepted"]
    return {"dataset": name, "tasks": len(suite), "kinds": dict(Counter(t.kind for t in suite)),
            "cases": sum(r.total for _, r in results), "import_s": t_import, "load_s": t_load,
            "judge_s": t_judge, "accepted": verdicts.get("accepted", 0), "bad": bad,
            "notes": report.notes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="humaneval,humanevalplus",
                    help="comma-separated: humaneval, humanevalplus, mbppplus")
    ap.add_argument("--max-plus", type=int, default=None, help="plus inputs per problem (default: all)")
    ap.add_argument("--keep", default=None, help="write the suites here (default: a temporary folder)")
    args = ap.parse_args()
    sandbox = make_sandbox()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.keep) if args.keep else Path(tmp)
        for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
            if not SOURCES[name][0].exists():
                print(f"{name}: {SOURCES[name][0]} is absent, skipped")
                continue
            rows.append(run(name, out, args.max_plus, sandbox))
    print(f"\nsandbox: {type(sandbox).__name__}, {getattr(sandbox, 'workers', '?')} slot(s), "
          f"isolation {getattr(sandbox, 'isolation', '?')}; max_plus={args.max_plus}")
    print(f"{'dataset':<14} {'tasks':>5} {'kinds':<26} {'cases':>7} {'import s':>9} {'load s':>8} "
          f"{'judge s':>8} {'accepted':>9}")
    for r in rows:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(r["kinds"].items()))
        print(f"{r['dataset']:<14} {r['tasks']:>5} {kinds:<26} {r['cases']:>7} {r['import_s']:>9.1f} "
              f"{r['load_s']:>8.1f} {r['judge_s']:>8.1f} {r['accepted']:>5}/{r['tasks']}")
        for b in r["bad"]:
            print(f"    not accepted: {b}")


if __name__ == "__main__":
    main()
