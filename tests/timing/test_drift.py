"""Real runs of the drift and noise machinery: the speed probe, the pair design, load readings,
and instruction counts of Python under valgrind.

Only properties are asserted (how a record is put together, exact repeatability of
counts, which side ran first), never a time, a rate or a significance.
"""

from __future__ import annotations

import shutil

import pytest

import codegym.timing as T
from codegym.timing import probe as P
from codegym.timing.load import read_host_load
from codegym.timing.metrics import DEFAULT_MIN_WORTH
from codegym.timing.probe import probe_run
from codegym.timing.probe import reference as probe_reference

PY_WORK = ("import sys\nn = int(sys.stdin.read() or 0)\ns = 0\n"
           "for i in range(n):\n    s += i * i % 7\nprint(s)\n")


def test_a_probed_measurement_is_corrected_by_the_speed_its_probe_saw(sb):
    b = sb.build("python", {"main.py": PY_WORK})
    m = T.measure(sb, b, ["20000"], repeats=5, max_repeats=6, probe=True)
    assert m.ok, m.reason
    assert m.probed and len(m.raw_samples) == len(m.probes) == m.n
    ref_probe, ref_cal = probe_reference(sb)
    assert probe_reference(sb) == (ref_probe, ref_cal)  # taken once per sandbox
    sp = P.speeds(m.probes, ref_probe)
    assert m.samples == pytest.approx([v / f for v, f in zip(m.raw_samples, sp)])
    assert m.speed == pytest.approx(sorted(m.probes)[len(m.probes) // 2] / ref_probe) or m.n % 2 == 0
    # in calibration units at the same reference speed: normalized stays median / calibration
    assert m.calibration == ref_cal and m.normalized == pytest.approx(m.median / m.calibration)
    plain = T.measure(sb, b, ["20000"], repeats=3, max_repeats=3, probe=False)
    assert plain.ok and not plain.probed and plain.raw_samples == [] and plain.speed is None
    with pytest.raises(ValueError, match="probe"):
        T.measure(sb, b, ["1"], probe="sometimes")


def test_probe_is_automatic_for_time_metrics_on_this_host_only(sb):
    assert P.probe_applies(sb, "cpu") and P.probe_applies(sb, "wall")
    assert not P.probe_applies(sb, "instructions")
    assert probe_run(sb) > 0


def test_pairs_take_turns_going_first_by_a_seeded_coin(sb):
    a = sb.build("python", {"main.py": PY_WORK})
    b = sb.build("python", {"main.py": PY_WORK + "# another build\n"})
    c1 = T.compare(sb, a, b, ["3000"], max_pairs=8, min_of=1, calibrate=False, seed=4, alpha=0.5)
    assert c1.ok, c1.reason
    assert c1.method == "cs" and c1.stopped in ("significant", "futile", "max_pairs", "budget")
    assert len(c1.a_first) == c1.n_pairs == len(c1.log_ratios)
    c2 = T.compare(sb, a, b, ["3000"], max_pairs=8, min_of=1, calibrate=False, seed=4, alpha=0.5)
    n = min(c1.n_pairs, c2.n_pairs)
    if c1.rejected == c2.rejected == 0:
        assert c1.a_first[:n] == c2.a_first[:n]  # the same seed, the same order
    assert c1.min_worth == DEFAULT_MIN_WORTH["cpu"]
    assert c1.rejected == len(c1.rejected_log_ratios) <= max(2, 8 // 4)
    # (8 fair coins all alike is a 1-in-128 event, but the seed fixes the coins: not chance)
    long = T.compare(sb, a, b, ["3000"], max_pairs=12, min_of=1, calibrate=False, seed=1, alpha=1e-9,
                     min_worth=0.0)
    assert long.ok and long.n_pairs == 12 and not long.decided and long.stopped == "max_pairs"
    assert 0 < sum(long.a_first) < 12


def test_a_fixed_sample_method_still_looks_on_its_schedule(sb):
    a = sb.build("python", {"main.py": PY_WORK})
    c = T.compare(sb, a, a, ["2000"], method="wilcoxon", repeats=4, max_pairs=6, min_of=1, calibrate=False)
    assert c.ok and c.method == "wilcoxon" and c.n_pairs in (4, 6)


def test_host_load_readings():
    before = read_host_load()
    sum(i * i for i in range(200_000))
    psi, steal = read_host_load().since(before)
    assert psi is None or psi >= 0
    assert steal is None or steal >= 0
    assert before.since(before) == (None, None)


def _need_valgrind():
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: Python instructions test skipped")
        pytest.skip("valgrind is not installed (apt-get install valgrind)")


def test_python_instructions_are_exact_with_the_hash_seed_fixed(sb):
    """CPython under valgrind with PYTHONHASHSEED fixed (the run command's -E dropped): string
    hashing, and so set and dict layout, repeat exactly. (Two counted runs: ~2 s of CPU each,
    most of it valgrind translating the interpreter's start-up.)"""
    _need_valgrind()
    src = ("import os, sys\nn = int(sys.stdin.read())\nwords = {str(i * 7919) for i in range(n)}\n"
           "print(len(words), os.environ.get('PYTHONHASHSEED'), sys.flags.ignore_environment)\n")
    b = sb.build("python", {"main.py": src})
    seen = []

    def verify(i, res):
        seen.append(res.stdout)
        return None
    m = T.measure(sb, b, ["3000"], metric="instructions", calibrate=False, verify=verify)
    assert m.ok, m.reason
    assert seen == ["3000 0 0\n"] * 2  # seed 0 in, -E out
    assert m.n == 2 and m.samples[0] == m.samples[1] and m.rel_ci == 0 and m.converged
    assert m.samples[0] > 1_000_000 and not m.probed


# =========================================================================== SpeedTrack


class _Readings:
    """A stand-in `probe_slowness`: hands out the given readings in turn and counts its calls."""

    def __init__(self, *readings: list[float]):
        self.readings = list(readings)
        self.calls: list[tuple[str, int]] = []

    def __call__(self, sandbox, metric, runs=P.SPEED_PROBES):
        self.calls.append((metric, runs))
        return list(self.readings.pop(0))


def test_a_speed_track_reads_once_at_the_start_and_then_the_median_of_its_window(monkeypatch):
    """`SpeedTrack`: `start()` reads only when nothing is read yet; `after()` reads once more and
    gives the median of the runs of the last `window` readings (older readings dropped)."""
    fake = _Readings([1.0, 1.1, 1.2], [2.0, 2.0, 2.0], [3.0, 3.0, 3.0], [4.0, 4.0, 4.0])
    monkeypatch.setattr(P, "probe_slowness", fake)
    tr = P.SpeedTrack(object(), "cpu", runs=3, window=2)
    assert tr.start() == pytest.approx(1.1) and len(fake.calls) == 1
    assert tr.start() == pytest.approx(1.1) and len(fake.calls) == 1      # read once only
    assert tr.after() == pytest.approx((1.2 + 2.0) / 2) and len(fake.calls) == 2   # both readings
    assert tr.after() == pytest.approx(2.5) and len(fake.calls) == 3      # the first dropped
    assert [list(r) for r in tr.readings] == [[2.0] * 3, [3.0] * 3]
    assert tr.start() == pytest.approx(2.5) and len(fake.calls) == 3      # no reading once started
    assert fake.calls == [("cpu", 3)] * 3


def test_a_speed_track_after_without_a_start_reads_twice_and_keeps_window_readings(monkeypatch):
    fake = _Readings([1.0], [1.2], [5.0], [5.0], [5.0], [5.0])
    monkeypatch.setattr(P, "probe_slowness", fake)
    tr = P.SpeedTrack(object(), "wall", runs=1)                  # the default window
    assert tr.after() == pytest.approx(1.1) and fake.calls == [("wall", 1)] * 2
    for _ in range(P.TRACK_READINGS - 2):
        tr.after()
    assert len(tr.readings) == P.TRACK_READINGS
    assert tr.after() == pytest.approx(5.0)                      # (1.0 and 1.2 both out of the window)
    assert len(tr.readings) == P.TRACK_READINGS and len(fake.calls) == P.TRACK_READINGS + 1


def test_a_speed_track_skips_empty_readings_and_is_none_without_any(monkeypatch):
    fake = _Readings([], [], [1.3, 1.5], [])
    monkeypatch.setattr(P, "probe_slowness", fake)
    tr = P.SpeedTrack(object(), "cpu", window=3)
    assert tr.start() is None                                  # the probe did not apply, or failed
    assert tr.after() == pytest.approx(1.4)                    # (start reads again: nothing was kept)
    assert tr.after() == pytest.approx(1.4)                    # an empty reading moves nothing
    assert list(tr.readings) == [[1.3, 1.5]] and len(fake.calls) == 4  # ... and takes no slot of the window


def test_a_speed_track_of_instruction_counts_reads_nothing(sb):
    """No probe for instruction counts: None, and no probe run (a real sandbox, nothing stubbed)."""
    tr = P.SpeedTrack(sb, "instructions")
    assert tr.start() is None and tr.after() is None
    assert P.probe_slowness(sb, "instructions") == [] and P.slowness_now(sb, "instructions") is None
    assert all(r == [] for r in tr.readings)


def test_a_speed_track_on_real_probe_runs(sb):
    """Real probe runs: one reading of `runs` runs each, the window's runs pooled (no time asserted)."""
    tr = P.SpeedTrack(sb, "cpu", runs=1, window=2)
    first = tr.start()
    assert first is not None and first > 0 and [len(r) for r in tr.readings] == [1]
    assert tr.after() > 0 and tr.after() > 0
    assert [len(r) for r in tr.readings] == [1, 1]
    runs = [x for r in tr.readings for x in r]
    assert tr.start() == pytest.approx(sorted(runs)[0] / 2 + sorted(runs)[1] / 2)
