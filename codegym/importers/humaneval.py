"""HumanEval, HumanEval+ and MBPP+ (EvalPlus) importer: ``codegym import humaneval``.

Reads the HumanEval format (``task_id``, ``prompt``, ``entry_point``,
``canonical_solution``, ``test``) and the EvalPlus format (also ``base_input``,
``plus_input``, ``atol``; MBPP+ ``assertion``) and writes one task per problem; ids keep
the source's (``HumanEval/0`` -> ``humaneval/HumanEval_0``, ``humanevalplus/...``).
Plain records become ``kind: script`` tasks (prompt + completion + the upstream test
code); EvalPlus records become differential tests whose expected outputs come from the
canonical solution run in the sandbox, with EvalPlus's comparison and time-limit rule:
``kind: function`` tasks, or ``kind: script`` ones where values JSON cannot carry or a
special oracle decides. docs/eval.md has the rules and the known differences.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codegym.importers.common import ImportReport, select_records, task_name, write_import
from codegym.importers.reference_driver import is_floats
from codegym.importers.references import run_reference
from codegym.importers.values import has_nonfinite, is_plain_value, py_literal, to_plain
from codegym.sandbox import make_sandbox

__all__ = ["import_humaneval", "build_humaneval_tasks", "mbpp_deserialize_inputs", "SPECIAL_ORACLES",
           "is_floats"]

#: EvalPlus defaults (evalplus/config.py)
TIME_FLOOR = 1.0
TIME_FACTOR = 4.0
#: rtol EvalPlus passes to np.allclose
EVALPLUS_RTOL = 1e-07
#: atol EvalPlus forces for float outputs when the task's atol is 0
FLOAT_ATOL = 1e-06
#: inputs per script-kind case
CHUNK = 100
#: largest expected value (JSON characters) written into the YAML; larger ones are left
#: out and computed by codegym.judge.testgen with the reference solution (in the sandbox)
INLINE_MAX = 4096
#: largest return value a function-kind task may have (the function driver caps one
#: serialised value at 1 MiB); problems with larger outputs become script tasks
FUNCTION_VALUE_MAX = 256 * 1024
#: CPU seconds of a plain HumanEval program (the upstream harness's per-problem timeout)
PLAIN_TIME_S = 3.0

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


# --------------------------------------------------------------------------- script tests

_SCRIPT_HELPERS = f'''import math


def _cg_is_floats(x):
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)) and x:
        return all(isinstance(i, float) for i in x)
    return False


def _cg_allclose(out, exp, atol, rtol={EVALPLUS_RTOL!r}):
    # np.allclose(out, exp, rtol=rtol, atol=atol) on numbers and nested sequences of numbers
    if isinstance(exp, (list, tuple)) or isinstance(out, (list, tuple)):
        if not (isinstance(exp, (list, tuple)) and isinstance(out, (list, tuple))) or len(out) != len(exp):
            return False
        return all(_cg_allclose(o, e, atol, rtol) for o, e in zip(out, exp))
    try:
        if math.isinf(out) or math.isinf(exp):
            return out == exp
        return abs(out - exp) <= atol + rtol * abs(exp)
    except TypeError:
        return False


def _cg_poly(xs, x):
    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])


def _cg_surface_area(base_edge, height):
    slant_height = math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 4 * (base_edge * slant_height) / 2)


def _cg_digit_distance(num1, num2):
    s1, s2 = str(num1), str(num2)
    n = max(len(s1), len(s2))
    s1, s2 = s1.zfill(n), s2.zfill(n)
    return sum(abs(int(a) - int(b)) for a, b in zip(s1, s2))


def _cg_ok(rule, out, exp, inp, atol):
    """EvalPlus's per-input decision (evalplus.eval.unsafe_execute)."""
    if rule == "poly_root":
        return abs(_cg_poly(*inp, out)) <= atol
    exact = out == exp
    if rule == "always":
        exact = True
    elif rule == "or_zero":
        exact = exact or out == 0
    elif rule == "surface_area":
        exact = exact or abs(out - _cg_surface_area(*inp)) <= atol
    elif rule == "digit_distance":
        exact = exact or out == _cg_digit_distance(*inp)
    elif rule == "set_eq":
        exact = set(out) == set(exp)
    elif rule == "not_none":
        exact = out == exp if isinstance(out, bool) else exp == (out is not None)
    if atol == 0 and _cg_is_floats(exp):
        atol = {FLOAT_ATOL!r}
    if not exact and atol != 0:
        if type(out) != type(exp):
            return False
        if isinstance(exp, (list, tuple)) and len(out) != len(exp):
            return False
        return _cg_allclose(out, exp, atol)
    return bool(exact)


def _cg_short(v, n=160):
    try:
        s = repr(v)
    except Exception:
        s = "<unprintable>"
    return s if len(s) <= n else s[: n - 3] + "..."
'''


def _script_chunk_code(entry: str, rule: str, atol: float, reference: str, inputs: Sequence[Any],
                       labels: Sequence[str]) -> str:
    """Test code of one script-kind case: the inputs, the reference (run in the same
    sandboxed process, on a deep copy of each input, before the candidate) and
    EvalPlus's per-input check."""
    return (
        f"# codegym: EvalPlus differential test ({len(inputs)} inputs: {labels[0]} .. {labels[-1]})\n"
        + "import copy as _cg_copy\nimport types as _cg_types\n"
        + _SCRIPT_HELPERS
        + f"\n_cg_rule = {rule!r}\n_cg_atol = {atol!r}\n"
        + f"_cg_reference_source = {reference!r}\n"
        + "_cg_reference = _cg_types.ModuleType('_cg_reference')\n"
        + "exec(compile(_cg_reference_source, '<reference>', 'exec'), _cg_reference.__dict__)\n"
        + f"_cg_ref = getattr(_cg_reference, {entry!r})\n"
        + f"_cg_labels = {py_literal(list(labels))}\n"
        + f"_cg_inputs = {py_literal([list(a) for a in inputs])}\n"
        + "for _cg_k in range(len(_cg_inputs)):\n"
        + "    _cg_exp = _cg_ref(*_cg_copy.deepcopy(_cg_inputs[_cg_k]))\n"
        + "    if _cg_rule == 'not_none':\n"
        + "        _cg_exp = _cg_exp is not None\n"
        + f"    _cg_out = {entry}(*_cg_inputs[_cg_k])\n"
        + "    try:\n"
        + "        _cg_pass = _cg_ok(_cg_rule, _cg_out, _cg_exp, _cg_inputs[_cg_k], _cg_atol)\n"
        + "    except Exception:\n"
        + "        _cg_pass = False\n"
        + "    assert _cg_pass, 'input %s: %s%s -> %s (expected %s)' % (_cg_labels[_cg_k], "
        + f"{entry!r}, _cg_short(tuple(_cg_inputs[_cg_k])), _cg_short(_cg_out), _cg_short(_cg_exp))\n"
    )


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
               time_factor: float, memory_mb: int, chunk: int, public_base: bool) -> dict:
    entry = rec["entry_point"]
    atol = float(rec.get("atol") or 0.0)
    rule = SPECIAL_ORACLES.get((dataset, entry))
    labels = [labels[i] for i in keep]
    inputs = [inputs[i] for i in keep]
    times = [rr.times[i] for i in keep]
    sizes = [rr.sizes[i] for i in keep]
    n_base = sum(1 for lb in labels if lb.startswith("base"))
    n_plus = len(labels) - n_base
    plain_in = all(is_plain_value(a, allow_tuples=False) and not has_nonfinite(a) for a in inputs)
    plain_out = all(rr.plain[i] for i in keep)
    small_out = max(sizes, default=0) <= FUNCTION_VALUE_MAX
    reference = rec["prompt"] + rec["canonical_solution"]
    task: dict[str, Any] = {
        "id": f"{suite}/{task_name(source_id)}",
        "title": f"{source_id}: {entry}",
        "statement": _statement(rec, dataset, True, n_base, n_plus, atol, public_base),
    }
    extra: dict[str, Any] = {"source_id": source_id, "entry_point": entry, "atol": atol,
                             "base_inputs": n_base, "plus_inputs": n_plus, "plus_inputs_total": n_plus_total,
                             "reference_cpu_s": round(sum(times), 4),
                             "time_rule": f"max({time_floor:g} s, {time_factor:g} x reference CPU time) per input"}
    if dropped:
        extra["dropped_inputs"] = dropped
    if rule is None and plain_in and plain_out and small_out:
        values = [rr.values[i] for i in keep]
        floats = [rr.floats[i] for i in keep]
        _function_tests(task, extra, entry, atol, labels, inputs, values, times, sizes, floats,
                        time_floor=time_floor, time_factor=time_factor, public_base=public_base)
    else:
        why = (f"special oracle {rule}" if rule else
               "inputs JSON cannot carry" if not plain_in else
               "outputs JSON cannot carry" if not plain_out else
               f"outputs larger than {FUNCTION_VALUE_MAX} bytes")
        extra["harness"] = f"script ({why})"
        extra["oracle"] = rule or "differential"
        _script_tests(task, entry, rule, atol, reference, labels, inputs, times, time_floor=time_floor,
                      time_factor=time_factor, chunk=chunk, public_base=public_base)
    task["starter"] = {"main.py": rec["prompt"]}
    task["limits"] = {"time_s": time_floor, "memory_mb": memory_mb}
    task["solutions"] = {"reference": {"files": {"main.py": reference}}}
    task["metadata"] = {"source": suite, "licence": _LICENCE.get(suite, ""), "url": _URL.get(suite),
                        "tags": [suite, dataset], "extra": extra}
    # keep the key order of a hand-written task file
    order = ["id", "title", "statement", "kind", "language", "entry_point", "starter", "tests", "checker",
             "limits", "solutions", "metadata"]
    return {k: task[k] for k in order if k in task}


def _function_tests(task: dict, extra: dict, entry: str, atol: float, labels: list[str], inputs: list,
                    values: list, times: list[float], sizes: list[int], floats: list[bool], *,
                    time_floor: float, time_factor: float, public_base: bool) -> None:
    """A ``kind: function`` task: one case per input, return values compared on the host."""
    tol = {"type": "float", "abs_tol": atol or FLOAT_ATOL, "rel_tol": EVALPLUS_RTOL}
    task_checker: Any = tol if (atol or (floats and all(floats))) else "exact"
    cases = []
    n_computed = 0
    for lb, a, v, t, n, fl in zip(labels, inputs, values, times, sizes, floats):
        case: dict[str, Any] = {"name": lb, "args": to_plain(list(a))}
        if n <= INLINE_MAX and (v is not None or n <= 5):
            case["expected"] = to_plain(v)
        else:
            n_computed += 1   # omitted: codegym.judge.testgen computes it with the reference, in the sandbox
        lim = _time_limit(t, time_floor, time_factor)
        if lim > time_floor:
            case["time_s"] = lim
        if task_checker == "exact" and fl:
            case["checker"] = dict(tol)
        cases.append(case)
    task.update({"kind": "function", "language": "python", "entry_point": entry})
    tests: dict[str, list] = {}
    if public_base:
        tests["public"] = [c for c in cases if c["name"].startswith("base")]
    tests["hidden"] = cases
    task["tests"] = tests
    task["checker"] = task_checker
    extra["harness"] = "function"
    if n_computed:
        extra["expected_computed_at_judge_time"] = n_computed


def _script_tests(task: dict, entry: str, rule: str | None, atol: float, reference: str, labels: list[str],
                  inputs: list, times: list[float], *, time_floor: float, time_factor: float, chunk: int,
                  public_base: bool) -> None:
    """A ``kind: script`` task: chunks of inputs checked by EvalPlus's rules in the sandbox."""
    def chunks(idxs: list[int]) -> list[dict]:
        out = []
        for k in range(0, len(idxs), chunk):
            part = idxs[k:k + chunk]
            code = _script_chunk_code(entry, rule or "", atol, reference, [inputs[i] for i in part],
                                      [labels[i] for i in part])
            ref_t = sum(times[i] for i in part)
            # the candidate's budget by EvalPlus's rule, plus the reference's own run
            lim = _round_up(time_floor + (time_factor + 1.0) * ref_t)
            out.append({"name": f"{labels[part[0]]}..{labels[part[-1]]}", "code": code, "time_s": lim})
        return out

    base_idx = [i for i, lb in enumerate(labels) if lb.startswith("base")]
    plus_idx = [i for i, lb in enumerate(labels) if not lb.startswith("base")]
    task.update({"kind": "script", "language": "python", "entry_point": entry})
    tests = {}
    if public_base and base_idx:
        tests["public"] = chunks(base_idx)
    tests["hidden"] = chunks(base_idx) + chunks(plus_idx)
    task["tests"] = tests


def build_humaneval_tasks(records: Sequence[dict], *, mode: str = "auto", max_plus: int | None = None,
                          suite_name: str | None = None, sandbox=None, time_floor: float = TIME_FLOOR,
                          time_factor: float = TIME_FACTOR, memory_mb: int = 1024, chunk: int = CHUNK,
                          public_base: bool = True, report: ImportReport | None = None) -> list[dict]:
    """Task mappings (ready for `codegym.importers.common.write_suite`) for HumanEval /
    EvalPlus records; see the module docstring. EvalPlus records run their reference
    solution in `sandbox` (default: the shared local sandbox)."""
    if mode not in ("auto", "plain", "plus"):
        raise ValueError(f"mode must be auto, plain or plus, not {mode!r}")
    report = report if report is not None else ImportReport(source="<records>")
    tasks: list[dict] = []
    plus_jobs: list[tuple[dict, str, str, str, list[str], list]] = []
    for rec in records:
        sid = str(rec.get("task_id", "?"))
        missing = [k for k in ("task_id", "prompt", "entry_point", "canonical_solution") if not rec.get(k)]
        if missing:
            report.skipped.append((sid, f"missing field(s) {', '.join(missing)}"))
            continue
        dataset = _dataset(sid)
        plus = mode == "plus" or (mode == "auto" and "base_input" in rec)
        if plus and "base_input" not in rec:
            report.skipped.append((sid, "no base_input (not an EvalPlus record)"))
            continue
        suite = suite_name or (dataset + ("plus" if plus else ""))
        if not plus:
            try:
                tasks.append(_plain_task(rec, dataset, suite, sid))
                report.count("script")
            except ValueError as e:
                report.skipped.append((sid, str(e)))
            continue
        plus_jobs.append(_plus_inputs(rec, dataset, suite, sid, max_plus))
        report.counts["plus_inputs_total"] = (report.counts.get("plus_inputs_total", 0)
                                              + len(rec.get("plus_input") or []))
    if plus_jobs:
        sandbox = sandbox if sandbox is not None else make_sandbox()
        tasks += _run_plus_jobs(plus_jobs, sandbox, report, time_floor=time_floor, time_factor=time_factor,
                                memory_mb=memory_mb, chunk=chunk, public_base=public_base)
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


def _run_plus_jobs(plus_jobs: list[tuple], sandbox, report: ImportReport, **task_kw: Any) -> list[dict]:
    """Run the references of EvalPlus records in the sandbox; their tasks (`_plus_task`)."""
    jobs = [{"code": rec["prompt"] + rec["canonical_solution"], "entry": rec["entry_point"],
             "inputs": inputs} for rec, _, _, _, _, inputs in plus_jobs]
    t0 = time.monotonic()
    results = run_reference(sandbox, jobs, send_max=INLINE_MAX, measure_max=FUNCTION_VALUE_MAX)
    report.notes.append(f"reference solutions ran on {sum(len(j['inputs']) for j in jobs)} inputs "
                        f"in the sandbox in {time.monotonic() - t0:.1f} s")
    tasks = []
    for (rec, dataset, suite, sid, labels, inputs), rr in zip(plus_jobs, results):
        keep = [i for i in range(len(inputs)) if i not in rr.errors]
        dropped = [f"{labels[i]}: {rr.errors[i].splitlines()[-1][:200]}" for i in sorted(rr.errors)]
        if not keep:
            report.skipped.append((sid, "the reference failed on every input: "
                                   + (rr.message or (dropped[0] if dropped else "?"))))
            continue
        if dropped:
            report.notes.append(f"{sid}: {len(dropped)} input(s) dropped (the reference failed): "
                                f"{dropped[0]}")
        task = _plus_task(rec, dataset, suite, sid, labels, inputs, rr, keep,
                          len(rec.get("plus_input") or []), dropped, **task_kw)
        tasks.append(task)
        report.count(task["kind"])
        report.count("cases", len(task["tests"]["hidden"]))
    return tasks


def import_humaneval(path: str | Path, out_dir: str | Path, *, mode: str = "auto", max_plus: int | None = None,
                     suite_name: str | None = None, sandbox=None, ids: Sequence[str] | None = None,
                     limit: int | None = None, time_floor: float = TIME_FLOOR, time_factor: float = TIME_FACTOR,
                     memory_mb: int = 1024, chunk: int = CHUNK, public_base: bool = True,
                     validate: bool = True) -> ImportReport:
    """Import a HumanEval / HumanEval+ / MBPP+ file into the suite folder `out_dir`.

    mode        auto (EvalPlus when records have base_input) | plain | plus
    max_plus    keep only the first N plus inputs of each problem (None: all)
    suite_name  overrides the suite part of the ids (default humaneval, humanevalplus,
                mbpp, mbppplus)
    ids         only these source ids (e.g. ["HumanEval/0"]); limit: only the first N
    time_floor, time_factor   EvalPlus's time-limit rule (per input: max(floor, factor x t_ref))
    public_base EvalPlus: the base inputs are also the public split (env feedback)
    validate    load every written file back with codegym.tasks.load.load_task
    Returns an `ImportReport`; the suite can then be used as
    ``gym.make("codegym/Suite-v0", suite=out_dir)``.
    """
    t0 = time.monotonic()
    records = select_records(path, ids, limit, lambda r: str(r.get("task_id")))
    report = ImportReport(source=str(path), out_dir=str(out_dir))
    tasks = build_humaneval_tasks(records, mode=mode, max_plus=max_plus, suite_name=suite_name, sandbox=sandbox,
                                  time_floor=time_floor, time_factor=time_factor, memory_mb=memory_mb,
                                  chunk=chunk, public_base=public_base, report=report)
    suite = tasks[0]["id"].split("/", 1)[0] if tasks else (suite_name or "humaneval")
    desc = {"humaneval": "HumanEval (OpenAI), script tasks: prompt + completion + check(entry_point)",
            "humanevalplus": "HumanEval+ (EvalPlus): differential tests on base + plus inputs",
            "mbpp": "MBPP (EvalPlus prompts), script tasks with the original assertions",
            "mbppplus": "MBPP+ (EvalPlus): differential tests on base + plus inputs"}.get(
        suite, f"imported from {Path(path).name}")
    return write_import(report, out_dir, tasks, t0, name=suite, description=desc, validate=validate)
