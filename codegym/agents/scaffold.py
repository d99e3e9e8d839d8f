"""Agent scaffolds as codegym agents: `make_scaffold_agent` and the two kinds.

A scaffold (mini-swe-agent, aider, a script of your own) runs its own loop with a model;
codegym gives it the episode's workspace in a directory (plain, bubblewrap or a
container: `codegym.agents.scaffold_box`), the task statement the way it expects it and
its model endpoint, then takes its file changes as the episode's edits, one step per
scaffold turn that changed files where the scaffold reports turns, else one
(`codegym.agents.scaffold_run`). Kinds: `MiniSweAgent` (mini-swe-agent in-process) and
`CommandAgent` (any shell command; a loopback proxy counts its model tokens).

    >>> agent = make_scaffold_agent("mini-swe-agent,model=qwen,base_url=http://127.0.0.1:8000/v1")
    >>> agent = make_scaffold_agent("shell,command='my-agent --task {prompt_file}'")

Shipped configs: `SCAFFOLDS` (``codegym/agents/scaffolds/*.yaml``); docs/scaffolds.md.
"""

from __future__ import annotations

from typing import Any

from codegym.agents.llm_spec import spec_value, split_top
from codegym.agents.scaffold_command import CommandAgent
from codegym.agents.scaffold_mini import MiniSweAgent
from codegym.agents.scaffold_run import (
    SCAFFOLDS,
    ScaffoldAgent,
    ScaffoldConfig,
    load_scaffold_config,
)


def parse_scaffold_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``NAME_OR_PATH[,key=value,...]`` -> (name or path, overrides); quoted values stay text."""
    items = split_top(spec)
    if not items or "=" in items[0]:
        raise ValueError(f"scaffold spec needs a config first: scaffold:NAME[,key=value...] "
                         f"(NAME: one of {sorted(SCAFFOLDS)} or a YAML file), got {spec!r}")
    overrides: dict[str, Any] = {}
    for item in items[1:]:
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"scaffold spec item {item!r} is not key=value")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            overrides[key.strip()] = value[1:-1]
        elif value == "none":  # isolation=none is a name here (null means no value)
            overrides[key.strip()] = value
        else:
            overrides[key.strip()] = spec_value(value)
    return items[0], overrides


def make_scaffold_agent(spec: str | ScaffoldConfig, **overrides: Any) -> ScaffoldAgent:
    """A scaffold agent from a spec (``mini-swe-agent,model=qwen``), a YAML path or a config;
    `overrides` (e.g. an eval config's ``options``) go on top."""
    if isinstance(spec, ScaffoldConfig):
        cfg = ScaffoldConfig.model_validate({**spec.model_dump(), **overrides})
    else:
        name, opts = parse_scaffold_spec(spec)
        cfg = load_scaffold_config(name, **{**opts, **overrides})
    return MiniSweAgent(cfg) if cfg.kind == "mini-swe-agent" else CommandAgent(cfg)
