"""What a timed reward tells the agent: one line on the observation of the step that submits.

The env makes that observation before a reward wrapper runs, so `FinalReward.step` adds the
line its wrapper makes from its details (``info["staged"]`` / ``info["timing"]``) to it, as
``Performance: 3.2x faster than the baseline (95% CI 2.9-3.5x); stage: correct and faster``:
the measured speedup over the baseline with its interval (or why there is none) and the
stage the program reached. Pure functions of those details; docs/rewards.md shows examples.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: the staged reward's failure stages as the agent reads them
STAGE_TEXT = {"no_code": "no code", "compile_error": "compile error", "runtime_error": "runtime error",
              "wrong_answer": "wrong answer", "sandbox_error": "not judged (sandbox error, not the program's fault)"}


def times_x(speedup: float, than: str = "the baseline") -> str:
    """``3.2x faster than the baseline`` / ``1.5x slower than the baseline``."""
    if speedup >= 1.0:
        return f"{_x(speedup)} faster than {than}"
    return f"{_x(1.0 / speedup)} slower than {than}"


def _x(v: float) -> str:
    return "infx" if not math.isfinite(v) else (f"{v:.1f}x" if v < 100 else f"{v:.0f}x")


def _interval(lo: float, hi: float) -> str:
    return f"{lo:.2f}-{hi:.2f}x" if hi < 10 else f"{_x(lo)[:-1]}-{_x(hi)}"


def performance_line(performance: str, stage: str) -> str:
    return f"Performance: {performance}; stage: {stage}"


def _failed_stage(stage: str, fraction: float | None = None) -> str:
    text = STAGE_TEXT.get(stage, stage.replace("_", " "))
    if stage == "wrong_answer" and fraction is not None:
        text += f" ({fraction:.0%} of the tests passed)"
    return text


def _stopped(bound: Mapping[str, Any]) -> str:
    return (f"no faster than the baseline (its timed runs reached the baseline's {bound.get('baseline_s', 0):.3g} s "
            "per pass and were stopped)")


def staged_line(details: Mapping[str, Any]) -> str:
    """The line of `StagedReward`'s details: speedup ``t_baseline / t`` with the interval its
    measurements' noise allows (the candidate's and the baseline's relative CI half-widths,
    combined), the reference's speedup for scale, and the stage."""
    stage = details.get("stage", "")
    if stage != "correct":
        return performance_line("not timed (only a correct program is)", _failed_stage(stage, details.get("fraction")))
    if details.get("bound"):
        return performance_line(_stopped(details["bound"]), "correct, no faster than the baseline")
    times = details.get("times") or {}
    t, tb, tr = times.get("t"), times.get("t_baseline"), times.get("t_reference")
    if not (t and tb):
        return performance_line(f"not measured ({details.get('reason') or 'no timing'})", "correct")
    s = tb / t
    h = math.hypot(times.get("noise") or 0.0, times.get("noise_baseline") or 0.0)
    lo, hi = s / (1.0 + h), (s / (1.0 - h) if h < 1.0 else math.inf)
    parts = [f"{_interval(lo, hi)} within the measurement noise"] if h > 0 else []
    if tr:
        parts.append(f"the reference: {times_x(tb / tr)}")
    perf = times_x(s) + (f" ({'; '.join(parts)})" if parts else "")
    imp, beyond = details.get("improvement"), details.get("log2_speedup_over_reference")
    if beyond:
        where = "correct and faster than the reference"
    elif imp is not None and imp > 0:
        where = "correct and faster"
    else:
        where = "correct, not faster than the baseline beyond the noise"
    return performance_line(perf, where)


def timed_line(details: Mapping[str, Any], confidence: float, than: str = "the baseline") -> str:
    """The line of `TimedReward`'s details: the last comparison's speedup over the solution it
    was compared with (`than`) and its CI at `confidence` (percentile mode: which thresholds
    it beat)."""
    if not details.get("correct"):
        verdict = details.get("verdict") or details.get("perf_verdict") or ""
        reason = details.get("reason") or ""
        stage = (STAGE_TEXT["sandbox_error"] if not details.get("scorable", True) and "sandbox_error" in reason
                 else f"not correct{f' ({verdict})' if verdict else ''}")
        return performance_line("not timed (only a correct program is)", stage)
    if details.get("bound"):
        return performance_line(_stopped(details["bound"]), "correct, no faster than the baseline")
    comps = [c for c in details.get("comparisons") or () if isinstance(c, Mapping) and "speedup" in c]
    if details.get("mode") == "percentile" and details.get("percentiles"):
        events = details["percentiles"]
        beaten = [f"p{e['percentile']:g}" for e in events if e.get("beats")]
        missed = [f"p{e['percentile']:g} ({e.get('pivot')})" for e in events if not e.get("beats")]
        perf = "; ".join(([f"faster than the {', '.join(beaten)} of the task's runtimes"] if beaten else [])
                         + ([f"not faster than the {', '.join(missed)}"] if missed else []))
    elif comps:
        c = comps[-1]
        perf = times_x(float(c["speedup"]), than)
        ci = c.get("ci")
        if c.get("identical"):
            perf += " (the same program)"
        elif ci and all(isinstance(v, (int, float)) and v > 0 for v in ci):
            perf += f" ({confidence:.0%} CI {_interval(float(ci[0]), float(ci[1]))})"
    else:
        perf = f"not measured ({details.get('reason') or 'no comparison'})"
    if not details.get("scorable", True):
        stage = f"correct (speed not scored: {details.get('reason') or 'too noisy'})"
    elif (details.get("score") or 0.0) > 0:
        stage = "correct and faster"
    else:
        stage = "correct, not faster beyond the noise"
    return performance_line(perf, stage)


