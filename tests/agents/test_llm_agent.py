"""`LLMAgent` against a local fake OpenAI-compatible server (tests/_fake_openai.py; no network).

Covers: full episodes on the `examples` suite with oracle replies (code block and native
tool calls), token ids / log-probs in vLLM and SGLang shapes, the prefix-preservation
warning, retries (429 + Retry-After, 500, timeout, dropped connection), failures
(malformed JSON after retries, 4xx at once), the per-base-URL concurrency limit,
request contents and `from_spec`.
"""

from __future__ import annotations

import copy
import json
import pickle
import socket
import threading
import warnings

import gymnasium as gym
import pytest
from _fake_openai import IM_END, FakeOpenAIServer, Reply, chatml_strip_think, tokenize

import codegym  # noqa: F401  (registers the env ids)
from codegym.agents import llm as llm_mod
from codegym.agents import make_agent
from codegym.agents.base import task_language_files
from codegym.agents.llm import LLMAgent
from codegym.agents.llm_client import LLMError
from codegym.agents.llm_response import response_tokens
from codegym.agents.llm_spec import parse_spec
from codegym.edits.parse import parse_action
from codegym.edits.render import TOOL_SCHEMAS, render_action
from codegym.rollout.runner import run_episode

FAST = dict(backoff_base=0.001, backoff_max=0.01)  # tiny backoff: tests never wait long


def agent_for(fake: FakeOpenAIServer, **kw) -> LLMAgent:
    return LLMAgent(model="fake-model", base_url=fake.base_url, **{**FAST, **kw})


@pytest.fixture(scope="module")
def env():
    e = gym.make("codegym/Suite-v0", suite="examples", max_turns=3)
    yield e
    e.close()


def oracle_files(env, task_id: str) -> tuple[dict[str, str], dict[str, str], str]:
    """(solution files, starter files, main file) of a task, as the oracle would write them."""
    obs, info = env.reset(seed=0, options={"task_id": task_id})
    task = env.unwrapped.task
    _, files = task_language_files(task, info["language"], task.reference_name or "reference")
    return files, dict(info["files"]), info["main_file"]


# ---------------------------------------------------------------------------- episodes


def test_episode_with_oracle_replies_is_accepted_and_records_tokens(env):
    task_id = "examples/run-length"
    files, starter, main = oracle_files(env, task_id)
    write = render_action(files, "code_block", starter, main)  # turn 1: write (public tests run)
    with FakeOpenAIServer([write, "submit"], mode="vllm") as fake:
        agent = agent_for(fake, temperature=0.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a prefix-preserving template must not warn
            rec = run_episode(env, agent, seed=0, options={"task_id": task_id})
        assert rec["verdict"] == "accepted"
        assert rec["turns"] == 2
        assert [s["action"] for s in rec["steps"]] == [write, "submit"]
        # the second request carries the whole conversation: system, user, assistant, user
        roles = [m["role"] for m in fake.requests[1]["messages"]]
        assert roles == ["system", "user", "assistant", "user"]
        assert fake.requests[1]["messages"][2]["content"] == write
        assert fake.requests[1]["messages"][3]["content"] == rec["steps"][1]["observation"]
        turn = agent.last_turn
        assert turn["messages"] == fake.requests[1]["messages"]
        assert turn["prompt_ids"] == fake.prompt_ids(fake.requests[1]["messages"])
        assert turn["response_ids"] == tokenize("submit") + [IM_END]
        assert turn["logprobs"] is not None and len(turn["logprobs"]) == len(turn["response_ids"])
        assert turn["finish_reason"] == "stop"
        assert turn["usage"]["completion_tokens"] == len(turn["response_ids"])
        assert turn["prefix_preserving"] is True


def test_episode_with_native_tool_calls(env):
    task_id = "examples/bracket-depth"
    files, starter, main = oracle_files(env, task_id)
    calls = [{"name": "write_file", "arguments": {"path": p, "content": c}} for p, c in files.items()]
    calls.append({"name": "submit", "arguments": {}})
    with FakeOpenAIServer([Reply(tool_calls=calls)]) as fake:
        agent = agent_for(fake, use_tools=True)
        rec = run_episode(env, agent, seed=0, options={"task_id": task_id})
        assert rec["verdict"] == "accepted", rec["steps"][-1]["error"]
        assert fake.requests[0]["tools"] == TOOL_SCHEMAS
        action = rec["steps"][0]["action"]
        parsed = parse_action(action, starter, main)
        assert parsed.error is None and parsed.submit and parsed.changes == files
        assert agent.last_turn["finish_reason"] == "tool_calls"
        assert agent.last_turn["tool_calls"][0]["function"]["name"] == "write_file"


def test_tool_results_go_back_as_tool_messages():
    calls = [{"name": "view_file", "arguments": {"path": "main.py"}},
             {"name": "run_tests", "arguments": {}}]
    with FakeOpenAIServer([Reply(tool_calls=calls), "submit"]) as fake:
        agent = agent_for(fake, use_tools=True, system_prompt=None)
        agent.reset()
        text = agent.act("task", {})
        assert json.loads(text.split("```json\n", 1)[1].split("```", 1)[0]) == calls
        agent.act("feedback of both calls", {})
        msgs = fake.requests[1]["messages"]
        assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "tool"]
        ids = [c["id"] for c in msgs[1]["tool_calls"]]
        assert [m["tool_call_id"] for m in msgs[2:]] == ids
        assert msgs[2]["content"] == "feedback of both calls"
        # the template renders the tool calls as the server sent them: still prefix-preserving
        assert agent.last_turn["prefix_preserving"] is True


# ---------------------------------------------------------------------------- token shapes


@pytest.mark.parametrize("mode", ["vllm", "sglang"])
def test_token_ids_and_logprobs_captured(mode):
    with FakeOpenAIServer(["print(1)\n", "submit"], mode=mode) as fake:
        agent = agent_for(fake, token_ids=mode)
        agent.reset(seed=3)
        agent.act("first observation", {})
        first = agent.last_turn
        assert first["response_ids"] == tokenize("print(1)\n") + [IM_END]
        assert first["prompt_ids"] == fake.prompt_ids(fake.requests[0]["messages"])
        assert first["logprobs"] == [-((i % 5) + 1) / 10 for i in range(len(first["response_ids"]))]
        assert first["prefix_preserving"] is None  # nothing to compare on the first turn
        agent.act("second observation", {})
        assert agent.last_turn["prefix_preserving"] is True
        assert agent.last_turn["prompt_ids"][:len(first["prompt_ids"]) + len(first["response_ids"])] == \
            first["prompt_ids"] + first["response_ids"]
        if mode == "sglang":
            assert fake.requests[0]["return_prompt_token_ids"] is True


def test_response_ids_from_vllm_token_id_strings():
    # no token_ids field: vLLM's return_tokens_as_token_ids logprob entries "token_id:<id>" give the ids
    with FakeOpenAIServer(["héllo"], mode="vllm") as fake:
        agent = agent_for(fake, token_ids="off", extra_body={"return_tokens_as_token_ids": True})
        agent.act("obs", {})
        assert "return_token_ids" not in fake.requests[0]
        assert agent.last_turn["prompt_ids"] is None
        assert agent.last_turn["response_ids"] == tokenize("héllo") + [IM_END]


def test_openai_shape_has_no_ids_but_logprobs():
    with FakeOpenAIServer(["hi"], mode="openai") as fake:
        agent = agent_for(fake)
        agent.act("obs", {})
        t = agent.last_turn
        assert t["prompt_ids"] is None and t["response_ids"] is None and len(t["logprobs"]) == 3
        assert t["prefix_preserving"] is None


def test_response_tokens_sglang_meta_info():
    data = {"choices": [{"message": {"content": "ab"}, "prompt_token_ids": [1, 2],
                         "meta_info": {"output_token_logprobs": [[-0.5, 97, "a"], [-0.25, 98, "b"]]}}]}
    assert response_tokens(data) == ([1, 2], [97, 98], [-0.5, -0.25])
    assert response_tokens({"choices": [{"message": {"content": ""}}]}) == (None, None, None)


def test_prefix_check_warns_once_when_template_is_not_prefix_preserving():
    replies = ["<think>plan</think>\nx = 1\n", "<think>more</think>\ny = 2\n", "submit"]
    with FakeOpenAIServer(replies, template=chatml_strip_think) as fake:
        agent = agent_for(fake)
        agent.reset()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            agent.act("o1", {})
            assert agent.last_turn["prefix_preserving"] is None
            agent.act("o2", {})
            assert agent.last_turn["prefix_preserving"] is False
            agent.act("o3", {})
            assert agent.last_turn["prefix_preserving"] is False
        msgs = [str(w.message) for w in caught if "prefix-preserving" in str(w.message)]
        assert len(msgs) == 1, msgs


# ---------------------------------------------------------------------------- retries and errors


def test_429_with_retry_after_then_success():
    with FakeOpenAIServer([Reply(status=429, headers={"Retry-After": "0.05"}), "ok"]) as fake:
        agent = agent_for(fake)
        assert agent.act("obs", {}) == "ok"
        attempts = agent.last_turn["attempts"]
        assert [a["status"] for a in attempts] == [429, 200]
        assert attempts[0]["delay"] >= 0.05  # the server's Retry-After wins over the tiny backoff
        assert fake.count == 2


def test_500_then_success():
    with FakeOpenAIServer([Reply(status=500), Reply(status=503), "ok"]) as fake:
        agent = agent_for(fake)
        assert agent.act("obs", {}) == "ok"
        assert [a["status"] for a in agent.last_turn["attempts"]] == [500, 503, 200]
        assert all(a["delay"] <= 0.01 for a in agent.last_turn["attempts"])  # backoff_max honoured


def test_timeout_then_success():
    # the first reply comes after 5 s, the client gives up after 0.5 s and retries;
    # two fast replies are queued so a slow machine cannot exhaust the script
    with FakeOpenAIServer([Reply(content="slow", delay=5.0), "fast", "fast"]) as fake:
        agent = agent_for(fake, timeout=0.5)
        assert agent.act("obs", {}) == "fast"
        attempts = agent.last_turn["attempts"]
        assert "timeout" in attempts[0]["error"] and attempts[0]["status"] is None
        assert attempts[-1]["status"] == 200


def test_dropped_connection_then_success():
    with FakeOpenAIServer([Reply(drop=True), "ok"]) as fake:
        agent = agent_for(fake)
        assert agent.act("obs", {}) == "ok"
        assert "connection" in agent.last_turn["attempts"][0]["error"]


def test_malformed_json_raises_after_retries():
    with FakeOpenAIServer(responder=lambda req: Reply(body=b'{"choices": [oops')) as fake:
        agent = agent_for(fake, max_retries=2)
        with pytest.raises(LLMError) as ei:
            agent.act("obs", {})
        err = ei.value
        assert fake.count == 3 and err.attempts == 3
        assert err.status == 200 and err.reason == "malformed"
        assert "oops" in err.body and "oops" in str(err)


def test_failed_turn_leaves_the_conversation_unchanged():
    with FakeOpenAIServer([Reply(status=400), "ok"]) as fake:
        agent = agent_for(fake)
        with pytest.raises(LLMError):
            agent.act("obs", {})
        assert agent.messages == []
        assert agent.act("obs", {}) == "ok"  # the caller may try the same observation again
        assert [m["role"] for m in fake.requests[1]["messages"]] == ["system", "user"]


def test_connection_refused_raises_after_retries():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    agent = LLMAgent(model="m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, **FAST)
    with pytest.raises(LLMError) as ei:
        agent.act("obs", {})
    assert ei.value.reason == "connection" and ei.value.status is None and ei.value.attempts == 2


def test_missing_choices_is_malformed():
    with FakeOpenAIServer(responder=lambda req: Reply(body=json.dumps({"object": "chat.completion"}))) as fake:
        agent = agent_for(fake, max_retries=1)
        with pytest.raises(LLMError, match="malformed"):
            agent.act("obs", {})
        assert fake.count == 2


def test_client_error_fails_at_once():
    with FakeOpenAIServer([Reply(status=401, body='{"error": {"message": "bad key"}}'), "never"]) as fake:
        agent = agent_for(fake)
        with pytest.raises(LLMError) as ei:
            agent.act("obs", {})
        assert ei.value.status == 401 and "bad key" in ei.value.body
        assert fake.count == 1 and fake.pending == 1


def test_server_refusing_token_fields_gets_them_dropped():
    refusal = Reply(status=400, body='{"error": "Unrecognized request argument supplied: return_token_ids"}')
    with FakeOpenAIServer([refusal, "ok", "again"]) as fake:
        try:
            agent = agent_for(fake)
            assert agent.act("obs", {}) == "ok"
            assert "return_token_ids" in fake.requests[0] and "return_token_ids" not in fake.requests[1]
            agent.fork().act("obs", {})  # remembered per base URL
            assert "return_token_ids" not in fake.requests[2]
        finally:
            llm_mod._NO_TOKEN_FIELDS.discard(fake.base_url)


# ---------------------------------------------------------------------------- concurrency


def _run_parallel(agent: LLMAgent, n: int) -> list[str]:
    barrier = threading.Barrier(n)
    out: list[str] = [""] * n

    def work(i: int, a: LLMAgent) -> None:
        a.reset()
        barrier.wait()
        out[i] = a.act(f"obs {i}", {})

    threads = [threading.Thread(target=work, args=(i, agent.fork())) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


@pytest.mark.parametrize("limit", [2, None])
def test_concurrency_limit_per_base_url(limit):
    # the server answers only when as many requests as may overlap are in flight together
    # (a counted barrier, not a delay: however slow the machine, they do overlap); a gate
    # that let fewer through would break the barrier (its timeout only guards a hang)
    meet = threading.Barrier(limit or 4)

    def together(req):
        meet.wait(timeout=120)
        return Reply(content="ok")

    with FakeOpenAIServer(responder=together) as fake:
        agent = agent_for(fake, max_concurrency=limit)
        assert _run_parallel(agent, 4) == ["ok"] * 4
        assert fake.count == 4
        if limit == 2:
            assert fake.max_concurrent == 2
        else:  # the control: without the gate the 4 workers overlap
            assert fake.max_concurrent > 2


# ---------------------------------------------------------------------------- requests, config


def test_request_carries_sampling_parameters_and_key(monkeypatch):
    monkeypatch.setenv("CODEGYM_TEST_LLM_KEY", "sk-test-123")
    with FakeOpenAIServer(["a", "b"]) as fake:
        agent = agent_for(fake, temperature=0.7, top_p=0.9, max_tokens=64, seed=5, stop="###",
                          extra_body={"top_k": 20}, api_key_env="CODEGYM_TEST_LLM_KEY", system_prompt="SYS")
        agent.reset(seed=11)
        agent.act("o1", {})
        agent.act("o2", {})
        r0, r1 = fake.requests
        for key, value in dict(model="fake-model", temperature=0.7, top_p=0.9, max_tokens=64, stop=["###"],
                               top_k=20, logprobs=True, top_logprobs=0, return_token_ids=True).items():
            assert r0[key] == value, key
        assert r0["messages"][0] == {"role": "system", "content": "SYS"}
        assert isinstance(r0["seed"], int) and r0["seed"] != r1["seed"]  # derived per turn
        assert fake.headers[0]["Authorization"] == "Bearer sk-test-123"
        assert "sk-test" not in repr(agent)
        # same seeds, same requests: reproducible
        fake.add("a")
        again = agent.fork()
        again.reset(seed=11)
        again.act("o1", {})
        assert fake.requests[2]["seed"] == r0["seed"]


def test_model_discovered_from_models_endpoint():
    with FakeOpenAIServer(["ok"], model="served-by-fake") as fake:
        agent = LLMAgent(base_url=fake.base_url, **FAST)
        assert agent.act("obs", {}) == "ok"
        assert fake.requests[0]["model"] == "served-by-fake"
        assert agent.name == "llm:served-by-fake"


def test_fork_is_independent_and_picklable():
    with FakeOpenAIServer(["one", "two"]) as fake:
        agent = agent_for(fake)
        agent.act("obs", {})
        twin = agent.fork()
        assert twin.messages == [] and twin.last_turn is None
        assert twin.base_url == agent.base_url and twin.temperature == agent.temperature
        twin.act("other", {})
        assert len(agent.messages) == 3 and len(twin.messages) == 3
        assert agent.messages[1]["content"] == "obs" and twin.messages[1]["content"] == "other"
        assert pickle.loads(pickle.dumps(agent)).messages == agent.messages
        assert copy.deepcopy(agent).messages == agent.messages


def test_from_spec_parsing():
    spec = "model=qwen,base_url=http://127.0.0.1:8000/v1,temperature=0.7,max_tokens=512"
    a = LLMAgent.from_spec(spec)
    assert (a.model, a.base_url, a.temperature, a.max_tokens) == ("qwen", "http://127.0.0.1:8000/v1", 0.7, 512)
    kw = parse_spec('qwen2.5-coder,url=http://h:1/v1,stop=["a,b","\\n\\n"],extra.top_k=20,'
                    'extra_body={"min_p": 0.1},tools=true,concurrency=3,retries=0,seed=7')
    assert kw == {"model": "qwen2.5-coder", "base_url": "http://h:1/v1", "stop": ["a,b", "\n\n"],
                  "extra_body": {"min_p": 0.1, "top_k": 20}, "use_tools": True, "max_concurrency": 3,
                  "max_retries": 0, "seed": 7}
    assert parse_spec("model=1.5")["model"] == "1.5"  # strings are never reinterpreted
    with pytest.raises(ValueError, match="unknown llm spec key"):
        parse_spec("model=x,temprature=0.5")
    with pytest.raises(ValueError, match="expected int"):
        parse_spec("max_tokens=12.5")
    with pytest.raises(ValueError, match="not key=value"):
        parse_spec("model=x,oops")
    agent = make_agent("llm:model=m,base_url=http://127.0.0.1:9/v1,temperature=0")
    assert isinstance(agent, LLMAgent) and agent.model == "m" and agent.temperature == 0.0
    with pytest.raises(ValueError):
        LLMAgent(model="m", base_url="ftp://x")
