"""``codegym replay FILE.jsonl``: judge stored episodes again and report verdict drift.

    codegym replay FILE.jsonl [--suite NAME_OR_DIR ...] [--sandbox KIND] [--workers N] [--limit N] [--json]

FILE is a ``collect`` output (`codegym.rollout.Trajectory` lines: the workspace is
rebuilt from the task's start files and each step's diff, checked against the
recorded state hashes) or an eval's ``results.jsonl`` (episode records: their final
files). Each episode's final workspace is judged on the hidden split of the task as it
is now, in the sandbox as it is now, and compared with the stored verdict: ``same`` or
``CHANGED`` (both verdicts), with a note when the task's content hash differs from the
recorded one. Tasks are found in the ``--suite`` folders/names given, else (eval
results) the eval's config, else the suite named by the task id. Exit 0 without drift,
1 when a verdict changed or an episode could not be replayed (a malformed record is one
such line, naming its bad field; the others go on), 2 for a bad FILE.
`replay(path, ...)` is the same from Python (`ReplayReport`).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from codegym.core.jsonl import DEFAULT_DATA_CAPS, DataCaps, DataError, json_lines, read_json
from codegym.edits.parse import apply_changes, parse_action
from codegym.envs.code_env import CodeEnv
from codegym.envs.swe_env import SWEEnv
from codegym.evaluation.config import load_config
from codegym.evaluation.store import CONFIG_COPY, MANIFEST_FILE
from codegym.judge import judge
from codegym.rollout.records import state_hash
from codegym.sandbox import make_sandbox
from codegym.sandbox.types import Sandbox
from codegym.tasks.load import TaskValidationError
from codegym.tasks.schema import Task
from codegym.tasks.suite import load_suite

#: an eval folder's manifest.json is small: read within these caps
MANIFEST_CAPS = DEFAULT_DATA_CAPS.replace(file_bytes=16 << 20, text_bytes=16 << 20, doc_bytes=16 << 20)


@dataclass
class EpisodeReplay:
    """One episode judged again.

    status   same | changed | skipped (never judged) | error (could not be replayed)
    stored / now   the verdicts (and passed/total) recorded and found now
    hash_changed   the task's content hash differs from the recorded one
    """

    where: str
    key: str
    task_id: str
    status: str
    stored: str | None = None
    now: str | None = None
    stored_passed: str = ""
    now_passed: str = ""
    old_hash: str = ""
    new_hash: str = ""
    message: str = ""

    @property
    def hash_changed(self) -> bool:
        return bool(self.old_hash and self.new_hash and self.old_hash != self.new_hash)

    def line(self) -> str:
        what = {"same": f"same     {self.now}",
                "changed": f"CHANGED  {self.stored} -> {self.now} ({self.now_passed} passed, was {self.stored_passed})",
                "skipped": f"skipped  {self.message}", "error": f"ERROR    {self.message}"}[self.status]
        hash_note = f"  task changed: {self.old_hash[:12]} -> {self.new_hash[:12]}" if self.hash_changed else ""
        return f"  {what}  {self.task_id} [{self.key}]{hash_note}"


@dataclass
class ReplayReport:
    """Every episode's `EpisodeReplay`, and the counts."""

    source: str
    episodes: list[EpisodeReplay] = field(default_factory=list)

    @property
    def counts(self) -> Counter:
        return Counter(e.status for e in self.episodes)

    @property
    def hash_mismatches(self) -> int:
        return sum(1 for e in self.episodes if e.hash_changed)

    @property
    def drift(self) -> bool:
        c = self.counts
        return bool(c["changed"] or c["error"])

    def summary(self) -> str:
        c = self.counts
        skipped = Counter(e.message for e in self.episodes if e.status == "skipped")
        why = f" ({'; '.join(f'{k}: {v}' for k, v in skipped.items())})" if skipped else ""
        return (f"{len(self.episodes)} episode(s) from {self.source}: {c['same']} same, {c['changed']} changed, "
                f"{c['error']} not replayable, {c['skipped']} skipped{why}; {self.hash_mismatches} task hash "
                f"mismatch(es)")

    def to_dict(self) -> dict:
        return {"source": self.source, "counts": dict(self.counts), "hash_mismatches": self.hash_mismatches,
                "drift": self.drift, "episodes": [asdict(e) for e in self.episodes]}


# --------------------------------------------------------------------------- records and tasks


def read_episodes(path: str | Path, caps: DataCaps = DEFAULT_DATA_CAPS) -> list[tuple[str, dict | str]]:
    """(``line N``, record) of the episode records of a collect output or eval results
    file, read within `caps` (`codegym.core.jsonl`: a regular file only -- a FIFO is
    refused, not waited on --, each line and its nesting bounded); other records (an
    eval's speed comparisons) are left out, and a torn last line (an interrupted writer)
    is ignored. Another line that is not JSON (nested too deep, too long) comes as
    (``line N``, what is wrong with it), so the rest of the file is still read.
    `DataError` (a ValueError): the file itself cannot be read."""
    lines = list(json_lines(path, caps))
    if lines and isinstance(lines[-1][1], DataError):
        lines.pop()   # a torn last line
    out: list[tuple[str, dict | str]] = []
    for n, rec in lines:
        if isinstance(rec, DataError):
            why = str(rec).replace("not valid JSON", "not JSON", 1)
            out.append((f"line {n}", why if why.startswith("not JSON") else f"not JSON: {why}"))
        elif isinstance(rec, dict) and rec.get("kind", "episode") == "episode" and "task_id" in rec:
            out.append((f"line {n}", rec))
    return out


class TaskIndex:
    """Finds the current task of a recorded episode: the `suites` given, else the eval's
    config (eval results), else the suite named by the task id's first part."""

    def __init__(self, suites: Sequence[str] = (), eval_dir: Path | None = None):
        self.by_id: dict[str, Any] = {}
        self.by_label: dict[tuple[str, str], Any] = {}
        self.tried: set[str] = set()
        self.lock = threading.Lock()
        for s in suites:
            self._add_suite(s)
        if eval_dir is not None:
            self._add_eval(eval_dir)

    def _add_suite(self, name: str) -> None:
        for t in load_suite(name):
            self.by_id.setdefault(t.id, t)

    def _add_eval(self, eval_dir: Path) -> None:
        try:
            manifest = read_json(eval_dir / MANIFEST_FILE, MANIFEST_CAPS)
        except (OSError, ValueError):
            return
        if not isinstance(manifest, dict):
            return
        for cand in (manifest.get("config_source"), eval_dir / CONFIG_COPY):
            if not cand or not Path(cand).is_file():
                continue
            try:
                cfg = load_config(cand)
            except (TaskValidationError, OSError, ValueError):
                continue
            for i in range(len(cfg.suites)):
                for t in cfg.tasks(i):
                    self.by_label[(cfg.suite_label(i), t.id)] = t
                    self.by_id.setdefault(t.id, t)
            return

    def get(self, task_id: str, label: str | None = None) -> Any:
        if label is not None and (label, task_id) in self.by_label:
            return self.by_label[(label, task_id)]
        with self.lock:   # episodes are replayed from several threads
            if task_id not in self.by_id:
                head = task_id.split("/", 1)[0]
                if head not in self.tried:
                    self.tried.add(head)
                    try:
                        self._add_suite(head)
                    except (FileNotFoundError, TaskValidationError, OSError, ValueError):
                        pass
            return self.by_id.get(task_id)


# --------------------------------------------------------------------------- one episode


def _start_files(task: Task, language: str | None, seed: Any, sandbox: Sandbox) -> dict[str, Any]:
    """The workspace an episode of `task` starts from (what the env's reset lays out)."""
    cls = SWEEnv if task.kind == "repo" else CodeEnv
    env = cls(tasks=[task], language=language, sandbox=sandbox, max_turns=1)
    try:
        _, info = env.reset(seed=seed if isinstance(seed, int) else None, options={"task_id": task.id})
        return dict(info.get("files") or {})
    finally:
        env.close()


def _rebuild(rec: Mapping[str, Any], start: dict[str, Any], main_file: str) -> dict[str, Any]:
    """The final files of a collect record: `start` with each step's diff applied, each
    state checked against the recorded hash (ValueError naming the step that differs)."""
    files = dict(start)
    for k, st in enumerate(rec.get("steps") or ()):
        pre = st.get("pre_state")
        if pre and pre != state_hash(files):
            raise ValueError(f"step {k} started from another workspace than the rebuilt one "
                             f"({'the start files differ' if k == 0 else 'a diff did not rebuild it'})")
        diff = st.get("diff") or ""
        if diff:
            parsed = parse_action(diff, files, main_file, formats=["unified_diff"], max_chars=None)
            if parsed.error:
                raise ValueError(f"step {k}: its diff does not apply: {parsed.error.splitlines()[0]}")
            files = apply_changes(files, parsed.changes)
    final = (rec.get("metadata") or {}).get("final_state")
    if final and final != state_hash(files):
        raise ValueError("the rebuilt final workspace differs from the recorded one")
    return files


def _stored(rec: Mapping[str, Any]) -> tuple[str | None, str]:
    """(stored verdict, "passed/total") of a record; verdict None: never judged."""
    if "steps" in rec and "group_id" in rec:   # a Trajectory
        judged = next((s.get("judge") for s in reversed(rec.get("steps") or ()) if s.get("judge")), None) or {}
        return rec.get("verdict"), f"{judged.get('passed', '?')}/{judged.get('total', '?')}"
    verdict = rec.get("verdict")
    return (None if verdict == "no_submission" else verdict), f"{rec.get('passed', '?')}/{rec.get('total', '?')}"


def _key(rec: Mapping[str, Any]) -> str:
    if "group_id" in rec:
        return f"{rec['group_id']}/{rec.get('sample_index', 0)}"
    return str(rec.get("key") or "")


#: optional fields of a record and the types they must have (None is always allowed)
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "task_id": (str,), "steps": (list,), "final_files": (dict,), "metadata": (dict,), "language": (str,),
    "suite": (str,), "task_hash": (str,), "verdict": (str,), "key": (str,), "group_id": (str, int),
    "sample_index": (int,)}
_STEP_TYPES: dict[str, tuple[type, ...]] = {"diff": (str,), "pre_state": (str,), "judge": (dict,)}
_META_TYPES: dict[str, tuple[type, ...]] = {"language": (str,), "main_file": (str,), "final_state": (str,)}


def _type_problem(value: Any, types: tuple[type, ...]) -> bool:
    return value is not None and (not isinstance(value, types) or isinstance(value, bool))


def record_problem(rec: Mapping[str, Any]) -> str | None:
    """What is wrong with the shape of a stored episode record (None: nothing): a field of the
    wrong type, named with what it should be (records are untrusted input)."""
    def want(types: tuple[type, ...]) -> str:
        return " or ".join({"str": "a string", "list": "a list", "dict": "an object", "int": "an integer"}[t.__name__]
                           for t in types)

    for name, types in _FIELD_TYPES.items():
        if _type_problem(rec.get(name), types):
            return f"{name}: expected {want(types)}, not {type(rec[name]).__name__}"
    for k, st in enumerate(rec.get("steps") or ()):
        if not isinstance(st, Mapping):
            return f"steps[{k}]: expected an object, not {type(st).__name__}"
        bad = next((n for n, t in _STEP_TYPES.items() if _type_problem(st.get(n), t)), None)
        if bad:
            return f"steps[{k}].{bad}: expected {want(_STEP_TYPES[bad])}, not {type(st[bad]).__name__}"
    bad = next((n for n, t in _META_TYPES.items() if _type_problem((rec.get("metadata") or {}).get(n), t)), None)
    if bad:
        return f"metadata.{bad}: expected {want(_META_TYPES[bad])}"
    for path, content in (rec.get("final_files") or {}).items():
        if not isinstance(path, str) or (content is not None and not isinstance(content, str)):
            return f"final_files[{str(path)[:80]!r}]: expected a file's text, not {type(content).__name__}"
    return None


def replay_episode(where: str, rec: Mapping[str, Any] | str, tasks: TaskIndex, sandbox: Sandbox) -> EpisodeReplay:
    """Judge one stored episode again (see the module docstring); a malformed record (or a
    line that is not one: `rec` is then what is wrong with it) is an ``error`` naming its
    bad field, never an exception."""
    problem = rec if isinstance(rec, str) else record_problem(rec)
    if problem is not None:
        rec = rec if isinstance(rec, Mapping) else {}
        return EpisodeReplay(where, str(rec.get("key") or rec.get("group_id") or ""), str(rec.get("task_id"))[:200],
                             "error", message=f"{where}: malformed record: {problem}")
    tid = str(rec["task_id"])
    out = EpisodeReplay(where, _key(rec), tid, "error", old_hash=str(rec.get("task_hash") or ""))
    out.stored, out.stored_passed = _stored(rec)
    if out.stored is None:
        out.status, out.message = "skipped", "never judged (no submission)"
        return out
    task = tasks.get(tid, rec.get("suite"))
    if task is None:
        out.message = f"{where}: no task {tid!r} (give its suite with --suite)"
        return out
    out.new_hash = task.content_hash
    meta = rec.get("metadata") or {}
    language = rec.get("language") or meta.get("language") or task.language
    try:
        if "final_files" in rec and task.kind != "repo":
            files = dict(rec["final_files"])
        else:
            start = _start_files(task, language, rec.get("seed"), sandbox)
            main = meta.get("main_file") or task.main_file_for(language) or "main.py"
            files = dict(rec["final_files"]) if "final_files" in rec else _rebuild(rec, start, main)
            if task.kind == "repo":   # the judge takes an overlay of the base: deleted files are None
                files.update({p: None for p in start if p not in files})
        rep = judge(task, files, sandbox=sandbox, split="hidden", language=language)
    except (ValueError, KeyError, OSError, RuntimeError) as e:
        out.message = f"{where}: {e}"
        return out
    out.now, out.now_passed = rep.verdict, f"{rep.passed}/{rep.total}"
    out.status = "same" if out.now == out.stored else "changed"
    if out.status == "changed":
        out.message = rep.message
    return out


def replay(path: str | Path, *, suites: Sequence[str] = (), sandbox: Sandbox | None = None, workers: int | None = None,
           limit: int | None = None) -> ReplayReport:
    """Judge every stored episode of `path` again (see the module docstring)."""
    p = Path(path)
    episodes = read_episodes(p)[:limit]
    is_eval = any(isinstance(r, dict) and "final_files" in r for _, r in episodes) \
        and (p.parent / MANIFEST_FILE).is_file()
    tasks = TaskIndex(suites, p.parent if is_eval else None)
    sb = sandbox if sandbox is not None else make_sandbox()
    n = workers or max(1, int(sb.workers or 1))
    report = ReplayReport(str(p))
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="codegym-replay") as ex:
        report.episodes = list(ex.map(lambda wr: replay_episode(wr[0], wr[1], tasks, sb), episodes))
    return report


# --------------------------------------------------------------------------- command


def register(subparsers) -> None:
    """Add ``codegym replay``."""
    p = subparsers.add_parser("replay", help="judge stored episodes again and report verdict drift",
                              description="Re-judge the episodes of a collect output or an eval's results.jsonl "
                                          "against the current tasks and sandbox; exit 1 on drift.")
    p.add_argument("file", metavar="FILE.jsonl", help="collect output or eval results.jsonl")
    p.add_argument("--suite", action="append", default=[], metavar="NAME_OR_DIR",
                   help="where the tasks are (repeatable; default: the eval's config, else the suite the "
                        "task id names)")
    p.add_argument("--sandbox", default=None, help="sandbox kind (default: CODEGYM_SANDBOX or local)")
    p.add_argument("--workers", type=int, default=None, help="episodes judged at once (default: sandbox slots)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N episodes")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="list only the episodes that did not stay the same")
    p.set_defaults(func=cmd_replay)


def _print(report: ReplayReport, quiet: bool) -> None:
    print(f"replay of {report.source}:")
    for e in report.episodes:
        if not (quiet and e.status == "same" and not e.hash_changed):
            print(e.line())
    print(report.summary())


def cmd_replay(args: argparse.Namespace) -> int:
    try:
        report = replay(args.file, suites=args.suite, sandbox=make_sandbox(args.sandbox) if args.sandbox else None,
                        workers=args.workers, limit=args.limit)
    except (OSError, ValueError, TaskValidationError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        _print(report, args.quiet)
    return 1 if report.drift else 0
