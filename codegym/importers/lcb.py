"""LiveCodeBench importer (``codegym import lcb``), its loader, and the LeetCode-contest importer.

`load_lcb(path_or_dataset, since=, until=, difficulty=)` reads LCB's own schema from
``.jsonl``/``.json`` files (optionally gzipped), a directory of them, or a hub dataset
(with ``datasets``) into `LCBProblem` records; the pickled private tests are read by an
unpickler that refuses every global. `lcb_task` / `import_lcb` make one task per
problem (``lcb/<question_id>``): functional tests -> ``kind: function`` calling
``Solution.<func_name>``, stdin tests -> ``kind: stdio``; ``hidden`` is public +
private; ``metadata.release_date`` allows contamination windows.
`import_leetcode_contest`: the DeepSeek-Coder LeetCode contest set as function tasks.
Float answers are compared with a tolerance (LCB: exact); docs/eval.md has the details.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import os
import pickle
import re
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from codegym.importers.common import ImportError_, ImportReport, read_records, task_name, write_import
from codegym.importers.values import is_plain_value
from codegym.judge.protocol import parse_python

__all__ = ["LCBTest", "LCBProblem", "load_lcb", "decode_private_tests", "lcb_task", "import_lcb",
           "import_leetcode_contest", "leetcode_contest_task", "LCB_PRELUDE", "FLOAT_CHECKER"]

#: the imports LiveCodeBench's runner prepends to every program (lcb_runner testing_util)
LCB_PRELUDE = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\nfrom operator import *\n"
    "from io import *\nfrom sys import *\nfrom json import *\nfrom builtins import *\nfrom typing import *\n"
    "import string\nimport re\nimport datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
    "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)
#: checker of tasks whose expected outputs hold floats
FLOAT_CHECKER = {"type": "float", "abs_tol": 1e-6, "rel_tol": 1e-6}
#: LCB runner's default per-test timeout (seconds)
LCB_TIME_S = 6.0
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
    def from_record(cls, rec: dict) -> LCBProblem:
        def tests(value: Any, private: bool) -> list[LCBTest]:
            raw = decode_private_tests(value) if private else _json_list(value)
            out = []
            for t in raw:
                if not isinstance(t, dict) or "input" not in t or "output" not in t:
                    raise ValueError("a test case needs input and output")
                out.append(LCBTest(str(t["input"]), str(t["output"]), str(t.get("testtype") or "stdin")))
            return out

        meta = rec.get("metadata") or {}
        if isinstance(meta, str):
            meta = json.loads(meta) if meta.strip() else {}
        return cls(question_id=str(rec["question_id"]), question_title=str(rec.get("question_title") or ""),
                   question_content=str(rec.get("question_content") or ""), platform=str(rec.get("platform") or ""),
                   contest_id=str(rec.get("contest_id") or ""), contest_date=_parse_datetime(rec.get("contest_date")),
                   starter_code=str(rec.get("starter_code") or ""), difficulty=str(rec.get("difficulty") or ""),
                   public_tests=tests(rec.get("public_test_cases") or "[]", False),
                   private_tests=tests(rec.get("private_test_cases") or "[]", True),
                   metadata=meta if isinstance(meta, dict) else {})


def _json_list(value: Any) -> list:
    if isinstance(value, list):
        return value
    data = json.loads(value)
    if not isinstance(data, list):
        raise ValueError("expected a JSON list of test cases")
    return data


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles plain data only: any global (class, function) is refused, so a pickle
    cannot construct objects or call anything."""

    def find_class(self, module: str, name: str):  # noqa: D401
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}: LCB test data is a pickled string")


def decode_private_tests(value: Any) -> list:
    """LCB's ``private_test_cases``: a list, a JSON string, or base64(zlib(pickle(JSON
    string))) -- decoded without ever running code from the pickle."""
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise ValueError("private_test_cases must be a string or a list")
    try:
        return _json_list(value)
    except ValueError:
        pass
    try:
        blob = zlib.decompress(base64.b64decode(value.encode("ascii"), validate=False))
        obj = _PlainUnpickler(io.BytesIO(blob)).load()
    except (ValueError, zlib.error, pickle.UnpicklingError, EOFError) as e:
        raise ValueError(f"private_test_cases is neither JSON nor base64(zlib(pickle)): {e}") from None
    if isinstance(obj, (bytes, bytearray)):
        obj = obj.decode("utf-8")
    return _json_list(obj)


def _parse_datetime(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=UTC).replace(tzinfo=None)
    s = str(value).strip().replace("Z", "+00:00")
    try:
        return datetime.fromisoformat(s)
    except ValueError:
        return datetime.fromisoformat(s[:10])


def _as_date(value: date | str | None, what: str) -> date | None:
    if value is None or isinstance(value, date):
        return value.date() if isinstance(value, datetime) else value
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ValueError(f"{what} must be YYYY-MM-DD, got {value!r}") from None


def _keep(release: date | None, diff: str, since: date | None, until: date | None,
          difficulty: set[str] | None) -> bool:
    if since is not None or until is not None:
        if release is None or (since is not None and release < since) or (until is not None and release > until):
            return False
    if difficulty is not None and diff.lower() not in difficulty:
        return False
    return True


def _difficulties(difficulty: str | Iterable[str] | None) -> set[str] | None:
    if difficulty is None:
        return None
    if isinstance(difficulty, str):
        difficulty = difficulty.split(",")
    return {d.strip().lower() for d in difficulty if d.strip()}


def _lcb_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.is_file() and
                      re.search(r"\.jsonl?(\.gz)?$", p.name))
    return [path]


def _hub_records(name: str) -> list[dict]:
    """Records of a hub dataset through `datasets` (optional dependency, not installed by codegym)."""
    try:
        import datasets  # noqa: PLC0415 -- optional
    except ImportError:
        raise ImportError_(f"{name!r} is not a file or directory, and the `datasets` library (needed to read "
                           f"a Hugging Face hub dataset) is not installed; download the LCB JSONL files "
                           f"and pass their path instead") from None
    repo, _, version = name.partition(":")
    kwargs: dict[str, Any] = {"split": "test", "trust_remote_code": True}
    if version:
        kwargs["version_tag"] = version
    try:
        ds = datasets.load_dataset(repo, **kwargs)
    except Exception as e:  # noqa: BLE001 -- network / hub errors of any kind
        raise ImportError_(f"cannot load {name!r} from the hub: {type(e).__name__}: {e}") from None
    return [dict(r) for r in ds]


def load_lcb(path_or_dataset: str | os.PathLike, since: date | str | None = None, until: date | str | None = None,
             difficulty: str | Iterable[str] | None = None, platform: str | Iterable[str] | None = None,
             errors: list | None = None) -> list[LCBProblem]:
    """LiveCodeBench problems from files (``.jsonl``/``.json``, optionally gzipped, or a
    directory of them) or a hub dataset name; filtered to ``since <= contest date <=
    until`` (inclusive; problems without a date are dropped when a bound is given),
    `difficulty` (names, case-insensitive, or a comma-separated string) and `platform`.
    Records that cannot be decoded raise, unless `errors` is a list (then
    ``(question_id, message)`` is appended and the record skipped)."""
    p = Path(path_or_dataset)
    if p.exists():
        records = [r for f in _lcb_files(p) for r in read_records(f)]
    else:
        records = _hub_records(str(path_or_dataset))
    lo, hi = _as_date(since, "since"), _as_date(until, "until")
    diffs = _difficulties(difficulty)
    plats = _difficulties(platform)
    out = []
    for rec in records:
        qid = str(rec.get("question_id", "?"))
        try:
            prob = LCBProblem.from_record(rec)
        except (KeyError, ValueError, TypeError) as e:
            if errors is None:
                raise ImportError_(f"LCB record {qid}: {type(e).__name__}: {e}") from None
            errors.append((qid, f"{type(e).__name__}: {e}"))
            continue
        if not _keep(prob.release_date, prob.difficulty, lo, hi, diffs):
            continue
        if plats is not None and prob.platform.lower() not in plats:
            continue
        out.append(prob)
    return out


# --------------------------------------------------------------------------- tasks


def _has_float(x: Any) -> bool:
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_float(v) for v in x)
    if isinstance(x, dict):
        return any(_has_float(v) for v in x.values())
    return False


_FLOAT_TOKEN = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)$")


def _text_has_float(text: str) -> bool:
    return any(_FLOAT_TOKEN.match(tok) for tok in text.split())


def _functional_args(text: str) -> list:
    return [json.loads(line) for line in text.split("\n") if line.strip() != ""]


def lcb_task(prob: LCBProblem, *, suite: str = "lcb", time_s: float = LCB_TIME_S, memory_mb: int = 1024) -> dict:
    """The task mapping of one LCB problem (raises ValueError when it cannot be one)."""
    kind = prob.testtype
    if kind == "mixed":
        raise ValueError("mixes stdin and functional tests")
    public, private = prob.public_tests, prob.private_tests
    if not public and not private:
        raise ValueError("no tests")
    statement = prob.question_content.rstrip() + "\n"
    task: dict[str, Any] = {"id": f"{suite}/{task_name(prob.question_id)}",
                            "title": prob.question_title or prob.question_id}
    if kind == "functional":
        fn = prob.func_name
        if not fn:
            raise ValueError("functional tests but no metadata.func_name")

        def case(t: LCBTest, name: str) -> dict:
            args = _functional_args(t.input)
            expected = json.loads(t.output)
            if not (is_plain_value(args) and is_plain_value(expected)):
                raise ValueError(f"test {name}: values JSON cannot carry")
            return {"name": name, "args": args, "expected": expected}

        pub = [case(t, f"public-{i}") for i, t in enumerate(public)]
        hid = pub + [case(t, f"private-{i}") for i, t in enumerate(private)]
        floats = any(_has_float(c["expected"]) for c in hid)
        statement += (f"\nImplement the method `{fn}` of `class Solution` in `main.py` (the starter "
                      f"code below); it is called with the arguments of each test and must return the "
                      f"answer.\n\n```python\n{prob.starter_code.rstrip()}\n```\n")
        task.update({"statement": statement, "kind": "function", "language": "python",
                     "entry_point": f"Solution.{fn}",
                     "starter": {"main.py": LCB_PRELUDE + "\n" + prob.starter_code}})
        task["tests"] = {"public": pub, "hidden": hid}
        task["checker"] = dict(FLOAT_CHECKER) if floats else "exact"
    else:
        def case(t: LCBTest, name: str) -> dict:
            return {"name": name, "stdin": t.input, "expected": t.output}

        pub = [case(t, f"public-{i}") for i, t in enumerate(public)]
        hid = pub + [case(t, f"private-{i}") for i, t in enumerate(private)]
        floats = any(_text_has_float(c["expected"]) for c in hid)
        statement += "\nRead the input from standard input and write the answer to standard output.\n"
        task.update({"statement": statement, "kind": "stdio", "language": "python",
                     "starter": {"main.py": LCB_PRELUDE}})
        task["tests"] = {"public": pub, "hidden": hid}
        task["checker"] = dict(FLOAT_CHECKER) if floats else "tokens"
    task["limits"] = {"time_s": time_s, "memory_mb": memory_mb}
    meta: dict[str, Any] = {"source": "livecodebench", "licence": _LICENCE,
                            "difficulty": prob.difficulty.lower() or None,
                            "tags": [t for t in ("lcb", prob.platform.lower(), kind) if t]}
    if prob.release_date:
        meta["release_date"] = prob.release_date.isoformat()
    extra = {"source_id": prob.question_id, "platform": prob.platform, "contest_id": prob.contest_id,
             "testtype": kind, "public_tests": len(public), "private_tests": len(private),
             "comparison": ("float tolerance 1e-6 (LCB: exact)" if floats else "exact")}
    if prob.contest_date:
        extra["contest_date"] = prob.contest_date.isoformat()
    if prob.func_name:
        extra["func_name"] = prob.func_name
    meta["extra"] = extra
    task["metadata"] = {k: v for k, v in meta.items() if v is not None}
    return task


def import_lcb(path_or_dataset: str | os.PathLike, out_dir: str | os.PathLike, *, since: date | str | None = None,
               until: date | str | None = None, difficulty: str | Iterable[str] | None = None,
               platform: str | Iterable[str] | None = None, suite_name: str = "lcb", time_s: float = LCB_TIME_S,
               memory_mb: int = 1024, limit: int | None = None, validate: bool = True) -> ImportReport:
    """Import LiveCodeBench problems (see `load_lcb` for the sources and filters) into the
    suite folder `out_dir`; one task per problem (`lcb_task`)."""
    t0 = time.monotonic()
    report = ImportReport(source=str(path_or_dataset), out_dir=str(out_dir))
    errors: list = []
    problems = load_lcb(path_or_dataset, since=since, until=until, difficulty=difficulty, platform=platform,
                        errors=errors)
    report.skipped.extend(errors)
    if limit is not None:
        problems = problems[:limit]
    tasks = []
    for prob in problems:
        try:
            t = lcb_task(prob, suite=suite_name, time_s=time_s, memory_mb=memory_mb)
        except (ValueError, TypeError) as e:
            report.skipped.append((prob.question_id, str(e)))
            continue
        tasks.append(t)
        report.count(t["kind"])
        report.count("cases", len(t["tests"]["hidden"]))
    window = ", ".join(x for x in (f"since {since}" if since else "", f"until {until}" if until else "",
                                   f"difficulty {difficulty}" if difficulty else "") if x)
    return write_import(report, out_dir, tasks, t0, name=suite_name, validate=validate, clean=False,
                        description="LiveCodeBench problems" + (f" ({window})" if window else ""))


# --------------------------------------------------------------------------- LeetCode contest (DeepSeek)


def _leetcode_cases(test_code: str) -> tuple[str, list[tuple[dict, Any]]]:
    """(method name, [(kwargs, expected)]) of a DeepSeek LeetCode ``test`` block; ValueError
    when a statement is not ``my_solution = Solution()``, ``test_input = {literal}`` or
    ``assert my_solution.<m>(**test_input) == <literal>``."""
    tree = parse_python(test_code)
    method = None
    current: dict | None = None
    cases: list[tuple[dict, Any]] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            if target == "my_solution":
                continue
            if target == "test_input":
                try:
                    current = ast.literal_eval(node.value)
                except ValueError:
                    raise ValueError(f"line {node.lineno}: test input is not a literal "
                                     f"({ast.unparse(node.value)[:60]})") from None
                if not isinstance(current, dict):
                    raise ValueError(f"line {node.lineno}: test_input is not a mapping")
                continue
            raise ValueError(f"line {node.lineno}: unsupported statement {ast.unparse(node)[:60]}")
        if isinstance(node, ast.Assert):
            t = node.test
            ok = (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)
                  and isinstance(t.left, ast.Call) and isinstance(t.left.func, ast.Attribute)
                  and isinstance(t.left.func.value, ast.Name) and t.left.func.value.id == "my_solution"
                  and not t.left.args and len(t.left.keywords) == 1 and t.left.keywords[0].arg is None)
            if not ok or current is None:
                raise ValueError(f"line {node.lineno}: unsupported assertion {ast.unparse(node)[:60]}")
            m = t.left.func.attr
            if method not in (None, m):
                raise ValueError(f"line {node.lineno}: several methods tested ({method}, {m})")
            method = m
            try:
                expected = ast.literal_eval(t.comparators[0])
            except ValueError:
                raise ValueError(f"line {node.lineno}: expected value is not a literal") from None
            cases.append((current, expected))
            continue
        raise ValueError(f"line {getattr(node, 'lineno', '?')}: unsupported statement {ast.unparse(node)[:60]}")
    if method is None or not cases:
        raise ValueError("no assertions")
    return method, cases


def leetcode_contest_task(rec: dict, *, suite: str = "leetcode-contest", time_s: float = LCB_TIME_S,
                          memory_mb: int = 1024) -> dict:
    """The function task of one DeepSeek LeetCode contest record (ValueError when its tests
    are not plain literals)."""
    method, raw = _leetcode_cases(rec["test"])
    prompt = rec.get("prompt") or ""
    # the prompt is a docstring (the statement) followed by the `class Solution` starter
    m = re.search(r'^"""\n?(.*?)\n?"""\s*\n(.*)$', prompt, re.S)
    text, starter = (m.group(1), m.group(2)) if m else (rec.get("prompt_sft") or prompt, "")
    if "class Solution" not in starter:
        raise ValueError("the prompt has no `class Solution` starter")
    cases = []
    for i, (kwargs, expected) in enumerate(raw):
        if not (is_plain_value(kwargs) and is_plain_value(expected)):
            raise ValueError(f"test {i}: values JSON cannot carry")
        cases.append({"name": f"test-{i}", "kwargs": kwargs, "expected": expected})
    # the statement's examples are the first tests (one per "Example N:")
    n_examples = max(1, min(len(cases), len(re.findall(r"^Example \d+:", text, re.M))))
    floats = any(_has_float(c["expected"]) for c in cases)
    meta_src = rec.get("meta") or {}
    start = rec.get("start_time")
    release = datetime.fromtimestamp(start, tz=UTC).date().isoformat() if isinstance(start, (int, float)) \
        else None
    sid = str(rec.get("task_id") or meta_src.get("titleSlug") or "?")
    difficulty = str(meta_src.get("difficulty") or "").lower() or None
    statement = (text.strip() + f"\n\nImplement the method `{method}` of `class Solution` in `main.py` (the "
                 f"starter code below); it is called with each test's arguments by name.\n\n```python\n"
                 f"{starter.rstrip()}\n```\n")
    metadata: dict[str, Any] = {
        "source": "leetcode-contest", "licence": "MIT (DeepSeek-Coder evaluation data); statements: LeetCode",
        "url": rec.get("url"), "tags": ["leetcode", "functional"],
        "extra": {"source_id": sid, "question_id": meta_src.get("questionFrontendId") or meta_src.get("questionId"),
                  "method": method, "comparison": "float tolerance 1e-6 (source: ==)" if floats else "exact"}}
    if difficulty:
        metadata["difficulty"] = difficulty
    if release:
        metadata["release_date"] = release
    return {
        "id": f"{suite}/{task_name(sid)}",
        "title": str(meta_src.get("title") or rec.get("title") or sid),
        "statement": statement,
        "kind": "function",
        "language": "python",
        "entry_point": f"Solution.{method}",
        "starter": {"main.py": LCB_PRELUDE + "\n" + starter},
        "tests": {"public": cases[:n_examples], "hidden": cases},
        "checker": dict(FLOAT_CHECKER) if floats else "exact",
        "limits": {"time_s": time_s, "memory_mb": memory_mb},
        "metadata": {k: v for k, v in metadata.items() if v is not None},
    }


def import_leetcode_contest(path: str | os.PathLike, out_dir: str | os.PathLike, *,
                            since: date | str | None = None, until: date | str | None = None,
                            difficulty: str | Iterable[str] | None = None, suite_name: str = "leetcode-contest",
                            time_s: float = LCB_TIME_S, memory_mb: int = 1024, limit: int | None = None,
                            validate: bool = True) -> ImportReport:
    """Import the DeepSeek-Coder LeetCode contest file (LCB-style functional tasks) into `out_dir`."""
    t0 = time.monotonic()
    report = ImportReport(source=str(path), out_dir=str(out_dir))
    lo, hi = _as_date(since, "since"), _as_date(until, "until")
    diffs = _difficulties(difficulty)
    tasks = []
    for rec in read_records(path):
        sid = str(rec.get("task_id", "?"))
        try:
            t = leetcode_contest_task(rec, suite=suite_name, time_s=time_s, memory_mb=memory_mb)
        except (KeyError, ValueError, SyntaxError) as e:
            report.skipped.append((sid, str(e)))
            continue
        rd = t["metadata"].get("release_date")
        if not _keep(date.fromisoformat(rd) if rd else None, t["metadata"].get("difficulty") or "", lo, hi, diffs):
            continue
        tasks.append(t)
        report.count("cases", len(t["tests"]["hidden"]))
        if limit is not None and len(tasks) >= limit:
            break
    report.count("function", len(tasks))
    return write_import(report, out_dir, tasks, t0, name=suite_name, validate=validate,
                        description="LeetCode weekly/biweekly contest problems (DeepSeek-Coder evaluation set), "
                                    "functional tests")
