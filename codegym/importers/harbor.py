"""Harbor task folders, both ways: `export_harbor` (codegym tasks out) and `import_harbor` (in).

A Harbor task is a folder: ``task.toml``, ``instruction.md``, ``environment/Dockerfile``
(+ its build context), ``solution/solve.sh`` and ``tests/test.sh``, which writes the
reward to ``/logs/verifier/reward.txt`` or ``reward.json``.

Export (``codegym export harbor SUITE|TASK --out DIR``) writes one folder per stdio,
function or script task: the statement and the files as the instruction, a Dockerfile
``FROM`` codegym's local image of the task's language (``codegym/python:3.11``,
``codegym/polyglot``: no registry pull) with the starter in ``/app``, a ``solve.sh`` that
writes the reference, and a ``test.sh`` that runs codegym's own judge (its stdlib-only
modules copied into ``tests/``: `codegym.importers.harbor_vendor`, entry
`codegym.importers.harbor_verifier`) on the task's materialised hidden cases.

Import (``codegym import harbor DIR --out SUITE``) reads Harbor folders into codegym
``repo`` tasks: the environment image is built (base images must be local), the agent's
working directory is read out of it as the task's repository, and grading runs the
task's own ``tests/test.sh`` in that environment through the docker sandbox, reading
its reward file (`codegym.importers.harbor_env`). Files read from a folder stay inside
it. docs/harbor.md has the details.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.core.paths import staged_folder
from codegym.core.version import __version__
from codegym.importers.harbor_read import WORKDIR_DEFAULT, HarborError
from codegym.importers.harbor_vendor import PACKAGE_ROOT, vendor_judge
from codegym.judge.protocol import encode_value
from codegym.judge.testgen import materialize
from codegym.sandbox.images import DEFAULT_IMAGES
from codegym.tasks.load import load_task
from codegym.tasks.suite import load_suite

EXPORT_KINDS = ("stdio", "function", "script")
#: the task.toml schema version written (Harbor 0.26's current one)
SCHEMA_VERSION = "1.4"
VERIFIER_FILE = "codegym_verify.py"
TASK_JSON = "codegym_task.json"


@dataclass
class ExportResult:
    exported: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (task id, reason)


# =========================================================================== export


def harbor_name(task_id: str) -> str:
    """Folder and package name of a task: ``examples/run-length`` -> ``examples-run-length``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", task_id.replace("/", "-")).strip("-.") or "task"


def tasks_of(target: str) -> list[Any]:
    """The tasks a CLI argument names: a task YAML, a suite (name or folder), or a task id
    (``perfcode/py-sum-numbers``: the suite ``perfcode``'s task, even where a data folder of
    that name exists). ValueError when it names none."""
    p = Path(target)
    if p.is_file():
        return [load_task(p)]
    first: Exception | None = None
    try:
        tasks = list(load_suite(target))
        if tasks:
            return tasks
    except (KeyError, FileNotFoundError, ValueError) as e:
        first = e
    suite, _, _ = target.partition("/")
    if suite and suite != target:
        try:
            return [load_suite(suite).get(target)]
        except (KeyError, FileNotFoundError, ValueError) as e:
            first = first or e
    raise ValueError(f"{target!r} names no task file, suite or task id" + (f" ({first})" if first else ""))


def is_speed_task(task: Any) -> bool:
    """Whether the task's env rewards speed: it has perf tests (PerfCode, DMC-Optim: the
    candidate is timed against the baseline on them)."""
    return bool(task.cases("perf"))


SPEED_REFUSED = ("a speed task ({n} perf tests: its env rewards running time against the baseline), and the "
                 "exported verifier checks correctness only, so an unchanged starter would earn the reference's "
                 "reward: not exported (--correctness-only exports it as a correctness task, said so in "
                 "its instruction)")


def _why_not(task: Any, correctness_only: bool = False) -> str | None:
    if task.kind not in EXPORT_KINDS:
        return f"{task.kind} tasks are not exported (kinds exported: {', '.join(EXPORT_KINDS)})"
    if task.language not in DEFAULT_IMAGES:
        return f"no local codegym image runs {task.language} (images: {DEFAULT_IMAGES})"
    specs = [task.checker] + [c.checker for c in task.cases("hidden") if c.checker]
    if any(getattr(s, "type", None) == "program" for s in specs):
        return "special-judge (program) checkers are not exported"
    ref = task.reference_name or ("reference" if "reference" in task.solutions else None)
    if ref is None:
        return "the task has no reference solution (solve.sh would have nothing to write)"
    if is_speed_task(task) and not correctness_only:
        return SPEED_REFUSED.format(n=len(task.cases("perf")))
    return None


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def task_toml(task: Any, n_cases: int) -> str:
    """``task.toml`` of an exported task (Harbor schema `SCHEMA_VERSION`)."""
    lim = task.limits
    per_case = lim.wall() + 1.0
    verifier_s = float(min(3600, max(120, round(60 + 2 * per_case * n_cases))))
    memory_mb = int(max(2048, 2 * lim.memory_mb))
    meta = {"codegym_id": task.id, "codegym_version": __version__, "codegym_content_hash": task.content_hash,
            "kind": task.kind, "language": task.language, "difficulty": task.metadata.difficulty or "",
            "source": task.metadata.source or "", "tags": list(task.metadata.tags),
            "hidden_tests": n_cases}
    sections = {
        "task": {"name": f"codegym/{harbor_name(task.id)}", "description": task.title or task.id,
                 "keywords": sorted({task.kind, task.language, *task.metadata.tags})},
        "metadata": meta,
        "verifier": {"timeout_sec": verifier_s},
        "agent": {"timeout_sec": 1800.0},
        "environment": {"build_timeout_sec": 600.0, "cpus": 1, "memory_mb": memory_mb, "storage_mb": 4096,
                        "network_mode": "no-network", "workdir": WORKDIR_DEFAULT},
    }
    out = [f'schema_version = "{SCHEMA_VERSION}"', ""]
    for name, body in sections.items():
        out.append(f"[{name}]")
        out += [f"{k} = {_toml_value(v)}" for k, v in body.items() if v is not None]
        out.append("")
    return "\n".join(out)


def instruction(task: Any, files: dict[str, str]) -> str:
    """``instruction.md``: the statement, the files in ``/app`` and how the work is judged."""
    main = task.main_file_for(task.language)
    how = {"stdio": f"`{main}` is run as a program: it reads the test's input on stdin and its stdout is "
                    "compared with the expected output.",
           "function": f"`{task.entry_point}` in `{main}` is called with each test's arguments and its return "
                       "value compared with the expected one.",
           "script": f"Test code that calls your code in `{main}` is run after it; a test passes when it "
                     "finishes without an error."}[task.kind]
    listing = "\n".join(f"- `/app/{p}`" for p in sorted(files)) or "- (empty: create the files)"
    lim = task.limits
    return (f"{task.statement.rstrip()}\n\n## Your files\n\nWork in `/app` ({task.language}):\n{listing}\n\n"
            f"## How it is judged\n\n{how} Limits per test: {lim.time_s:g} s of CPU time, {lim.memory_mb} MiB "
            "of memory. Your work is accepted when every hidden test passes.\n")


def _heredoc(path: str, text: str) -> str:
    tag = "CODEGYM_EOF"
    while tag in text:
        tag += "_X"
    body = text if text.endswith("\n") else text + "\n"
    trim = "" if text.endswith("\n") else f"\nprintf %s \"$(cat {path})\" > {path}"
    return f"mkdir -p \"$(dirname {path})\"\ncat > {path} <<'{tag}'\n{body}{tag}{trim}\n"


def solve_sh(files: dict[str, str]) -> str:
    """``solution/solve.sh``: writes the reference solution's files into ``/app``."""
    parts = ["#!/bin/bash", "# the task's reference solution, written by codegym's Harbor exporter",
             "set -euo pipefail", "cd /app"]
    parts += [_heredoc(p, c) for p, c in sorted(files.items())]
    return "\n".join(parts) + "\n"


TEST_SH = """#!/bin/bash
# Judges /app with codegym's own judge (its stdlib-only modules are in /tests/codegym) on the
# task's hidden tests (/tests/codegym_task.json); writes /logs/verifier/reward.json and
# reward.txt (1 = accepted), judge.json (the full report) and ctrf.json (per test).
mkdir -p /logs/verifier
exec python3 -E -s /tests/codegym_verify.py --task /tests/codegym_task.json --workdir /app --out /logs/verifier
"""


def _case_json(c: Any) -> dict[str, Any]:
    d = dataclasses.asdict(c)
    for k in ("expected", "args", "kwargs"):
        if d.get(k) is not None:
            d[k] = encode_value(getattr(c, k) if k != "args" else list(getattr(c, k)))
    if c.checker is not None:
        d["checker"] = c.checker.model_dump(mode="json") if hasattr(c.checker, "model_dump") else c.checker
    for k in ("command", "tests"):
        if d.get(k) is not None:
            d[k] = list(d[k])
    return d


def export_task(task: Any, out: Path, sandbox: Any = None, correctness_only: bool = False) -> Path:
    """Write one Harbor folder for `task` under `out` (into a staging folder first, moved
    into place when complete); returns it (HarborError if the task cannot be exported)."""
    why = _why_not(task, correctness_only)
    if why:
        raise HarborError(f"{task.id}: {why}")
    cases = materialize(task, "hidden", sandbox)
    final = Path(out) / harbor_name(task.id)
    with staged_folder(final) as stage:
        _write_folder(task, cases, stage, correctness_only)
    return final


def _write_folder(task: Any, cases: list, folder: Path, correctness_only: bool) -> None:
    env, tests, sol = folder / "environment", folder / "tests", folder / "solution"
    for d in (env / "app", tests, sol):
        d.mkdir(parents=True, exist_ok=True)
    starter = task.starter_files()
    for rel, text in starter.items():
        (env / "app" / rel).parent.mkdir(parents=True, exist_ok=True)
        (env / "app" / rel).write_text(text, encoding="utf-8")
    (folder / "task.toml").write_text(task_toml(task, len(cases)), encoding="utf-8")
    text = instruction(task, starter)
    if correctness_only and is_speed_task(task):
        text += ("\n## Note\n\nThis Harbor export checks correctness only. The codegym task it comes from "
                 f"({task.id}) also rewards speed against the starter on its perf tests; that is not measured here.\n")
    (folder / "instruction.md").write_text(text, encoding="utf-8")
    (env / "Dockerfile").write_text(
        f"# codegym task {task.id}: codegym's local image for {task.language} (no registry pull)\n"
        f"FROM {DEFAULT_IMAGES[task.language]}\nWORKDIR /app\nCOPY app/ /app/\n", encoding="utf-8")
    ref = task.reference_name or "reference"
    (sol / "solve.sh").write_text(solve_sh(dict(task.solution(ref).files)), encoding="utf-8")
    spec = {"id": task.id, "kind": task.kind, "language": task.language, "main_file": task.main_file_for(task.language),
            "entry_point": task.entry_point, "limits": task.limits.to_dict(),
            "checker": task.checker.model_dump(mode="json"), "preamble": getattr(task, "preamble", None),
            "content_hash": task.content_hash, "codegym_version": __version__,
            "cases": [_case_json(c) for c in cases]}
    (tests / TASK_JSON).write_text(json.dumps(spec), encoding="utf-8")
    (tests / "test.sh").write_text(TEST_SH, encoding="utf-8")
    (tests / VERIFIER_FILE).write_text((PACKAGE_ROOT / "importers" / "harbor_verifier.py").read_text("utf-8"),
                                       encoding="utf-8")
    vendor_judge(tests, [task.language])
    for script in (tests / "test.sh", sol / "solve.sh"):
        script.chmod(0o755)


def export_harbor(target: str | Iterable[Any], out: str | Path, sandbox: Any = None,
                  progress: Callable[[str], None] | None = None, correctness_only: bool = False) -> ExportResult:
    """Export a suite, a task file, a task id or a list of tasks; tasks that cannot be
    exported are skipped with the reason (speed tasks unless `correctness_only`)."""
    tasks = tasks_of(target) if isinstance(target, str) else list(target)
    res = ExportResult()
    Path(out).mkdir(parents=True, exist_ok=True)
    for task in tasks:
        why = _why_not(task, correctness_only)
        if why:
            res.skipped.append((task.id, why))
            continue
        try:
            res.exported.append(export_task(task, Path(out), sandbox, correctness_only))
        except HarborError as e:
            res.skipped.append((task.id, str(e)))
            continue
        if progress:
            progress(task.id)
    return res
