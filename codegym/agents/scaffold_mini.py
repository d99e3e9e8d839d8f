"""`MiniSweAgent`: mini-swe-agent (PyPI ``mini-swe-agent``, extra ``codegym[scaffolds]``) as an agent.

mini-swe-agent's own `DefaultAgent` loop runs in this process with its own prompt
templates (the config named by ``config``, ``mini.yaml`` by default) and its LiteLLM
model pointed at the configured OpenAI-compatible endpoint (``openai/<model>`` with
``api_base``); every bash command it issues runs in the episode's `ScaffoldBox`
(bubblewrap, a container, or plainly), never in this process's directory. Each of its
steps (one model call and the commands it asked for) is one scaffold turn: the
workspace is read after it, with the call's token usage.
"""

from __future__ import annotations

import json
import os
import platform
import time
import urllib.request
from typing import Any

from codegym.agents.scaffold_box import ScaffoldBox
from codegym.agents.scaffold_run import ScaffoldAgent, ScaffoldRun, ScaffoldTurn, usage_sum
from codegym.core.keys import user_base_url

#: the line mini-swe-agent's prompts tell the model to echo when it is done
SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def resolve_endpoint(model: str | None, base_url: str | None, api_key_env: str | None) -> tuple[str, str, str]:
    """(model, base URL, API key) of the configured endpoint (no key variable: ``EMPTY``); the
    model defaults to ``CODEGYM_LLM_MODEL``, else the first of the server's ``/models``."""
    base = (base_url or user_base_url()).rstrip("/")
    key = (os.environ.get(api_key_env) if api_key_env else None) or "EMPTY"
    model = model or os.environ.get("CODEGYM_LLM_MODEL")
    if not model:
        req = urllib.request.Request(base + "/models", headers={"Authorization": f"Bearer {key}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            data = json.loads(r.read().decode("utf-8"))
        model = str(((data.get("data") or [{}])[0]).get("id") or "")
        if not model:
            raise ValueError(f"{base}/models lists no model; give model=")
    return model, base, key


def _quiet_imports():
    """mini-swe-agent and LiteLLM, imported without banners or network look-ups."""
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    os.environ.setdefault("MSWEA_CONFIGURED", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost-map download at import
    try:
        import litellm  # noqa: PLC0415 -- optional dependency (codegym[scaffolds])
        from minisweagent.agents.default import DefaultAgent  # noqa: PLC0415
        from minisweagent.config import get_config_from_spec  # noqa: PLC0415
        from minisweagent.exceptions import FormatError, Submitted  # noqa: PLC0415
        from minisweagent.models.litellm_model import LitellmModel  # noqa: PLC0415
    except ImportError as e:
        raise ImportError("the mini-swe-agent scaffold needs mini-swe-agent: pip install 'codegym[scaffolds]'") \
            from e
    litellm.suppress_debug_info = True
    return DefaultAgent, LitellmModel, get_config_from_spec, FormatError, Submitted


class _BoxEnvironment:
    """mini-swe-agent's `Environment` protocol over a `ScaffoldBox` (no network)."""

    def __init__(self, box: ScaffoldBox, timeout_s: float, submitted: type[Exception]):
        self.box, self.timeout_s, self._submitted = box, timeout_s, submitted
        self.config = {"cwd": box.workdir, "timeout": timeout_s, "isolation": box.isolation}
        self.commands: list[str] = []

    def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        command = action.get("command", "") if isinstance(action, dict) else str(action)
        self.commands.append(command)
        r = self.box.run(command, float(timeout or self.timeout_s))
        out = {"output": r.output, "returncode": r.returncode,
               "exception_info": f"the command timed out after {timeout or self.timeout_s:g} s" if r.timed_out
               else ""}
        lines = r.output.lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == SUBMIT_MARKER and r.returncode == 0:
            submission = "".join(lines[1:])
            raise self._submitted({"role": "exit", "content": submission,
                                   "extra": {"exit_status": "Submitted", "submission": submission}})
        return out

    def get_template_vars(self, **kwargs) -> dict[str, Any]:
        return {**self.config, **platform.uname()._asdict(), **kwargs}

    def serialize(self) -> dict:
        return {"info": {"config": {"environment": dict(self.config),
                                    "environment_type": "codegym.agents.scaffold_mini._BoxEnvironment"}}}


class MiniSweAgent(ScaffoldAgent):
    """mini-swe-agent on codegym episodes (config kind ``mini-swe-agent``; see the module doc)."""

    def _run(self, box: ScaffoldBox, prompt: str, deadline: float) -> ScaffoldRun:
        DefaultAgent, LitellmModel, get_config_from_spec, FormatError, Submitted = _quiet_imports()
        cfg = self.config
        model_name, base, key = resolve_endpoint(cfg.model, cfg.base_url, cfg.api_key_env)
        mini_cfg = get_config_from_spec(cfg.config)
        model_cfg = {k: v for k, v in (mini_cfg.get("model") or {}).items()
                     if k in ("observation_template", "format_error_template")}
        kwargs = {"drop_params": True, **(mini_cfg.get("model") or {}).get("model_kwargs", {}),
                  **cfg.model_kwargs, "api_base": base, "api_key": key}
        model = _CountingModel(LitellmModel(model_name=f"openai/{model_name}", model_kwargs=kwargs,
                                            cost_tracking="ignore_errors", **model_cfg), FormatError)
        env = _BoxEnvironment(box, cfg.command_timeout_s, Submitted)
        agent_cfg = {k: v for k, v in (mini_cfg.get("agent") or {}).items()
                     if k in ("system_template", "instance_template", "max_consecutive_format_errors")}
        agent_cfg.update(step_limit=cfg.step_limit, cost_limit=0.0,
                         wall_time_limit_seconds=max(1, int(deadline - time.monotonic())))
        turns: list[ScaffoldTurn] = []
        skipped: list[str] = []

        class _TurnAgent(DefaultAgent):
            def step(self):
                t0, n_cmd = time.monotonic(), len(env.commands)
                try:
                    return super().step()
                finally:
                    if model.calls > len(turns):  # a model call happened: this was a turn
                        files, skip = box.snapshot()
                        skipped[:] = skip
                        turns.append(ScaffoldTurn(len(turns), files, model.usages[len(turns)],
                                                  env.commands[n_cmd:], time.monotonic() - t0))

        agent = _TurnAgent(model, env, **agent_cfg)
        result = agent.run(prompt)
        if not turns:
            files, skipped[:] = box.snapshot()
            turns.append(ScaffoldTurn(0, files))
        return ScaffoldRun(turns, exit_status=str(result.get("exit_status", "")), model_calls=model.calls,
                           usage=usage_sum(*model.usages), skipped_files=list(skipped),
                           log=str(result.get("submission", ""))[-2000:])


class _CountingModel:
    """A mini-swe-agent model wrapper that keeps each call's token usage."""

    def __init__(self, inner: Any, format_error: type[Exception]):
        self.inner, self._format_error = inner, format_error
        self.config = inner.config
        self.usages: list[dict[str, int]] = []

    @property
    def calls(self) -> int:
        return len(self.usages)

    def query(self, messages, **kwargs) -> dict:
        try:
            message = self.inner.query(messages, **kwargs)
        except self._format_error as e:  # billed before its parsing failed
            extra = (e.messages[0].get("extra") or {}) if getattr(e, "messages", None) else {}
            self.usages.append(_usage_of(extra.get("response")))
            raise
        self.usages.append(_usage_of((message.get("extra") or {}).get("response")))
        return message

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _usage_of(response: Any) -> dict[str, int]:
    usage = response.get("usage") if isinstance(response, dict) else None
    return {k: int(v) for k, v in (usage or {}).items()
            if k in ("prompt_tokens", "completion_tokens", "total_tokens") and isinstance(v, (int, float))}
