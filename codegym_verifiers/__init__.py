"""verifiers' plugin module for codegym: taskset id ``codegym-verifiers`` (``vf-eval codegym-verifiers``).

verifiers resolves a taskset id to an installed top-level module and takes the
`Taskset` and `Env` it exports through ``__all__``; the classes live in
`codegym.integrations.verifiers` (docs/verifiers.md).
"""

from codegym.integrations.verifiers import CodegymEnv, CodegymTaskset

__all__ = ["CodegymTaskset", "CodegymEnv"]
