"""Test materialisation: turn a task's test cases into concrete inputs and expectations.

`materialize(task, split)` gives one `Case` per test case of a split (plain data the judge
uses without touching pydantic again): a generated input is the stdout of the generator
program run in the sandbox; an omitted expected output (stdio) or return value (function)
is computed by running the task's reference solution (Python references through the
sandbox's launcher, never in the build store). Both are cached by content hash, in memory
and on disk under ``$CODEGYM_CACHE/tests`` (written atomically); a generator or reference
run that fails raises `TestgenError`. `STATS` counts the runs. Details: docs/judge.md.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegym.core.languages import get_language
from codegym.core.limits import Limits
from codegym.core.paths import write_atomic
from codegym.judge.harness import FUNCTION_DRIVER
from codegym.judge.protocol import (
    SOLUTION_DIR,
    DecodeError,
    decode_value,
    function_request,
    new_nonce,
    parse_function_frames,
    read_tagged,
    value_cap,
    with_preamble,
)
from codegym.sandbox import RunRequest, make_sandbox
from codegym.sandbox.launcher import LAUNCHER, hidden_files
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task

#: bump when the cached formats change (part of the cache directory name)
CACHE_FORMAT = 1
#: splits in judge order for split="all"
ALL_SPLITS = ("public", "hidden", "perf")
#: materialised (task, split) lists kept in memory
MEMORY_ENTRIES = 256

#: counters: generator_runs, reference_runs, disk_hits, memory_hits
STATS: Counter = Counter()

_memory: OrderedDict[tuple[str, str], tuple[Case, ...]] = OrderedDict()
_values: OrderedDict[str, str] = OrderedDict()   # content key -> text (inputs / expected)
_VALUES_MAX_BYTES = 512 << 20
_values_bytes = [0]
_lock = threading.Lock()

GENERATOR_LIMITS = Limits(time_s=60.0, wall_s=180.0, memory_mb=2048, output_bytes=256 << 20,
                          file_size_mb=256)


class TestgenError(RuntimeError):
    """A test case could not be materialised (generator or reference failed)."""

    __test__ = False


@dataclass(frozen=True)
class Case:
    """One concrete test case (plain data).

    index     position in the materialised list (0-based, over the requested splits)
    split     the split it comes from; `position` its index inside that split
    name      the case's name, or "<split>[<position>]"
    kind      the task kind (stdio | function | script | repo)
    stdin     stdio input (generated inputs resolved)
    expected  stdio: expected stdout text; function: expected value; else None
    has_expected  False only when there is no expectation at all (script/repo kinds)
    args, kwargs  function arguments
    code      script test code
    command, tests  repo kind
    weight, checker (CheckerSpec override or None), time_s (override or None)
    generated / computed  whether the input was generated / the expectation computed
    """

    __test__ = False

    index: int
    split: str
    position: int
    name: str
    kind: str
    stdin: str | None = None
    expected: Any = None
    has_expected: bool = False
    args: tuple | list | None = None
    kwargs: dict | None = None
    code: str | None = None
    command: tuple | list | None = None
    tests: tuple | list | None = None
    weight: float = 1.0
    checker: Any = None
    time_s: float | None = None
    generated: bool = False
    computed: bool = False


def cache_dir() -> Path:
    """Root of the on-disk test cache."""
    base = os.environ.get("CODEGYM_CACHE")
    root = Path(base) / "tests" if base else Path.home() / ".cache" / "codegym" / "tests"
    return root / f"v{CACHE_FORMAT}"


def clear_memory_cache() -> None:
    """Forget everything cached in memory (the disk cache stays)."""
    with _lock:
        _memory.clear()
        _values.clear()
        _values_bytes[0] = 0


def _splits(split: str) -> tuple[str, ...]:
    if split == "all":
        return ALL_SPLITS
    if split not in ALL_SPLITS:
        raise ValueError(f"unknown split {split!r}; expected public, hidden, perf or all")
    return (split,)


# --------------------------------------------------------------------------- value cache


def _mem_get(key: str) -> str | None:
    with _lock:
        v = _values.get(key)
        if v is not None:
            _values.move_to_end(key)
        return v


def _mem_put(key: str, text: str) -> None:
    with _lock:
        if key in _values:
            return
        _values[key] = text
        _values_bytes[0] += len(text)
        while _values_bytes[0] > _VALUES_MAX_BYTES and len(_values) > 1:
            _, old = _values.popitem(last=False)
            _values_bytes[0] -= len(old)


def _disk_path(kind: str, key: str, ext: str) -> Path:
    return cache_dir() / kind / key[:2] / f"{key}{ext}"


def _load(kind: str, key: str, ext: str) -> str | None:
    v = _mem_get(f"{kind}:{key}")
    if v is not None:
        return v
    p = _disk_path(kind, key, ext)
    try:
        text = p.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    STATS["disk_hits"] += 1
    _mem_put(f"{kind}:{key}", text)
    return text


def _store(kind: str, key: str, ext: str, text: str) -> None:
    _mem_put(f"{kind}:{key}", text)
    try:
        write_atomic(_disk_path(kind, key, ext), text, prefix=".tmp-")
    except OSError:
        pass  # a read-only cache still works in memory


# --------------------------------------------------------------------------- materialisation


def _label(task: Task, split: str, pos: int, case) -> str:
    return f"{task.id}: {split}[{pos}]" + (f" ({case.name})" if getattr(case, "name", None) else "")


def _tail(text: str, n: int = 600) -> str:
    text = (text or "").strip()
    return text if len(text) <= n else "..." + text[-n:]


def _describe_failure(res) -> str:
    detail = _tail(res.stderr) or _tail(res.stdout)
    msg = f"{res.status}" + (f" (exit code {res.exit_code})" if res.exit_code not in (None, 0) else "")
    if res.message:
        msg += f": {res.message}"
    return msg + (f"\n{detail}" if detail else "")


def _sandbox(sandbox: Sandbox | None) -> Sandbox:
    if sandbox is not None:
        return sandbox
    return make_sandbox()


def _generate(task: Task, todo: list[tuple[str, int, Any, Any]], sandbox: Sandbox | None) -> dict[str, str]:
    """Run the generators of `todo` [(split, pos, case, gen)] not yet cached; key -> input."""
    out: dict[str, str] = {}
    groups: dict[tuple[str, str], list] = {}
    for item in todo:
        gen = item[3]
        key = gen.content_hash
        if key in out:
            continue
        text = _load("inputs", key, ".in")
        if text is not None:
            out[key] = text
            continue
        groups.setdefault((gen.language, gen.code), []).append(item)
    if not groups:
        return out
    sb = _sandbox(sandbox)
    for (lang, code), items in groups.items():
        split, pos, case, gen = items[0]
        try:
            main = get_language(lang).main_file
        except Exception as e:  # noqa: BLE001 -- unknown language: name the case
            raise TestgenError(f"{_label(task, split, pos, case)}: generator language {lang!r}: {e}") from None
        b = sb.build(lang, {main: code})
        if not b.ok:
            raise TestgenError(f"{_label(task, split, pos, case)}: generator does not build: "
                               f"{_describe_failure(b.result)}")
        uniq: dict[str, tuple] = {}
        for it in items:
            uniq.setdefault(it[3].content_hash, it)
        keys = list(uniq)
        reqs = [RunRequest(argv=uniq[k][3].argv()) for k in keys]
        STATS["generator_runs"] += len(reqs)
        results = sb.run_many(b, reqs, limits=GENERATOR_LIMITS)
        for k, r in zip(keys, results):
            split, pos, case, gen = uniq[k]
            if r is None or r.status != "ok":
                why = _describe_failure(r) if r is not None else "not run"
                raise TestgenError(f"{_label(task, split, pos, case)}: generator (seed {gen.seed}, "
                                   f"args {gen.args}) failed: {why}")
            if r.stdout_truncated:
                raise TestgenError(f"{_label(task, split, pos, case)}: generator output exceeds "
                                   f"{GENERATOR_LIMITS.output_bytes} bytes")
            _store("inputs", k, ".in", r.stdout)
            out[k] = r.stdout
    return out


def _reference(task: Task):
    name = task.reference_name
    if name is None:
        return None, None
    sol = task.solution(name)
    return name, sol


def _reference_limits(task: Task) -> Limits:
    lim = task.limits
    return lim.replace(time_s=max(10.0, 3.0 * lim.time_s), wall_s=None,
                       memory_mb=max(lim.memory_mb, 1024), output_bytes=max(lim.output_bytes, 256 << 20))


def _known_expectations(task: Task, todo: list[tuple], ext: str, what: str,
                        read: Callable[[str], Any]) -> tuple[dict[str, Any], list[tuple], str | None, Any]:
    """(key -> cached expectation, items still to compute, reference name, reference) of
    `todo` [(split, pos, case, key, ...)]; raises `TestgenError` when an expectation is
    missing and the task has no reference solution (`what`: "output" or "value")."""
    name, sol = _reference(task)
    out: dict[str, Any] = {}
    missing = []
    for item in todo:
        text = _load("expected", item[3], ext)
        if text is not None:
            out[item[3]] = read(text)
        else:
            missing.append(item)
    if missing and sol is None:
        split, pos, case = missing[0][:3]
        raise TestgenError(f"{_label(task, split, pos, case)}: no expected {what} and the task has "
                           f"no reference solution")
    return out, missing, name, sol


def _compute_stdio(task: Task, todo: list[tuple[str, int, Any, str, str]],
                   sandbox: Sandbox | None) -> dict[str, str]:
    """Expected stdout for [(split, pos, case, key, stdin)] by running the reference."""
    out, missing, name, sol = _known_expectations(task, todo, ".out", "output", str)
    if not missing:
        return out
    sb = _sandbox(sandbox)
    lang = sol.language or task.language
    if lang == "python":
        # via the launcher: the reference is an extra file of each run, never in the build
        # store that every run (a candidate's included) can read
        b = sb.build("python", {"main.py": LAUNCHER})
        main = task.main_file_for(lang) or "main.py"
        extra, argv = hidden_files(with_preamble(dict(sol.files), main, task.preamble)), [main]
    else:
        b = sb.build(lang, dict(sol.files))
        extra, argv = None, []
    if not b.ok:
        split, pos, case = missing[0][:3]
        raise TestgenError(f"{_label(task, split, pos, case)}: reference solution {name!r} does not "
                           f"build: {_describe_failure(b.result)}")
    uniq: dict[str, tuple] = {}
    for it in missing:
        uniq.setdefault(it[3], it)
    keys = list(uniq)
    STATS["reference_runs"] += len(keys)
    results = sb.run_many(b, [RunRequest(stdin=uniq[k][4], argv=argv, extra_files=extra) for k in keys],
                          limits=_reference_limits(task))
    for k, r in zip(keys, results):
        split, pos, case = uniq[k][:3]
        if r is None or r.status != "ok":
            why = _describe_failure(r) if r is not None else "not run"
            raise TestgenError(f"{_label(task, split, pos, case)}: reference solution {name!r} failed: {why}")
        _store("expected", k, ".out", r.stdout)
        out[k] = r.stdout
    return out


def _compute_function(task: Task, todo: list[tuple[str, int, Any, str]],
                      sandbox: Sandbox | None) -> dict[str, Any]:
    """Expected return values for [(split, pos, case, key)] by calling the reference."""
    out, missing, name, sol = _known_expectations(task, todo, ".json", "value",
                                                  lambda text: decode_value(json.loads(text)))
    if not missing:
        return out
    sb = _sandbox(sandbox)
    lang = sol.language or task.language
    main = task.main_file_for(lang) or "main.py"
    # the driver alone is built; the reference comes as extra files of the run (see _compute_stdio)
    b = sb.build(lang, {"main.py": FUNCTION_DRIVER})
    extra = {f"{SOLUTION_DIR}/{rel}": c for rel, c in sol.files.items()}
    if not b.ok:
        split, pos, case = missing[0][:3]
        raise TestgenError(f"{_label(task, split, pos, case)}: reference {name!r} does not build: "
                           f"{_describe_failure(b.result)}")
    lim = _reference_limits(task)
    uniq: dict[str, tuple] = {}
    for it in missing:
        uniq.setdefault(it[3], it)
    keys = list(uniq)
    nonce = new_nonce()
    cases = []
    for i, k in enumerate(keys):
        c = uniq[k][2]
        cases.append((i, _read_value(task, uniq[k], list(c.args or [])),
                      _read_value(task, uniq[k], dict(c.kwargs or {})), lim.time_s, lim.wall()))
    assert task.entry_point is not None  # (a function task has one: `codegym.tasks.checks`)
    req = function_request(nonce, main, task.entry_point, cases, import_time=lim.time_s,
                           stop_on_error=True, cap=value_cap(lim), preamble=task.preamble)
    STATS["reference_runs"] += len(keys)
    total = lim.replace(time_s=lim.time_s * (len(keys) + 1), wall_s=lim.wall() * (len(keys) + 1))
    r = sb.run(b, stdin=req, limits=total, extra_files=extra)
    frames = parse_function_frames(r.stdout, nonce)
    if frames.import_error is not None:
        split, pos, case = uniq[keys[0]][:3]
        raise TestgenError(f"{_label(task, split, pos, case)}: reference {name!r} failed to import: "
                           f"{frames.import_error.get('import')}: {_tail(frames.import_error.get('e', ''))}")
    for i, k in enumerate(keys):
        split, pos, case = uniq[k][:3]
        fr = frames.results.get(i)
        if fr is None or fr.get("s") != "ok":
            why = (f"{fr.get('s')}: {_tail(fr.get('e', ''))}" if fr is not None
                   else _describe_failure(r))
            raise TestgenError(f"{_label(task, split, pos, case)}: reference solution {name!r} failed: {why}")
        text = json.dumps(fr["v"], separators=(",", ":"))
        _store("expected", k, ".json", text)
        out[k] = decode_value(fr["v"])
    return out


def _read_value(task: Task, item: tuple, value: Any) -> Any:
    """A function case's value (args, kwargs, expected) with its tagged parts decoded
    (`codegym.judge.protocol.read_tagged`); `TestgenError` naming the case when malformed."""
    try:
        return read_tagged(value)
    except DecodeError as e:
        split, pos, case = item[:3]
        raise TestgenError(f"{_label(task, split, pos, case)}: {e}") from None


def _computed(task: Task, raw: list[tuple[str, int, Any]], stdin_of: Callable[[Any], str | None],
              sandbox: Sandbox | None) -> dict[str, Any]:
    """Expectation key -> computed expectation of the cases of `raw` [(split, pos, case)]
    that have none (stdio and function tasks)."""
    todo = []
    for sp, pos, c in raw:
        if not c.has_expected:
            key = task.expected_key(c)
            if key is None:
                raise TestgenError(f"{_label(task, sp, pos, c)}: no expected "
                                   f"{'output' if task.kind == 'stdio' else 'value'} and the task "
                                   f"has no reference solution")
            todo.append((sp, pos, c, key))
    if todo and task.kind == "stdio":
        return _compute_stdio(task, [(*t, stdin_of(t[2]) or "") for t in todo], sandbox)
    if todo:
        return _compute_function(task, todo, sandbox)
    return {}


def materialize(task: Task, split: str = "hidden", sandbox: Sandbox | None = None) -> list[Case]:
    """The concrete cases of `split` ("public", "hidden", "perf" or "all", in that order).

    Cached in memory by (task content hash, split); generated inputs and computed
    expectations also on disk. Raises `TestgenError` when a generator or the
    reference solution fails."""
    mkey = (task.content_hash, split)
    with _lock:
        hit = _memory.get(mkey)
        if hit is not None:
            _memory.move_to_end(mkey)
            STATS["memory_hits"] += 1
            return list(hit)
    raw = []
    for sp in _splits(split):
        for pos, case in enumerate(task.cases(sp)):
            raw.append((sp, pos, case))
    # 1. generated inputs
    gen_todo = [(sp, pos, c, c.generator) for sp, pos, c in raw if c.generator is not None]
    inputs = _generate(task, gen_todo, sandbox) if gen_todo else {}

    def stdin_of(case) -> str | None:
        if case.generator is not None:
            return inputs[case.generator.content_hash]
        return case.stdin

    # 2. computed expectations
    computed = _computed(task, raw, stdin_of, sandbox) if task.kind in ("stdio", "function") else {}
    # 3. plain records
    out = []
    for idx, (sp, pos, c) in enumerate(raw):
        exp, has = None, False
        is_computed = False
        args = list(c.args) if c.args is not None else None
        kwargs = dict(c.kwargs) if c.kwargs is not None else None
        if task.kind in ("stdio", "function"):
            has = True
            if c.has_expected:
                exp = c.expected
            else:
                key = task.expected_key(c)
                assert key is not None  # (`_computed` raised for a case with neither)
                exp = computed[key]
                is_computed = True
        if task.kind == "function":   # values YAML cannot hold are written tagged
            item = (sp, pos, c)
            args, kwargs = _read_value(task, item, args), _read_value(task, item, kwargs)
            if not is_computed:
                exp = _read_value(task, item, exp)
        out.append(Case(
            index=idx, split=sp, position=pos, name=c.name or f"{sp}[{pos}]", kind=task.kind,
            stdin=stdin_of(c) if task.kind == "stdio" else c.stdin, expected=exp, has_expected=has,
            args=args, kwargs=kwargs, code=c.code,
            command=list(c.command) if c.command is not None else None,
            tests=list(c.tests) if c.tests is not None else None, weight=c.weight,
            checker=c.checker, time_s=c.time_s, generated=c.generator is not None,
            computed=is_computed))
    with _lock:
        _memory[mkey] = tuple(out)
        while len(_memory) > MEMORY_ENTRIES:
            _memory.popitem(last=False)
    return out


