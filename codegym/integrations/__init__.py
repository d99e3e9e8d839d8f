"""Thin adapters between codegym and RL trainers; each trainer is an optional dependency.

- `codegym.integrations.agent`: `TokenAgent`/`ChatTokens`, a codegym agent driven by a
  token-in/token-out policy (shared by the adapters; needs a ``transformers`` tokenizer).
- `codegym.integrations.trl`: `CodegymRollout` (a ``rollout_func`` for
  ``trl.GRPOTrainer``) and `codegym_reward` (for ``reward_funcs``).
- `codegym.integrations.verl`: verl parquet datasets (RLHFDataset schema),
  `compute_score` for ``custom_reward_function``, and `CodegymAgentLoop` (verl's
  multi-turn agent loop; built when first accessed, since it subclasses verl's class).
- `codegym serve` (docs/serve.md): `sessions`, `openenv`, `ors`, `serve`; `verifiers`: a
  verifiers taskset and env (docs/verifiers.md).

Importing this package imports no trainer or protocol package: the submodules are
loaded on first attribute access (trl and verl import their trainer only where needed).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["agent", "trl", "verl", "sessions", "openenv", "ors", "serve", "verifiers"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
