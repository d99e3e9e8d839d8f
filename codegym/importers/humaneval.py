"""HumanEval, HumanEval+ and MBPP+ (EvalPlus) importer: ``codegym import humaneval``.

Reads the HumanEval format (``task_id``, ``prompt``, ``entry_point``,
``canonical_solution``, ``test``) and the EvalPlus format (also ``base_input``,
``plus_input``, ``atol``; MBPP+ ``assertion``) and writes one task per problem; ids keep
the source's (``HumanEval/0`` -> ``humaneval/HumanEval_0``, ``humanevalplus/...``).
Plain records become ``kind: script`` tasks (prompt + completion + the upstream test
code); EvalPlus records become ``kind: function`` tasks: one case per input, the
expected value computed by the canonical solution on the trusted side (in its own
sandbox run: at import, or by the judge's testgen when too large to write), compared
on the host by EvalPlus's rule and special oracles (checker ``evalplus``), each input
under EvalPlus's time rule. docs/importers.md has the rules.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codegym.core.jsonl import DEFAULT_DATA_CAPS, DataCaps
from codegym.core.limits import Limits
from codegym.importers.common import (
    RECORD_ERRORS,
    ImportReport,
    check_types,
    finite_number,
    located,
    missing_fields,
    record_at,
    record_error,
    select_records,
    task_name,
    write_import,
)
from codegym.importers.references import run_reference
from codegym.judge.checkers.values import EVALPLUS_RTOL
from codegym.judge.protocol import VALUE_CAP, file_value
from codegym.sandbox import make_sandbox
from codegym.sandbox.types import Sandbox

#: EvalPlus defaults (evalplus/config.py: DEFAULT_MIN_TIME_LIMIT, DEFAULT_GT_TIME_LIMIT_FACTOR)
TIME_FLOOR = 1.0
TIME_FACTOR = 4.0
#: EvalPlus's memory limit (reliability_guard: RLIMIT_AS of 4 GiB)
EVALPLUS_MEMORY_MB = 4096
#: largest expected value (JSON characters) written into the YAML; larger ones are left
#: out and computed by codegym.judge.testgen with the reference solution (in the sandbox)
INLINE_MAX = 4096
#: inputs whose reference output is larger than this (JSON characters) are left out: the
#: judge's value channel carries it only slowly (MBPP+ Mbpp/255: 27 MB to 770 MB lists)
MAX_OUTPUT = 16 << 20
#: sizes of reference outputs are measured up to just past this
MEASURE_MAX = MAX_OUTPUT
#: CPU seconds of a plain HumanEval program (the upstream harness's per-problem timeout)
PLAIN_TIME_S = 3.0
#: the types of the fields a record may have (checked before anything is built)
_FIELD_TYPES = {"task_id": (str, int), "prompt": str, "entry_point": str, "canonical_solution": str,
                "test": str, "assertion": str, "base_input": list, "plus_input": list}

#: EvalPlus's special oracles: (dataset, entry point) -> name of the rule
SPECIAL_ORACLES: dict[tuple[str, str], str] = {
    ("humaneval", "find_zero"): "poly_root",          # HumanEval/32
    ("mbpp", "are_equivalent"): "always",             # Mbpp/164
    ("mbpp", "sum_div"): "or_zero",                   # Mbpp/295
    ("mbpp", "surface_Area"): "surface_area",         # Mbpp/581
    ("mbpp", "digit_distance_nums"): "digit_distance",  # Mbpp/558
    **{("mbpp", n): "set_eq" for n in ("similar_elements", "find_char_long", "common_in_nested_lists",
                                       "extract_singly", "larg_nnum", "intersection_array",
                                       "find_dissimilar", "Diff")},
    **{("mbpp", n): "not_none" for n in ("check_str", "text_match_three", "text_starta_endb")},
}

_LICENCE = {
    "humaneval": "MIT (OpenAI HumanEval)",
    "humanevalplus": "Apache-2.0 (EvalPlus); MIT (OpenAI HumanEval)",
    "mbpp": "CC-BY-4.0 (Google MBPP); Apache-2.0 (EvalPlus prompts and solutions)",
    "mbppplus": "Apache-2.0 (EvalPlus); CC-BY-4.0 (Google MBPP)",
}
_URL = {
    "humaneval": "https://github.com/openai/human-eval",
    "humanevalplus": "https://github.com/evalplus/humanevalplus_release",
    "mbpp": "https://github.com/evalplus/mbppplus_release",
    "mbppplus": "https://github.com/evalplus/mbppplus_release",
}


# --------------------------------------------------------------------------- MBPP+ inputs

_MBPP_TUPLE_ARGS = {2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616,
                    630, 726, 740, 744, 809}
_MBPP_TUPLES_IN_LISTS = {63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780}
_MBPP_FIRST_ARG_TUPLES = {75, 413, 444, 753}
_MBPP_SECOND_ARG_TUPLE = {106, 750}
_MBPP_FIRST_ARG_TUPLE = {250, 405, 446, 617, 720, 763, 808}
_MBPP_NESTED_TUPLES = {259, 401, 445}
_MBPP_ALL_TUPLES = {580, 615, 791}


def _all_tuples(x: Any) -> Any:
    return tuple(_all_tuples(v) for v in x) if isinstance(x, list) else x


def mbpp_deserialize_inputs(task_id: str, inputs: list) -> list:
    """The argument lists of an MBPP+ problem with the Python types JSON lost restored,
    following the per-task rules of EvalPlus (``evalplus/data/mbpp.py``,
    ``mbpp_deserialize_inputs``), including its quirks (Mbpp/115: ``{}`` for an empty
    member)."""
    n = int(str(task_id).rsplit("/", 1)[-1])
    if n in _MBPP_TUPLE_ARGS:
        return [[tuple(a) for a in inp] for inp in inputs]
    if n in _MBPP_TUPLES_IN_LISTS:
        return [[[tuple(x) for x in a] for a in inp] for inp in inputs]
    if n in _MBPP_FIRST_ARG_TUPLES:
        return [[[tuple(x) for x in inp[0]]] + [inp[1]] for inp in inputs]
    if n in _MBPP_SECOND_ARG_TUPLE:
        return [[inp[0]] + [tuple(inp[1])] for inp in inputs]
    if n == 115:
        return [[[set(x) if isinstance(x, list) and len(x) else {} for x in inp[0]]] for inp in inputs]
    if n == 124:
        return [[float(inp[0]), complex(inp[1])] for inp in inputs]
    if n in _MBPP_FIRST_ARG_TUPLE:
        return [[tuple(inp[0])] + [inp[1]] for inp in inputs]
    if n in _MBPP_NESTED_TUPLES:
        return [[tuple(tuple(x) for x in a) for a in inp] for inp in inputs]
    if n == 278:
        return [[tuple(tuple(x) if isinstance(x, list) else x for x in inp[0])] for inp in inputs]
    if n == 307:
        return [[tuple(inp[0]), inp[1], inp[2]] for inp in inputs]
    if n == 722:
        return [[{k: tuple(v) for k, v in inp[0].items()}] + list(inp[1:]) for inp in inputs]
    if n == 252:
        return [[complex(inp[0])] for inp in inputs]
    if n in _MBPP_ALL_TUPLES:
        # EvalPlus turns the whole argument list into a tuple too; unpacked as arguments
        # that is the same call
        return [list(_all_tuples(inp)) for inp in inputs]
    return inputs


# --------------------------------------------------------------------------- tasks


def _dataset(task_id: str) -> str:
    return "mbpp" if str(task_id).lower().startswith("mbpp") else "humaneval"


def _statement(rec: dict, dataset: str, plus: bool, n_base: int, n_plus: int, atol: float,
               public_base: bool = True) -> str:
    entry = rec["entry_point"]
    prompt = rec["prompt"]
    if dataset == "humaneval":
        head = (f"Complete the Python function `{entry}`. Its signature and docstring are below; they "
                f"are also the start of `main.py`. Keep the signature: the tests call `{entry}`.\n\n"
                f"```python\n{prompt.rstrip()}\n```\n")
    else:
        doc = prompt.strip()
        if doc.startswith('"""') and doc.endswith('"""'):
            doc = doc[3:-3].strip()
        head = (f"Write a Python function `{entry}` in `main.py`:\n\n{doc}\n")
    if plus:
        tol = ("Return values must equal the reference's"
               + (f" (numbers within an absolute tolerance of {atol:g})" if atol else
                  " (floats within 1e-6)") + ".")
        public = " (the public tests)" if public_base else ""
        head += (f"\nIt is checked on {n_base} original input(s){public} and {n_plus} more "
                 f"EvalPlus input(s). {tol}\n")
    return head


def _round_up(x: float, digits: int = 3) -> float:
    f = 10 ** digits
    return math.ceil(x * f) / f


def _time_limit(t: float, floor: float, factor: float) -> float:
    return max(floor, _round_up(factor * t))


def _plain_task(rec: dict, dataset: str, suite: str, source_id: str) -> dict:
    entry = rec["entry_point"]
    test = rec.get("test") if dataset == "humaneval" else (rec.get("assertion") or rec.get("test"))
    if not test:
        raise ValueError("no test code (test / assertion)")
    name = task_name(source_id)
    return {
        "id": f"{suite}/{name}",
        "title": f"{source_id}: {entry}",
        "statement": _statement(rec, dataset, False, 0, 0, 0.0),
        "kind": "script",
        "language": "python",
        "entry_point": entry,
        "starter": {"main.py": rec["prompt"]},
        "tests": {"hidden": [{"name": "check", "code": test}]},
        "limits": {"time_s": PLAIN_TIME_S},
        "solutions": {"reference": {"files": {"main.py": rec["prompt"] + rec["canonical_solution"]}}},
        "metadata": {"source": suite, "licence": _LICENCE.get(suite, ""), "url": _URL.get(suite),
                     "tags": [suite, dataset],
                     "extra": {"source_id": source_id, "entry_point": entry, "harness": "script"}},
    }


def _plus_task(rec: dict, dataset: str, suite: str, source_id: str, labels: list[str], inputs: list,
               rr, keep: list[int], n_plus_total: int, dropped: list[str], *, time_floor: float,
               time_factor: float, memory_mb: int, public_base: bool) -> dict:
    """The ``kind: function`` task of one EvalPlus problem: one case per input whose
    return value the host compares by EvalPlus's rule (checker ``evalplus``)."""
    entry = rec["entry_point"]
    atol = float(rec.get("atol") or 0.0)
    oracle = SPECIAL_ORACLES.get((dataset, entry))
    labels = [labels[i] for i in keep]
    n_base = sum(1 for lb in labels if lb.startswith("base"))
    times = [rr.times[i] for i in keep]
    checker: dict[str, Any] = {"type": "evalplus", "abs_tol": atol, "rel_tol": EVALPLUS_RTOL}
    if oracle:
        checker["args"] = [oracle]
    extra: dict[str, Any] = {"source_id": source_id, "entry_point": entry, "atol": atol,
                             "base_inputs": n_base, "plus_inputs": len(labels) - n_base,
                             "plus_inputs_total": n_plus_total, "reference_cpu_s": round(sum(times), 4),
                             "time_rule": f"max({time_floor:g} s, {time_factor:g} x reference CPU time) per input",
                             "harness": "function"}
    if oracle:
        extra["oracle"] = oracle
    if dropped:
        extra["dropped_inputs"] = dropped
    cases, n_computed = [], 0
    for i, lb in zip(keep, labels):
        case: dict[str, Any] = {"name": lb, "args": file_value(list(inputs[i]))}
        expected = _inline_expected(rr, i, oracle)
        if expected is _COMPUTED:
            n_computed += 1   # left out: codegym.judge.testgen computes it with the reference (trusted side)
        else:
            case["expected"] = expected
        lim = _time_limit(rr.times[i], time_floor, time_factor)
        if lim > time_floor:
            case["time_s"] = lim
        cases.append(case)
    if n_computed:
        extra["expected_computed_at_judge_time"] = n_computed
    tests: dict[str, list] = {}
    if public_base:
        tests["public"] = [c for c in cases if c["name"].startswith("base")]
    tests["hidden"] = cases
    limits: dict[str, Any] = {"time_s": time_floor, "memory_mb": memory_mb}
    largest = max((rr.sizes[i] for i in keep), default=0)
    if 8 * largest > VALUE_CAP:
        # the driver sends a return value of up to output_bytes / 8 (its size counted
        # generously: up to ~8x the JSON size for small ints)
        limits["output_bytes"] = max(Limits.output_bytes, 1 << (64 * largest - 1).bit_length())
        extra["largest_output_bytes"] = largest
    return {
        "id": f"{suite}/{task_name(source_id)}",
        "title": f"{source_id}: {entry}",
        "statement": _statement(rec, dataset, True, n_base, len(labels) - n_base, atol, public_base),
        "kind": "function", "language": "python", "entry_point": entry,
        "starter": {"main.py": rec["prompt"]},
        "tests": tests,
        "checker": checker,
        "limits": limits,
        "solutions": {"reference": {"files": {"main.py": rec["prompt"] + rec["canonical_solution"]}}},
        "metadata": {"source": suite, "licence": _LICENCE.get(suite, ""), "url": _URL.get(suite),
                     "tags": [suite, dataset], "extra": extra},
    }


#: `_inline_expected`'s answer for a value the judge computes with the reference
_COMPUTED = object()


def _inline_expected(rr, i: int, oracle: str | None) -> Any:
    """The expected value of input `i` as the task file holds it, or `_COMPUTED` when it
    is too large (or unserialisable) to write: testgen computes it on the trusted side."""
    if oracle == "not_none":   # EvalPlus's expected output: whether the reference returned non-None
        return not rr.none[i]
    if rr.sizes[i] > INLINE_MAX or rr.unserialisable[i]:
        return _COMPUTED
    try:
        return file_value(rr.values[i])
    except (TypeError, ValueError):
        return _COMPUTED


def build_humaneval_tasks(records: Sequence[dict | tuple[str, dict]], *, mode: str = "auto",
                          max_plus: int | None = None,
                          suite_name: str | None = None, sandbox: Sandbox | None = None, time_floor: float = TIME_FLOOR,
                          time_factor: float = TIME_FACTOR, memory_mb: int = EVALPLUS_MEMORY_MB,
                          public_base: bool = True, report: ImportReport | None = None) -> list[dict]:
    """Task mappings (ready for `codegym.importers.common.write_suite`) for HumanEval /
    EvalPlus records; see the module docstring. EvalPlus records run their reference
    solution in `sandbox` (default: the shared local sandbox)."""
    if mode not in ("auto", "plain", "plus"):
        raise ValueError(f"mode must be auto, plain or plus, not {mode!r}")
    report = report if report is not None else ImportReport(source="<records>")
    tasks: list[dict] = []
    plus_jobs: list[tuple[dict, str, str, str, list[str], list]] = []
    for where, rec in located(records):
        sid = str(rec.get("task_id", "?"))
        at = record_at(where, rec, "task_id")
        missing = missing_fields(rec, ("task_id", "prompt", "entry_point", "canonical_solution"))
        if missing:
            report.skip(at, f"missing field {', '.join(map(repr, missing))}", f"missing field {missing[0]!r}")
            continue
        try:
            check_types(rec, _FIELD_TYPES)
            if rec.get("atol") is not None:
                finite_number(rec["atol"], "atol", 0.0, 1e6)
        except ValueError as e:
            report.skip(at, str(e))
            continue
        dataset = _dataset(sid)
        plus = mode == "plus" or (mode == "auto" and "base_input" in rec)
        if plus and "base_input" not in rec:
            report.skip(at, "missing field 'base_input' (not an EvalPlus record)", "missing field 'base_input'")
            continue
        suite = suite_name or (dataset + ("plus" if plus else ""))
        if not plus:
            try:
                tasks.append(_plain_task(rec, dataset, suite, sid))
                report.count("script")
            except RECORD_ERRORS as e:
                report.skip(at, record_error(e))
            continue
        try:
            plus_jobs.append(_plus_inputs(rec, dataset, suite, sid, max_plus))
        except RECORD_ERRORS as e:
            report.skip(at, f"its inputs cannot be read: {record_error(e)}")
            continue
        report.counts["plus_inputs_total"] = (report.counts.get("plus_inputs_total", 0)
                                              + len(rec.get("plus_input") or []))
    if plus_jobs:
        sandbox = sandbox if sandbox is not None else make_sandbox()
        tasks += _run_plus_jobs(plus_jobs, sandbox, report, time_floor=time_floor, time_factor=time_factor,
                                memory_mb=memory_mb, public_base=public_base)
    return tasks


def _plus_inputs(rec: dict, dataset: str, suite: str, sid: str, max_plus: int | None) -> tuple:
    """(record, dataset, suite, id, input labels, argument lists) of an EvalPlus record."""
    base = list(rec.get("base_input") or [])
    extra = list(rec.get("plus_input") or [])
    if max_plus is not None:
        extra = extra[:max_plus]
    if dataset == "mbpp":
        base = mbpp_deserialize_inputs(sid, base)
        extra = mbpp_deserialize_inputs(sid, extra)
    labels = [f"base-{i}" for i in range(len(base))] + [f"plus-{i}" for i in range(len(extra))]
    return rec, dataset, suite, sid, labels, base + extra


def _run_plus_jobs(plus_jobs: list[tuple], sandbox: Sandbox, report: ImportReport, **task_kw: Any) -> list[dict]:
    """Run the references of EvalPlus records in the sandbox; their tasks (`_plus_task`)."""
    jobs = [{"code": rec["prompt"] + rec["canonical_solution"], "entry": rec["entry_point"],
             "inputs": inputs} for rec, _, _, _, _, inputs in plus_jobs]
    t0 = time.monotonic()
    results = run_reference(sandbox, jobs, send_max=INLINE_MAX, measure_max=MEASURE_MAX)
    report.notes.append(f"reference solutions ran on {sum(len(j['inputs']) for j in jobs)} inputs "
                        f"in the sandbox in {time.monotonic() - t0:.1f} s")
    tasks = []
    for (rec, dataset, suite, sid, labels, inputs), rr in zip(plus_jobs, results):
        huge = {i for i in range(len(inputs)) if i not in rr.errors and rr.sizes[i] > MAX_OUTPUT}
        keep = [i for i in range(len(inputs)) if i not in rr.errors and i not in huge]
        dropped = sorted([(i, f"{labels[i]}: {rr.errors[i].splitlines()[-1][:200]}") for i in rr.errors]
                         + [(i, f"{labels[i]}: the expected output is over {MAX_OUTPUT >> 20} MiB as JSON")
                            for i in huge])
        dropped = [d for _, d in dropped]
        if not keep:
            report.skip(sid, "the reference failed on every input: " + (rr.message or (dropped[0] if dropped else "?")),
                        "the reference failed on every input")
            continue
        if dropped:
            report.notes.append(f"{sid}: {len(dropped)} input(s) dropped (the reference failed, or its "
                                f"output is too large): {dropped[0]}")
            report.count("inputs_dropped", len(dropped))
        task = _plus_task(rec, dataset, suite, sid, labels, inputs, rr, keep,
                          len(rec.get("plus_input") or []), dropped, **task_kw)
        tasks.append(task)
        report.count(task["kind"])
        report.count("cases", len(task["tests"]["hidden"]))
    return tasks


def import_humaneval(path: str | Path, out_dir: str | Path, *, mode: str = "auto", max_plus: int | None = None,
                     suite_name: str | None = None, sandbox: Sandbox | None = None, ids: Sequence[str] | None = None,
                     limit: int | None = None, time_floor: float = TIME_FLOOR, time_factor: float = TIME_FACTOR,
                     memory_mb: int = EVALPLUS_MEMORY_MB, public_base: bool = True,
                     validate: bool = True, verify: bool = True, caps: DataCaps = DEFAULT_DATA_CAPS) -> ImportReport:
    """Import a HumanEval / HumanEval+ / MBPP+ file into the suite folder `out_dir`.

    mode        auto (EvalPlus when records have base_input) | plain | plus
    max_plus    keep only the first N plus inputs of each problem (None: all)
    suite_name  overrides the suite part of the ids (default humaneval, humanevalplus,
                mbpp, mbppplus)
    ids         only these source ids (e.g. ["HumanEval/0"]); limit: only the first N
    time_floor, time_factor   EvalPlus's time-limit rule (per input: max(floor, factor x t_ref))
    public_base EvalPlus: the base inputs are also the public split (env feedback)
    validate    load every written file back with codegym.tasks.load.load_task
    caps        what the file may cost (`codegym.core.jsonl.DataCaps`)
    verify      judge every task's reference (`verify_references`: limits raised where a
                reference needs more, failures reported)
    Returns an `ImportReport`; the suite can then be used as
    ``gym.make("codegym/Suite-v0", suite=out_dir)``.
    """
    t0 = time.monotonic()
    report = ImportReport(source=str(path), out_dir=str(out_dir))
    records = select_records(path, ids, limit, lambda r: str(r.get("task_id")), report, caps)
    tasks = build_humaneval_tasks(records, mode=mode, max_plus=max_plus, suite_name=suite_name, sandbox=sandbox,
                                  time_floor=time_floor, time_factor=time_factor, memory_mb=memory_mb,
                                  public_base=public_base, report=report)
    suite = tasks[0]["id"].split("/", 1)[0] if tasks else (suite_name or "humaneval")
    desc = {"humaneval": "HumanEval (OpenAI), script tasks: prompt + completion + check(entry_point)",
            "humanevalplus": "HumanEval+ (EvalPlus): differential tests on base + plus inputs",
            "mbpp": "MBPP (EvalPlus prompts), script tasks with the original assertions",
            "mbppplus": "MBPP+ (EvalPlus): differential tests on base + plus inputs"}.get(
        suite, f"imported from {Path(path).name}")
    return write_import(report, out_dir, tasks, t0, name=suite, description=desc, validate=validate,
                        verify=verify, sandbox=sandbox)
