"""Untrusted code never runs unconfined by accident: without bubblewrap the local backend,
``gym.make`` and the commands that run programs refuse with an error naming the remedies,
unless the user opts in by a name that says it is unsafe (``isolation="rlimits"``,
``CODEGYM_UNSAFE_NO_ISOLATION=1``); what runs nothing untrusted keeps working.

"No bubblewrap" is simulated by making `bwrap_available` answer False (and, for a
bubblewrap that is installed but fails, a slot command that cannot start).
"""

from __future__ import annotations

import logging

import gymnasium as gym
import pytest

import codegym  # noqa: F401 -- registers the ids
import codegym.sandbox as sandbox_pkg
from codegym.cli.main import main as cli
from codegym.sandbox import IsolationUnavailable, make_sandbox, require_isolation
from codegym.sandbox import isolation as iso
from codegym.sandbox import local as local_mod
from codegym.sandbox.local import LocalSandbox

REMEDIES = ("apt-get install bubblewrap", 'sandbox="docker"', "CODEGYM_SANDBOX=docker",
            'isolation="rlimits"', "CODEGYM_UNSAFE_NO_ISOLATION=1")


@pytest.fixture
def no_bwrap(monkeypatch):
    """A machine without bubblewrap and without the user's opt-in (no shared local sandbox yet)."""
    monkeypatch.setattr(iso, "bwrap_available", lambda: False)
    monkeypatch.setattr(local_mod, "bwrap_available", lambda: False)
    monkeypatch.delenv(iso.UNSAFE_ENV, raising=False)
    monkeypatch.delenv("CODEGYM_SANDBOX", raising=False)
    monkeypatch.setattr(sandbox_pkg, "_shared", {})


def says_the_remedies(e: BaseException) -> None:
    text = str(e)
    assert "bubblewrap" in text and "not installed" in text
    for remedy in REMEDIES:
        assert remedy in text, (remedy, text)


def test_the_local_backend_refuses_without_bubblewrap(no_bwrap):
    for make in (LocalSandbox, lambda: LocalSandbox(isolation="bwrap"), lambda: make_sandbox("local"),
                 make_sandbox, require_isolation):
        with pytest.raises(IsolationUnavailable) as e:
            make()
        assert "bubblewrap" in str(e.value)
    with pytest.raises(IsolationUnavailable) as e:
        LocalSandbox()
    says_the_remedies(e.value)


def test_gym_make_refuses_before_any_work(no_bwrap):
    with pytest.raises(IsolationUnavailable) as e:
        gym.make("codegym/PerfCode-v0")
    says_the_remedies(e.value)
    # the Docker backend isolates: asking for it is not refused here (it needs an engine at first use)
    env = gym.make("codegym/LCB-v0", sandbox="docker")
    env.close()


def test_commands_that_run_programs_refuse_with_the_remedies(no_bwrap, capsys, tmp_path):
    rc = cli(["run", "codegym/Suite-v0", "--suite", "examples", "--agent", "oracle", "--episodes", "1",
              "--out", str(tmp_path / "r.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("codegym: untrusted programs run only in a sandbox that isolates them")
    assert "Traceback" not in err
    for remedy in REMEDIES:
        assert remedy in err
    assert cli(["tasks", "validate", "-q", "--oracle", "tasks/examples"]) == 2


def test_what_runs_nothing_untrusted_keeps_working(no_bwrap, capsys):
    assert cli(["tasks", "list", "examples"]) == 0
    assert "examples/residue-pairs" in capsys.readouterr().out
    assert cli(["tasks", "validate", "-q", "tasks/examples"]) == 0


def test_opting_in_runs_without_isolation_and_says_so(no_bwrap, monkeypatch, caplog):
    monkeypatch.setattr(iso, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="codegym.sandbox"):
        explicit = LocalSandbox(workers=1, isolation="rlimits")
        try:
            assert explicit.isolation == "rlimits"
            assert explicit.execute("python", {"main.py": "print(6 * 7)"}).stdout == "42\n"
        finally:
            explicit.close()
    assert "rlimits only" in caplog.text
    monkeypatch.setenv(iso.UNSAFE_ENV, "1")
    require_isolation()
    by_env = LocalSandbox(workers=1)
    try:
        assert by_env.isolation == "rlimits"
    finally:
        by_env.close()
    env = gym.make("codegym/Suite-v0", suite="examples")
    env.close()


def test_the_unsafe_variable_means_no_isolation_even_with_bubblewrap(monkeypatch):
    monkeypatch.setattr(iso, "bwrap_available", lambda: True)
    monkeypatch.setattr(local_mod, "bwrap_available", lambda: True)
    monkeypatch.setenv(iso.UNSAFE_ENV, "1")
    sb = LocalSandbox(workers=1)
    try:
        assert sb.isolation == "rlimits"
    finally:
        sb.close()


def test_the_old_variable_is_refused_with_the_new_name(monkeypatch):
    monkeypatch.setenv("CODEGYM_NO_BWRAP", "1")
    with pytest.raises(IsolationUnavailable, match="CODEGYM_UNSAFE_NO_ISOLATION=1"):
        LocalSandbox(workers=1)


def test_a_bubblewrap_that_fails_is_refused_not_bypassed(monkeypatch):
    """bwrap installed but unable to make namespaces (some containers): it used to fall back
    to rlimits with a warning; now the default refuses with bubblewrap's error."""
    monkeypatch.setattr(iso, "bwrap_available", lambda: True)
    monkeypatch.setattr(local_mod, "bwrap_available", lambda: True)
    monkeypatch.delenv(iso.UNSAFE_ENV, raising=False)
    monkeypatch.setattr(local_mod, "bwrap_argv", lambda *a, **k: ["/bin/false"])
    with pytest.raises(IsolationUnavailable) as e:
        LocalSandbox(workers=1)
    assert "bubblewrap is installed but failed" in str(e.value) and "CODEGYM_UNSAFE_NO_ISOLATION=1" in str(e.value)
