"""Evaluation: benchmark agents on the same tasks, fairly and reproducibly.

``codegym eval CONFIG.yaml`` runs an eval config and ``codegym report DIR`` regenerates its
report (`codegym.cli.eval`). Modules: `config` (the YAML config and the episode plan),
`runner` (the run), `episodes` (one episode -> its record), `speed` (the perf block and
head-to-head speed), `store` and `manifest` (the eval directory), `metrics` (pass@k,
ranking ...), `report` (results.json, summary.md, report.html). docs/eval.md explains them.
Built on it: `recordings` / `simrewards` / `simulate` (``codegym rewards simulate``,
docs/simulate.md), `checkergen` (``codegym tasks gen-checker``, docs/checkergen.md),
`synthesis` / `tournament` (``codegym synthesize``, docs/synthesis.md).

    >>> from codegym.evaluation import load_config, run_eval, write_report
    >>> summary = run_eval("configs/eval.yaml", "out/eval-example")    # doctest: +SKIP
"""

from __future__ import annotations

from codegym.evaluation.config import ConfigError, EvalConfig, load_config
from codegym.evaluation.metrics import compute_metrics, pass_at_k
from codegym.evaluation.report import write_report
from codegym.evaluation.runner import RunSummary, run_eval
from codegym.evaluation.store import EvalError

__all__ = ["EvalConfig", "ConfigError", "load_config", "run_eval", "RunSummary", "EvalError",
           "compute_metrics", "pass_at_k", "write_report"]
