"""Real SWE-bench records end to end (issue 27): import, gold and empty-patch grades, per record.

    python benchmarks/swe_records.py [--backend local|docker|both] [--ids ID ...] [--records FILE]
                                     [--envs DIR] [--json OUT]

The records are the published SWE-bench Lite / dev-split records that
tests/importers/data/swebench_real/manifest.json names (read from a records file, or from the
mirrors of the repositories that publish them; swe_real_records.py there says where). Each
record is imported on its own with the documented path only -- `import_swebench` with
``--repo-url`` the local mirror (``$CODEGYM_MIRRORS``, default /work/.mirror) -- so one broken
record cannot take the others with it, and graded with `grade` on each backend: the gold patch,
the empty patch, then the gold patch again. Each backend runs in a process of its own.

Columns: the record, its repository and SWE-bench version; the Python SWE-bench's spec asks for
(swebench 4.x ``MAP_REPO_VERSION_TO_SPECS`` when installed, else the manifest's copy of
swebench 4.1.0's) and the Python the grade used (a ``Python X.Y`` the report or the task names,
else the sandbox's interpreter, marked ``*``); gold and no-op resolutions; ``setup s`` = first gold grade
minus the second (the environment built or found, and the base tree made): ``cold`` for the
first record of an environment (repository, version, packages) in this run, ``warm`` for the
next ones (the records of ``KNOWN`` are graded last); ``grade s`` = the second gold grade; the cause where gold is not FULL (``network``,
``record``, ``mirror``: the record's known cause, tests/importers/data/swebench_real/
swe_real_records.py ``KNOWN``; else ``codegym``) and the reason of each failure (one line). The run
starts on an emptied environment folder (``CODEGYM_ENVS`` = /var/tmp/codegym-swe-records/envs;
``--envs`` uses one as it is); on Docker an image of the same environment left by an earlier
run is reused. Needs the
records and the mirrors; says which are missing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
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
        from codegym.core.languages import python_path
        out = subprocess.run([python_path(), "--version"], capture_output=True, text=True).stdout
        return out.split()[-1].rsplit(".", 1)[0] + "*"
    except Exception:  # noqa: BLE001 -- a label only
        return "?"


_PY = re.compile(r"\b[Pp]ython[ -]?(3\.\d+)\b")


def env_python(repo: str, version: str) -> str | None:
    """The Python of the environment built for `repo` at `version` in ``$CODEGYM_ENVS`` (its
    record in the folder's ``.meta``: ``3.9 bullseye``), None if none is there."""
    meta = Path(os.environ.get("CODEGYM_ENVS", str(ENVS))) / ".meta"
    for f in sorted(meta.glob("*.json")) if meta.is_dir() else []:
        try:
            info = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        spec = info.get("spec") or {}
        if spec.get("repo") == repo and spec.get("version") == version and info.get("python"):
            suite = str(info.get("system", "")).split(":")
            return f"{info['python']} {suite[1]}" if suite[0] == "root" and len(suite) > 1 else str(info["python"])
    return None


def python_used(task, reports) -> str:
    """The Python of the environment built for the task, else a ``Python 3.X`` the grade's
    report or the task names, else the sandbox's interpreter, marked ``*`` (inferred)."""
    d = swe_data(task)
    found = env_python(str(d.extra.get("repo", "")), str(d.extra.get("version", "")))
    if found:
        return found
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


def cause_of(iid: str, gold: str) -> str:
    """Why the gold patch is not FULL: the record's known cause (``network``: its tests need the
    internet; ``record``: a fault of the record; ``mirror``: the mirror cannot give it whole --
    swe_real_records.KNOWN), else ``codegym``; empty when FULL."""
    if gold == "FULL":
        return ""
    return data.KNOWN[iid][0] if iid in data.KNOWN else "codegym"


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


def import_all(records: list[dict], tmp: Path) -> dict[str, tuple[str | None, str, float]]:
    """{instance id: (suite folder or None, why not, seconds)}: each record imported on its own."""
    rec_file = data.write_records(tmp / "records.jsonl", records)
    out = {}
    for r in records:
        t0 = time.perf_counter()
        folder = tmp / "suites" / r["instance_id"]
        task, why = import_one(rec_file, r["instance_id"], folder)
        out[r["instance_id"]] = (str(folder) if task is not None else None, why, time.perf_counter() - t0)
    return out


def run(records: list[dict], backend: str, envs: str | None, imported: dict) -> list[dict]:
    """Grade every imported record on `backend` (one backend per process: see `main`)."""
    rows = []
    os.environ["CODEGYM_ENVS"] = _fresh_envs(envs, backend)
    sb = make_sandbox(backend)
    seen_env: set = set()
    for r in records:
        iid = r["instance_id"]
        folder, why, import_s = imported[iid]
        row = {"backend": backend, "instance_id": iid, "repo": r["repo"], "version": r["version"],
               "python_asked": spec_python(r["repo"], r["version"]), "import_s": round(import_s, 1)}
        if folder is None:
            rows.append({**row, "gold": "-", "noop": "-", "cause": cause_of(iid, "-"), "reason": why})
            print(_line(rows[-1]), flush=True)
            continue
        task = list(load_suite(folder))[0]
        key = (r["repo"], r["version"], tuple(swe_data(task).install or ()))
        try:
            t0 = time.perf_counter()
            gold = grade(task, reference_files(task), sb)
            t1 = time.perf_counter()
            noop = grade(task, {}, sb)
            t2 = time.perf_counter()
            gold2 = grade(task, reference_files(task), sb)
            t3 = time.perf_counter()
        except Exception as e:  # noqa: BLE001 -- a failing grade is a row of the table
            rows.append({**row, "gold": "error", "noop": "error", "cause": "codegym",
                         "reason": f"grade raised {e!r}"[:160]})
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
                     "noop_s": round(t2 - t1, 1), "cause": cause_of(iid, gold.resolution.status),
                     "reason": why})
        print(_line(rows[-1]), flush=True)
    return rows


#: where the environments are built: one fixed path, emptied when a backend starts (a cold
#: start). Fixed, because today's Docker images of an environment are keyed by the environment,
#: not by its path: an image left by a run on another path would name a PATH it does not hold.
ENVS = Path("/var/tmp/codegym-swe-records/envs")


def _fresh_envs(envs: str | None, backend: str) -> str:
    if envs:
        return envs
    shutil.rmtree(ENVS, ignore_errors=True)
    ENVS.mkdir(parents=True)
    for p in (ENVS.parent, ENVS):
        p.chmod(0o755)  # the sandbox's uids read the environments
    return str(ENVS)


HEADER = (f"{'backend':7} {'record':36} {'repository':28} {'ver':5} {'py asked':8} {'py used':14} "
          f"{'gold':7} {'no-op':7} {'setup':>11} {'grade s':>7}  {'cause':8} reason")


def _line(r: dict) -> str:
    setup = f"{r['setup_kind']} {r['setup_s']:.1f}" if "setup_s" in r else "-"
    grade_s = f"{r['grade_s']:.1f}" if "grade_s" in r else "-"
    return (f"{r['backend']:7} {r['instance_id']:36} {r['repo']:28} {r['version']:5} {r['python_asked']:8} "
            f"{r.get('python_used', '-'):14} {r['gold']:7} {r['noop']:7} {setup:>11} {grade_s:>7}  {r.get('cause', ''):8} {r['reason']}")


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
        causes: dict[str, int] = {}
        for r in rs:
            if r.get("cause"):
                causes[r["cause"]] = causes.get(r["cause"], 0) + 1
        by_cause = ", ".join(f"{c} {n}" for c, n in sorted(causes.items())) or "none"
        out.append(f"{backend}: gold FULL {full}/{len(rs)} (the rest by cause: {by_cause}), "
                   f"no-op FULL {noop_full}/{len(rs)}, "
                   f"not imported {sum(r['gold'] == '-' for r in rs)}; setup median cold {_median(cold)} s "
                   f"({len(cold)}), warm {_median(warm)} s ({len(warm)}); grade median {_median(grades)} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["local", "docker", "both"], default="local")
    ap.add_argument("--ids", nargs="*", help="only these instance ids")
    ap.add_argument("--records", help="a records file (JSON lines); default: see swe_real_records.py")
    ap.add_argument("--envs", help="an environment folder to use as it is (default: an emptied one per backend)")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--imported", help=argparse.SUPPRESS)  # the parent's imports (--backend both)
    args = ap.parse_args()
    try:
        records = data.load_records(args.records)
    except data.RecordsUnavailable as e:
        sys.exit(f"records unavailable: {e}")
    if args.ids:
        records = [r for r in records if r["instance_id"] in set(args.ids)]
    # the records known not to resolve here (their tests need the internet, ...) last: the slow ones
    records.sort(key=lambda r: r["instance_id"] in data.KNOWN)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="codegym-swe-records-", dir="/var/tmp") as tmp:
        if args.imported:
            imported = json.loads(Path(args.imported).read_text())
        else:
            absent = sorted({r["repo"] for r in records if not data.mirror(r["repo"]).is_dir()})
            if absent:
                print(f"no mirror of {', '.join(absent)} under {data.mirrors_root()}: their records will not import")
            print(f"{len(records)} records, {len({r['repo'] for r in records})} repositories, "
                  f"load {os.getloadavg()[0]:.1f}; importing each record", flush=True)
            imported = import_all(records, Path(tmp))
            print(f"imported {sum(v[0] is not None for v in imported.values())}/{len(records)} in "
                  f"{time.perf_counter() - t0:.0f} s", flush=True)
            print(HEADER, flush=True)
        if args.backend == "both":
            # one process per backend: a process keeps the environments it found (and the images
            # it built) in memory, so a second backend in the same process would not start cold
            (Path(tmp) / "imported.json").write_text(json.dumps(imported))
            rows = []
            for backend in ("local", "docker"):
                out = Path(tmp) / f"{backend}.json"
                argv = [sys.executable, __file__, "--backend", backend, "--json", str(out),
                        "--imported", str(Path(tmp) / "imported.json")]
                argv += ["--ids", *args.ids] if args.ids else []
                argv += ["--records", args.records] if args.records else []
                argv += ["--envs", args.envs] if args.envs else []
                subprocess.run(argv, check=False)
                rows += json.loads(out.read_text()) if out.exists() else []
        else:
            t1 = time.perf_counter()
            rows = run(records, args.backend, args.envs, imported)
            print(f"{args.backend}: {time.perf_counter() - t1:.0f} s", flush=True)
    if not args.imported:
        print("\n".join(summary(rows)))
        print(f"{time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.1f} (1 min), "
              f"{os.getloadavg()[2]:.1f} (15 min)", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
