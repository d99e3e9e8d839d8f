"""The eval report in a real browser: headless Chromium renders report.html.

Checks that the page is self-contained (no external resource), that its plots (inline
SVG) and tables are in the rendered DOM, that its script ran to the end without an
error (the console is read from Chromium's log; a deliberately broken page proves the
check can fail), and saves a screenshot whose path is printed.

Needs Debian's ``chromium`` (``/usr/bin/chromium``, or ``CODEGYM_CHROMIUM``): skipped
with the reason when it is absent, except in CI (``CI=true``), where it must be there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from codegym.evaluation.report import REPORT_FILE, _no_external, render_html
from codegym.evaluation.runner import run_eval

CONFIG = """\
name: browser
agents:
  - oracle
  - {name: mutant, spec: "mutant:syntax,crash,output"}
suites:
  - {suite: examples, ids: [examples/bracket-depth, examples/run-length, examples/digit-sum-queries]}
samples: 2
max_turns: 2
progress: false
"""


def _chromium() -> str:
    path = os.environ.get("CODEGYM_CHROMIUM") or shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if path is None:
        reason = "chromium is not installed (apt-get install chromium); the report cannot be rendered"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " -- required in CI")
        print(f"SKIP: {reason}")
        pytest.skip(reason)
    return path


def _run_chromium(exe: str, profile: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *extra, url]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def _console_errors(stderr: str) -> list[str]:
    """Console messages that are script errors (Chromium logs them as INFO:CONSOLE lines)."""
    msgs = [line for line in stderr.splitlines() if ":CONSOLE" in line]
    return [m for m in msgs if re.search(r"Uncaught|Error:|ERROR:CONSOLE", m)]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("report_browser")
    cfg = tmp / "eval.yaml"
    cfg.write_text(CONFIG, encoding="utf-8")
    summary = run_eval(cfg, tmp / "out", progress=False)
    assert summary.complete
    return tmp / "out" / REPORT_FILE


def test_report_renders_in_chromium_with_plots_tables_and_no_script_error(report, tmp_path):
    exe = _chromium()
    text = report.read_text(encoding="utf-8")
    assert _no_external(text) == [], "the report must not fetch anything"

    # the console check can fail: a page whose script throws is caught
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>throw new Error('boom')</script></body></html>")
    r = _run_chromium(exe, tmp_path / "p0", bad.as_uri(), "--dump-dom")
    assert any("boom" in e for e in _console_errors(r.stderr)), r.stderr[-2000:]

    r = _run_chromium(exe, tmp_path / "p1", report.as_uri(), "--dump-dom", "--virtual-time-budget=3000")
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert _console_errors(r.stderr) == [], _console_errors(r.stderr)
    # the script ran to its last statement
    assert re.search(r'<body[^>]*data-ready="1"', dom), "the report's script did not finish"
    for fig in ("plot-passk", "plot-heatmap", "plot-h2h"):
        m = re.search(rf'<figure class="plot" id="{fig}">(.*?)</figure>', dom, re.S)
        assert m and "<svg" in m.group(1) and ("<path" in m.group(1) or "<rect" in m.group(1)), fig
    assert 'id="plot-speedup-missing"' in dom  # timing off: the page says so instead of a plot
    for table in ("summary", "h2h-table", "ranking", "turns-table", "episodes", "sessions"):
        assert f'<table id="{table}"' in dom, table
    rows = re.search(r'<table id="episodes">.*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
    assert rows.count("<tr") == 12  # 3 tasks x 2 samples x 2 agents
    assert "12 of 12 episode(s)" in dom  # written by the script
    assert "<details><summary>" in rows and "+++ b/main.py" in rows  # final diffs, escaped text

    shot = tmp_path / "report.png"
    r = _run_chromium(exe, tmp_path / "p2", report.as_uri(), f"--screenshot={shot}", "--window-size=1400,2600",
                      "--hide-scrollbars", "--virtual-time-budget=3000")
    assert r.returncode == 0 and shot.is_file(), r.stderr[-2000:]
    import matplotlib.image as mpimg
    img = mpimg.imread(shot)
    assert img.shape[0] >= 2000 and img.shape[1] >= 1000 and float(img[..., :3].std()) > 0.05  # not blank
    print(f"\nreport screenshot: {shot}\nreport: {report}")


def test_speedup_plot_is_drawn_from_timed_episodes():
    # render (no browser) a constructed timed eval: the speed section holds a plot
    from codegym.evaluation.metrics import compute_metrics
    from codegym.evaluation.report import plot_speedups
    eps = []
    for s, sp in enumerate([1.0, 2.5, 8.0]):
        for agent, mult in (("fast", 1.0), ("slow", 0.5)):
            eps.append({"agent": agent, "suite": "p", "task_id": f"p/t{s}", "sample": 0, "correct": True,
                        "verdict": "accepted", "steps": [], "turns": 1, "max_turns": 2,
                        "perf": {"speedup": sp * mult, "speedup_significant": sp * mult > 1,
                                 "efficiency": 0.5, "top": {}, "correct_runnable": True}})
    m = compute_metrics(eps, agents=["fast", "slow"], ks=[1], percentiles=[], n_boot=100)
    svg = plot_speedups(m)
    assert svg is not None and svg.startswith("<svg") and "speedup over baseline" in svg
    res = {"provenance": {"name": "x", "timing": True, "seeds": [0], "sessions": []}, "metrics": m}
    page = render_html(res, [dict(e, seed=0, language="python", final_diff="<b>&", final_files={}) for e in eps],
                       {"config_text": "name: x"})
    assert 'id="plot-speedup"' in page and "&lt;b&gt;&amp;" in page and "<b>&" not in page
