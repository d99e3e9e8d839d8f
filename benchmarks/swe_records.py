"""Real SWE-bench records end to end (issue 27): import, gold and empty-patch grades, per record.

    python benchmarks/swe_records.py [--backend local|docker|both] [--ids ID ...] [--records FILE]
                                     [--envs DIR] [--json OUT]

The records are the published SWE-bench Lite / dev-split records that
tests/importers/data/swebench_real/manifest.json names (read from a records file, or from the
mirrors of the repositories that publish them; swe_real_records.py there says where). Each
record is imported on its own with the documented path only -- `import_swebench` with
``--repo-url`` the local mirror (``$CODEGYM_MIRRORS``, default /work/.mirror) -- so one broken
record cannot take the others with it, and graded with `grade` on each backend: the gold patch,
the empty patch, then the gold patch again.

Columns: the record, its repository and SWE-bench version; the Python SWE-bench's spec asks for
(swebench 4.x ``MAP_REPO_VERSION_TO_SPECS`` when installed, else the manifest's copy of
swebench 4.1.0's) and the Python the grade used (a ``Python X.Y`` the report or the task names,
else the sandbox's interpreter); gold and no-op resolutions; ``setup s`` = first gold grade
minus the second (the environment built or found, and the base tree made): ``cold`` for the
first record of an environment (repository, version, packages) in this run, ``warm`` for the
next ones; ``grade s`` = the second gold grade; the reason of each failure (one line). The run
starts on a fresh environment folder (``CODEGYM_ENVS``; ``--envs`` reuses one). Needs the
records and the mirrors; says which are missing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "importers" / "data" / "swebench_real"))

import swe_real_records as data  # noqa: E402  (the data's own reader, beside the manifest)

from codegym import load_suite  # noqa: E402
from codegym.importers.swebench import grade, import_swebench  # noqa: E402
from codegym.sandbox import make_sandbox  # noqa: E402
from codegym.tasks.repo import reference_files, swe_data  # noqa: E402


def spec_python(repo: str, version: str) -> str:
    """The Python SWE-bench's harness builds this repository and version with."""
    try:
        from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS  # swebench 4.x only
        return str(MAP_REPO_VERSION_TO_SPECS[repo][version]["python"])
    except (ImportError, KeyError):
        return data.manifest()["swebench_python"]["specs"].get(repo, {}).get(version, "?")


def _default_python() -> str:
    try:
        import subprocess

        from codegym.core.languages import python_path
        out = subprocess.run([python_path(), "--version"], capture_output=True, text=True).stdout
        return out.split()[-1].rsplit(".", 1)[0] + " (sandbox's)"
    except Exception:  # noqa: BLE001 -- a label only
        return "?"


_PY = re.compile(r"\b[Pp]ython[ -]?(3\.\d+)")


def python_used(task, reports) -> str:
    """A ``Python 3.X`` the grade's report or the task names, else the sandbox's interpreter."""
    texts = [r.message for r in reports] + [c.message for r in reports for c in r.cases]
    extra = swe_data(task).extra
    texts += [str(extra.get(k, "")) for k in ("python", "env", "environment")]
    for t in texts:
        m = _PY.search(t or "")
        if m:
            return m.group(1)
    return _default_python()


def reason(g) -> str:
    """One line: why a grade is not FULL (the error line of the first failing case)."""
    for c in g.report.cases:
        if c.status == "passed":
            continue
        lines = [ln.strip() for ln in (c.message or "").splitlines() if ln.strip()]
        errs = [ln for ln in lines if re.search(r"(Error|Exception|error:|not found|No module)", ln)]
        pick = errs[-1] if errs else (lines[0] if lines else c.status)
        return f"{c.name}: {pick}"[:160]
    return g.report.message.splitlines()[0][:160] if g.report.message else ""


def import_one(records: Path, iid: str, out: Path):
    """(task or None, why not) -- one record through the documented import."""
    try:
        rep = import_swebench(records, out, ids=[iid], repo_url=data.repo_url_template())
    except Exception as e:  # noqa: BLE001 -- the import's failure is a row of the table
        last = str(e).strip().splitlines()[-1:] or [type(e).__name__]
        return None, f"import raised {type(e).__name__}: {last[0]}"[:160]
    if not rep.written:
        why = "; ".join(reason for _where, reason in rep.skipped) if rep.skipped else "nothing written"
        return None, f"import skipped it: {why}"[:160]
    tasks = list(load_suite(out))
    return tasks[0], ""


def run(records: list[dict], backends: list[str], envs: str | None) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="codegym-swe-records-", dir="/var/tmp") as tmp:
        tmp = Path(tmp)
        tmp.chmod(0o755)  # the sandbox's uids read the environments made under it
        rec_file = data.write_records(tmp / "records.jsonl", records)
        imported = {}
        for r in records:
            t0 = time.perf_counter()
            task, why = import_one(rec_file, r["instance_id"], tmp / "suites" / r["instance_id"])
            imported[r["instance_id"]] = (task, why, time.perf_counter() - t0)
        for backend in backends:
            os.environ["CODEGYM_ENVS"] = envs or str(tmp / f"envs-{backend}")  # a cold start
            sb = make_sandbox(backend)
            seen_env: set = set()
            for r in records:
                iid = r["instance_id"]
                task, why, import_s = imported[iid]
                row = {"backend": backend, "instance_id": iid, "repo": r["repo"], "version": r["version"],
                       "python_asked": spec_python(r["repo"], r["version"]), "import_s": round(import_s, 1)}
                if task is None:
                    rows.append({**row, "gold": "-", "noop": "-", "reason": why})
                    print(_line(rows[-1]), flush=True)
                    continue
                d = swe_data(task)
                key = (r["repo"], r["version"], tuple(d.install or ()))
                try:
                    t0 = time.perf_counter()
                    gold = grade(task, reference_files(task), sb)
                    t1 = time.perf_counter()
                    noop = grade(task, {}, sb)
                    t2 = time.perf_counter()
                    gold2 = grade(task, reference_files(task), sb)
                    t3 = time.perf_counter()
                except Exception as e:  # noqa: BLE001
                    rows.append({**row, "gold": "error", "noop": "error", "reason": f"grade raised {e!r}"[:160]})
                    print(_line(rows[-1]), flush=True)
                    continue
                setup = max(0.0, (t1 - t0) - (t3 - t2))
                kind = "warm" if key in seen_env else "cold"
                seen_env.add(key)
                why = reason(gold) if gold.resolution.status != "FULL" else ""
                if noop.resolution.status == "FULL":
                    why = (why + "; " if why else "") + "no-op FULL: " + noop.report.message.splitlines()[0][:80]
                if gold2.resolution.status != gold.resolution.status:
                    why = (why + "; " if why else "") + f"second gold grade {gold2.resolution.status}"
                rows.append({**row, "python_used": python_used(task, [gold.report, noop.report]),
                             "gold": gold.resolution.status, "noop": noop.resolution.status,
                             "setup_kind": kind, "setup_s": round(setup, 1), "grade_s": round(t3 - t2, 1),
                             "noop_s": round(t2 - t1, 1), "reason": why})
                print(_line(rows[-1]), flush=True)
    return rows


HEADER = (f"{'backend':7} {'record':36} {'repository':28} {'ver':5} {'py asked':8} {'py used':14} "
          f"{'gold':7} {'no-op':7} {'setup':>11} {'grade s':>7}  reason")


def _line(r: dict) -> str:
    setup = f"{r['setup_kind']} {r['setup_s']:.1f}" if "setup_s" in r else "-"
    grade_s = f"{r['grade_s']:.1f}" if "grade_s" in r else "-"
    return (f"{r['backend']:7} {r['instance_id']:36} {r['repo']:28} {r['version']:5} {r['python_asked']:8} "
            f"{r.get('python_used', '-'):14} {r['gold']:7} {r['noop']:7} {setup:>11} {grade_s:>7}  {r['reason']}")


def _median(xs: list[float]) -> str:
    return f"{statistics.median(xs):.1f}" if xs else "-"


def summary(rows: list[dict]) -> list[str]:
    out = []
    for backend in sorted({r["backend"] for r in rows}):
        rs = [r for r in rows if r["backend"] == backend]
        full = sum(r["gold"] == "FULL" for r in rs)
        noop_full = sum(r["noop"] == "FULL" for r in rs)
        cold = [r["setup_s"] for r in rs if r.get("setup_kind") == "cold"]
        warm = [r["setup_s"] for r in rs if r.get("setup_kind") == "warm"]
        grades = [r["grade_s"] for r in rs if "grade_s" in r]
        out.append(f"{backend}: gold FULL {full}/{len(rs)}, no-op FULL {noop_full}/{len(rs)}, "
                   f"not imported {sum(r['gold'] == '-' for r in rs)}; setup median cold {_median(cold)} s "
                   f"({len(cold)}), warm {_median(warm)} s ({len(warm)}); grade median {_median(grades)} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["local", "docker", "both"], default="local")
    ap.add_argument("--ids", nargs="*", help="only these instance ids")
    ap.add_argument("--records", help="a records file (JSON lines); default: see swe_real_records.py")
    ap.add_argument("--envs", help="an environment folder to use (default: a fresh one per backend)")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    try:
        records = data.load_records(args.records)
    except data.RecordsUnavailable as e:
        sys.exit(f"records unavailable: {e}")
    if args.ids:
        records = [r for r in records if r["instance_id"] in set(args.ids)]
    absent = sorted({r["repo"] for r in records if not data.mirror(r["repo"]).is_dir()})
    if absent:
        print(f"no mirror of {', '.join(absent)} under {data.mirrors_root()}: their records will not import")
    backends = ["local", "docker"] if args.backend == "both" else [args.backend]
    print(f"{len(records)} records, {len({r['repo'] for r in records})} repositories, backends {backends}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(HEADER, flush=True)
    t0 = time.perf_counter()
    rows = run(records, backends, args.envs)
    print("\n".join(summary(rows)))
    print(f"{time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.1f} (1 min), "
          f"{os.getloadavg()[2]:.1f} (15 min)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
