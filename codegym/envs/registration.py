"""The public Gymnasium ids of codegym and their registration.

=========================  ==========================================
id                          tasks
=========================  ==========================================
codegym/PerfCode-v0         tasks/perfcode (systems-code optimisation)
codegym/DMCOptim-v0         tasks/dmcoptim (contest problems, optimisation tests)
codegym/LCB-v0              tasks/lcb (LiveCodeBench-style generation)
codegym/MultiPLE-Julia-v0   tasks/multiple_julia (HumanEval/MBPP-style Julia)
codegym/SWE-v0              tasks/swe (repositories with an issue)
codegym/Suite-v0            any suite or YAML path given as ``suite=``
=========================  ==========================================

Importing this module registers them (idempotent); entry points are strings, so
no environment module is imported until `gym.make`. Each id's ``reward="suite"`` is
the reward its suite declares in suite.yaml (PerfCode and DMC-Optim: the staged
reward; the others: correctness), applied by the entry point
(`codegym.envs.episode.make_env`); ``reward=`` overrides it. See docs/environments.md.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

ENTRY_POINT = "codegym.envs.code_env:make_code_env"
#: ids whose env is a CodeEnv subclass
ENTRY_POINTS = {"codegym/SWE-v0": "codegym.envs.swe_env:make_swe_env",
                # a suite of repository tasks gets SWEEnv's episodes, any other a CodeEnv
                "codegym/Suite-v0": "codegym.envs.swe_env:make_suite_env"}

#: id -> default constructor kwargs
ENV_IDS: dict[str, dict] = {
    "codegym/PerfCode-v0": {"suite": "perfcode", "max_turns": 4, "reward": "suite"},
    "codegym/DMCOptim-v0": {"suite": "dmcoptim", "max_turns": 4, "reward": "suite"},
    "codegym/LCB-v0": {"suite": "lcb", "max_turns": 3, "reward": "suite"},
    "codegym/MultiPLE-Julia-v0": {"suite": "multiple_julia", "max_turns": 3, "reward": "suite"},
    "codegym/SWE-v0": {"suite": "swe", "max_turns": 10, "reward": "suite"},
    "codegym/Suite-v0": {"max_turns": 4, "reward": "suite"},
}


def register_envs() -> None:
    """Register every codegym id with Gymnasium (idempotent)."""
    for env_id, kwargs in ENV_IDS.items():
        if env_id in registry:
            continue
        register(id=env_id, entry_point=ENTRY_POINTS.get(env_id, ENTRY_POINT), kwargs=dict(kwargs),
                 disable_env_checker=False, order_enforce=True)


register_envs()

