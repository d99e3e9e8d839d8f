"""Harbor export/import fidelity on every bundled task that runs here (not a test: it takes minutes).

For each exported task (suites examples, perfcode, dmcoptim, lcb; repo tasks are not
exported, Julia does not run here):

1. verifier: the exported test.sh's judge under a bare ``/usr/bin/python3 -E -s`` on the
   reference and on a non-solution (the starter when codegym rejects it, else no code):
   reward and verdict against codegym's own judge;
2. trial: Harbor-style trials in the task's container (solve.sh then test.sh; test.sh
   alone on the non-solution): reward 1 and 0;
3. round trip: the folders imported back (`codegym import harbor`) and judged through the
   docker sandbox: accepted exactly when codegym's judge accepts.

    python benchmarks/harbor_roundtrip.py [--suites examples,lcb] [--workers 3] [--skip-trials]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from codegym import load_suite
from codegym.importers.harbor import export_harbor, harbor_name
from codegym.importers.harbor_import import import_harbor
from codegym.importers.harbor_trial import run_trial
from codegym.judge import judge
from codegym.sandbox import make_sandbox


def wrong(task) -> dict[str, str]:
    files = task.starter_files()
    if judge(task, files, split="hidden").verdict != "accepted":
        return files
    return {task.main_file_for(task.language): "\n"}


def verifier(folder: Path, task, work: Path) -> tuple[bool, bool]:
    ok = []
    for label, files in (("ref", dict(task.solution(task.reference_name or "reference").files)),
                         ("wrong", wrong(task))):
        app, logs = work / folder.name / label / "app", work / folder.name / label / "logs"
        app.mkdir(parents=True)
        for rel, text in files.items():
            (app / rel).parent.mkdir(parents=True, exist_ok=True)
            (app / rel).write_text(text)
        subprocess.run(["/usr/bin/python3", "-E", "-s", str(folder / "tests/codegym_verify.py"), "--task",
                        str(folder / "tests/codegym_task.json"), "--workdir", str(app), "--out", str(logs)],
                       capture_output=True, timeout=900, check=False)
        rep = json.loads((logs / "judge.json").read_text())
        host = judge(task, files, split="hidden")
        reward = json.loads((logs / "reward.json").read_text())["reward"]
        ok.append(reward == (1.0 if label == "ref" else 0.0) and rep["verdict"] == host.verdict
                  and rep["passed"] == host.passed)
    return ok[0], ok[1]


def trial(folder: Path, task) -> tuple[bool, bool]:
    w = wrong(task)
    good = run_trial(folder, solve=True)
    bad = run_trial(folder, solve=False, files=None if w == task.starter_files() else w)
    return good.reward == 1.0, bad.reward == 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suites", default="examples,perfcode,dmcoptim,lcb")
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--skip-trials", action="store_true")
    a = ap.parse_args()
    tasks = {t.id: t for s in a.suites.split(",") for t in load_suite(s)}
    work = Path(tempfile.mkdtemp(prefix="codegym-harbor-bench-"))
    rows: dict[str, dict[str, float | int]] = {}

    def row(name: str, n: int, ok: int, t: float) -> None:
        rows[name] = {"tasks": n, "ok": ok, "seconds": t}
        print(f"{name:34s} {ok:4d} / {n:<4d} {t:8.1f} s", flush=True)

    print(f"{'step':34s} {'ok':>4s} / {'n':<4s} {'time':>8s}")
    t0 = time.perf_counter()
    res = export_harbor(list(tasks.values()), work / "export", correctness_only=True)  # the verifier is checked
    row("export (folders written)", len(tasks), len(res.exported), time.perf_counter() - t0)
    folders = {json.loads((f / "tests/codegym_task.json").read_text())["id"]: f for f in res.exported}
    t0 = time.perf_counter()
    with ThreadPoolExecutor(a.workers) as pool:
        v = dict(zip(folders, pool.map(lambda tid: verifier(folders[tid], tasks[tid], work / "v"), folders)))
    row("verifier, bare python: reference", len(v), sum(r for r, _ in v.values()), time.perf_counter() - t0)
    row("verifier, bare python: non-solution", len(v), sum(w for _, w in v.values()), 0.0)
    if not a.skip_trials:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(a.workers) as pool:
            tr = dict(zip(folders, pool.map(lambda tid: trial(folders[tid], tasks[tid]), folders)))
        row("container trial: solve.sh -> 1", len(tr), sum(g for g, _ in tr.values()), time.perf_counter() - t0)
        row("container trial: without -> 0", len(tr), sum(b for _, b in tr.values()), 0.0)
    t0 = time.perf_counter()
    imp = import_harbor(work / "export", work / "imported", verify=False)  # judged below, both ways
    row("import (docker images built)", len(folders), len(imp.imported), time.perf_counter() - t0)
    imported = {t.metadata.extra["harbor"]["name"]: t for t in load_suite(work / "imported")}
    sb = make_sandbox("docker")
    t0 = time.perf_counter()

    def rt(tid: str) -> tuple[bool, bool]:
        task, it = tasks[tid], imported[f"codegym/{harbor_name(tid)}"]
        out = []
        for files in (dict(task.solution(task.reference_name or "reference").files), wrong(task)):
            out.append((judge(it, files, sandbox=sb, split="hidden").verdict == "accepted")
                       == (judge(task, files, split="hidden").verdict == "accepted"))
        return out[0], out[1]
    with ThreadPoolExecutor(a.workers) as pool:
        r = dict(zip(folders, pool.map(rt, folders)))
    sb.close()
    row("round trip: reference verdict kept", len(r), sum(x for x, _ in r.values()), time.perf_counter() - t0)
    row("round trip: non-solution verdict kept", len(r), sum(y for _, y in r.values()), 0.0)
    bad = [tid for tid in folders if not (all(v[tid]) and all(r[tid]) and (a.skip_trials or all(tr[tid])))]
    print("mismatches:", bad or "none")
    print(json.dumps(rows))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
