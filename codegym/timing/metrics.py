"""What timing can measure: the metrics, their defaults, and instruction counts.

``cpu`` (child CPU seconds, the default), ``wall``, and ``instructions`` (guest
instructions counted by valgrind's callgrind: native programs, and Python run by
CPython with its hash seed fixed): which metric applies to a build (`check_metric`),
the per-metric defaults of `measure` and `compare`, and the valgrind wrappers whose
report a program cannot forge (`valgrind_wrapper`, `parse_valgrind_instructions`,
`instructions_of`).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass

from codegym.core.languages import get_language
from codegym.core.limits import Limits
from codegym.sandbox.types import Build, ExecResult

#: metrics `measure` and `compare` understand
METRICS = ("cpu", "wall", "instructions")
#: valgrind slows native code down ~10-50x (callgrind, no cache simulation);
#: the CPU limit of an instructions run is scaled by this
VALGRIND_SLOWDOWN = 60.0
#: ... and CPython ~100-150x, after ~2 s of CPU translating the interpreter's own start-up
VALGRIND_SLOWDOWN_PYTHON = 200.0
VALGRIND_STARTUP_PYTHON_S = 10.0
#: passes per sample (min over them, per input) by metric, see docs/timing.md
DEFAULT_MIN_OF = {"cpu": 3, "wall": 3, "instructions": 1}
#: smallest relative difference `compare` calls significant, by metric: below
#: ~1 % the program's own layout (alignment, environment size) decides, not its code
DEFAULT_MIN_EFFECT = {"cpu": 0.01, "wall": 0.01, "instructions": 0.001}
#: smallest speedup worth rewarding, by metric: `compare` stops for futility only once its
#: interval rules out a speedup (or slowdown) of this size
DEFAULT_MIN_WORTH = {"cpu": 0.05, "wall": 0.05, "instructions": 0.001}


class UnsupportedMetricError(ValueError):
    """The metric cannot be measured for this build (e.g. instructions of Python)."""


def passes_per_sample(metric: str, min_of: int | None) -> int:
    """`min_of` as given (at least 1), or the metric's default (DEFAULT_MIN_OF)."""
    return DEFAULT_MIN_OF[metric] if min_of is None else max(1, int(min_of))


# The instruction counter. valgrind runs inside the program's own process, so
# its report must not travel on a channel the program controls: the program's
# stderr is discarded and valgrind logs to one file per process, printed only
# after the program has exited, each line prefixed by the shell with the pid
# the file belongs to (text the program writes into a log cannot change the
# prefix the shell puts in front of it). Children are traced and their counts
# added, so work moved into a child process still counts. The shell records
# valgrind's pid so that a missing main log (deleted by the program) is an
# error, and per process the largest reported count is taken, so a forged line
# can only add instructions, never remove any. (The program reaches valgrind's
# stdin through fd 3 because an asynchronous command would read /dev/null.)
_VALGRIND_SCRIPT = r"""
d=$(mktemp -d "${TMPDIR:-/tmp}/codegym-vg.XXXXXX") || exit 125
exec 3<&0
valgrind --tool=callgrind --callgrind-out-file=/dev/null --trace-children=yes \
  --log-file="$d/log.%p" "$@" <&3 3<&- 2>/dev/null &
p=$!
exec 3<&-
wait "$p"
rc=$?
{ printf '@main %s\n' "$p"
  for f in "$d"/log.*; do
    [ -f "$f" ] && sed "s/^/@${f##*/log.}@ /" "$f"
  done; } >&2
exit $rc
"""
VALGRIND_WRAPPER = ("sh", "-c", _VALGRIND_SCRIPT, "codegym-valgrind")

# CPython under the same counter: its string hashes are salted per process (a different
# dict and set layout, so a different count, run after run) unless PYTHONHASHSEED fixes
# the salt, and the run command's -E would ignore that variable. The wrapper drops -E
# and clears every other PYTHON* variable instead (what -E protects against), then sets
# the seed. The memory layout is valgrind's own, the same for every run.
_PYTHON_PREFIX = r"""
if [ "$2" = "-E" ]; then p=$1; shift 2; set -- "$p" "$@"; fi
for v in $(env | sed -n 's/^\(PYTHON[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export PYTHONHASHSEED=0
"""
PYTHON_VALGRIND_WRAPPER = ("sh", "-c", _PYTHON_PREFIX + _VALGRIND_SCRIPT, "codegym-valgrind")

_LOG_LINE = re.compile(r"^@(\d+)@ ==(\d+)== Collected : (\d+)\s*$")
#: plausibility of a count: callgrind executes far more than this many guest
#: instructions per CPU second once started (measured ~1e8-1e9 here) ...
MIN_INSTRUCTIONS_PER_CPU_S = 5e6
#: ... after this much CPU per traced process for valgrind's own start-up
VALGRIND_STARTUP_CPU_S = 0.5


@dataclass
class ValgrindCount:
    """Instructions of one wrapped run: total, per traced process, and the main process's pid."""

    total: int
    per_pid: dict[str, int]
    main_pid: str | None


def parse_valgrind_instructions(log: str) -> ValgrindCount | None:
    """Instruction count from the wrapper's output (None if there is none).

    Reads only lines ``@P@ ==P== Collected : N`` whose file prefix P (put there
    by the wrapper's shell) names the same process as valgrind's ``==P==``;
    per process the largest count is taken (valgrind writes the genuine
    summary last; forged lines cannot lower it). The main process named by
    the first ``@main P`` line must have a count.
    """
    per_pid: dict[str, int] = {}
    main = None
    for line in log.splitlines():
        if main is None and line.startswith("@main "):
            main = line[6:].strip()
            continue
        mt = _LOG_LINE.match(line)
        if mt and mt.group(1) == mt.group(2):
            pid = mt.group(1)
            per_pid[pid] = max(per_pid.get(pid, 0), int(mt.group(3)))
    if not per_pid or main is None or main not in per_pid:
        return None
    return ValgrindCount(total=sum(per_pid.values()), per_pid=per_pid, main_pid=main)


def _native_language(language: str) -> bool:
    """True if programs of `language` are compiled to a binary that is run directly.

    A compile step alone is not enough (JavaScript has one, a syntax check):
    the run command must execute one of the compile step's artifacts.
    """
    try:
        spec = get_language(language)
    except Exception:  # registry unavailable: the languages known to compile to native code
        return language in ("c", "cpp")
    if not spec.compiled or not spec.artifacts:
        return False
    argv = spec.run_argv()
    exe = argv[0][2:] if argv and argv[0].startswith("./") else (argv[0] if argv else "")
    return exe in set(spec.artifacts)


def _cpython(language: str) -> bool:
    """True if programs of `language` run on CPython (whose instruction counts are repeatable)."""
    try:
        return get_language(language).inprocess == "python"
    except Exception:  # registry unavailable
        return language == "python"


def valgrind_wrapper(language: str) -> tuple[str, ...]:
    """The argv prefix that counts the instructions of a run of `language` (see check_metric)."""
    return PYTHON_VALGRIND_WRAPPER if _cpython(language) else VALGRIND_WRAPPER


def check_metric(build: Build, metric: str) -> None:
    """Raise `UnsupportedMetricError` (a ValueError) if `metric` cannot be measured for `build`."""
    if metric not in METRICS:
        raise UnsupportedMetricError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    if metric == "instructions":
        if not (_native_language(build.language) or _cpython(build.language)):
            raise UnsupportedMetricError(
                f"metric 'instructions' is unsupported for {build.language!r}: instruction counts "
                "come from valgrind and are only repeatable for programs compiled to native "
                "code (c, cpp) and for Python (CPython with a fixed hash seed); use metric='cpu' "
                "for other interpreted and JIT-compiled languages")
        if shutil.which("valgrind") is None:
            raise UnsupportedMetricError(
                "metric 'instructions' needs valgrind: install it (apt-get install valgrind)")


def instructions_limits(lim: Limits, language: str = "c") -> Limits:
    """valgrind is slow and reserves address space: more CPU time and memory."""
    if _cpython(language):
        t = lim.time_s * VALGRIND_SLOWDOWN_PYTHON + VALGRIND_STARTUP_PYTHON_S
    else:
        t = lim.time_s * VALGRIND_SLOWDOWN + 5.0
    return lim.replace(time_s=t, wall_s=(t * 2 + 5.0), memory_mb=lim.memory_mb + 1024)


def instructions_of(r: ExecResult, language: str = "c") -> tuple[float | None, str]:
    """The instruction count of an ok wrapped run of `language`, or (None, why there is none)."""
    count = parse_valgrind_instructions(r.stderr)
    if count is None:
        tail = r.stderr.strip()[-300:]
        return None, "valgrind reported no instruction count" + (f": {tail}" if tail else "")
    # work that escaped counting (e.g. a child that removed its own log) still
    # shows as CPU time: refuse counts far below what that CPU time executes
    # (CPython's start-up is mostly valgrind translating the interpreter: a larger allowance)
    startup = VALGRIND_STARTUP_CPU_S * (6 if _cpython(language) else 1)
    budget = max(0.0, r.cpu_s - startup * len(count.per_pid))
    if count.total < MIN_INSTRUCTIONS_PER_CPU_S * budget:
        return None, (f"instruction count {count.total} is implausibly low for {r.cpu_s:.2f} s "
                      "of CPU under valgrind: some work escaped counting")
    return float(count.total), ""
