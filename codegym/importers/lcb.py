"""LiveCodeBench importer (``codegym import lcb``) and its loader.

`load_lcb(path_or_dataset, since=, until=, difficulty=)` reads LCB's own schema from
``.jsonl``/``.json`` files (optionally gzipped), a directory of them, or a hub dataset
(with ``datasets``) into `LCBProblem` records; the pickled private tests are read
within caps (`codegym.core.jsonl`) and never unpickled (`pickled_string`). `lcb_task` / `import_lcb` make one task per
problem (``lcb/<question_id>``): functional tests -> ``kind: function`` calling
``Solution.<func_name>``, stdin tests -> ``kind: stdio``; ``hidden`` is public +
private; ``metadata.release_date`` allows contamination windows. The tasks are judged
like LCB's harness: its import block runs first (`LCB_PREAMBLE`), functional answers
compare with ``==`` (a returned tuple as a list), stdin answers line by line with
LCB's decimal rule (checker ``decimal_lines``), 6 s per test. LCB's few-shot example
files (``question``/``answer``) import through `codegym.importers.lcb_fewshot`; a
LeetCode-contest file is named as such. docs/importers.md has the rules.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import pickletools
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from codegym.core.jsonl import DEFAULT_DATA_CAPS, DataCaps, DataError, data_files, inflate, loads
from codegym.importers.common import (
    RECORD_ERRORS,
    ImportError_,
    ImportReport,
    finite_number,
    missing_fields,
    read_source,
    record_at,
    record_error,
    task_name,
    write_import,
)
from codegym.importers.detect import detect_records
from codegym.importers.lcb_fewshot import fewshot_tasks
from codegym.importers.values import is_plain_value
from codegym.sandbox.types import Sandbox

#: LiveCodeBench's ``import_string`` (lcb_runner/evaluation/testing_util.py), verbatim: its
#: harness prepends it to every program, functional and stdin alike
LCB_IMPORT_STRING = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\nfrom operator import *\n"
    "from io import *\nfrom sys import *\nfrom json import *\nfrom builtins import *\nfrom typing import *\n"
    "import string\nimport re\nimport datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
    "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)
#: what the judge runs before an LCB program: the import string, and the limit on int
#: digits LCB's evaluation process sets (compute_code_generation_metrics) for its programs
LCB_PREAMBLE = LCB_IMPORT_STRING + "sys.set_int_max_str_digits(50000)\n"
#: LCB runner's default per-test timeout (seconds; ``signal.alarm(6)``)
LCB_TIME_S = 6.0
#: memory limit of the tasks (LCB's harness sets none)
LCB_MEMORY_MB = 4096
#: the fields a record must have
REQUIRED_FIELDS = ("question_id", "question_content")
_LICENCE = "MIT (LiveCodeBench); problem statements belong to their platforms (evaluation use)"


@dataclass
class LCBTest:
    """One LCB test: raw input / output text and its type (``stdin`` | ``functional``)."""

    input: str
    output: str
    testtype: str


@dataclass
class LCBProblem:
    """One LiveCodeBench problem with decoded tests (see the module docstring)."""

    question_id: str
    question_title: str
    question_content: str
    platform: str = ""
    contest_id: str = ""
    contest_date: datetime | None = None
    starter_code: str = ""
    difficulty: str = ""
    public_tests: list[LCBTest] = field(default_factory=list)
    private_tests: list[LCBTest] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)
    where: str = ""   # where its record is (``line 12 (id)``), for skip lines

    @property
    def func_name(self) -> str | None:
        return self.metadata.get("func_name") or None

    @property
    def release_date(self) -> date | None:
        return self.contest_date.date() if self.contest_date else None

    @property
    def testtype(self) -> str:
        """``functional`` or ``stdin`` (or ``mixed``)."""
        kinds = {t.testtype for t in self.public_tests + self.private_tests}
        if not kinds:
            return "functional" if self.func_name else "stdin"
        return kinds.pop() if len(kinds) == 1 else "mixed"

    @classmethod
    def from_record(cls, rec: dict, caps: DataCaps = DEFAULT_DATA_CAPS) -> LCBProblem:
        """The problem of one record; ValueError / TypeError say what is wrong with it."""
        def tests(value: Any, private: bool) -> list[LCBTest]:
            raw = decode_private_tests(value, caps) if private else _json_list(value, caps)
            out = []
            for t in raw:
                if not isinstance(t, dict) or "input" not in t or "output" not in t:
                    raise ValueError("a test case needs input and output")
                out.append(LCBTest(str(t["input"]), str(t["output"]), str(t.get("testtype") or "stdin")))
            return out

        missing = missing_fields(rec, REQUIRED_FIELDS)
        if not missing and rec.get("public_test_cases") is None and rec.get("private_test_cases") is None:
            missing = ["public_test_cases"]
        if missing:
            raise ValueError(f"missing field {', '.join(map(repr, missing))}")
        meta = rec.get("metadata") or {}
        if isinstance(meta, str):
            meta = loads(meta, caps, "metadata") if meta.strip() else {}
        return cls(question_id=str(rec["question_id"]), question_title=str(rec.get("question_title") or ""),
                   question_content=str(rec.get("question_content") or ""), platform=str(rec.get("platform") or ""),
                   contest_id=str(rec.get("contest_id") or ""), contest_date=_parse_datetime(rec.get("contest_date")),
                   starter_code=str(rec.get("starter_code") or ""), difficulty=str(rec.get("difficulty") or ""),
                   public_tests=tests(rec.get("public_test_cases") or "[]", False),
                   private_tests=tests(rec.get("private_test_cases") or "[]", True),
                   metadata=meta if isinstance(meta, dict) else {})


def _json_list(value: Any, caps: DataCaps = DEFAULT_DATA_CAPS) -> list:
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a JSON list of test cases, not {type(value).__name__}")
    data = loads(value, caps)
    if not isinstance(data, list):
        raise ValueError("expected a JSON list of test cases")
    return data


#: pickle opcodes of LCB's private tests (``pickle.dumps(str)``): framing and one string
_PICKLE_FRAMING = frozenset({"PROTO", "FRAME", "MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT", "STOP"})
_PICKLE_STRINGS = frozenset({"UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8", "STRING", "BINSTRING",
                             "SHORT_BINSTRING", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8"})


def pickled_string(blob: bytes) -> str:
    """The one string a pickle holds, read without unpickling: its opcodes are walked
    (`pickletools.genops`, which builds nothing) and anything but framing and a single
    string -- a global, a call, a container, a second value -- is a ValueError naming
    the opcode. LCB's private tests are ``pickle.dumps`` of a JSON string."""
    strings: list[str | bytes] = []
    try:
        for op, arg, pos in pickletools.genops(io.BytesIO(blob)):
            if op.name in _PICKLE_STRINGS:
                strings.append(arg)
            elif op.name not in _PICKLE_FRAMING:
                raise ValueError(f"a pickle of something other than a string (opcode {op.name} at byte {pos}): "
                                 "LCB's tests are a pickled JSON string")
    except (ValueError, EOFError, UnicodeDecodeError) as e:
        raise ValueError(str(e) if "opcode" in str(e) else f"not a readable pickle: {e}") from None
    if len(strings) != 1:
        raise ValueError(f"a pickle of {len(strings)} strings: LCB's tests are one pickled JSON string")
    value = strings[0]
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    return value


def decode_private_tests(value: Any, caps: DataCaps = DEFAULT_DATA_CAPS) -> list:
    """LCB's ``private_test_cases``: a list, a JSON string, or base64(zlib(pickle(JSON
    string))) -- decoded within `caps` (the decompressed size and ratio, the JSON's
    nesting) and without unpickling (`pickled_string`)."""
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise ValueError("private_test_cases must be a string or a list")
    if value.lstrip()[:1] in ("[", "{"):
        return _json_list(value, caps)
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=False)
    except (ValueError, binascii.Error) as e:
        raise ValueError(f"private_test_cases is neither JSON nor base64(zlib(pickle)): {e}") from None
    blob = inflate(raw, caps, "private_test_cases")   # DataError: over a cap, or not zlib
    return _json_list(pickled_string(blob), caps)


def _parse_datetime(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # a Unix time from year 1970 to 9999
        stamp = finite_number(value, "contest_date", 0, 253402300799)
        return datetime.fromtimestamp(stamp, tz=UTC).replace(tzinfo=None)
    if not isinstance(value, str):
        raise ValueError(f"contest_date: expected a date, not {type(value).__name__}")
    s = value.strip().replace("Z", "+00:00")
    try:
        return datetime.fromisoformat(s)
    except ValueError:
        return datetime.fromisoformat(s[:10])


def as_date(value: date | str | None, what: str) -> date | None:
    if value is None or isinstance(value, date):
        return value.date() if isinstance(value, datetime) else value
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ValueError(f"{what} must be YYYY-MM-DD, got {value!r}") from None


def keep_problem(release: date | None, diff: str, since: date | None, until: date | None,
          difficulty: set[str] | None) -> bool:
    if since is not None or until is not None:
        if release is None or (since is not None and release < since) or (until is not None and release > until):
            return False
    if difficulty is not None and diff.lower() not in difficulty:
        return False
    return True


def difficulties(difficulty: str | Iterable[str] | None) -> set[str] | None:
    if difficulty is None:
        return None
    if isinstance(difficulty, str):
        difficulty = difficulty.split(",")
    return {d.strip().lower() for d in difficulty if d.strip()}




def _hub_records(name: str) -> list[dict]:
    """Records of a hub dataset through `datasets` (optional dependency, not installed by codegym);
    a dataset's own loading script (a stranger's code) is never run (``trust_remote_code`` off)."""
    try:
        import datasets  # noqa: PLC0415 -- optional
    except ImportError:
        raise ImportError_(f"{name!r} is not a file or directory, and the `datasets` library (needed to read "
                           f"a Hugging Face hub dataset) is not installed; download the LCB JSONL files "
                           f"and pass their path instead") from None
    repo, _, version = name.partition(":")
    kwargs: dict[str, Any] = {"split": "test"}
    if version:
        kwargs["version_tag"] = version
    try:
        ds = datasets.load_dataset(repo, **kwargs)
    except Exception as e:  # noqa: BLE001 -- network / hub errors of any kind
        raise ImportError_(f"cannot load {name!r} from the hub: {type(e).__name__}: {e}") from None
    return [dict(r) for r in ds]


def lcb_records(path_or_dataset: str | os.PathLike,
                caps: DataCaps = DEFAULT_DATA_CAPS) -> tuple[list[tuple[str, dict]], list[tuple[str, str]]]:
    """(where, record) of every record of the LCB files (or hub dataset), and the lines
    that are not JSON objects (where, why); where is ``line 12`` (``file: line 12`` in a
    directory, ``row 12`` of a hub dataset)."""
    p = Path(path_or_dataset)
    if not p.exists():
        return [(f"row {i}", r) for i, r in enumerate(_hub_records(str(path_or_dataset)), 1)], []
    if not p.is_dir():
        src = read_source(p, caps=caps)
        return list(src.records), list(src.bad)
    # a directory: each data file read alone; one that cannot be (a FIFO, a bomb, not JSON)
    # is one line with its name, and the others are read
    try:
        files, bad = data_files(p, r"\.jsonl?(\.gz)?$", caps)
    except DataError as e:
        raise ImportError_(str(e)) from None
    records: list[tuple[str, dict]] = []
    for f in map(Path, files):
        try:
            src = read_source(f, caps=caps)
        except ImportError_ as e:
            bad.append((f.name, str(e).removeprefix(f"{f}: ")))
            continue
        records += [(f"{f.name}: {w}", r) for w, r in src.records]
        bad += [(f"{f.name}: {w}", why) for w, why in src.bad]
    if not files and not bad:
        raise ImportError_(f"{p}: no .jsonl, .json (optionally .gz) file in the folder")
    return records, bad


def load_lcb(path_or_dataset: str | os.PathLike, since: date | str | None = None, until: date | str | None = None,
             difficulty: str | Iterable[str] | None = None, platform: str | Iterable[str] | None = None,
             errors: list | None = None, records: list[tuple[str, dict]] | None = None,
             caps: DataCaps = DEFAULT_DATA_CAPS) -> list[LCBProblem]:
    """LiveCodeBench problems from files (``.jsonl``/``.json``, optionally gzipped, or a
    directory of them) or a hub dataset name (or the located `records` already read);
    filtered to ``since <= contest date <= until`` (inclusive; problems without a date
    are dropped when a bound is given), `difficulty` (names, case-insensitive, or a
    comma-separated string) and `platform`. Records that cannot be decoded raise, unless
    `errors` is a list (then ``(where, message)`` is appended and the record skipped)."""
    if records is None:
        records, bad = lcb_records(path_or_dataset, caps)
        if bad and errors is None:
            raise ImportError_(f"{path_or_dataset}: {bad[0][0]}: {bad[0][1]}")
        if errors is not None:
            errors.extend(bad)
    lo, hi = as_date(since, "since"), as_date(until, "until")
    diffs = difficulties(difficulty)
    plats = difficulties(platform)
    out = []
    for where, rec in records:
        at = record_at(where, rec, "question_id")
        try:
            prob = LCBProblem.from_record(rec, caps)
        except RECORD_ERRORS as e:
            msg = record_error(e)
            if errors is None:
                raise ImportError_(f"LCB {at}: {msg}") from None
            errors.append((at, msg))
            continue
        if not keep_problem(prob.release_date, prob.difficulty, lo, hi, diffs):
            continue
        if plats is not None and prob.platform.lower() not in plats:
            continue
        prob.where = at
        out.append(prob)
    return out


# --------------------------------------------------------------------------- tasks


def has_float(x: Any) -> bool:
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)):
        return any(has_float(v) for v in x)
    if isinstance(x, dict):
        return any(has_float(v) for v in x.values())
    return False


_FLOAT_TOKEN = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)$")


def _text_has_float(text: str) -> bool:
    return any(_FLOAT_TOKEN.match(tok) for tok in text.split())


def _functional_args(text: str, caps: DataCaps) -> list:
    return [loads(line, caps) for line in text.split("\n") if line.strip() != ""]


def lcb_task(prob: LCBProblem, *, suite: str = "lcb", time_s: float = LCB_TIME_S,
             memory_mb: int = LCB_MEMORY_MB, float_tol: float | None = None,
             caps: DataCaps = DEFAULT_DATA_CAPS) -> dict:
    """The task mapping of one LCB problem (raises ValueError when it cannot be one).

    Judged like LCB's harness (see the module docstring); `float_tol` (not LCB's rule)
    compares answers holding floats within that absolute/relative tolerance instead."""
    kind = prob.testtype
    if kind == "mixed":
        raise ValueError("mixes stdin and functional tests")
    public, private = prob.public_tests, prob.private_tests
    if not public and not private:
        raise ValueError("no tests")
    statement = prob.question_content.rstrip() + "\n"
    task: dict[str, Any] = {"id": f"{suite}/{task_name(prob.question_id)}",
                            "title": prob.question_title or prob.question_id}
    tolerance = {"type": "float", "abs_tol": float_tol, "rel_tol": float_tol} if float_tol is not None else None
    if kind == "functional":
        fn = prob.func_name
        if not fn:
            raise ValueError("functional tests but no metadata.func_name")

        def case(t: LCBTest, name: str) -> dict:
            args = _functional_args(t.input, caps)
            expected = loads(t.output, caps)
            if not (is_plain_value(args) and is_plain_value(expected)):
                raise ValueError(f"test {name}: values JSON cannot carry")
            return {"name": name, "args": args, "expected": expected}

        pub = [case(t, f"public-{i}") for i, t in enumerate(public)]
        hid = pub + [case(t, f"private-{i}") for i, t in enumerate(private)]
        floats = any(has_float(c["expected"]) for c in hid)
        statement += (f"\nImplement the method `{fn}` of `class Solution` in `main.py` (the starter "
                      f"code below); it is called with the arguments of each test and must return the "
                      f"answer.\n\n```python\n{prob.starter_code.rstrip()}\n```\n")
        task.update({"statement": statement, "kind": "function", "language": "python",
                     "entry_point": f"Solution.{fn}", "preamble": LCB_PREAMBLE,
                     "starter": {"main.py": prob.starter_code}})
        task["tests"] = {"public": pub, "hidden": hid}
        # LCB: `prediction == expected` after a returned tuple becomes a list
        task["checker"] = (dict(tolerance, seq_lenient="top") if tolerance and floats
                           else {"type": "exact", "seq_lenient": "top"})
    else:
        def case(t: LCBTest, name: str) -> dict:
            return {"name": name, "stdin": t.input, "expected": t.output}

        pub = [case(t, f"public-{i}") for i, t in enumerate(public)]
        hid = pub + [case(t, f"private-{i}") for i, t in enumerate(private)]
        floats = any(_text_has_float(c["expected"]) for c in hid)
        statement += "\nRead the input from standard input and write the answer to standard output.\n"
        task.update({"statement": statement, "kind": "stdio", "language": "python", "preamble": LCB_PREAMBLE,
                     "starter": {"main.py": ""}})
        task["tests"] = {"public": pub, "hidden": hid}
        task["checker"] = tolerance if tolerance and floats else "decimal_lines"
    task["limits"] = {"time_s": time_s, "memory_mb": memory_mb}
    task["metadata"] = _metadata(prob, kind, len(public), len(private),
                                 f"float tolerance {float_tol:g} (LCB: exact)" if tolerance and floats else
                                 ("== (a returned tuple as a list)" if kind == "functional" else
                                  "stripped lines, equal or equal as decimals"))
    return task


def _metadata(prob: LCBProblem, kind: str, n_public: int, n_private: int, comparison: str) -> dict:
    meta: dict[str, Any] = {"source": "livecodebench", "licence": _LICENCE,
                            "difficulty": prob.difficulty.lower() or None,
                            "tags": [t for t in ("lcb", prob.platform.lower(), kind) if t]}
    if prob.release_date:
        meta["release_date"] = prob.release_date.isoformat()
    extra = {"source_id": prob.question_id, "platform": prob.platform, "contest_id": prob.contest_id,
             "testtype": kind, "public_tests": n_public, "private_tests": n_private, "comparison": comparison,
             "harness": "LiveCodeBench lcb_runner: import_string + program, 6 s per test"}
    if prob.contest_date:
        extra["contest_date"] = prob.contest_date.isoformat()
    if prob.func_name:
        extra["func_name"] = prob.func_name
    meta["extra"] = extra
    return {k: v for k, v in meta.items() if v is not None}


def import_lcb(path_or_dataset: str | os.PathLike, out_dir: str | os.PathLike, *, since: date | str | None = None,
               until: date | str | None = None, difficulty: str | Iterable[str] | None = None,
               platform: str | Iterable[str] | None = None, suite_name: str = "lcb", time_s: float = LCB_TIME_S,
               memory_mb: int = LCB_MEMORY_MB, limit: int | None = None, validate: bool = True,
               float_tol: float | None = None, verify: bool = True, sandbox: Sandbox | None = None,
               caps: DataCaps = DEFAULT_DATA_CAPS) -> ImportReport:
    """Import LiveCodeBench problems (see `load_lcb` for the sources and filters) into the
    suite folder `out_dir`; one task per problem (`lcb_task`). LCB's few-shot example
    files become tasks whose reference is the example's answer (judged with `verify`);
    a LeetCode-contest file is an `ImportError_` naming its importer. `caps`: what the
    files and their compressed fields may cost (`codegym.core.jsonl.DataCaps`)."""
    t0 = time.monotonic()
    report = ImportReport(source=str(path_or_dataset), out_dir=str(out_dir))
    records, bad = lcb_records(path_or_dataset, caps)
    for where, why in bad:
        report.skip(where, why)
    det = detect_records([r for _, r in records], str(path_or_dataset))
    if det.name == "lcb-fewshot":
        tasks = fewshot_tasks(records, report, suite=suite_name, time_s=time_s, memory_mb=memory_mb,
                              preamble=LCB_PREAMBLE)[:limit]
        return write_import(report, out_dir, tasks, t0, name=suite_name, validate=validate, verify=verify,
                            sandbox=sandbox, description="LiveCodeBench's few-shot examples (tests: the "
                                                         "statements' examples; reference: the answers)")
    if det.name not in (None, "lcb") and not any("question_id" in r for _, r in records):
        raise ImportError_(f"{det.message} -- not LiveCodeBench's schema (no record has question_id)")
    errors: list = []
    problems = load_lcb(path_or_dataset, since=since, until=until, difficulty=difficulty, platform=platform,
                        errors=errors, records=records, caps=caps)
    for where, why in errors:
        report.skip(where, why)
    if limit is not None:
        problems = problems[:limit]
    tasks = []
    for prob in problems:
        try:
            t = lcb_task(prob, suite=suite_name, time_s=time_s, memory_mb=memory_mb, float_tol=float_tol,
                         caps=caps)
        except RECORD_ERRORS as e:
            report.skip(prob.where or prob.question_id, record_error(e))
            continue
        tasks.append(t)
        report.count(t["kind"])
        report.count("cases", len(t["tests"]["hidden"]))
    window = ", ".join(x for x in (f"since {since}" if since else "", f"until {until}" if until else "",
                                   f"difficulty {difficulty}" if difficulty else "") if x)
    return write_import(report, out_dir, tasks, t0, name=suite_name, validate=validate,
                        description="LiveCodeBench problems" + (f" ({window})" if window else ""))
