"""Environments: the step loop (`episode`), `CodeEnv`, `SWEEnv`, feedback text, and the ids.

Importing the package registers the Gymnasium ids (`codegym.envs.registration`);
``register_envs`` is also the ``gymnasium.envs`` entry point. `CodeEnv` is loaded
on first access (it pulls in the judge and tree-sitter), and so is `EpisodeSettings`
(how an episode runs: `codegym.envs.settings`).
"""

from __future__ import annotations

from codegym.envs.registration import ENV_IDS, register_envs

__all__ = ["CodeEnv", "EpisodeSettings", "ENV_IDS", "register_envs"]


def __getattr__(name: str):
    # CodeEnv pulls in the judge, tree-sitter and pydantic: import it only when asked for
    if name == "CodeEnv":
        from codegym.envs.code_env import CodeEnv  # noqa: PLC0415  (lazy: see above)
        return CodeEnv
    if name == "EpisodeSettings":
        from codegym.envs.settings import EpisodeSettings  # noqa: PLC0415  (lazy: see above)
        return EpisodeSettings
    raise AttributeError(f"module 'codegym.envs' has no attribute {name!r}")
