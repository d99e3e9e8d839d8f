"""Thin adapters between codegym and RL trainers; each trainer is an optional dependency.

- `codegym.integrations.agent`: `TokenAgent`/`ChatTokens`, a codegym agent driven by a
  token-in/token-out policy (shared by the adapters; needs a ``transformers`` tokenizer).
- `codegym.integrations.trl`: `CodegymRollout` (a ``rollout_func`` for
  ``trl.GRPOTrainer``) and `codegym_reward` (for ``reward_funcs``).
- `codegym.integrations.verl`: verl parquet datasets (RLHFDataset schema),
  `compute_score` for ``custom_reward_function``, and `CodegymAgentLoop` (verl's
  multi-turn agent loop; built when first accessed, since it subclasses verl's class).

Importing this package imports none of trl, verl, torch or transformers: the
submodules are loaded on first attribute access
(``codegym.integrations.trl``), and each imports its trainer only where it needs it.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["agent", "trl", "verl"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
