"""`codegym serve` stops on Ctrl-C with exit code 130 even when it inherited SIGINT as ignored
(a shell's background job, as in the fresh-machine check, where it ended with 0)."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from _tools import wait_serving

import codegym

REPO = Path(codegym.__file__).resolve().parent.parent


@pytest.mark.skipif(importlib.util.find_spec("uvicorn") is None, reason="needs codegym[openenv,ors]")
def test_sigint_inherited_as_ignored_still_stops_with_130(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "codegym", "serve", "--port", port, "--env", "codegym/LCB-v0"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        wait_serving(proc, port)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130, proc.stdout.read()
        assert "codegym serve: stopped" in proc.stdout.read()
    finally:
        proc.kill()
        proc.wait()
