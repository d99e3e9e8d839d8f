"""Calibrated timing: repeated measurements, their noise, and comparisons.

`measure` (-> `Measurement`) and `compare` (-> `Comparison`) are the entry points;
stats (intervals on plain samples), sequential (the anytime-valid confidence
sequence), metrics (cpu, wall, valgrind instruction counts), calibration (the
workload and its cached factor), probe (the machine's speed next to a measurement),
load (load spikes), measurement and comparison, kept (measurements kept for reuse and the
near-tie looks against them) are the modules. docs/timing.md
explains the estimators and their guarantees.
"""

from codegym.timing.calibration import calibration_factor, calibration_workload
from codegym.timing.comparison import Comparison, Decision, compare, decide
from codegym.timing.kept import NearTie, Passes, Reference, forget_kept, keep, measure_passes, slowness_now
from codegym.timing.load import HostLoad, SpikeFilter, preempted, read_host_load
from codegym.timing.measurement import Measurement, Verifier, measure, noise_floor, summarize
from codegym.timing.metrics import (
    DEFAULT_MIN_EFFECT,
    DEFAULT_MIN_OF,
    DEFAULT_MIN_WORTH,
    METRICS,
    PYTHON_VALGRIND_WRAPPER,
    VALGRIND_WRAPPER,
    UnsupportedMetricError,
    ValgrindCount,
    check_metric,
    parse_valgrind_instructions,
    valgrind_wrapper,
)
from codegym.timing.probe import probe_run
from codegym.timing.probe import reference as probe_reference
from codegym.timing.sequential import cs_interval, cs_wealth, futility_log_wealth
from codegym.timing.stats import (
    bootstrap_ci,
    hodges_lehmann,
    median_ci,
    paired_interval,
    t_cdf,
    t_ci,
    t_ppf,
    wilcoxon_ci,
)

__all__ = [
    "METRICS", "Measurement", "Comparison", "UnsupportedMetricError", "measure", "compare",
    "calibration_workload", "calibration_factor", "noise_floor", "summarize", "median_ci",
    "hodges_lehmann", "wilcoxon_ci", "t_ci", "t_cdf", "t_ppf", "bootstrap_ci", "paired_interval",
    "decide", "Decision", "parse_valgrind_instructions", "ValgrindCount", "check_metric", "VALGRIND_WRAPPER",
    "Verifier", "DEFAULT_MIN_OF", "DEFAULT_MIN_EFFECT", "DEFAULT_MIN_WORTH", "cs_interval", "cs_wealth",
    "valgrind_wrapper", "PYTHON_VALGRIND_WRAPPER", "probe_run", "probe_reference", "HostLoad", "SpikeFilter",
    "preempted", "read_host_load", "keep", "forget_kept", "NearTie", "Passes", "Reference", "measure_passes",
    "slowness_now", "futility_log_wealth",
]
