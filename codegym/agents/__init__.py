"""Reference agents: oracle, baseline, replay, mutant, and the `Agent` protocol.

`make_agent(spec)` builds one from a CLI spec: ``oracle``, ``oracle:unified_diff``,
``baseline``, ``mutant``, ``mutant:crash,loop``, ``replay:FILE``.
"""

from __future__ import annotations

from codegym.agents.base import Agent
from codegym.agents.mutant import MutantAgent
from codegym.agents.reference import BaselineAgent, OracleAgent, ReplayAgent


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
        try:
            from codegym.agents.llm import LLMAgent  # added with the rollout adapter
        except ImportError:
            raise ValueError("the LLM agent is not available in this version") from None
        return LLMAgent.from_spec(arg)
    raise ValueError(f"unknown agent {spec!r}: use oracle[:FORMAT], baseline, mutant[:KINDS], replay:FILE")


__all__ = ["Agent", "OracleAgent", "BaselineAgent", "ReplayAgent", "MutantAgent", "make_agent"]
