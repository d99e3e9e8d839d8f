"""`codegym tasks calibrate` and the runtimes sidecar (codegym.judge.calibrate, codegym.tasks.runtimes).

A tiny suite is built in tmp_path: one stdio task whose two solutions differ in speed by
a large factor (a busy loop vs. a direct answer), calibrated through the real CLI with
few samples. No assertion is on absolute times: only on orderings and round trips.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from codegym import load_suite, load_task
from codegym.cli import main as cli
from codegym.tasks.runtimes import (
    CALIBRATION_KEY,
    SIDECAR,
    SolutionRuntime,
    TaskRuntimes,
    load_runtimes,
    percentile_rank,
    perf_runtimes,
    read_sidecar,
    runtimes_problem,
    thresholds,
    update_sidecar,
)

FAST = "n = int(input())\nprint(n * (n - 1) // 2)\n"
# ~0.1-0.3 s of CPU: far slower than FAST, far below the time limit
SLOW = textwrap.dedent("""\
    n = int(input())
    s = 0
    for i in range(n):
        s += i
    for _ in range(6):
        for i in range(300000):
            pass
    print(s)
""")
WRONG = "n = int(input())\nprint(n)\n"


def _task_yaml(slow: str = SLOW, title: str = "Sum below n") -> str:
    def block(src: str) -> str:
        return textwrap.indent(src, " " * 10)
    return (f"title: {title}\n"
            "statement: Print the sum of 0..n-1.\n"
            "tests:\n"
            "  public:\n"
            "  - {stdin: \"4\\n\", expected: \"6\\n\"}\n"
            "  hidden:\n"
            "  - {stdin: \"10\\n\", expected: \"45\\n\"}\n"
            "  perf:\n"
            "  - {stdin: \"200000\\n\"}\n"
            "perf: {baseline: slow, reference: fast, repeats: 2, warmups: 0}\n"
            "solutions:\n"
            "  fast:\n"
            "    files:\n"
            "      main.py: |\n" + block(FAST) +
            "  slow:\n"
            "    files:\n"
            "      main.py: |\n" + block(slow))


def _suite(root: Path, name: str = "tiny", slow: str = SLOW) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "suite.yaml").write_text("kind: stdio\nlanguage: python\nlimits: {time_s: 10}\n")
    (d / "sum-below.yaml").write_text(_task_yaml(slow))
    return d


def _run(monkeypatch, *argv: str) -> int:
    return cli.main(["tasks", "calibrate", *argv])


def test_calibrate_writes_sidecar_and_round_trips(tmp_path, monkeypatch, capsys):
    d = _suite(tmp_path)
    rc = _run(monkeypatch, str(d), "--write", "--json", "-q", "--repeats", "2", "--max-repeats", "3",
              "--min-of", "1", "--budget", "20")
    out = capsys.readouterr().out
    assert rc == 0, out
    lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    task_line = next(x for x in lines if x["type"] == "task")
    assert task_line["complete"] and task_line["baseline"] == "slow" and task_line["reference"] == "fast"
    assert task_line["ratio"] > 1.0
    assert task_line["solutions"]["slow"]["verdict"] == "accepted"
    assert task_line["order"] == ["fast", "slow"]

    # the suite loader does not take the sidecar for a task
    assert (d / SIDECAR).is_file()
    suite = load_suite(str(d))
    assert suite.ids == ["tiny/sum-below"]
    task = suite["tiny/sum-below"]

    doc = read_sidecar(d / SIDECAR)
    entry = doc["tasks"]["tiny/sum-below"]
    assert entry["content_hash"] == task.content_hash
    assert entry["metric"] == "cpu" and entry["calibration"] > 0
    assert set(entry["solutions"]) == {"fast", "slow"}
    for s in entry["solutions"].values():
        assert s["n"] >= 2 and s["median_s"] > 0
        assert s["normalized"] == pytest.approx(s["median_s"] / s["calibration"], rel=1e-4)
    assert entry["thresholds"]["top30"]["solution"] == "fast"
    assert entry["thresholds"]["top70"]["solution"] == "slow"

    # round trip: normalised values come back as recorded; rescaling multiplies them by
    # the calibration given (here: twice the recording machine's)
    cal = entry["calibration"]
    rec = load_runtimes(task, calibration=2 * cal)
    assert rec is not None and rec["rescaled"] and rec["scale"] == pytest.approx(2.0)
    assert rec["order"] == ["fast", "slow"]
    for name, s in entry["solutions"].items():
        assert rec["normalized"][name] == pytest.approx(s["normalized"])
        assert rec["runtimes"][name] == pytest.approx(s["normalized"] * 2 * cal)
    assert rec["thresholds"]["top70"] == pytest.approx(rec["runtimes"]["slow"])
    raw = load_runtimes(task, rescale=False)
    assert raw["runtimes"]["slow"] == pytest.approx(entry["solutions"]["slow"]["median_s"])
    pr = perf_runtimes(task)
    assert pr[CALIBRATION_KEY] == pytest.approx(cal)
    assert pr["slow"] / pr[CALIBRATION_KEY] == pytest.approx(entry["solutions"]["slow"]["normalized"])
    assert load_runtimes(task, metric="wall", rescale=False) is None
    assert "metric" in runtimes_problem(task, metric="wall")

    # the task changes -> its hash moves -> the recorded runtimes no longer apply
    (d / "sum-below.yaml").write_text(_task_yaml(title="Sum below n (edited)"))
    changed = load_task(d / "sum-below.yaml")
    assert changed.content_hash != task.content_hash
    assert load_runtimes(changed, rescale=False) is None and perf_runtimes(changed) is None
    assert "content hash" in runtimes_problem(changed)


def test_rejected_solution_fails_and_is_not_written(tmp_path, monkeypatch, capsys):
    d = _suite(tmp_path, slow=WRONG)
    rc = _run(monkeypatch, str(d), "--write", "-q", "--repeats", "2", "--max-repeats", "2",
              "--min-of", "1", "--budget", "10")
    out = capsys.readouterr().out
    assert rc == 1
    assert "not accepted on the perf split" in out and "slow" in out and "wrong_answer" in out
    assert not (d / SIDECAR).exists()


def _sol(median: float, cal: float = 0.03) -> SolutionRuntime:
    return SolutionRuntime(language="python", median_s=median, normalized=median / cal, calibration=cal,
                           cv=0.01, n=5)


def test_thresholds_nearest_rank():
    assert [percentile_rank(p, 3) for p in (30, 50, 70)] == [1, 2, 3]
    assert [percentile_rank(p, 10) for p in (30, 50, 70)] == [3, 5, 7]
    sols = {"a": _sol(3.0), "b": _sol(0.1), "c": _sol(1.0), "d": _sol(0.5)}
    th = thresholds(sols)
    assert {k: v.solution for k, v in th.items()} == {"top30": "d", "top50": "d", "top70": "c"}
    assert th["top70"].rank == 3 and th["top70"].n == 4


def test_update_sidecar_merges_and_prunes(tmp_path):
    path = tmp_path / "s" / SIDECAR
    r1 = TaskRuntimes("s/a", "h1", "cpu", baseline="slow", reference="fast",
                      solutions={"slow": _sol(1.0), "fast": _sol(0.25)})
    r2 = TaskRuntimes("s/b", "h2", "cpu", solutions={"only": _sol(0.5)})
    update_sidecar(path, [r1], suite="s")
    update_sidecar(path, [r2], suite="s")
    doc = read_sidecar(path)
    assert sorted(doc["tasks"]) == ["s/a", "s/b"]
    assert path.stat().st_mode & 0o777 == 0o644  # readable data, not a private temp file
    back = TaskRuntimes.from_dict("s/a", doc["tasks"]["s/a"])
    assert back.ratio == pytest.approx(4.0) and back.sorted()[0][0] == "fast"
    update_sidecar(path, [], suite="s", keep_ids=["s/b"])
    assert sorted(read_sidecar(path)["tasks"]) == ["s/b"]
