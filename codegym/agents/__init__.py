"""Reference agents: oracle, baseline, replay, mutant, and the `Agent` protocol.

`make_agent(spec)` builds one from a CLI spec: ``oracle``, ``oracle:unified_diff``,
``baseline``, ``mutant``, ``mutant:crash,loop``, ``replay:FILE``, ``llm:SPEC`` (an
OpenAI-compatible endpoint, e.g. ``llm:model=qwen,base_url=http://127.0.0.1:8000/v1,temperature=0.7``;
see `codegym.agents.llm`; its settings groups `SamplingSettings`, `ChatSettings`,
`TransportSettings`), ``scaffold:NAME[,key=value...]`` (an agent scaffold such as
mini-swe-agent or a shell command: `codegym.agents.scaffold`).
"""

from __future__ import annotations

from codegym.agents.base import Agent
from codegym.agents.llm import LLMAgent
from codegym.agents.llm_client import LLMError
from codegym.agents.llm_settings import ChatSettings, SamplingSettings, TransportSettings
from codegym.agents.mutant import MutantAgent
from codegym.agents.reference import BaselineAgent, OracleAgent, ReplayAgent
from codegym.agents.scaffold import make_scaffold_agent


def make_agent(spec: str, seed: int = 0):
    """An agent from a spec string (see the module docstring)."""
    name, _, arg = spec.partition(":")
    if name == "oracle":
        return OracleAgent(format=arg or "code_block")
    if name == "baseline":
        return BaselineAgent()
    if name == "mutant":
        return MutantAgent(kinds=arg.split(",") if arg else MutantAgent().kinds, seed=seed)
    if name == "replay":
        if not arg:
            raise ValueError("replay needs a file: replay:FILE.jsonl")
        return ReplayAgent(arg)
    if name == "llm":
        return LLMAgent.from_spec(arg)
    if name == "scaffold":  # scaffold:NAME_OR_YAML[,key=value...] (codegym.agents.scaffold)
        return make_scaffold_agent(arg)
    raise ValueError(f"unknown agent {spec!r}: use oracle[:FORMAT], baseline, mutant[:KINDS], replay:FILE, "
                     "llm:SPEC, scaffold:NAME")


__all__ = ["Agent", "OracleAgent", "BaselineAgent", "ReplayAgent", "MutantAgent", "LLMAgent", "LLMError",
           "SamplingSettings", "ChatSettings", "TransportSettings", "make_agent", "make_scaffold_agent"]
