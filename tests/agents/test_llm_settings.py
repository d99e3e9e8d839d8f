"""LLMAgent's narrow constructor (issue 31): settings groups whole, or their fields one by one.

Every keyword the agent took before (eval configs and ``llm:SPEC`` give them flat) still
works and sets the same request; an unknown keyword is a TypeError naming it; the API key
stays the agent's own argument, out of every group, repr and record.
"""

from __future__ import annotations

import inspect
import pickle

import pytest
from _fake_openai import FakeOpenAIServer

from codegym.agents.llm import LLMAgent
from codegym.agents.llm_client import ChatClient
from codegym.agents.llm_settings import (
    DEFAULT_SYSTEM_PROMPT,
    ChatSettings,
    SamplingSettings,
    TransportSettings,
)
from codegym.agents.llm_spec import SPEC_TYPES

URL = "http://127.0.0.1:9/v1"
#: every keyword LLMAgent took before it was narrowed, with a value that is not its default
OLD_FLAT = dict(model="m", base_url=URL, api_key="sk-secret-1", api_key_env="CODEGYM_TEST_LLM_KEY",
                temperature=0.2, top_p=0.9, max_tokens=512, seed=3, stop="###", extra_body={"top_k": 20},
                system_prompt="SYS", max_concurrency=2, timeout=5, max_retries=1, backoff_base=0.001,
                backoff_max=0.01, retry_after_max=1, logprobs=False, token_ids="vllm", use_tools=True,
                check_prefix=False, headers={"X-Trace": "t"}, name="mine")


def _explicit(fn) -> list[str]:
    return [n for n, p in inspect.signature(fn).parameters.items()
            if n != "self" and p.kind is not inspect.Parameter.VAR_KEYWORD]


def test_the_constructors_take_a_handful_of_arguments():
    assert _explicit(LLMAgent.__init__) == ["model", "base_url", "api_key", "api_key_env", "sampling", "chat",
                                            "transport", "name"]
    assert _explicit(ChatClient.__init__) == ["base_url", "api_key", "api_key_env", "transport"]
    assert len(OLD_FLAT) == 23


def test_every_old_keyword_still_works_and_reads_back_as_an_attribute():
    a = LLMAgent(**OLD_FLAT)
    assert a.sampling == SamplingSettings(temperature=0.2, top_p=0.9, max_tokens=512, seed=3, stop=["###"],
                                          extra_body={"top_k": 20})
    assert a.chat == ChatSettings(system_prompt="SYS", logprobs=False, token_ids="vllm", use_tools=True,
                                  check_prefix=False)
    assert a.transport == TransportSettings(max_concurrency=2, timeout=5.0, max_retries=1, backoff_base=0.001,
                                            backoff_max=0.01, retry_after_max=1.0, headers={"X-Trace": "t"})
    for key, value in OLD_FLAT.items():
        if key not in ("api_key", "stop", "name"):
            assert getattr(a, key) == value, key
    assert a.stop == ["###"] and a.name == "mine" and isinstance(a.timeout, float)
    assert a._api_key_value() == "sk-secret-1"
    for shown in (repr(a), repr(a.sampling), repr(a.chat), repr(a.transport)):
        assert "sk-secret" not in shown and "X-Trace" not in shown


def test_groups_whole_with_flat_keywords_over_them_and_mappings():
    s = SamplingSettings(temperature=0.7, max_tokens=64)
    a = LLMAgent("m", URL, sampling=s, temperature=0.1, chat={"use_tools": True}, transport={"timeout": 3})
    assert a.sampling == SamplingSettings(temperature=0.1, max_tokens=64) and s.temperature == 0.7
    assert a.chat == ChatSettings(use_tools=True) and a.system_prompt == DEFAULT_SYSTEM_PROMPT
    assert a.timeout == 3.0 and a.max_retries == 4
    a.temperature = 0.5  # an attribute set goes to its group
    assert a.sampling.temperature == 0.5
    assert LLMAgent("m", URL).sampling == SamplingSettings()


def test_an_unknown_keyword_is_refused_naming_it():
    with pytest.raises(TypeError, match=r"LLMAgent got unexpected keyword argument\(s\) 'temprature' "
                                        r"\(did you mean 'temperature'\?\)"):
        LLMAgent("m", URL, temprature=0.5)
    with pytest.raises(TypeError, match=r"'api_key_var' \(did you mean 'api_key_env'\?\)"):
        LLMAgent("m", URL, api_key_var="X_API_KEY")
    # the key variable is not a group's field: a config cannot hide it in one
    with pytest.raises(TypeError, match=r"LLMAgent transport= got unexpected keyword argument\(s\) 'api_key_env'"):
        LLMAgent("m", URL, transport={"api_key_env": "X_API_KEY"})


@pytest.mark.parametrize("bad, message", [
    (dict(token_ids="sometimes"), "token_ids must be one of"),
    (dict(max_retries=-1), "max_retries must be >= 0"),
    (dict(base_url="ftp://x"), "base_url must be an http"),
])
def test_bad_values_are_refused_as_before(bad, message):
    with pytest.raises(ValueError, match=message):
        LLMAgent(**{"model": "m", "base_url": URL, **bad})


def test_the_spec_keys_are_the_flat_keywords_but_the_secret_ones():
    flat = set(_explicit(LLMAgent.__init__)) - {"sampling", "chat", "transport"}
    for group in (SamplingSettings, ChatSettings, TransportSettings):
        flat |= set(inspect.signature(group).parameters)
    assert set(SPEC_TYPES) == flat - {"api_key", "headers"}
    LLMAgent(**{k: v for k, v in OLD_FLAT.items() if k in SPEC_TYPES})


def test_the_request_is_the_same_from_flat_keywords_or_groups(monkeypatch):
    monkeypatch.setenv("CODEGYM_TEST_LLM_KEY", "sk-test-9")
    with FakeOpenAIServer(["a", "b"]) as fake:
        flat = LLMAgent("fake-model", fake.base_url, api_key_env="CODEGYM_TEST_LLM_KEY", temperature=0.3,
                        max_tokens=32, seed=1, stop=["x"], extra_body={"min_p": 0.1}, system_prompt="S",
                        token_ids="off", logprobs=False, use_tools=True, backoff_base=0.001)
        whole = LLMAgent("fake-model", fake.base_url, api_key_env="CODEGYM_TEST_LLM_KEY",
                         sampling=SamplingSettings(temperature=0.3, max_tokens=32, seed=1, stop="x",
                                                   extra_body={"min_p": 0.1}),
                         chat=ChatSettings(system_prompt="S", token_ids="off", logprobs=False, use_tools=True),
                         transport=TransportSettings(backoff_base=0.001))
        for agent in (flat, whole):
            agent.reset(seed=2)
            agent.act("obs", {})
        assert fake.requests[0] == fake.requests[1]
        assert fake.requests[0]["temperature"] == 0.3 and "tools" in fake.requests[0]
        assert fake.headers[0]["Authorization"] == fake.headers[1]["Authorization"] == "Bearer sk-test-9"


def test_fork_and_pickle_keep_the_groups_and_copy_the_mutable_fields():
    a = LLMAgent(**OLD_FLAT)
    twin = a.fork()
    assert (twin.sampling, twin.chat, twin.transport, twin.name) == (a.sampling, a.chat, a.transport, a.name)
    assert twin._api_key_value() == "sk-secret-1"
    twin.extra_body["top_k"] = 1
    twin.headers["X-Trace"] = "u"
    assert a.extra_body == {"top_k": 20} and a.headers == {"X-Trace": "t"}
    again = pickle.loads(pickle.dumps(a))
    assert (again.sampling, again.chat, again.transport) == (a.sampling, a.chat, a.transport)
