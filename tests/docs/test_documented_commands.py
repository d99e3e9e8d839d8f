"""Every `codegym` command that docs/scaffolds.md and docs/serve.md show runs as written.

Each command is read from the page (`tests/_doc_commands.py`) and run as a process
(``python -m codegym ...``) in a scratch directory; the only changes are the ones a reader
makes for their machine: the model endpoint ``http://127.0.0.1:8000/v1`` points at the
scripted OpenAI-compatible server (tests/_fake_openai.py, tests/_scaffold_model.py) and
``--port 8000`` at a free port. ``codegym run`` must exit 0 and write its records (the
scaffold, the tokens and the wall time of each episode); ``codegym serve`` must answer
``/health`` and the token the page exports, and stop on Ctrl-C. The verifiers page's
``vf-eval`` command is run as written by tests/integrations/test_verifiers.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from _doc_commands import documented_commands
from _fake_openai import FakeOpenAIServer
from _scaffold_model import SOLVE_ID, scripted_model
from _tools import wait_serving

import codegym

REPO = Path(codegym.__file__).resolve().parent.parent
PAGES = ("scaffolds.md", "serve.md")
COMMANDS = [(page, line, argv) for page in PAGES for line, argv in documented_commands(REPO / "docs" / page, "codegym")]
MODEL_URL = "http://127.0.0.1:8000/v1"
CI = bool(os.environ.get("CI"))


def test_the_pages_show_the_commands_this_test_runs():
    # a new documented command needs a runner below
    assert sorted({(page, argv[1]) for page, _, argv in COMMANDS}) == [("scaffolds.md", "run"), ("serve.md", "serve")]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def _run_command(argv: list[str], tmp_path: Path) -> None:
    if not CI and importlib.util.find_spec("minisweagent") is None and any("mini-swe-agent" in a for a in argv):
        pytest.skip("mini-swe-agent is not installed (pip install 'codegym[scaffolds]')")
    if not CI and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (the scaffold's commands run in it)")
    with FakeOpenAIServer(responder=scripted_model()) as fake:
        args = [a.replace(MODEL_URL, fake.base_url) for a in argv[1:]]
        proc = subprocess.run([sys.executable, "-m", "codegym", *args], cwd=tmp_path, env=_env(),
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert fake.requests, "the scaffold never asked the model"
    out = argv[argv.index("--out") + 1]
    (rec,) = [json.loads(line) for line in (tmp_path / out).read_text().splitlines()]
    assert rec["task_id"] == SOLVE_ID and rec["verdict"] == "accepted" and rec["episode_s"] > 0
    scaffold = rec["scaffold"]
    assert "mini-swe-agent" in rec["agent"] and scaffold["model_calls"] == len(fake.requests) > 0
    assert rec["usage"]["total_tokens"] == scaffold["usage"]["total_tokens"] > 0
    assert sum(s["usage"]["total_tokens"] for s in rec["steps"]) == rec["usage"]["total_tokens"]


def _serve_command(argv: list[str], page: Path) -> None:
    exported = [line.split("=", 1)[0].removeprefix("export ").strip()
                for line in page.read_text().splitlines() if line.startswith("export CODEGYM_SERVE_TOKEN")]
    assert exported == ["CODEGYM_SERVE_TOKEN"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    args = [port if a == "8000" and prev == "--port" else a for prev, a in zip(["", *argv[1:]], argv[1:])]
    token = os.urandom(16).hex()
    proc = subprocess.Popen([sys.executable, "-m", "codegym", *args], env={**_env(), "CODEGYM_SERVE_TOKEN": token},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_serving(proc, port)
        req = urllib.request.Request(f"http://127.0.0.1:{port}/codegym/sessions",
                                     headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=60) as r:
            stats = json.loads(r.read())
        assert stats["max_sessions"] == int(argv[argv.index("--max-sessions") + 1])
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130
        assert "Traceback" not in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("page,line,argv", COMMANDS, ids=[f"docs/{p}:{n}" for p, n, _ in COMMANDS])
def test_documented_command_runs(page, line, argv, tmp_path):
    if argv[1] == "run":
        _run_command(argv, tmp_path)
    else:
        _serve_command(argv, REPO / "docs" / page)


def test_a_missing_option_is_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "codegym", "run", "codegym/Suite-v0", "--agent",
                           f"scaffold:mini-swe-agent,model=qwen,base_url={MODEL_URL}"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("codegym run: codegym/Suite-v0 plays the tasks of a suite: give --suite NAME_OR_DIR")
