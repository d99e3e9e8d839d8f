"""Fixtures of the timing tests: one local sandbox per module (skipped where none runs)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def sb():
    try:
        from codegym.sandbox import make_sandbox
        s = make_sandbox("local")
        r = s.execute("python", {"main.py": "print(1)"})
    except Exception as e:  # pragma: no cover - depends on the machine
        pytest.skip(f"local sandbox unavailable: {e}")
    if r.status != "ok":
        pytest.skip(f"local sandbox cannot run python: {r.status} {r.message}")
    return s
