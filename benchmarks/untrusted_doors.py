"""Every attack of issue 28 on the doors where strangers' data comes in: before and after, time and memory.

Runs each attack of ``tests/_doors.py`` (``codegym import FILE``, ``codegym replay FILE``,
``codegym eval CONFIG``, ``codegym synthesize CONFIG``, task folders, and -- rows whose
tests live in the other helpers' suites -- ``codegym tasks mine REPO`` and the secrets of
an eval config) as a user runs it, in a fresh child process per run (start-up included),
against the code after (this checkout) and, with ``--before DIR``, another checkout (the
code before the change: ``git worktree add /tmp/before bb94e90``); with ``--harbor``, the
Harbor door's attacks of ``benchmarks/harbor_attacks.py`` too. Prints one row per attack:
door, attack, attack class, the outcome before and after (a hang, a traceback, or the line
that names the bad item), seconds and the child's peak memory (max RSS, MB), and whether a
sentinel was written or a host file's content showed up. The load average is printed next
to the figures (a loaded machine makes every second longer; memory does not move).

    python3 benchmarks/untrusted_doors.py [--before DIR] [--harbor] [--only WORD] [--timeout 120]
                                          [--json FILE] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from _doors import ATTACKS, EXTRA_ATTACKS, Attack, Outcome, run_attack  # noqa: E402 -- the attacks live with the tests


def _one(attack: Attack, code: Path, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="codegym-doors-") as d:
        root = Path(d) / "w"
        root.mkdir()
        o: Outcome = run_attack(attack, root, code=code, timeout=timeout)
        summary = o.summary(attack.expect).replace(str(root) + "/", "").replace(str(root), ".")
        good = (not o.hung and o.rc in attack.ok_rc and "Traceback" not in o.out and attack.expect in o.out
                and not o.sentinel and not o.leaked and o.peak_mb < attack.mem_mb)
        return {"outcome": summary, "s": round(o.seconds, 2), "mb": round(o.peak_mb), "sentinel": o.sentinel,
                "leaked": o.leaked, "good": good}


def _harbor_rows(code: Path, before: Path | None, timeout: float, only: str | None) -> list[dict]:
    from _harbor_tasks import ATTACKS as HARBOR  # noqa: PLC0415
    from harbor_attacks import run as harbor_run  # noqa: PLC0415 -- optional part, needs docker

    rows = []
    for name in HARBOR:
        if only and only not in name:
            continue
        row = {"door": "codegym import harbor DIR", "attack": name, "class": "Harbor folder"}
        for side, path in (("after", code), ("before", before)):
            if path is None:
                continue
            r = harbor_run(path, name, timeout, no_verify=True)
            row[side] = {"outcome": r["outcome"][:150], "s": round(r["s"], 2),
                         "mb": None if r["mb"] is None else round(r["mb"]), "sentinel": False, "leaked": [],
                         "good": not r["outcome"].startswith(("HANG", "CRASH", "whole import stopped"))}
        rows.append(row)
        print(_line(row), flush=True)
    return rows


def _cell(r: dict | None) -> str:
    if r is None:
        return "-"
    flags = (" SENTINEL" if r["sentinel"] else "") + (f" LEAKED {r['leaked']}" if r["leaked"] else "")
    mb = "-" if r["mb"] is None else f"{r['mb']}"
    return f"{r['outcome'][:110]}{flags} ({r['s']:.1f} s, {mb} MB)"


def _line(row: dict) -> str:
    return f"{row['door']:<27} {row['attack'][:44]:<44} before: {_cell(row.get('before'))}\n" \
           f"{'':<72} after:  {_cell(row.get('after'))}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--after", type=Path, default=REPO, help="the checkout measured as 'after' (default: this one)")
    ap.add_argument("--before", type=Path, default=None, help="the checkout measured as 'before'")
    ap.add_argument("--harbor", action="store_true", help="also the Harbor door's attacks (needs docker)")
    ap.add_argument("--only", default=None, help="attacks whose name or door holds this")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a run counts as a hang")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown at the end")
    a = ap.parse_args(argv)
    load0 = os.getloadavg()
    print(f"after: {a.after}  before: {a.before or '-'}  load: {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}")
    rows = []
    for attack in ATTACKS + EXTRA_ATTACKS:
        if a.only and a.only not in attack.name and a.only not in attack.door:
            continue
        row = {"door": attack.door, "attack": attack.name, "class": attack.klass}
        row["after"] = _one(attack, a.after, a.timeout)
        if a.before is not None:
            row["before"] = _one(attack, a.before, a.timeout)
        rows.append(row)
        print(_line(row), flush=True)
    if a.harbor:
        rows += _harbor_rows(a.after, a.before, a.timeout, a.only)
    load1 = os.getloadavg()
    print(f"\nload average at the end: {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f}")
    bad = [r["attack"] for r in rows if not r["after"]["good"]]
    print(f"after, not refused cleanly within the bounds: {bad or 'none'}")
    if a.markdown:
        print("\n| door | attack | before | after |\n|---|---|---|---|")
        for r in rows:
            print(f"| {r['door']} | {r['attack']} | {_cell(r.get('before')).replace('|', '/')} "
                  f"| {_cell(r['after']).replace('|', '/')} |")
    if a.json:
        a.json.write_text(json.dumps({"load": [load0, load1], "rows": rows}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
