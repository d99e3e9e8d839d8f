"""The fuzz suite's shared parts: the example budget and the property every error must have.

`budget(n)`: hypothesis settings with `n` examples, derandomized (the same examples on
every run: `make test` stays reproducible and fits its time); ``CODEGYM_FUZZ=long``
multiplies the budget (by ``CODEGYM_FUZZ_SCALE``, default 50) and draws fresh random
examples -- `benchmarks/fuzz.py` runs that mode and prints the examples per second.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

LONG = os.environ.get("CODEGYM_FUZZ", "") == "long"
SCALE = int(os.environ.get("CODEGYM_FUZZ_SCALE", "50")) if LONG else 1


def budget(n: int) -> settings:
    """Settings for a fuzz test of `n` examples in the CI budget (see the module docstring)."""
    return settings(max_examples=n * SCALE, deadline=None, derandomize=not LONG, database=None,
                    print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
