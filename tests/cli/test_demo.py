"""`make demo` (codegym.cli.demo): the sample it plays, plain progress lines off a terminal,
the table, and the HTML report of the `codegym eval` machinery. A one-task sample keeps it
short; `make demo` itself plays the whole sample (about two minutes on 2 cores)."""

from __future__ import annotations

import shutil

import pytest

from codegym.cli import demo
from codegym.sandbox import IsolationUnavailable


def test_the_sample_covers_every_family_and_language_that_runs_here():
    said = []
    entries = demo.plan_suites(False, said.append)
    families = {e["label"] for e in entries}
    assert {"perfcode", "dmcoptim", "lcb", "examples", "swe"} <= families
    ids = [i for e in entries for i in e["ids"]]
    langs = {i.split("/")[1].split("-")[0] for i in ids if i.startswith("perfcode/")}
    assert langs == {"py", "c", "cpp"}                       # every language of PerfCode
    assert all(e.get("env") or e.get("suite") for e in entries)
    if shutil.which("julia") is None:                        # what cannot run is said, with why
        assert "multiple_julia" not in families and any("needs `julia`" in s for s in said)
    cfg = demo.eval_config(entries, 2)
    assert cfg["reward_mode"] == "suite" and [a if isinstance(a, str) else a["name"] for a in cfg["agents"]] \
        == ["oracle", "baseline", "mutant"]


def test_demo_plays_prints_plain_lines_and_writes_the_report(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo, "SAMPLE", {"perfcode": ("codegym/PerfCode-v0", ["perfcode/py-sum-numbers"])})
    monkeypatch.setattr(demo, "cli", lambda argv: 0)         # (the suites' validation has its own tests)
    out = tmp_path / "demo"
    assert demo.main(["--out", str(out), "--workers", "2"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == demo.confinement_line()           # first: how programs are confined
    assert text.startswith("codegym demo: programs run in bubblewrap") or "WITHOUT isolation" in text.splitlines()[0]
    lines = [line for line in text.splitlines() if "perfcode/py-sum-numbers" in line and "reward" in line]
    assert len(lines) == 3                                   # one plain line per episode (not a terminal)
    assert (out / "report.html").is_file() and f"the report: {out / 'report.html'}" in text
    rows = {line.split()[0]: line for line in lines}
    assert "accepted" in rows["oracle"] and "accepted" in rows["baseline"] and "wrong_answer" in rows["mutant"]
    assert "speedup <=1.0x (stopped)" in rows["baseline"] or "reward 0.600" in rows["baseline"]
    assert "x " in rows["oracle"].split("speedup", 1)[1]     # the oracle's measured speedup


@pytest.mark.parametrize("rec,want", [
    ({"correct": False, "reward_details": None}, "-"),
    ({"correct": True, "reward_details": {"staged": {"times": {"t": 2.0, "t_baseline": 10.0}}}}, "5.0x"),
    ({"correct": True, "reward_details": {"staged": {"times": {"t": 9.0, "t_baseline": 9.0}}}}, "1.0x"),
    ({"correct": True, "reward_details": {"staged": {"times": {"t": 9.0, "t_baseline": 9.0},
                                                      "bound": {"reached": True}}}}, "<=1.0x (stopped)"),
])
def test_speedup_column(rec, want):
    assert demo.speedup(rec) == want


def test_without_bubblewrap_the_demo_stops_at_its_first_line_with_the_remedies(monkeypatch, capsys):
    def refuse(kind=None, **kw):
        raise IsolationUnavailable("untrusted programs run only in a sandbox that isolates them, and ...")
    monkeypatch.setattr(demo, "make_sandbox", refuse)
    monkeypatch.setattr(demo, "cli", lambda argv: pytest.fail("nothing runs after the refusal"))
    assert demo.main(["--out", "unused"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith("codegym demo: untrusted programs run only in a sandbox")
