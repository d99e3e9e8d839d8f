"""Tools the tests need that a machine may lack (bubblewrap, a Docker engine and its images):
without one, a test skips with the reason printed, except in CI (``CI=true``), where `.ci/run`
has installed them all and a missing one fails the test.

    from _tools import IN_CI, missing, need_bwrap, docker_or_skip

`wait_serving` waits for a ``codegym serve`` child to answer.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from typing import NoReturn

import pytest

from codegym.sandbox.isolation import bwrap_available

#: CI runs every test: a tool the README names that is absent is a failure there
IN_CI = os.environ.get("CI", "").lower() == "true"


def missing(reason: str) -> NoReturn:
    """Skip the test with `reason` (printed), or fail it in CI."""
    print(f"missing: {reason}")
    if IN_CI:
        pytest.fail(f"CI=true but {reason} (.ci/run installs it)")
    pytest.skip(reason)


def need_bwrap() -> None:
    """Skip (fail in CI) unless bubblewrap is installed with the features the sandbox needs."""
    if not bwrap_available():
        missing("bubblewrap (bwrap >= 0.5) is not installed")


def docker_or_skip():
    """The docker SDK client of a live engine that has the default sandbox images, or skip
    (fail in CI) with the reason."""
    reason = None
    try:
        import docker  # noqa: PLC0415 -- the optional extra
        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as e:  # noqa: BLE001 - any failure means no usable engine
        client = None
        reason = f"no Docker engine: {type(e).__name__}: {e}"
    if client is not None:
        from codegym.sandbox.images import DEFAULT_IMAGES  # noqa: PLC0415 -- needs the docker extra
        absent = []
        for img in sorted(set(DEFAULT_IMAGES.values())):
            try:
                client.images.get(img)
            except Exception:  # noqa: BLE001
                absent.append(img)
        if absent:
            reason = f"docker images missing: {absent} (run `codegym images build python polyglot node`)"
    if reason:
        missing(reason)
    return client


def wait_serving(proc: subprocess.Popen, port: int | str, timeout: float = 300.0) -> None:
    """Wait until the ``codegym serve`` child `proc` answers ``/health`` on `port`; fail with
    its output if it exits first, or when `timeout` seconds pass (generous: a loaded machine)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as r:
                assert r.status == 200
                return
        except OSError:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else proc.returncode
            assert time.monotonic() < deadline, "codegym serve did not start"
            time.sleep(0.2)
