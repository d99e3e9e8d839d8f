"""Evaluation: benchmark agents on the same tasks, fairly and reproducibly.

``codegym eval CONFIG.yaml`` runs an eval config and ``codegym report DIR`` regenerates its
report. The package holds:

- `codegym.evaluation.config`: the YAML config (agents, suites with filters, samples and
  seeds, turn / time budgets, sandbox, timing, output) with ``file:line`` errors, and the
  episode plan;
- `codegym.evaluation.runner`: resumable execution (atomic JSONL appends, manifest with
  everything that changes a result), the per-episode performance block and the
  head-to-head speed comparisons;
- `codegym.evaluation.metrics`: pass@k (unbiased), strict top-X% pass@1, relative
  efficiency, speedups, head-to-head win rates, ranking with bootstrap CIs, saturation,
  turn statistics (numpy only);
- `codegym.evaluation.report`: ``results.json``, ``summary.md`` and a self-contained
  ``report.html``;
- `codegym.cli.eval`: the two commands.

    >>> from codegym.evaluation import load_config, run_eval, write_report
    >>> summary = run_eval("configs/eval.yaml", "out/eval-example")    # doctest: +SKIP
"""

from __future__ import annotations

from codegym.evaluation.config import ConfigError, EvalConfig, load_config
from codegym.evaluation.metrics import compute_metrics, pass_at_k
from codegym.evaluation.report import write_report
from codegym.evaluation.runner import EvalError, RunSummary, run_eval

__all__ = ["EvalConfig", "ConfigError", "load_config", "run_eval", "RunSummary", "EvalError",
           "compute_metrics", "pass_at_k", "write_report"]
