"""Tests of `codegym tasks validate|list` (codegym.cli.main): output and exit codes."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codegym.cli import main as cli

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "tasks" / "examples"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


@pytest.fixture
def bad_suite(tmp_path) -> Path:
    d = tmp_path / "bad"
    write(d / "ok.yaml", """
        statement: s
        tests: {hidden: [{stdin: "1", expected: "1"}]}
        """)
    write(d / "broken.yaml", """
        statement: s
        tests:
          hidden:
            - stdin: 1
              expected: "1"
        """)
    return d


def test_validate_examples_ok(capsys):
    assert cli.main(["tasks", "validate", str(EXAMPLES)]) == 0
    out = capsys.readouterr().out
    assert out.count("OK  ") == 5 and "examples/bracket-depth" in out
    assert "5 task file(s): 5 OK, 0 with errors (0 error(s))" in out


def test_validate_default_is_every_suite(capsys, monkeypatch, tmp_path):
    write(tmp_path / "one" / "t.yaml", "statement: s\ntests: {hidden: [{stdin: '1', expected: '1'}]}\n")
    monkeypatch.setenv("CODEGYM_TASKS", str(tmp_path))
    assert cli.main(["tasks", "validate"]) == 0
    assert "OK  " in capsys.readouterr().out


def test_validate_reports_errors_and_fails(capsys, bad_suite, monkeypatch):
    monkeypatch.chdir(bad_suite.parent)  # errors name files relative to the working directory
    assert cli.main(["tasks", "validate", "-q", "bad"]) == 1
    out = capsys.readouterr().out
    assert "bad/broken.yaml:4: tests.hidden[0].stdin: expected string" in out.splitlines()
    assert "OK  " not in out  # -q
    assert "2 task file(s): 1 OK, 1 with errors (1 error(s))" in out
    # a missing target is an error too
    assert cli.main(["tasks", "validate", str(bad_suite / "nothing-here")]) == 1
    assert "no suite or task file" in capsys.readouterr().out


def test_list_json_and_table(capsys):
    assert cli.main(["tasks", "list", "--json", str(EXAMPLES)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {"examples/best-window-mean", "examples/bracket-depth",
                          "examples/digit-sum-queries", "examples/residue-pairs",
                          "examples/run-length"}
    bw = by_id["examples/best-window-mean"]
    assert (bw["kind"], bw["public"], bw["hidden"], bw["perf"]) == ("stdio", 1, 4, 2)
    assert len(bw["hash"]) == 64 and bw["key"].endswith(bw["hash"][:12])
    assert cli.main(["tasks", "list", str(EXAMPLES)]) == 0
    table = capsys.readouterr().out
    for r in rows:
        assert r["id"] in table and r["hash"][:12] in table
    assert "function" in table and "c,cpp" in table


def test_list_with_errors_exits_1(capsys, bad_suite):
    assert cli.main(["tasks", "list", "--json", str(bad_suite)]) == 1
    cap = capsys.readouterr()
    assert [json.loads(line)["id"] for line in cap.out.splitlines()] == ["bad/ok"]
    assert "expected string" in cap.err


def test_usage_errors():
    assert cli.main(["tasks"]) == 2
    assert cli.main([]) == 2
    with pytest.raises(SystemExit) as ei:
        cli.main(["tasks", "frobnicate"])
    assert ei.value.code == 2


def test_command_modules_are_registered(monkeypatch, tmp_path, capsys):
    mod = tmp_path / "cg_plugin_demo.py"
    mod.write_text(textwrap.dedent("""
        def register(sub):
            p = sub.add_parser("hello")
            p.set_defaults(func=lambda args: print("hello from plugin") or 3)

        def register_tasks(sub):
            p = sub.add_parser("greet")  # calibrate is built in: an out-of-tree name
            p.set_defaults(func=lambda args: 4)
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "COMMAND_MODULES", ["cg_plugin_demo", "cg_missing_module_xyz"])
    monkeypatch.setattr(cli, "TASKS_COMMAND_MODULES", ["cg_plugin_demo"])
    assert cli.main(["hello"]) == 3
    assert cli.main(["tasks", "greet"]) == 4
    cap = capsys.readouterr()
    assert "hello from plugin" in cap.out and "cg_missing_module_xyz" in cap.err


def test_console_script_exit_codes(bad_suite):
    ok = subprocess.run([sys.executable, "-m", "codegym.cli.main", "tasks", "validate", str(EXAMPLES)],
                        capture_output=True, text=True, cwd=REPO)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = subprocess.run([sys.executable, "-m", "codegym.cli.main", "tasks", "validate", str(bad_suite)],
                         capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 1 and "expected string" in bad.stdout


def test_oracle(capsys):
    have_judge = importlib.util.find_spec("codegym.judge.run") is not None
    rc = cli.main(["tasks", "validate", "--oracle", str(EXAMPLES / "residue-pairs.yaml"),
                   str(EXAMPLES / "bracket-depth.yaml")])
    cap = capsys.readouterr()
    if not have_judge:
        assert rc == 2 and "--oracle needs codegym.judge.run" in cap.err
        pytest.skip("codegym.judge.run is not available: only the missing-judge path was checked")
    assert rc == 0, cap.out + cap.err
    assert "FAIL" not in cap.out
    assert "self-pairs" in cap.out and "wrong_answer" in cap.out
