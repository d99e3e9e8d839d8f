"""What each attack on the Harbor import costs: outcome, seconds and peak memory (issue 28).

For every attack of ``tests/_harbor_tasks.py`` (FIFOs, devices, hard links, file counts
and sizes, task.toml nesting and numbers, multi-step tasks, host variables, image
references a build would pull, ``ADD <url>``, a build reaching the network or never
ending, a 200 MB working-directory file), writes the hostile folder and runs
``import_harbor`` on it in a fresh interpreter killed after ``--timeout`` seconds;
prints per attack the outcome (imported, the refusal's line, an exception that stopped
the whole import, a hang), the seconds of the import and the extra peak memory of the
importing process (max RSS minus its RSS before the import). That the other folders
of a batch go on is tests/importers/test_harbor_attacks.py's part. ``--code DIR`` runs the
same against another checkout (e.g. the code before a change); ``--no-verify`` skips the
judging of imported tasks where the checkout has it.

    python3 benchmarks/harbor_attacks.py [--code DIR] [--only WORD] [--timeout 120] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from _harbor_tasks import ATTACKS  # noqa: E402 -- the attack writers live with the tests

# memory: the child's own peak since its exec (VmHWM); getrusage's ru_maxrss would start at the
# peak of the process it was forked from
CHILD = r"""
import json, sys, time
try:
    from codegym.importers.harbor_import import import_harbor
except ImportError:   # --code: a checkout from before import_harbor had its own module
    from codegym.importers.harbor import import_harbor
def peak_kb():
    return [int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:")][0]
base = peak_kb()
t0 = time.perf_counter()
try:
    kw = {"verify": False} if sys.argv[3] == "1" and "verify" in import_harbor.__code__.co_varnames else {}
    r = import_harbor(sys.argv[1], sys.argv[2], **kw)
    out = {"imported": r.imported, "failed": [[f.rsplit("/", 1)[-1], why] for f, why in r.failed]}
except BaseException as e:  # noqa: BLE001 -- an escape is what the benchmark reports
    out = {"exception": f"{type(e).__name__}: {e}"[:300]}
out.update(s=time.perf_counter() - t0, mb=peak_kb() / 1024, base_mb=base / 1024)
print(json.dumps(out))
"""


def run(code: Path, attack: str, timeout: float, no_verify: bool = False) -> dict:
    write, _ = ATTACKS[attack]
    with tempfile.TemporaryDirectory(prefix="codegym-harbor-attack-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        write(src)
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(src), str(Path(tmp) / "out"),
                                 "1" if no_verify else "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp,
                                env={**os.environ, "PYTHONPATH": str(code)}, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            return {"attack": attack, "outcome": f"HANG (killed at {timeout:g} s)", "s": time.monotonic() - t0,
                    "mb": None}
        try:
            got = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"attack": attack, "outcome": f"CRASH: {err.strip()[-300:]}", "s": time.monotonic() - t0,
                    "mb": None}
    if "exception" in got:
        outcome = f"whole import stopped: {got['exception']}"
    else:
        bad = [why.replace(str(Path(tmp)), "") for _name, why in got["failed"]]
        outcome = ("refused: " + bad[0][:200]) if bad else "imported"
    return {"attack": attack, "outcome": outcome, "s": got["s"], "mb": got["mb"] - got["base_mb"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--code", type=Path, default=REPO, help="the checkout whose codegym is measured")
    ap.add_argument("--only", default=None, help="attacks whose name holds this")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--no-verify", action="store_true", help="import without judging (where the checkout judges)")
    a = ap.parse_args(argv)
    rows = []
    print(f"code: {a.code}   load: {os.getloadavg()[0]:.1f}")
    print(f"{'attack':42} {'s':>7} {'+MB':>6}  outcome")
    for attack in ATTACKS:
        if a.only and a.only not in attack:
            continue
        r = run(a.code, attack, a.timeout, a.no_verify)
        rows.append(r)
        mb = "-" if r["mb"] is None else f"{r['mb']:.0f}"
        print(f"{attack:42} {r['s']:7.1f} {mb:>6}  {r['outcome']}", flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
