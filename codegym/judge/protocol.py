"""The host side of the drivers' protocols: requests in, frames and markers out.

Function driver: `function_request` (stdin: JSON with the cases, never the expected values),
`parse_function_frames` (one ``@cg <nonce> <json>`` frame per case), `decode_value` (the
tagged wire values back to plain data). Script driver: `script_request` (the nonce line,
then the config: what to protect, what to bind, whether to call ``check``),
`analyse_test_code` and `implicit_modules` (what the test code needs), `script_passed` (the
nonce marker), `parse_script_failure`; `script_program` composes non-Python script runs.
The candidate's files travel as extra files under `SOLUTION_DIR` (`solution_files`).
The wire format and the drivers' defences are described in docs/judge.md.
"""

from __future__ import annotations

import ast
import base64
import json
import math
import re
import secrets
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from codegym.judge.checkers.values import Repr

#: directory (inside the run directory) that holds the candidate's files for driver runs
SOLUTION_DIR = "sol"
#: default cap on one serialised return value (bytes)
VALUE_CAP = 1 << 20
#: marker prefix of function-driver frames
FRAME_PREFIX = "@cg "
#: marker prefix of the script driver's failure report
FAIL_PREFIX = "@cgfail "

#: epilogues of non-Python script programs: print the nonce (read from stdin) and PASS.
#: Weak by construction (see docs/judge.md): the candidate can read stdin too.
SCRIPT_EPILOGUES: dict[str, str] = {
    "julia": '\nprintln(stdout, "\\n", readline(stdin), " PASS")\n',
    "javascript": ('\nprocess.stdout.write("\\n" + require("fs").readFileSync(0, "utf8").split("\\n")[0]'
                   ' + " PASS\\n");\n'),
}

#: modules the script driver always protects (in addition to those the tests import)
PROTECTED_MODULES = ("math", "cmath", "re", "string", "itertools", "functools", "operator",
                     "collections", "heapq", "bisect", "random", "statistics", "fractions",
                     "decimal", "copy", "numbers", "json")


# --------------------------------------------------------------------------- function kind


def new_nonce() -> str:
    """A fresh 128-bit secret (hex)."""
    return secrets.token_hex(16)


def module_name_for(main_file: str) -> str:
    """Module name the candidate's main file is imported under (its stem when that is safe)."""
    stem = main_file.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.endswith(".py") else stem
    if not stem.isidentifier() or stem in sys.stdlib_module_names or stem in sys.builtin_module_names \
            or stem.startswith("_codegym"):
        return "solution"
    return stem


def solution_files(files: dict[str, str | bytes], only_python: bool = False,
                   main_file: str | None = None) -> dict[str, str | bytes]:
    """The candidate's files placed under ``sol/`` -- extra files of a driver run.

    Passed per run (never built) so that no candidate's code enters the sandbox's
    build store, which later runs can read. `only_python`: keep ``.py`` text files
    only (the script driver: no binary the candidate wrote can be loaded)."""
    out: dict[str, str | bytes] = {}
    for rel, content in files.items():
        if not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/"):
            continue
        if only_python and not (isinstance(content, str) and (rel.endswith(".py") or rel == main_file)):
            continue
        out[f"{SOLUTION_DIR}/{rel}"] = content
    return out


def function_request(nonce: str, main_file: str, entry: str,
                     cases: Sequence[tuple[int, list, dict, float, float]], *, import_time: float,
                     stop_on_error: bool, cap: int = VALUE_CAP, preamble: str | None = None) -> str:
    """stdin of one function-driver run. `cases`: (index, args, kwargs, cpu_s, wall_s).

    Arguments JSON cannot carry as they are (tuples, sets, bytes, complex, non-finite
    floats, dicts with other keys) make the whole request travel tagged (`encode_value`;
    the driver decodes). `preamble`: Python source the driver runs in the candidate's
    module namespace before the module's own code (``Task.preamble``)."""
    rows: list[list[Any]] = [list(c) for c in cases]
    tagged = not all(is_json_plain(r[1]) and is_json_plain(r[2]) for r in rows)
    if tagged:
        rows = [[r[0], encode_value(list(r[1])), encode_value(dict(r[2])), *r[3:]] for r in rows]
    body: dict[str, Any] = {
        "nonce": nonce, "path": f"{SOLUTION_DIR}/{main_file}", "module": module_name_for(main_file),
        "entry": entry, "cases": rows, "import_time": import_time,
        "stop_on_error": stop_on_error, "cap": cap,
    }
    if tagged:
        body["tagged"] = True
    if preamble:
        body["preamble"] = preamble
    return json.dumps(body, separators=(",", ":"), allow_nan=False)


def value_cap(limits: Any) -> int:
    """Largest serialised return value a function-driver run sends back under `limits`:
    `VALUE_CAP`, or an eighth of ``limits.output_bytes`` when that is larger (a task
    whose values are large says so with a larger output limit)."""
    return max(VALUE_CAP, int(getattr(limits, "output_bytes", 0) or 0) // 8)


def with_preamble(files: dict[str, str | bytes], main_file: str, preamble: str | None) -> dict[str, str | bytes]:
    """`files` with `preamble` prepended to the main file (stdio runs of a task with a
    ``preamble``, as a harness that prepends its block to the program)."""
    src = files.get(main_file)
    if not preamble or src is None:
        return files
    if isinstance(src, bytes):
        src = src.decode("utf-8", "replace")
    return {**files, main_file: preamble.rstrip("\n") + "\n" + src}


def unshift_lines(text: str, main_file: str, preamble: str | None) -> str:
    """Tracebacks in `text` with the main file's line numbers counted without the
    prepended `preamble` (`with_preamble`), so they point at the program's own lines."""
    if not preamble or not text:
        return text
    n = preamble.rstrip("\n").count("\n") + 1
    pat = re.compile(r'(File "(?:[^"]*/)?' + re.escape(main_file) + r'", line )(\d+)')

    def fix(m: re.Match) -> str:
        k = int(m.group(2))
        return m.group(1) + (str(k - n) if k > n else f"{k} (of the preamble)")
    return pat.sub(fix, text)


def is_json_plain(x: Any, depth: int = 0) -> bool:
    """True when JSON carries `x` unchanged: None/bool/int/finite float/str, lists, and
    dicts with str keys (no tuple, set, bytes, complex, nan or inf anywhere)."""
    if depth > 500:
        return False
    t = type(x)
    if x is None or t in (bool, int, str):
        return True
    if t is float:
        return math.isfinite(x)
    if t is list:
        return all(is_json_plain(v, depth + 1) for v in x)
    if t is dict:
        return all(type(k) is str and is_json_plain(v, depth + 1) for k, v in x.items())
    return False


def _sort_key(v: Any) -> tuple[str, str]:
    return type(v).__name__, repr(v)


def encode_value(x: Any, depth: int = 0) -> Any:
    """A host value in the tagged JSON form `decode_value` reads: tuples, sets, every dict
    (any keys), bytes, non-finite floats, ints beyond 64 bits and complex numbers become
    ``{"#": tag, "v": ...}``; set members are sorted (stable text and hashes); another
    type is a TypeError. The drivers' own encoders write the same form."""
    if depth > 1000:
        raise ValueError("value nested too deeply")
    t = type(x)
    if x is None or t is bool or t is str:
        return x
    if t is int:
        return x if -(1 << 63) < x < (1 << 63) else {"#": "int", "v": hex(x)}
    if t is float:
        if math.isnan(x):
            return {"#": "float", "v": "nan"}
        if math.isinf(x):
            return {"#": "float", "v": "inf" if x > 0 else "-inf"}
        return x
    if t is list:
        return [encode_value(v, depth + 1) for v in x]
    if t is tuple:
        return {"#": "tuple", "v": [encode_value(v, depth + 1) for v in x]}
    if t is dict:
        return {"#": "dict", "v": [[encode_value(k, depth + 1), encode_value(v, depth + 1)] for k, v in x.items()]}
    if t is set or t is frozenset:
        return {"#": t.__name__, "v": [encode_value(v, depth + 1) for v in sorted(x, key=_sort_key)]}
    if t is bytes or t is bytearray:
        return {"#": "bytes", "v": base64.b64encode(bytes(x)).decode()}
    if t is complex:
        return {"#": "complex", "v": [encode_value(x.real, depth + 1), encode_value(x.imag, depth + 1)]}
    raise TypeError(f"cannot encode a {t.__name__} value")


#: tags a task file may use for values YAML cannot hold (see `read_tagged`)
FILE_TAGS = frozenset({"tuple", "dict", "set", "frozenset", "float", "int", "bytes", "complex"})


def read_tagged(x: Any, depth: int = 0) -> Any:
    """A function case's value as a task file writes it (`file_value`), decoded: a
    mapping whose keys are exactly ``#`` and ``v``, with ``#`` one of `FILE_TAGS`, is a
    tagged tuple, set, frozenset, bytes, complex, non-finite float, big int or dict with
    keys YAML cannot hold (YAML has none of these); everything else is kept as it is.
    A malformed tag raises `DecodeError`."""
    if depth > 1000:
        raise DecodeError("value nested too deeply")
    t = type(x)
    if t is list:
        return [read_tagged(v, depth + 1) for v in x]
    if t is not dict:
        return x
    if not _is_tag(x):
        return {k: read_tagged(v, depth + 1) for k, v in x.items()}
    tag, v = x["#"], x["v"]
    try:
        if tag == "tuple":
            return tuple(read_tagged(e, depth + 1) for e in v)
        if tag == "dict":
            return {_hashable(read_tagged(k, depth + 1)): read_tagged(e, depth + 1) for k, e in v}
        if tag in ("set", "frozenset"):
            members = (_hashable(read_tagged(e, depth + 1)) for e in v)
            return set(members) if tag == "set" else frozenset(members)
        if tag == "float":
            return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
        if tag == "int":
            return int(v, 16)
        if tag == "bytes":
            return base64.b64decode(v, validate=True)
        return complex(read_tagged(v[0], depth + 1), read_tagged(v[1], depth + 1))
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise DecodeError(f"malformed tagged value {str(x)[:80]}: {e}") from None


def _is_tag(x: dict) -> bool:
    return len(x) == 2 and "#" in x and "v" in x and x["#"] in FILE_TAGS


def file_value(x: Any, depth: int = 0) -> Any:
    """`x` as a task file can hold it, read back equal by `read_tagged`: plain data as
    it is, only what YAML cannot hold tagged (a tuple, set, ... ; a dict with keys that
    are not strings, or one that would read as a tag); TypeError for other types."""
    if depth > 1000:
        raise ValueError("value nested too deeply")
    t = type(x)
    if x is None or t in (bool, str, int) or (t is float and math.isfinite(x)):
        return x if t is not int or -(1 << 63) < x < (1 << 63) else {"#": "int", "v": hex(x)}
    if t is list:
        return [file_value(v, depth + 1) for v in x]
    if t is dict and all(type(k) is str for k in x) and not _is_tag(x):
        return {k: file_value(v, depth + 1) for k, v in x.items()}
    if t is dict:
        return {"#": "dict", "v": [[file_value(k, depth + 1), file_value(v, depth + 1)] for k, v in x.items()]}
    if t is tuple:
        return {"#": "tuple", "v": [file_value(v, depth + 1) for v in x]}
    if t is set or t is frozenset:
        return {"#": t.__name__, "v": [file_value(v, depth + 1) for v in sorted(x, key=_sort_key)]}
    if t is float or t is bytes or t is bytearray or t is complex:
        enc = encode_value(x)
        if t is complex:
            enc["v"] = [file_value(x.real), file_value(x.imag)]
        return enc
    raise TypeError(f"cannot write a {t.__name__} value into a task file")


@dataclass
class FunctionFrames:
    """What one function-driver run reported."""

    results: dict[int, dict] = field(default_factory=dict)   # case index -> frame
    import_error: dict | None = None
    done: bool = False
    malformed: int = 0


def parse_function_frames(stdout: str, nonce: str) -> FunctionFrames:
    """Read the frames of a function-driver run (first frame per case wins)."""
    out = FunctionFrames()
    prefix = FRAME_PREFIX + nonce + " "
    for line in stdout.split("\n"):
        if not line.startswith(prefix):
            continue
        try:
            obj = json.loads(line[len(prefix):])
        except ValueError:
            out.malformed += 1
            continue
        if not isinstance(obj, dict):
            out.malformed += 1
            continue
        if "import" in obj:
            if out.import_error is None:
                out.import_error = obj
        elif obj.get("done") is True:
            out.done = True
        elif isinstance(obj.get("i"), int):
            out.results.setdefault(obj["i"], obj)
        else:
            out.malformed += 1
    return out


class DecodeError(ValueError):
    pass


def decode_value(obj: Any, depth: int = 0) -> Any:
    """Wire value (JSON with tags) -> plain Python data (tuple/set/bytes/nan/... rebuilt)."""
    if depth > 1000:
        raise DecodeError("value nested too deeply")
    t = type(obj)
    if t is list:
        return [decode_value(v, depth + 1) for v in obj]
    if t is not dict:
        return obj
    tag, v = obj.get("#"), obj.get("v")
    if tag == "tuple":
        return tuple(decode_value(x, depth + 1) for x in v)
    if tag == "dict":
        return {_hashable(decode_value(k, depth + 1)): decode_value(x, depth + 1) for k, x in v}
    if tag == "set":
        return {_hashable(decode_value(x, depth + 1)) for x in v}
    if tag == "frozenset":
        return frozenset(_hashable(decode_value(x, depth + 1)) for x in v)
    if tag == "float":
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
    if tag == "int":
        return int(v, 16)
    if tag == "bytes":
        return base64.b64decode(v)
    if tag == "complex":
        return complex(decode_value(v[0], depth + 1), decode_value(v[1], depth + 1))
    if tag == "repr":
        return Repr(str(v), str(obj.get("t", "")))
    raise DecodeError(f"unknown tag {tag!r}")


def _hashable(x: Any) -> Any:
    if isinstance(x, list):  # cannot happen from a real set/dict key; keep the data anyway
        return tuple(_hashable(v) for v in x)
    if isinstance(x, dict):
        return Repr(repr(x), "dict")
    if isinstance(x, set):
        return frozenset(x)
    return x


# --------------------------------------------------------------------------- script kind


_AST_LOCK = threading.Lock()


def parse_python(code: str) -> ast.Module:
    """``ast.parse`` for host threads: CPython 3.11 before 3.11.9 keeps the AST
    converter's recursion depth per interpreter, not per thread, so two threads
    parsing at once can fail with "SystemError: AST constructor recursion depth
    mismatch" (CPython gh-106905); judges run in several threads."""
    with _AST_LOCK:
        return ast.parse(code)


def analyse_test_code(code: str) -> tuple[bool, list[str]]:
    """(call_check, imports) of Python test code.

    call_check: the code defines ``check`` but never calls it at module level
    (HumanEval style), so the driver must call ``check(<entry point>)``.
    imports: every module name the code imports (anywhere), for protection."""
    try:
        tree = parse_python(code)
    except SyntaxError:
        return False, []
    defines = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "check"
                  for n in tree.body)
    calls = False

    def walk_module_level(nodes: Iterable[ast.AST]) -> None:
        nonlocal calls
        for n in nodes:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            for sub in ast.iter_child_nodes(n):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "check":
                    calls = True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "check":
                calls = True
            walk_module_level(ast.iter_child_nodes(n))

    walk_module_level(tree.body)
    imports: list[str] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            imports.extend(a.name for a in n.names)
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            imports.append(n.module)
            imports.extend(f"{n.module}.{a.name}" for a in n.names if a.name != "*")
    return defines and not calls, list(dict.fromkeys(imports))


def implicit_modules(code: str) -> list[str]:
    """Standard modules the test code uses without importing them (``math.isclose(...)``
    relying on the solution's ``import math``): the driver binds the genuine, protected
    modules under those names instead of whatever the solution has there."""
    try:
        tree = parse_python(code)
    except SyntaxError:
        return []
    loads: set[str] = set()
    bound: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
    return sorted(n for n in loads - bound if n in sys.stdlib_module_names and not n.startswith("_"))


def script_request(nonce: str, main_file: str, test_code: str, entry: str | None,
                   preamble: str | None = None) -> str:
    """stdin of one Python script-driver run: the nonce line, then the JSON config
    (`preamble`: run in the candidate's module namespace before its code)."""
    call_check, imports = analyse_test_code(test_code)
    bind = implicit_modules(test_code)
    protect = list(dict.fromkeys([*PROTECTED_MODULES, *imports, *bind]))
    cfg = {"path": f"{SOLUTION_DIR}/{main_file}", "module": module_name_for(main_file),
           "test": test_code, "entry": entry, "call_check": bool(call_check and entry), "protect": protect,
           "bind": bind}
    if preamble:
        cfg["preamble"] = preamble
    return nonce + "\n" + json.dumps(cfg)


def script_program(language: str, candidate: str, test_code: str) -> str:
    """Source of a non-Python script run: candidate, tests, then the marker epilogue."""
    epi = SCRIPT_EPILOGUES.get(language)
    if epi is None:
        raise ValueError(f"script tasks are not supported for language {language!r}")
    return candidate.rstrip("\n") + "\n\n" + test_code.rstrip("\n") + "\n" + epi


def script_passed(stdout: str, nonce: str) -> bool:
    """True iff the run printed the success marker of this nonce on a line of its own."""
    marker = f"{nonce} PASS"
    return any(line.strip() == marker for line in stdout.split("\n")[-64:]) or \
        ("\n" + marker + "\n") in stdout


def parse_script_failure(stdout: str) -> dict | None:
    """The script driver's failure report (informational only), or None."""
    for line in reversed(stdout.split("\n")):
        if line.startswith(FAIL_PREFIX):
            try:
                obj = json.loads(line[len(FAIL_PREFIX):])
            except ValueError:
                return None
            return obj if isinstance(obj, dict) else None
    return None


