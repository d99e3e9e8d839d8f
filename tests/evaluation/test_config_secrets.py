"""Eval and synthesis configs from others cannot take the user's secrets (issue 28: secrets in configs).

A config may name only API key variables (``*_API_KEY``, ``*_TOKEN``) the user allowed
(``--key`` or their settings), and a key goes only to a base URL the user configured for
it; `out:` stays under the config's folder unless ``--out`` says otherwise. The model
endpoint is a local test server that records the ``Authorization`` header of every
request: a config that names ``GITHUB_TOKEN``, ``HOME`` or a plain variable is refused at
its line, and one whose ``base_url`` points at the test server makes its agents (an LLM,
mini-swe-agent) talk to it without a key; the user's own grants send theirs.
"""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest
from _fake_openai import FakeOpenAIServer
from _scaffold_model import SOLVE_ID, scripted_model

from codegym.cli.main import main
from codegym.core.keys import KeyGrants
from codegym.evaluation.config import ConfigError, load_config
from codegym.evaluation.runner import run_eval
from codegym.evaluation.store import EvalError
from codegym.evaluation.synthesis import load_synthesis_config

SECRETS = {"GITHUB_TOKEN": "ghp-user-github-secret", "OPENAI_API_KEY": "sk-user-openai-secret",
           "B_API_KEY": "b-user-secret", "MY_SETTING": "plain-user-value"}


@pytest.fixture(autouse=True)
def user_env(monkeypatch, tmp_path):
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    for k in ("CODEGYM_LLM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("CODEGYM_SETTINGS", str(tmp_path / "no-settings.yaml"))


@pytest.fixture
def fake():
    with FakeOpenAIServer(responder=lambda request: "submit") as server:
        yield server


def _config(tmp_path, agent: str, name: str = "eval.yaml", extra: str = "") -> str:
    path = tmp_path / "cfg" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"agents:\n  - {agent}\nsuites:\n  - {{suite: examples, ids: [examples/run-length]}}\n"
                    f"max_turns: 1\nprogress: false\nreport: false\n{extra}")
    return str(path)


def _sent(fake) -> list[str | None]:
    return [{k.lower(): v for k, v in h.items()}.get("authorization") for h in fake.headers]


def _leaked(fake) -> bool:
    return any(any(secret in str(h) for secret in [*SECRETS.values(), os.environ["HOME"]])
               for h in fake.headers)


@pytest.mark.parametrize("variable,why", [("GITHUB_TOKEN", "not a key you allowed"),
                                          ("HOME", "does not look like an API key variable"),
                                          ("MY_SETTING", "does not look like an API key variable")])
def test_a_config_naming_a_variable_the_user_did_not_allow_is_refused_at_its_line(tmp_path, fake, variable, why):
    forms = [f'{{spec: llm, options: {{model: m, base_url: "{fake.base_url}", api_key_env: {variable}}}}}',
             f'"llm:model=m,base_url={fake.base_url},api_key_env={variable}"',
             f'{{spec: "scaffold:mini-swe-agent", options: {{model: m, base_url: "{fake.base_url}", '
             f'api_key_env: {variable}}}}}']
    for agent in forms:
        path = _config(tmp_path, agent)
        with pytest.raises(ConfigError, match=f"eval.yaml:2: agents.0.*api_key_env: .*{variable}.*{why}"):
            load_config(path)
        assert main(["eval", path, "-q", "--out", str(tmp_path / "out")]) == 2
    sc = _config(tmp_path, forms[0], "synth.yaml", "synthesis: {exports: [chat]}\n")
    with pytest.raises(ConfigError, match=f"api_key_env: .*{variable}"):
        load_synthesis_config(sc)
    assert main(["synthesize", sc, "-q", "--out", str(tmp_path / "synth")]) == 2
    assert fake.count == 0 and not _leaked(fake)


def test_a_config_chosen_base_url_gets_no_key(tmp_path, fake, capsys):
    # the default key variable (OPENAI_API_KEY) and an allowed one (B_API_KEY): neither goes
    # to a base URL the config chose
    for agent, grants in ((f'{{spec: llm, options: {{model: m, base_url: "{fake.base_url}"}}}}', []),
                          (f'"llm:model=m,base_url={fake.base_url},api_key_env=B_API_KEY"', ["--key", "B_API_KEY"])):
        path = _config(tmp_path, agent)
        before = fake.count
        assert main(["eval", path, "-q", "--no-report", "--out", str(tmp_path / f"out{before}"), *grants]) == 0
        assert fake.count > before and _sent(fake)[before:] == [None] * (fake.count - before)
        assert "is not sent to " + fake.base_url in capsys.readouterr().err
    assert not _leaked(fake)


def test_the_users_own_grants_send_their_keys(tmp_path, fake, monkeypatch):
    agent = f'"llm:model=m,base_url={fake.base_url},api_key_env=B_API_KEY"'
    assert main(["eval", _config(tmp_path, agent), "-q", "--no-report", "--out", str(tmp_path / "o1"),
                 "--key", f"B_API_KEY={fake.base_url}"]) == 0
    assert set(_sent(fake)) == {"Bearer b-user-secret"}
    settings = tmp_path / "settings.yaml"  # the same grant from the user's settings file
    settings.write_text(f"keys:\n  B_API_KEY: [{fake.base_url}/]\n")
    monkeypatch.setenv("CODEGYM_SETTINGS", str(settings))
    n = fake.count
    assert main(["eval", _config(tmp_path, agent), "-q", "--no-report", "--out", str(tmp_path / "o2")]) == 0
    assert set(_sent(fake)[n:]) == {"Bearer b-user-secret"}
    # the user's own endpoint (their environment) gets the default key when the config names none
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    n = fake.count
    assert main(["eval", _config(tmp_path, "{spec: llm, options: {model: m}}"), "-q", "--no-report",
                 "--out", str(tmp_path / "o3")]) == 0
    assert set(_sent(fake)[n:]) == {"Bearer sk-user-openai-secret"}


def test_grants_are_checked():
    with pytest.raises(ValueError, match="HOME.*_API_KEY"):
        KeyGrants.from_user(["HOME"])
    with pytest.raises(ValueError, match="VAR or VAR=URL"):
        KeyGrants.from_user(["B_API_KEY=ftp://x"])
    keys = KeyGrants.from_user(["B_API_KEY=http://h:1/v1/"], {"keys": {"C_TOKEN": None}}, environ={})
    assert keys.key_env("B_API_KEY", "http://h:1/v1") == "B_API_KEY" and keys.key_env("B_API_KEY", None) is None
    assert keys.key_env("C_TOKEN", None) == "C_TOKEN" and keys.key_env("C_TOKEN", "http://h:1/v1") is None
    assert keys.key_env("OPENAI_API_KEY", None) == "OPENAI_API_KEY"
    assert keys.key_env("OPENAI_API_KEY", "http://evil/v1") is None and keys.key_env("GITHUB_TOKEN", None) is None


@pytest.mark.skipif(not os.environ.get("CI") and (shutil.which("bwrap") is None
                                                  or importlib.util.find_spec("minisweagent") is None),
                    reason="needs bubblewrap and mini-swe-agent (pip install 'codegym[scaffolds]')")
def test_a_scaffold_sends_no_key_to_a_config_chosen_base_url(tmp_path):
    with FakeOpenAIServer(responder=scripted_model()) as fake:
        agent = f'{{spec: "scaffold:mini-swe-agent", options: {{model: m, base_url: "{fake.base_url}"}}}}'
        cfg = load_config(_config(tmp_path, agent))
        assert run_eval(cfg, tmp_path / "out", progress=False, report=False).complete
        assert fake.count > 0 and set(_sent(fake)) == {"Bearer EMPTY"} and not _leaked(fake)
    assert SOLVE_ID == "examples/run-length"


def test_out_stays_under_the_configs_folder(tmp_path, fake):
    agent = "oracle"
    outside = tmp_path / "elsewhere"
    for out in ("../elsewhere", str(outside)):
        path = _config(tmp_path, agent, extra=f"out: {out}\n")
        with pytest.raises(EvalError, match="outside the config's folder.*--out"):
            run_eval(path, progress=False)
        assert main(["eval", path, "-q"]) == 2 and not outside.exists()
        assert main(["eval", path, "-q", "--no-report", "--out", str(outside)]) == 0  # the command line may
        shutil.rmtree(outside)
    (tmp_path / "cfg" / "link").symlink_to(outside.parent, target_is_directory=True)
    path = _config(tmp_path, agent, extra="out: link/x\n")
    with pytest.raises(EvalError, match="outside"):
        run_eval(path, progress=False)
    path = _config(tmp_path, agent, extra="out: results/run\n")
    assert run_eval(path, progress=False, report=False).complete
    assert (tmp_path / "cfg" / "results" / "run" / "results.jsonl").is_file()
