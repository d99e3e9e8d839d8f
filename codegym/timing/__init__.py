"""Calibrated timing: repeated measurements, their noise, and comparisons.

`measure` (-> `Measurement`) and `compare` (`CompareSettings` -> `Comparison`) are the
entry points, `decide` (-> `Decision`) one look of a comparison, `calibration_workload` /
`calibration_factor` the machine's calibration, `noise_floor` and `summarize` the
measurement of plain samples. The modules: stats (intervals on plain samples), sequential
(the anytime-valid confidence sequence), metrics (cpu, wall, valgrind instruction counts),
calibration (the workload and its cached factor), probe (the machine's speed next to a
measurement), load (load spikes), measurement and comparison, kept (measurements kept for
reuse and the near-tie looks against them). docs/timing.md explains the estimators and
their guarantees.
"""

from codegym.timing.calibration import calibration_factor, calibration_workload
from codegym.timing.comparison import CompareSettings, Comparison, Decision, compare, decide
from codegym.timing.measurement import Measurement, measure, noise_floor, summarize
from codegym.timing.metrics import METRICS, UnsupportedMetricError

__all__ = [
    "measure", "Measurement", "compare", "CompareSettings", "Comparison", "decide", "Decision",
    "METRICS", "UnsupportedMetricError", "calibration_workload", "calibration_factor", "noise_floor",
    "summarize",
]
