"""Suites: folders of task files, found by name, loaded, filtered and sampled.

Owns where suites live (`tasks_roots()`: the ``CODEGYM_TASKS`` directories, else
``<repo>/tasks`` next to the package, else ``codegym/_tasks``), `list_suites()`,
`suite_task_files(dir)`, `check_suite(...)` (every file's task or errors, plus
suite-level problems such as duplicate ids; used by ``codegym tasks validate``) and
`load_suite(name_or_path) -> Suite` (an immutable collection of `Task`, ordered by id,
with `get`, `filter` and `sample`).

A suite is a directory ``tasks/<suite>/``; every ``*.yaml`` / ``*.yml`` file below it is
a task, except ``suite.yaml`` (the suite's defaults, see codegym.tasks.load) and files
under a directory whose name starts with ``_`` or ``.`` (room for data and shared code).
`CurriculumSampler` (codegym.tasks.curriculum) is re-exported here.
"""

from __future__ import annotations

import fnmatch
import os
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, overload

from codegym.core.paths import display_path
from codegym.tasks.fields import SUITE_FILE, canonical_language
from codegym.tasks.load import TaskError, TaskValidationError, find_suite_file, load_task, read_suite_file, suite_root
from codegym.tasks.schema import Task

#: environment variable naming the tasks root(s)
ENV_VAR = "CODEGYM_TASKS"
_TASK_SUFFIXES = (".yaml", ".yml")


def tasks_roots() -> list[Path]:
    """Directories holding suites, in search order (see the module docstring)."""
    env = os.environ.get(ENV_VAR)
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    pkg = Path(__file__).resolve().parents[1]  # the codegym package
    for cand in (pkg.parent / "tasks", pkg / "_tasks"):
        if cand.is_dir():
            return [cand]
    return []


#: files and folders a suite folder may hold (a folder of millions is refused, not walked)
MAX_SUITE_ENTRIES = 200_000


def suite_task_files(directory: str | os.PathLike) -> list[Path]:
    """Task files of a suite directory, sorted (suite.yaml and `_`/`.` folders excluded;
    FIFOs, devices and sockets are not task files). A folder of more than
    `MAX_SUITE_ENTRIES` entries is a `TaskValidationError`."""
    d = Path(directory)
    files: list[Path] = []
    seen = 0
    for dirpath, dirs, names in os.walk(d):
        seen += len(dirs) + len(names)
        if seen > MAX_SUITE_ENTRIES:
            raise TaskValidationError([TaskError(str(d), 1, "", f"more than {MAX_SUITE_ENTRIES:,} files and folders: "
                                                                "too many for a suite folder")])
        dirs[:] = [x for x in dirs if not x.startswith(("_", "."))]
        for n in names:
            p = Path(dirpath, n)
            if p.suffix in _TASK_SUFFIXES and n != SUITE_FILE and not n.startswith(".") and p.is_file():
                files.append(p)
    return sorted(files)


def list_suites() -> list[str]:
    """Names of the suites under the tasks roots (folders with at least one task file)."""
    names: set[str] = set()
    for root in tasks_roots():
        if not root.is_dir():
            continue
        for d in root.iterdir():
            if d.is_dir() and not d.name.startswith(("_", ".")) and suite_task_files(d):
                names.add(d.name)
    return sorted(names)


def resolve_suite(name_or_path: str | os.PathLike) -> Path:
    """The directory (or single file) a suite name or path refers to.

    An existing path wins, except that a bare name (no separator, no leading ".",
    no task-file suffix) of a bundled suite means that suite even when the current
    directory happens to hold a folder of that name; otherwise the name is looked
    up under `tasks_roots()`. Raises FileNotFoundError naming the suites that exist.
    """
    p = Path(name_or_path).expanduser()
    name = str(name_or_path)
    pathlike = os.sep in name or name.startswith(".") or p.suffix in _TASK_SUFFIXES
    if p.exists() and (pathlike or not any((r / name).is_dir() for r in tasks_roots())):
        return p.parent if p.name == SUITE_FILE else p
    for root in tasks_roots():
        cand = root / name
        if cand.is_dir():
            return cand
        for suffix in _TASK_SUFFIXES:
            if (root / (name + suffix)).is_file():
                return root / (name + suffix)
    roots = ", ".join(map(str, tasks_roots())) or f"none (set {ENV_VAR})"
    raise FileNotFoundError(f"no suite or task file {name!r}; suites: "
                            f"{', '.join(list_suites()) or 'none'} (tasks roots: {roots})")


def _parse_date(value: date | str | None, what: str) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{what} must be a date or 'YYYY-MM-DD', got {value!r}") from None


@overload
def _as_set(value: str | Iterable[str]) -> set[str]: ...
@overload
def _as_set(value: str | Iterable[str] | None) -> set[str] | None: ...


def _as_set(value: str | Iterable[str] | None) -> set[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return {value}
    return set(value)


@dataclass(frozen=True)
class Suite:
    """An ordered, immutable collection of tasks (sorted by id).

    name         the suite's name (its folder)
    tasks        the tasks
    root         the folder (or file) it was loaded from, None if built in memory
    description  from the `suite:` block of suite.yaml

    Iterating gives the tasks; ``len(suite)``, ``suite[i]`` / ``suite["id"]`` and
    ``"id" in suite`` work as expected.
    """

    name: str
    tasks: tuple[Task, ...]
    root: Path | None = None
    description: str = ""
    _by_id: dict[str, Task] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tasks = tuple(sorted(self.tasks, key=lambda t: t.id))
        object.__setattr__(self, "tasks", tasks)
        by_id: dict[str, Task] = {}
        for t in tasks:
            if t.id in by_id:
                raise ValueError(f"duplicate task id {t.id!r} in suite {self.name!r}")
            by_id[t.id] = t
        object.__setattr__(self, "_by_id", by_id)

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def __getitem__(self, key: int | str) -> Task:
        return self.tasks[key] if isinstance(key, int) else self.get(key)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._by_id

    @property
    def ids(self) -> list[str]:
        """Task ids, sorted."""
        return [t.id for t in self.tasks]

    def get(self, task_id: str) -> Task:
        """The task with this id; a bare name (``bracket-depth`` for
        ``examples/bracket-depth``) works when it is unambiguous. KeyError otherwise."""
        t = self._by_id.get(task_id)
        if t is not None:
            return t
        matches = [t for t in self.tasks if t.id.rsplit("/", 1)[-1] == task_id]
        if len(matches) == 1:
            return matches[0]
        close = ", ".join(self.ids[:10]) + (" ..." if len(self) > 10 else "")
        raise KeyError(f"no task {task_id!r} in suite {self.name!r} (tasks: {close or 'none'})")

    def filter(self, ids: Iterable[str] | str | None = None,
               tags: Iterable[str] | str | None = None,
               difficulty: Iterable[str] | str | None = None,
               languages: Iterable[str] | str | None = None,
               since: date | str | None = None, until: date | str | None = None,
               kinds: Iterable[str] | str | None = None) -> Suite:
        """The tasks that pass every given criterion (None = no constraint):

        ids         exact ids or shell patterns (``examples/*``)
        tags        tasks with at least one of these tags
        difficulty  tasks whose difficulty is one of these (case-insensitive)
        languages   tasks accepting at least one of these languages (aliases allowed)
        since/until release_date within [since, until] (inclusive); tasks without a
                    release date are dropped when either bound is given
        kinds       tasks of these kinds
        """
        id_pats = _as_set(ids)
        tag_set = _as_set(tags)
        diff_set = {d.lower() for d in _as_set(difficulty)} if difficulty is not None else None
        lang_set = ({canonical_language(x) or x for x in _as_set(languages)}
                    if languages is not None else None)
        kind_set = _as_set(kinds)
        lo, hi = _parse_date(since, "since"), _parse_date(until, "until")

        def keep(t: Task) -> bool:
            if id_pats is not None and not any(t.id == p or fnmatch.fnmatchcase(t.id, p)
                                               for p in id_pats):
                return False
            if tag_set is not None and not tag_set.intersection(t.metadata.tags):
                return False
            if diff_set is not None and (t.metadata.difficulty or "").lower() not in diff_set:
                return False
            if lang_set is not None and not lang_set.intersection(t.accepted_languages()):
                return False
            if kind_set is not None and t.kind not in kind_set:
                return False
            if lo is not None or hi is not None:
                rd = t.metadata.release_date
                if rd is None or (lo is not None and rd < lo) or (hi is not None and rd > hi):
                    return False
            return True

        return Suite(self.name, tuple(t for t in self.tasks if keep(t)), self.root, self.description)

    def sample(self, rng: Any = None) -> Task:
        """One task chosen uniformly. `rng`: a numpy Generator, a random.Random, an int
        seed, or None (the `random` module)."""
        if not self.tasks:
            raise ValueError(f"suite {self.name!r} is empty")
        n = len(self.tasks)
        if rng is None:
            i = random.randrange(n)
        elif isinstance(rng, int):
            i = random.Random(rng).randrange(n)
        elif hasattr(rng, "integers"):
            i = int(rng.integers(n))
        elif hasattr(rng, "randrange"):
            i = rng.randrange(n)
        else:
            raise TypeError(f"rng must be a numpy Generator, random.Random, int or None, got {rng!r}")
        return self.tasks[i]


@dataclass
class SuiteCheck:
    """What `check_suite` found.

    name, root, description  as for Suite
    results  [(file, task or None, errors of that file)] in file order
    errors   every error (file errors and suite-level ones such as duplicate ids)
    """

    name: str
    root: Path
    description: str = ""
    results: list[tuple[Path, Task | None, list[TaskError]]] = field(default_factory=list)

    @property
    def errors(self) -> list[TaskError]:
        return [e for _, _, errs in self.results for e in errs]

    @property
    def tasks(self) -> list[Task]:
        return [t for _, t, errs in self.results if t is not None and not errs]

    @property
    def ok(self) -> bool:
        return not self.errors


def _id_line(path: Path) -> int:
    """Line of the top-level ``id:`` key of a task file (1 when the id is implicit)."""
    try:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"id\s*:", line):
                return i
    except (OSError, UnicodeDecodeError):
        pass
    return 1


def check_suite(name_or_path: str | os.PathLike) -> SuiteCheck:
    """Load every task file of a suite (or one file), collecting all errors instead of
    stopping at the first, and check suite-level rules (unique ids)."""
    target = resolve_suite(name_or_path)
    files = [target] if target.is_file() else suite_task_files(target)
    if target.is_dir():
        root = target
        suite_file = (root / SUITE_FILE) if (root / SUITE_FILE).is_file() else None
    else:
        suite_file = find_suite_file(target)
        root = suite_root(target, suite_file)
    description, name = "", root.name
    if suite_file is not None:
        sd = read_suite_file(suite_file)
        description = str(sd.meta.get("description") or "")
        name = str(sd.meta.get("name") or suite_file.parent.name)
    check = SuiteCheck(name=name, root=target, description=description)
    seen: dict[str, Path] = {}
    for f in files:
        try:
            task: Task | None = load_task(f)
            errs: list[TaskError] = []
        except TaskValidationError as e:
            task, errs = None, list(e.errors)
        if task is not None:
            if task.id in seen:
                other = seen[task.id]
                errs.append(TaskError(display_path(f), _id_line(f), "id",
                                      f"duplicate task id {task.id!r} (also in {display_path(other)})"))
            else:
                seen[task.id] = f
        check.results.append((f, task, errs))
    if suite_file is not None and not files:
        # A suite.yaml alone still deserves validation.
        sd = read_suite_file(suite_file)
        if sd.doc.errors:
            check.results.append((suite_file, None, list(sd.doc.errors)))
    return check


def load_suite(name_or_path: str | os.PathLike) -> Suite:
    """Load a suite by name (``"examples"``), directory, or single task file.

    Raises TaskValidationError with every error of every file, FileNotFoundError when
    nothing has that name.
    """
    check = check_suite(name_or_path)
    if check.errors:
        raise TaskValidationError(check.errors)
    return Suite(check.name, tuple(check.tasks), check.root, check.description)
