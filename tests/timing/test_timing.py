"""Tests of codegym.timing: the statistics on synthetic samples, then real measurements.

Never asserts on absolute times: only on relations (more work is slower,
significantly), on coverage of intervals over many seeded synthetic draws,
and on exact repeatability of instruction counts.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

import codegym.timing as T
from codegym.core.limits import Limits
from codegym.sandbox.types import RunRequest
from codegym.timing import comparison, metrics
from codegym.timing.metrics import parse_valgrind_instructions
from codegym.timing.stats import bootstrap_ci, median_ci, t_ci, t_ppf, wilcoxon_ci

# =========================================================================== synthetic


def _coverage(ci_fn, truth: float, draws) -> float:
    hits = 0
    for x in draws:
        lo, hi = ci_fn(x)
        hits += lo <= truth <= hi
    return hits / len(draws)


def test_median_ci_covers_the_true_median():
    rng = np.random.default_rng(1)
    # right-skewed, like run times: lognormal, true median exp(mu)
    draws = [rng.lognormal(mean=math.log(0.05), sigma=0.05, size=15) for _ in range(600)]
    cov = _coverage(lambda x: median_ci(x, 0.95)[:2], 0.05, draws)
    assert cov >= 0.94
    lo, hi, c = median_ci(range(1, 11), 0.95)
    assert (lo, hi) == (2.0, 9.0) and c == pytest.approx(1 - 2 * 11 / 1024)


def test_median_ci_small_n_reports_its_lower_coverage():
    lo, hi, c = median_ci([3.0, 1.0, 2.0], 0.95)
    assert (lo, hi) == (1.0, 3.0) and c == pytest.approx(0.75)


def test_median_is_robust_to_contaminated_samples():
    rng = np.random.default_rng(2)
    clean = rng.normal(1.0, 0.01, size=20)
    dirty = clean.copy()
    dirty[:5] *= 1.5  # a quarter of the runs slowed by a neighbour
    assert abs(np.median(dirty) - 1.0) < 0.03
    m = T.summarize(dirty, target_rel_ci=0.05)
    assert m.ci[0] <= 1.0 <= m.ci[1] * 1.01


def test_wilcoxon_ci_coverage_and_exact_values():
    rng = np.random.default_rng(3)
    draws = [0.1 + rng.standard_t(3, size=12) * 0.02 for _ in range(600)]  # heavy tails
    cov = _coverage(lambda d: wilcoxon_ci(d, 0.95)[1:3], 0.1, draws)
    assert cov >= 0.93
    # n = 10, alpha = 0.05: critical value 8 of the signed-rank table -> coverage 1 - 2*25/1024
    est, lo, hi, c = wilcoxon_ci(np.arange(1, 11, dtype=float), 0.95)
    assert c == pytest.approx(1 - 50 / 1024)
    assert est == pytest.approx(5.5) and lo < 5.5 < hi


def test_t_quantiles_and_interval():
    assert t_ppf(0.975, 4) == pytest.approx(2.776445105, abs=1e-6)
    assert t_ppf(0.975, 30) == pytest.approx(2.042272456, abs=1e-6)
    assert t_ppf(0.025, 9) == pytest.approx(-t_ppf(0.975, 9))
    rng = np.random.default_rng(4)
    draws = [rng.normal(0.2, 0.05, size=8) for _ in range(600)]
    assert _coverage(lambda d: t_ci(d, 0.95)[1:3], 0.2, draws) >= 0.93


def test_bootstrap_is_deterministic_given_seed():
    x = np.random.default_rng(5).normal(0.0, 1.0, size=25)
    a = bootstrap_ci(x, "mean", seed=7)
    b = bootstrap_ci(list(x), "mean", seed=7)
    c = bootstrap_ci(x, "mean", seed=8)
    assert a == b
    assert a[1:3] != c[1:3]  # the seed is what is used
    assert a[1] <= np.mean(x) <= a[2]
    m1 = bootstrap_ci(x, "median", seed=3)
    assert m1 == bootstrap_ci(x, np.median, seed=3)


@pytest.mark.parametrize("method,bound", [("cs", 0.01), ("wilcoxon", 0.02), ("t", 0.02), ("bootstrap", 0.05)])
def test_identical_distributions_are_not_significant(method, bound):
    # (the percentile bootstrap under-covers at small n -- why it is not the default)
    rng = np.random.default_rng(6)
    false = 0
    trials = 300
    for i in range(trials):
        a = rng.lognormal(math.log(0.05), 0.04, size=15)
        b = rng.lognormal(math.log(0.05), 0.04, size=15)
        d = np.log(a) - np.log(b)
        *_, sig, _ = T.decide(d, level=0.99, floor=0.01, method=method, seed=i)
        false += sig
    assert false / trials <= bound


@pytest.mark.parametrize("method,n", [("cs", 30), ("wilcoxon", 15), ("t", 15), ("bootstrap", 15)])
def test_shifted_distributions_are_significant(method, n):
    # (the confidence sequence pays for holding at every look with wider intervals at a
    # given n: `compare` takes more pairs with it, up to max_pairs 30)
    rng = np.random.default_rng(7)
    hits = 0
    trials = 200
    for i in range(trials):
        a = rng.lognormal(math.log(0.055), 0.04, size=n)  # a is 1.1x slower than b
        b = rng.lognormal(math.log(0.05), 0.04, size=n)
        est, lo, hi, cov, sig, settled = T.decide(np.log(a) - np.log(b), 0.99, 0.01, method, seed=i)
        hits += sig and est > 0
    assert hits / trials >= 0.95


def test_noise_floor_ignores_one_preempted_sample():
    clean = [1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00, 1.01]
    m_clean = T.summarize(clean)
    m_dirty = T.summarize(clean[:-1] + [1.6])
    assert m_dirty.rel_ci > 0.25  # the order-statistic interval is the whole range at n = 8
    assert T.noise_floor(m_dirty) < 0.03 and T.noise_floor(m_clean) < 0.03


def test_effect_inside_the_noise_floor_is_not_significant():
    d = np.full(20, math.log(1.005)) + np.random.default_rng(8).normal(0, 1e-4, 20)
    est, lo, hi, cov, sig, settled = T.decide(d, 0.99, floor=0.01)
    assert lo > 0 and not sig and settled  # the CI excludes 0, but 0.5 % is below the floor


def test_summarize_noise_floor_and_json():
    m = T.summarize([5.0, 5.0, 5.0], metric="instructions", target_rel_ci=0.0)
    assert m.rel_ci == 0 and m.converged and T.noise_floor(m) == 0.0
    m = T.summarize([1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02], target_rel_ci=0.01)
    assert not m.converged and 0 < T.noise_floor(m) <= m.rel_ci
    assert m.ci[0] <= m.median <= m.ci[1]
    bad = T.Measurement(metric="cpu", ok=False, reason="x")
    assert T.noise_floor(bad) == math.inf
    text = json.dumps(m.to_dict(), allow_nan=False)
    assert T.Measurement.from_dict(json.loads(text)).median == m.median
    c = T.Comparison(metric="cpu", speedup=1.2, ci=(1.1, math.inf), a=m, b=m)
    assert json.loads(json.dumps(c.to_dict(), allow_nan=False))["ci"] == [1.1, None]


def test_valgrind_log_parsing_resists_forged_lines():
    # what the wrapper prints: the main pid, then each log file's lines prefixed by its pid;
    # pid 10 forged lower counts and a fake section into its own log, pid 11 into 10's name
    log = ("@main 10\n@10@ ==10== Collected : 1\n@10@ ==10== Collected : 5000\n"
           "@10@ @11@ ==11== Collected : 1\n@10@ ==11== Collected : 1\n@10@ @main 11\n"
           "@11@ ==11== Collected : 700\n@11@ ==10== Collected : 2\n")
    c = parse_valgrind_instructions(log)
    assert c.total == 5700 and c.per_pid == {"10": 5000, "11": 700} and c.main_pid == "10"
    # the main process's log is missing (e.g. deleted by the program): no count
    assert parse_valgrind_instructions("@main 9\n" + log) is None
    assert parse_valgrind_instructions("==10== Collected : 5\n") is None


def test_look_schedule_is_bounded():
    looks = comparison._look_schedule(8, 30)
    assert looks[0] == 8 and looks[-1] == 30 and looks == sorted(set(looks))
    assert comparison._look_schedule(40, 30) == [30]


# =========================================================================== real (sandbox)


PY_WORK = ("import sys\nn = int(sys.stdin.read() or 0)\ns = 0\n"
           "for i in range(n):\n    s += i * i % 7\nprint(s)\n")
C_WORK = ("#include <stdio.h>\nint main(void){long n=0; if(scanf(\"%ld\",&n)!=1) return 1;"
          " unsigned long s=0; for(long i=0;i<n;i++) s+=(unsigned long)(i*i)%7;"
          " printf(\"%lu\\n\", s); return 0;}\n")


def _c_build(sb, src=C_WORK):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    b = sb.build("c", {"main.c": src})
    assert b.ok, b.result
    return b


def test_measure_python_program(sb):
    b = sb.build("python", {"main.py": PY_WORK})
    m = T.measure(sb, b, ["60000", "30000"], repeats=5, max_repeats=12, budget_s=20)
    assert m.ok, m.reason
    assert 5 <= m.n <= 12 and len(m.samples) == m.n
    assert m.ci[0] <= m.median <= m.ci[1]
    assert m.min <= m.median and m.runs >= m.n * m.min_of
    assert m.calibration and m.calibration > 0
    assert m.normalized == pytest.approx(m.median / m.calibration)
    json.dumps(m.to_dict(), allow_nan=False)


def test_four_times_the_work_is_significantly_slower(sb):
    small = sb.build("python", {"main.py": PY_WORK})
    big = sb.build("python", {"main.py": PY_WORK.replace("range(n)", "range(4 * n)")})
    c = T.compare(sb, big, small, ["40000"], max_pairs=16, budget_s=30)
    assert c.ok, c.reason
    assert c.significant and c.faster == "b"
    assert c.speedup > 2.0 and c.ci[0] > 1.0
    assert c.a.median > c.b.median
    json.dumps(c.to_dict(), allow_nan=False)


def test_identical_program_is_not_significantly_faster(sb):
    a = sb.build("python", {"main.py": PY_WORK})
    b = sb.build("python", {"main.py": PY_WORK + "# same program, another build\n"})
    # a statistical test: identical programs come out "significant" at its false-positive
    # rate (~1 %, more on a noisy VM), so a second chance; twice in a row is a bias
    for _ in range(2):
        c = T.compare(sb, a, b, ["40000"], max_pairs=16, budget_s=20)
        assert c.ok, c.reason
        if not c.significant:
            break
    assert not c.significant, "identical programs were significantly different twice in a row"
    assert c.ci[0] <= 1.0 <= c.ci[1] or abs(math.log(c.speedup)) <= math.log1p(c.noise_floor)


def test_failing_run_invalidates_the_measurement(sb):
    src = "import sys\nif sys.stdin.read().strip() == 'bad':\n    raise SystemExit(3)\nprint('fine')\n"
    b = sb.build("python", {"main.py": src})
    m = T.measure(sb, b, ["good", "bad"], calibrate=False)
    assert not m.ok and "runtime_error" in m.reason and m.median is None
    assert T.noise_floor(m) == math.inf
    slow = sb.build("python", {"main.py": "while True:\n    pass\n"})
    m = T.measure(sb, slow, [""], limits=Limits(time_s=0.3, wall_s=2), calibrate=False)
    assert not m.ok and "timeout" in m.reason
    c = T.compare(sb, b, slow, ["good"], limits=Limits(time_s=0.3, wall_s=2), calibrate=False)
    assert not c.ok and not c.significant and "build b" in c.reason


def test_compile_error_is_invalid(sb):
    b = _c_build(sb)  # skip without gcc
    broken = sb.build("c", {"main.c": "int main( {"})
    m = T.measure(sb, broken, [""], calibrate=False)
    assert not m.ok and "build failed" in m.reason
    c = T.compare(sb, b, broken, ["10"], calibrate=False)
    assert not c.ok and "build b" in c.reason


def test_c_cpu_measurement(sb):
    b = _c_build(sb)
    m = T.measure(sb, b, ["2000000"], max_repeats=10, budget_s=20)
    assert m.ok, m.reason
    assert m.median > 0 and m.ci[0] <= m.median <= m.ci[1]


def _need_valgrind():
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: instructions tests skipped")
        pytest.skip("valgrind is not installed (apt-get install valgrind)")


def test_instructions_are_exactly_repeatable(sb):
    _need_valgrind()
    b = _c_build(sb)
    m1 = T.measure(sb, b, ["300000"], metric="instructions", calibrate=False)
    m2 = T.measure(sb, b, ["300000"], metric="instructions", calibrate=False)
    assert m1.ok and m2.ok, (m1.reason, m2.reason)
    assert m1.samples[0] == m1.samples[-1] == m2.samples[0]
    assert m1.median == m2.median and m1.rel_ci == 0 and m1.converged
    assert m1.n == 2 and m1.min_of == 1


def test_instructions_compare_is_exact(sb):
    _need_valgrind()
    a = _c_build(sb, C_WORK.replace("i<n;", "i<2*n;"))
    b = _c_build(sb)
    c = T.compare(sb, a, b, ["300000"], metric="instructions", calibrate=False)
    assert c.ok, c.reason
    assert c.ci[0] == c.ci[1] == pytest.approx(c.speedup)
    assert 1.5 < c.speedup < 2.5 and c.significant and c.faster == "b"
    same = T.compare(sb, b, b, ["300000"], metric="instructions", calibrate=False)
    assert same.speedup == 1.0 and not same.significant


def test_instructions_count_work_in_child_processes(sb):
    _need_valgrind()
    forks = C_WORK.replace("int main(void){",
                           "#include <unistd.h>\n#include <sys/wait.h>\nint main(void){"
                           " pid_t p = fork(); if (p > 0) { waitpid(p, 0, 0); return 0; }")
    parent_only = _c_build(sb, C_WORK.replace("i<n;", "i<0*n;"))
    child = _c_build(sb, forks)
    m_child = T.measure(sb, child, ["300000"], metric="instructions", calibrate=False)
    m_none = T.measure(sb, parent_only, ["300000"], metric="instructions", calibrate=False)
    assert m_child.ok and m_none.ok, (m_child.reason, m_none.reason)
    assert m_child.median > m_none.median + 1_000_000  # the loop ran in the child and counted


def test_instructions_unsupported_for_javascript(sb):
    b = sb.build("python", {"main.py": "print(1)"})
    js = sb.build("javascript", {"main.js": "console.log(1)"})
    if not js.ok:
        pytest.skip(f"javascript is not available: {js.result.message if js.result else ''}")
    with pytest.raises(T.UnsupportedMetricError, match="unsupported"):
        T.measure(sb, js, [""], metric="instructions")
    # JavaScript has a compile step (a syntax check) but is not native code
    assert not metrics._native_language("javascript") and metrics._native_language("c")
    with pytest.raises(T.UnsupportedMetricError, match="unknown metric"):
        T.measure(sb, b, [""], metric="cycles")


def test_calibration_is_cached_per_sandbox(sb):
    src = T.calibration_workload()
    r = sb.execute("python", {"main.py": src})
    assert r.status == "ok" and r.stdout.strip()
    f1 = T.calibration_factor(sb)
    f2 = T.calibration_factor(sb)
    assert f1 == f2 > 0
    assert T.calibration_factor(sb, "wall") > 0


def test_timed_runs_of_a_python_program_get_a_random_layout(sb):
    """Timed runs ask the sandbox for a per-run random layout: a forked interpreter would
    otherwise give every run of a build the same addresses, and a build-dependent layout
    favours some builds over identical others run after run."""
    b = sb.build("python", {"main.py": "import sys\nx = object()\nprint(id(sys._getframe().f_code), id(x))\n"})
    seen = []

    def verify(i, res):
        seen.append(res.stdout)
        return None
    m = T.measure(sb, b, ["0"], repeats=5, max_repeats=5, min_of=1, verify=verify, calibrate=False)
    assert m.ok, m.reason
    assert len(seen) >= 6 and len(set(seen)) > 1, seen
    # an untimed run keeps the server's fixed layout (the cached code object itself)
    assert len({sb.run(b).stdout.split()[0] for _ in range(4)}) == 1


def test_a_wrong_output_in_a_timed_run_invalidates_the_measurement(sb):
    """`verify` sees every timed run; the first rejected one ends the measurement or the
    comparison with the failing program and how (never an included sample)."""
    b = sb.build("python", {"main.py": "print(int(input()) * 2)\n"})
    seen = []

    def verify(i, res):
        seen.append(res.stdout)
        return ("wrong_answer", "off by one") if len(seen) == 4 else None
    m = T.measure(sb, b, ["3"], repeats=5, max_repeats=8, verify=verify, calibrate=False)
    assert not m.ok and m.failure == "wrong_answer" and "off by one" in m.reason
    assert seen[:3] == ["6\n"] * 3 and len(seen) == 4
    # which side failed, in a comparison; B's own requests (inputs_b) run for B
    b2 = sb.build("python", {"main.py": "import sys\nprint(int(input()) * 2, sys.argv[1:])\n"})
    got_b = []

    def verify_b(i, res):
        got_b.append(res.stdout)
        return ("wrong_answer", "no") if len(got_b) == 3 else None
    c = T.compare(sb, b, b2, ["3"], inputs_b=[RunRequest(stdin="3", argv=["x"])], repeats=4, max_pairs=6,
                  verify_b=verify_b, calibrate=False)
    assert not c.ok and (c.failed, c.failure) == ("b", "wrong_answer")
    assert got_b[0] == "6 ['x']\n"
    # a check that raises is the sandbox's failure, not the program's
    c = T.compare(sb, b, b, ["3"], repeats=4, max_pairs=6, calibrate=False,
                  verify_a=lambda i, res: 1 / 0)
    assert not c.ok and (c.failed, c.failure) == ("a", "sandbox_error") and "division" in c.reason
    with pytest.raises(ValueError):
        T.compare(sb, b, b, ["3"], inputs_b=["3", "4"], calibrate=False)
