"""SWE-style repository tasks: repositories, patches, hardened grading, SWE-bench import.

A repository task (``kind: repo``) is an issue to fix in a code base. This module
owns everything about such tasks that is not YAML loading (codegym.tasks.schema) or the
episode loop (codegym.envs.swe_env):

- **Where the repository comes from** (`RepoSource`, `repo_source`): ``repo.url``
  is a directory, a ``git bundle`` (``*.bundle``) or a tarball (``*.tar``,
  ``*.tar.gz``, ``*.tgz``, ``*.tar.bz2``, ``*.tar.xz``) -- relative paths are
  relative to the task's YAML file -- or a git URL (``https://``, ``ssh://``,
  ``git://``, ``file://``, ``user@host:path``); ``repo.commit`` picks the base
  commit of git sources (default HEAD). `materialize` writes the base tree into a
  directory; `base_tree` keeps one pristine copy per source and process (a git
  working tree, see `codegym.edits.workspace.Workspace.from_directory`), from which every
  episode gets a cheap private copy (`BaseTree.new_workspace`). Clones of git URLs
  and bundles are cached under ``$CODEGYM_CACHE/swe`` (default
  ``~/.cache/codegym/swe``).
- **The SWE part of a task** (`SWEData`, `swe_data`): gold patch, test patch,
  FAIL_TO_PASS and PASS_TO_PASS ids, test command, setup commands.
- **Patches** (`apply_patch`, `patch_paths`): ``git apply`` on the touched files
  only, in a scratch directory.
- **Grading** (`grading_tree`, `run_repo_cases`, `parse_results`, `resolution`,
  `annotate_report`, `grade`). `codegym.judge.run` delegates its ``repo`` kind here.
  Hardened SWE-bench harness: see "Grading" below.
- **Reference solution** (`gold_patch`, `reference_files`, `with_reference`): the
  gold patch applied to the base files, as the ``reference`` solution the
  `OracleAgent` writes.
- **SWE-bench import** (`import_swebench`, `add_swebench_import`): instance records
  (JSON, JSON lines, gzip) -> a suite folder.

Task layout (what ``tasks/swe/*.yaml`` use; every key is in the current task
schema -- the SWE fields that have no schema field yet live in
``metadata.extra.swe``)::

    id: swe/tinyranges-adjacent
    kind: repo
    language: python
    statement: {file: tinyranges-adjacent/issue.md}
    repo:
      url: tinyranges-adjacent/repo      # directory | *.bundle | tarball | git URL
      commit: null                       # git sources: base commit (default HEAD)
      setup: [python3 tools/gen.py]      # shell commands run before every test command
    tests:
      public:                            # feedback while editing: the existing tests
        - {name: existing-tests, command: [python3, -m, unittest, -v, -b]}
      hidden:                            # decide the episode
        - {name: FAIL_TO_PASS, command: [python3, -m, unittest, -v, -b], tests: [tests.test_x.T.test_a]}
        - {name: PASS_TO_PASS, command: [python3, -m, unittest, -v, -b], tests: [...]}
    metadata:
      extra:
        swe:
          patch: {file: tinyranges-adjacent/gold.patch}       # text or {file: rel}
          test_patch: {file: tinyranges-adjacent/test.patch}
          test_files: ["tests/*"]        # optional globs restored before grading

Test runner. The sandbox runs Debian's ``/usr/bin/python3`` (the host's pyenv
Python, where pytest lives, is not visible inside bubblewrap), so the bundled
repositories are tested with the standard library: ``python3 -m unittest -v -b``.
Its verbose report is parsed here (`parse_results`: status lines, subtests,
``FAIL:``/``ERROR:`` sections, import failures, the ``Ran N tests`` summary);
pytest reports (junit XML, ``-rA`` lines, count lines) go through
`codegym.judge.harness.parse_test_report`. Test ids are unittest's dotted ids
(``tests.test_x.Class.test_y``, which ``python3 -m unittest`` also accepts as
arguments), pytest node ids, or SWE-bench's Django form ``test_y (tests.test_x.Class)``.

Grading (SWE-bench's harness, hardened):

1. The candidate's files overlay the base tree (``None`` deletes a file).
2. The task's test files are restored to their base content: every file the test
   patch touches, the module of every FAIL_TO_PASS / PASS_TO_PASS id, the
   ``__init__.py`` files of their packages, and ``test_files`` globs (files matching
   them that the base does not have are removed). Edits to tests cannot grade.
3. Hidden split only: the test patch is applied (public feedback never sees the
   new tests).
   The test runner's hooks and configuration are restored the same way: every
   ``conftest.py`` (added ones removed: a hook can turn every report into a pass),
   and a ``pytest.ini`` / ``.pytest.ini`` / ``tox.ini`` / ``setup.cfg`` /
   ``pyproject.toml`` whose pytest settings changed in a way that can load code or
   change collection (``addopts = -p plugin``, ``pythonpath``, ...; warning filters,
   markers and logging settings stay the candidate's) -- the whole file.
4. Files the candidate added that would run before or around the tests are dropped
   (``sitecustomize.py``, ``usercustomize.py``, ``*.pth``, and a top-level module or
   package named like a standard-library module, e.g. a ``unittest.py`` that would
   replace the runner); the report says so.
5. The setup commands and the test command run in the sandbox (the tree copied
   into a fresh run directory; nothing of it enters the build store).
6. A listed test passes only with an explicit pass in the report; skipped, errored,
   missing (never collected -- e.g. its module does not import) or duplicated with
   a failing status counts as failed. The run must have finished: without the
   runner's final summary (``Ran N tests``, pytest's count line or a junit file)
   no test passes, and a case without listed ids needs exit code 0, a summary and at
   least one test that ran.
7. Resolution (`resolution`): FULL when every FAIL_TO_PASS and PASS_TO_PASS test
   passed, PARTIAL when every PASS_TO_PASS test passed and some but not all
   FAIL_TO_PASS tests did, NO otherwise -- written at the start of
   ``JudgeReport.message`` (e.g. ``resolution FULL: FAIL_TO_PASS 3/3,
   PASS_TO_PASS 9/9``) and given by `grade` / the env's ``info["swe"]``.

Residual risk (as in SWE-bench): the tests import the candidate's code, so code
written to subvert them from inside -- patching the test framework at import time,
or printing a complete fake report (status lines *and* the final summary) and
exiting -- is not detected; an incomplete forgery is (step 6). Repository trees
are not part of ``Task.content_hash`` (`BaseTree.digest` names them).
"""

from __future__ import annotations

import argparse
import atexit
import fnmatch
import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

__all__ = [
    "SWEError", "RepoSource", "repo_source", "materialize", "BaseTree", "base_tree",
    "SWEData", "swe_data", "patch_paths", "apply_patch", "file_of_test_id", "restore_paths", "grading_tree",
    "CommandRun", "with_setup", "run_command", "TestResults", "parse_results", "parse_unittest",
    "evaluate_case", "run_repo_cases", "Resolution", "resolution", "annotate_report", "SWEGrade", "grade",
    "gold_patch", "reference_files", "with_reference", "swebench_task", "import_swebench",
    "add_swebench_import", "register_import", "FAIL_TO_PASS", "PASS_TO_PASS", "UNITTEST_COMMAND",
]

#: names of the hidden cases that hold the two SWE-bench test lists
FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"
#: test command of the bundled repositories (stdlib runner; see the module docstring)
UNITTEST_COMMAND = ("python3", "-m", "unittest", "-v", "-b")

_TARBALL_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_GIT_URL_RE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*://|[\w.\-]+@[\w.\-]+:)")
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


class SWEError(ValueError):
    """A repository that cannot be materialised, a patch that does not apply, a bad record."""


# =========================================================================== sources


@dataclass(frozen=True)
class RepoSource:
    """Where a task's repository comes from.

    kind      "dir" | "git" | "bundle" | "tarball"
    location  absolute path (dir, bundle, tarball) or URL (git)
    commit    base commit (git, bundle, or a directory / tarball holding a .git); None: HEAD
    """

    kind: str
    location: str
    commit: str | None = None

    def describe(self) -> str:
        return f"{self.kind} {self.location}" + (f" @ {self.commit}" if self.commit else "")


def _task_dir(task) -> Path:
    sp = getattr(task, "source_path", None)
    return Path(sp).resolve().parent if sp else Path.cwd()


def repo_source(task) -> RepoSource:
    """The `RepoSource` of a repo task (relative paths: relative to its YAML file, or to
    the working directory for tasks built in code)."""
    repo = getattr(task, "repo", None)
    if repo is None or not getattr(repo, "url", None):
        raise SWEError(f"task {task.id} has no repository (repo.url)")
    url, commit = str(repo.url), (str(repo.commit) if repo.commit else None)
    if _GIT_URL_RE.match(url):
        return RepoSource("git", url, commit)
    path = Path(url).expanduser()
    if not path.is_absolute():
        path = _task_dir(task) / path
    path = path.resolve()
    name = path.name.lower()
    if name.endswith(".bundle"):
        kind = "bundle"
    elif name.endswith(_TARBALL_SUFFIXES):
        kind = "tarball"
    elif path.is_dir():
        kind = "dir"
    else:
        raise SWEError(f"task {task.id}: repo.url {url!r} is neither a directory, a .bundle, "
                       f"a tarball nor a git URL (looked at {path})")
    if kind != "dir" and not path.is_file():
        raise SWEError(f"task {task.id}: repository file not found: {path}")
    return RepoSource(kind, str(path), commit)


def _git(args: Sequence[str], cwd: str | os.PathLike | None = None, *, input: bytes | None = None,
         capture: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, **_GIT_ENV}
    p = subprocess.run(["git", *args], cwd=cwd, env=env, input=input,
                       stdout=subprocess.PIPE if capture else None, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise SWEError(f"git {' '.join(args)} failed: {p.stderr.decode('utf-8', 'replace').strip()}")
    return p


def _cache_root() -> Path:
    base = os.environ.get("CODEGYM_CACHE")
    root = Path(base) / "swe" if base else Path.home() / ".cache" / "codegym" / "swe"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _key(*parts: Any) -> str:
    return hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:20]


_CLONE_LOCK = threading.Lock()


def _bare_clone(location: str, key: str, commit: str | None) -> Path:
    """A cached bare clone holding `commit` (fetched when missing)."""
    dest = _cache_root() / "git" / key
    with _CLONE_LOCK:
        if not (dest / "HEAD").exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=dest.parent))
            try:
                _git(["clone", "--quiet", "--bare", location, str(tmp / "r")])
                try:
                    os.rename(tmp / "r", dest)
                except OSError:  # another process finished first: use theirs
                    pass
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        if commit and subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=dest,
                                     env={**os.environ, **_GIT_ENV}, capture_output=True).returncode != 0:
            _git(["fetch", "--quiet", location, commit], cwd=dest)
    return dest


def _extract_tar_stream(stream, dest: Path) -> None:
    with tarfile.open(fileobj=stream, mode="r|*") as tf:
        tf.extractall(dest, filter="data")


def _git_export(git_dir: Path, rev: str, dest: Path) -> None:
    """Write the tree of `rev` into `dest` (no .git)."""
    env = {**os.environ, **_GIT_ENV}
    proc = subprocess.Popen(["git", "archive", "--format=tar", rev], cwd=git_dir, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _extract_tar_stream(proc.stdout, dest)
    finally:
        proc.stdout.close()
        err = proc.stderr.read().decode("utf-8", "replace")
        proc.stderr.close()
        rc = proc.wait()
    if rc != 0:
        raise SWEError(f"git archive {rev} failed in {git_dir}: {err.strip()}")


def _ignore_vcs(_dir: str, names: list[str]) -> list[str]:
    return [n for n in names if n in (".git", "__pycache__") or n.endswith(".pyc")]


def materialize(source: RepoSource, dest: str | os.PathLike) -> Path:
    """Write the base tree of `source` into `dest` (created; must be absent or empty).
    The result holds no ``.git``."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise SWEError(f"cannot materialise into {dest}: directory is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    loc = Path(source.location)
    if source.kind == "dir":
        if source.commit:
            if not (loc / ".git").exists():
                raise SWEError(f"{loc}: commit {source.commit} given but the directory is not a git repository")
            _git_export(loc, source.commit, dest)
        else:
            shutil.copytree(loc, dest, symlinks=True, dirs_exist_ok=True, ignore=_ignore_vcs)
    elif source.kind == "git":
        _git_export(_bare_clone(source.location, _key("git", source.location), source.commit),
                    source.commit or "HEAD", dest)
    elif source.kind == "bundle":
        st = loc.stat()
        clone = _bare_clone(str(loc), _key("bundle", loc, st.st_mtime_ns, st.st_size), None)
        _git_export(clone, source.commit or "HEAD", dest)
    elif source.kind == "tarball":
        with tempfile.TemporaryDirectory(prefix="codegym-swe-tar-") as tmp:
            with open(loc, "rb") as fh:
                _extract_tar_stream(fh, Path(tmp))
            entries = [p for p in Path(tmp).iterdir()]
            top = entries[0] if len(entries) == 1 and entries[0].is_dir() else Path(tmp)
            materialize(RepoSource("dir", str(top), source.commit), dest)
    else:
        raise SWEError(f"unknown repository source kind {source.kind!r}")
    return dest


def _dir_signature(path: Path) -> str:
    """Cheap change detector of a source directory (paths, sizes, modification times)."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "__pycache__"))
        for f in sorted(files):
            try:
                st = os.stat(os.path.join(root, f))
            except OSError:
                continue
            h.update(f"{os.path.relpath(os.path.join(root, f), path)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    if (path / ".git").exists():
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True)
        h.update(head.stdout.encode())
    return h.hexdigest()


_WORK_LOCK = threading.Lock()
_WORK_ROOT: list[Path] = []


def _work_root() -> Path:
    """A per-process scratch folder for pristine trees, removed at exit."""
    with _WORK_LOCK:
        if not _WORK_ROOT:
            root = Path(tempfile.mkdtemp(prefix="codegym-swe-"))
            atexit.register(shutil.rmtree, str(root), True)
            _WORK_ROOT.append(root)
        return _WORK_ROOT[0]


class BaseTree:
    """The pristine base tree of one repository source (a git working tree that is
    never edited). `files` lists what git tracks there (``.gitignore`` honoured, as
    in the episode's workspace)."""

    def __init__(self, source: RepoSource, root: Path):
        from codegym.edits.workspace import Workspace  # gitpython only when a repo task is used
        self.source = source
        self.root = root
        # The base is committed on a branch (so it is the workspace's starter commit as is)
        # and packed: every episode copies this .git, and a packed one is a few files
        # instead of hundreds of object directories to copy and delete.
        env = {"GIT_AUTHOR_NAME": "codegym", "GIT_AUTHOR_EMAIL": "codegym@localhost",
               "GIT_COMMITTER_NAME": "codegym", "GIT_COMMITTER_EMAIL": "codegym@localhost",
               "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}
        for args in (["init", "-q", "--template=", "-b", "base"], ["add", "-A"],
                     ["-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "--no-verify", "-m", "base"],
                     ["repack", "-a", "-d", "-q"], ["prune-packed"]):
            p = subprocess.run(["git", *args], cwd=root, env={**os.environ, **_GIT_ENV, **env}, capture_output=True)
            if p.returncode != 0:
                raise SWEError(f"git {' '.join(args)} failed in {root}: {p.stderr.decode('utf-8', 'replace').strip()}")
        self.workspace = Workspace.from_directory(root)
        self._files: dict[str, str] | None = None
        self._lock = threading.Lock()

    @property
    def files(self) -> dict[str, str]:
        """{path: text} of the base (a shared dict: do not modify)."""
        with self._lock:
            if self._files is None:
                self._files = self.workspace.files
            return self._files

    @functools.cached_property
    def digest(self) -> str:
        """sha256 of the base tree (paths and contents): names the repository state."""
        h = hashlib.sha256()
        for p in sorted(self.files):
            data = self.files[p].encode("utf-8", "surrogateescape")
            h.update(p.encode("utf-8", "surrogateescape") + b"\0" + len(data).to_bytes(8, "big") + data)
        return h.hexdigest()

    def new_workspace(self):
        """A private, editable copy (a `Workspace`, git backend) removed by its ``close()``."""
        return self.workspace.copy()


_BASES: dict[tuple, BaseTree] = {}
_BASES_LOCK = threading.Lock()


def base_tree(task_or_source) -> BaseTree:
    """The cached `BaseTree` of a task (or a `RepoSource`); rebuilt when a source directory,
    bundle or tarball changes."""
    source = task_or_source if isinstance(task_or_source, RepoSource) else repo_source(task_or_source)
    if source.kind == "dir":
        sig = _dir_signature(Path(source.location))
    elif source.kind in ("bundle", "tarball"):
        st = os.stat(source.location)
        sig = f"{st.st_mtime_ns}:{st.st_size}"
    else:
        sig = ""
    key = (source, sig)
    with _BASES_LOCK:
        hit = _BASES.get(key)
        if hit is not None:
            return hit
        root = Path(tempfile.mkdtemp(prefix="base-", dir=_work_root()))
        try:
            materialize(source, root)
            tree = BaseTree(source, root)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        stale = [k for k in _BASES if k[0] == source]
        for k in stale:  # an older state of the same source
            old = _BASES.pop(k)
            old.workspace.close()
            shutil.rmtree(old.root, ignore_errors=True)
        _BASES[key] = tree
        return tree


# =========================================================================== task data


@dataclass(frozen=True)
class SWEData:
    """The SWE part of a repo task.

    patch, test_patch  gold patch and test patch (unified diffs) or None
    test_files         globs of files restored from the base before grading (besides the
                       ones derived from the test patch and the test ids)
    fail_to_pass, pass_to_pass  test ids of the hidden cases named FAIL_TO_PASS / PASS_TO_PASS
    test_command       argv of the first hidden case (named test runs append ids to it)
    setup              shell commands run before every test command
    extra              the other keys of ``metadata.extra.swe`` (instance_id, version ...)
    """

    patch: str | None = None
    test_patch: str | None = None
    test_files: tuple[str, ...] = ()
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    test_command: tuple[str, ...] | None = None
    setup: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


def _text_ref(task, value: Any, what: str) -> str | None:
    """Inline text, or ``{file: rel}`` read relative to the task's YAML file."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping) and set(value) == {"file"}:
        path = _task_dir(task) / str(value["file"])
        try:
            return path.read_text(encoding="utf-8")
        except OSError as e:
            raise SWEError(f"task {task.id}: {what}: cannot read {path}: {e}") from None
    raise SWEError(f"task {task.id}: {what} must be text or {{file: path}}, got {type(value).__name__}")


_DATA_CACHE: dict[tuple, SWEData] = {}


def swe_data(task) -> SWEData:
    """The `SWEData` of a task (empty lists for a repo task without SWE fields)."""
    key = (task.content_hash, getattr(task, "source_path", None))
    hit = _DATA_CACHE.get(key)
    if hit is not None:
        return hit
    raw = dict((task.metadata.extra or {}).get("swe") or {})
    hidden = task.cases("hidden")
    f2p = next((c for c in hidden if c.name == FAIL_TO_PASS), None)
    p2p = next((c for c in hidden if c.name == PASS_TO_PASS), None)
    command = next((tuple(c.command) for c in hidden if c.command), None)
    globs = raw.pop("test_files", None) or ()
    if isinstance(globs, str):
        globs = (globs,)
    repo = getattr(task, "repo", None)
    data = SWEData(
        patch=_text_ref(task, raw.pop("patch", None), "metadata.extra.swe.patch"),
        test_patch=_text_ref(task, raw.pop("test_patch", None), "metadata.extra.swe.test_patch"),
        test_files=tuple(str(g) for g in globs),
        fail_to_pass=tuple(f2p.tests or ()) if f2p else (),
        pass_to_pass=tuple(p2p.tests or ()) if p2p else (),
        test_command=command,
        setup=tuple(getattr(repo, "setup", None) or ()),
        extra=raw,
    )
    _DATA_CACHE[key] = data
    return data


# =========================================================================== patches


def _strip_prefix(p: str) -> str | None:
    if p in ("/dev/null", "dev/null") or not p:
        return None
    p = p.strip('"')
    return p[2:] if p[:2] in ("a/", "b/") else p


def patch_paths(patch: str) -> tuple[set[str], set[str], set[str]]:
    """(modified, added, removed) paths of a unified diff (renames: old removed, new added)."""
    import unidiff  # noqa: PLC0415 (a dependency, only needed here)
    try:
        ps = unidiff.PatchSet(patch)
    except unidiff.UnidiffParseError as e:
        raise SWEError(f"not a unified diff: {e}") from None
    modified, added, removed = set(), set(), set()
    for pf in ps:
        src, tgt = _strip_prefix(pf.source_file), _strip_prefix(pf.target_file)
        if pf.is_added_file or src is None:
            added.add(tgt)
        elif pf.is_removed_file or tgt is None:
            removed.add(src)
        elif src != tgt:
            removed.add(src)
            added.add(tgt)
        else:
            modified.add(tgt)
    return modified, added - {None}, removed - {None}


def apply_patch(files: Mapping[str, str | None], patch: str) -> dict[str, str | None]:
    """The files a patch touches after applying it to `files` (``git apply``, strict
    context): {path: new text, or None when the patch deletes it}."""
    if not patch or not patch.strip():
        return {}
    modified, added, removed = patch_paths(patch)
    with tempfile.TemporaryDirectory(prefix="codegym-patch-") as tmp:
        root = Path(tmp) / "t"
        root.mkdir()
        for p in modified | removed | added:
            text = files.get(p)
            if text is None:
                continue
            full = root / p
            full.parent.mkdir(parents=True, exist_ok=True)
            with open(full, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
                fh.write(text)
        env = {**os.environ, **_GIT_ENV, "GIT_CEILING_DIRECTORIES": tmp}
        p = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=root, env=env,
                           input=patch.encode("utf-8", "surrogateescape"), capture_output=True)
        if p.returncode != 0:
            raise SWEError("the patch does not apply: " + p.stderr.decode("utf-8", "replace").strip())
        out: dict[str, str | None] = {}
        for path in modified | removed | added:
            full = root / path
            if full.is_file():
                with open(full, encoding="utf-8", errors="surrogateescape", newline="") as fh:
                    out[path] = fh.read()
            else:
                out[path] = None
        return out


# =========================================================================== grading tree


_HIJACK_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
_LIFECYCLE = frozenset({"setUpClass", "tearDownClass", "setUpModule", "tearDownModule"})


def _shadows_stdlib(path: str) -> bool:
    parts = path.split("/")
    if len(parts) == 1 and path.endswith(".py"):
        return path[:-3] in sys.stdlib_module_names
    return len(parts) == 2 and parts[1] == "__init__.py" and parts[0] in sys.stdlib_module_names


def _django_to_dotted(test_id: str) -> str | None:
    m = re.fullmatch(r"(\S+) \(([\w.]+)\)", test_id.strip())
    return f"{m.group(2)}.{m.group(1)}" if m else None


def file_of_test_id(test_id: str, known: Iterable[str]) -> str | None:
    """The file that defines a test id (pytest node id, unittest dotted id or Django form)."""
    if "::" in test_id or test_id.endswith(".py"):
        return test_id.split("::", 1)[0]
    known = set(known)
    dotted = _django_to_dotted(test_id) or test_id
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        stem = "/".join(parts[:k])
        for cand in (f"{stem}.py", f"{stem}/__init__.py"):
            if cand in known:
                return cand
    return None


def restore_paths(task, base: Mapping[str, Any], tree: Mapping[str, Any]) -> set[str]:
    """Paths graded with the task's content, not the candidate's (see the module docstring)."""
    data = swe_data(task)
    out: set[str] = set()
    test_patch_files: set[str] = set()
    if data.test_patch:
        modified, added, removed = patch_paths(data.test_patch)
        test_patch_files = modified | added | removed
        out |= test_patch_files
    known = set(base) | test_patch_files
    for tid in (*data.fail_to_pass, *data.pass_to_pass):
        f = file_of_test_id(tid, known)
        if f is not None:
            out.add(f)
    for f in list(out):  # packages the test modules are imported through
        parts = f.split("/")[:-1]
        for k in range(1, len(parts) + 1):
            init = "/".join(parts[:k]) + "/__init__.py"
            if init in base:
                out.add(init)
    if data.test_files:
        for p in set(base) | set(tree):
            if any(fnmatch.fnmatchcase(p, g) for g in data.test_files):
                out.add(p)
    # the test runner's own hooks and configuration: every conftest.py (a hook can turn
    # every report into a pass), and a pytest section that changed in a way that can
    # load code or change what is collected (addopts = -p plugin, pythonpath, ...)
    for p in set(base) | set(tree):
        name = p.rsplit("/", 1)[-1]
        if name == "conftest.py":
            out.add(p)
        elif name in _RUNNER_CONFIGS and _pytest_section(tree.get(p), name) != _pytest_section(base.get(p), name):
            out.add(p)
    return out


#: files that may configure pytest, and how to read them
_RUNNER_CONFIGS = {"pytest.ini": "ini", ".pytest.ini": "ini", "tox.ini": "ini", "setup.cfg": "ini",
                   "pyproject.toml": "toml"}
#: pytest settings that cannot make a failing test pass (their changes are the candidate's)
_BENIGN_PYTEST_KEYS = frozenset({"filterwarnings", "markers", "minversion", "doctest_optionflags",
                                 "junit_family", "junit_suite_name", "junit_logging", "log_cli",
                                 "log_cli_level", "log_cli_format", "log_level", "log_format",
                                 "log_date_format", "console_output_style", "empty_parameter_set_mark"})


def _pytest_section(content: str | bytes | None, name: str):
    """The pytest settings of a configuration file that are not `_BENIGN_PYTEST_KEYS`
    (None when it has none; unparseable content is returned as is, so any change to
    it counts)."""
    if content is None:
        return None
    text = content.decode("utf-8", "surrogateescape") if isinstance(content, bytes) else content
    try:
        if _RUNNER_CONFIGS[name] == "toml":
            import tomllib
            secs = tomllib.loads(text).get("tool", {}).get("pytest", {})
            secs = secs.get("ini_options", secs) if isinstance(secs, dict) else secs
        else:
            import configparser
            cp = configparser.RawConfigParser(strict=False, interpolation=None)
            cp.read_string(text)
            secs = {k: v for sec in ("pytest", "tool:pytest") if cp.has_section(sec) for k, v in cp.items(sec)}
        if isinstance(secs, dict):
            secs = {k: v for k, v in secs.items() if k not in _BENIGN_PYTEST_KEYS}
        return json.dumps(secs, sort_keys=True, default=str) if secs else None
    except Exception:  # noqa: BLE001 -- unreadable config: compare the raw text
        return text


def _as_bytes(v: str | bytes) -> bytes:
    return v if isinstance(v, bytes) else v.encode("utf-8", "surrogateescape")


def grading_tree(task, files: Mapping[str, str | bytes | None], split: str = "hidden"
                 ) -> tuple[dict[str, str | bytes], list[str]]:
    """(the tree the tests of `split` run on, notes for the report).

    `files` overlays the task's base repository (a None value deletes a file); a task
    without ``repo`` has no base, `files` is then the whole tree and nothing is restored."""
    notes: list[str] = []
    has_repo = getattr(task, "repo", None) is not None
    base: Mapping[str, str] = base_tree(task).files if has_repo else {}
    tree: dict[str, str | bytes] = dict(base)
    for p, c in files.items():
        if c is None:
            tree.pop(p, None)
        else:
            tree[p] = c
    if not has_repo:
        return tree, notes
    data = swe_data(task)
    restore = restore_paths(task, base, tree)
    changed = sorted(p for p in restore if tree.get(p) != base.get(p))
    for p in restore:
        if p in base:
            tree[p] = base[p]
        else:
            tree.pop(p, None)
    if changed:
        notes.append(f"test files restored from the task: {', '.join(changed[:10])}"
                     + (" ..." if len(changed) > 10 else ""))
    patch_added: set[str] = set()
    if split in ("hidden", "all") and data.test_patch:
        try:
            new = apply_patch({p: (v if isinstance(v, str) else v.decode("utf-8", "surrogateescape"))
                               for p, v in tree.items()}, data.test_patch)
        except SWEError as e:
            raise SWEError(f"task {task.id}: the test patch does not apply to the base: {e}") from None
        for p, c in new.items():
            if c is None:
                tree.pop(p, None)
            else:
                tree[p] = c
                if p not in base:
                    patch_added.add(p)
    dropped = sorted(p for p in tree if p not in base and p not in patch_added
                     and (p.rsplit("/", 1)[-1] in _HIJACK_NAMES or p.endswith(".pth") or _shadows_stdlib(p)))
    for p in dropped:
        del tree[p]
    if dropped:
        notes.append(f"added files that would run around the tests were dropped: {', '.join(dropped)}")
    return tree, notes


# =========================================================================== running


@dataclass
class CommandRun:
    """One test command run in the sandbox.

    status   ok (the command ran; see rc) | timeout | runtime_error | memory_limit |
             output_limit | sandbox_error (the runner itself failed)
    rc       the command's exit code ("timeout" / "error" from the runner)
    output   its stdout+stderr (last 2 MiB); junit: the collected junit XML or None
    """

    status: str
    rc: Any = None
    output: str = ""
    junit: str | None = None
    message: str = ""
    cpu_s: float = 0.0
    wall_s: float = 0.0
    memory_mb: float = 0.0


def _junit_path(command: Sequence[str]) -> str | None:
    for j, a in enumerate(command):
        if a.startswith("--junitxml="):
            return a.split("=", 1)[1]
        if a == "--junitxml" and j + 1 < len(command):
            return command[j + 1]
    return None


def with_setup(command: Sequence[str], setup: Sequence[str]) -> list[str]:
    """`command` preceded by the setup shell commands (one ``sh -c``; a failing setup
    command stops the run)."""
    if not setup:
        return list(command)
    script = "set -e\n" + "\n".join(setup) + '\nexec "$@"\n'
    return ["sh", "-c", script, "codegym-setup", *command]


def run_command(sandbox, tree: Mapping[str, str | bytes], command: Sequence[str], limits) -> CommandRun:
    """Run `command` in a fresh sandbox run directory holding `tree` (cwd = its root)."""
    from codegym.judge import harness  # noqa: PLC0415
    from codegym.judge.run import _exec_message  # noqa: PLC0415 (one wording of sandbox failures)
    build = sandbox.build("python", {"main.py": harness.COMMAND_RUNNER})
    if not build.ok:
        return CommandRun("sandbox_error", message=_exec_message(build.result) if build.result else "build failed")
    extra = {f"ws/{p}": _as_bytes(c) for p, c in tree.items()
             if isinstance(p, str) and not p.startswith("/") and ".." not in p.split("/")}
    junit = _junit_path(command)
    body = json.dumps({"command": list(command), "timeout": limits.wall(), "collect": [junit] if junit else []})
    res = sandbox.run(build, stdin=body, limits=limits.replace(wall_s=limits.wall() + 5), extra_files=extra)
    run = CommandRun(status="ok", cpu_s=res.cpu_s, wall_s=res.wall_s, memory_mb=res.max_rss_mb)
    payload = None
    for line in reversed(res.stdout.split("\n")):
        if line.startswith("@cgcmd "):
            try:
                payload = json.loads(line[len("@cgcmd "):])
            except ValueError:
                payload = None
            break
    if payload is None:
        run.status = res.status if res.status != "ok" else "runtime_error"
        run.message = _exec_message(res) or "the test runner gave no report"
        return run
    run.rc = payload.get("rc")
    run.output = str(payload.get("output", ""))
    run.junit = (payload.get("files") or {}).get(junit) if junit else None
    if run.rc == "timeout":
        run.status, run.message = "timeout", "the test command timed out"
    elif run.rc == "error":
        run.message = run.output[:300]
    return run


# =========================================================================== reports


@dataclass
class TestResults:
    """Per-test statuses read from a run's report.

    statuses  id -> passed | failed | error | skipped (the worst one if an id repeats)
    complete  the runner reached its final summary (a crash or an exit mid-run: False)
    ran       number of tests the runner says it ran (None: unknown)
    errors    collection / import / class-fixture errors, as text
    source    unittest | junit | summary | counts | none
    """

    __test__ = False

    statuses: dict[str, str] = field(default_factory=dict)
    complete: bool = False
    ran: int | None = None
    errors: list[str] = field(default_factory=list)
    source: str = "none"

    def status_of(self, test_id: str) -> str | None:
        if test_id in self.statuses:
            return self.statuses[test_id]
        dotted = _django_to_dotted(test_id)
        if dotted and dotted in self.statuses:
            return self.statuses[dotted]
        if "::" in test_id:
            from codegym.judge.harness import nodeid_to_junit  # noqa: PLC0415
            return self.statuses.get(nodeid_to_junit(test_id))
        return None

    @property
    def failures(self) -> int:
        return sum(1 for s in self.statuses.values() if s in ("failed", "error"))


_SEVERITY = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_UT_STATUS = r"ok|FAIL|ERROR|skipped(?: .*)?|expected failure|unexpected success"
_UT_LINE = re.compile(r"^(?P<name>[^\s()]+) \((?P<paren>[^\s()]+)\)(?P<sub> \(.*\))?"
                      r"(?: (?P<doc>.*?))? \.\.\. ?(?P<status>" + _UT_STATUS + r")?\s*$")
_UT_HEADER = re.compile(r"^(?P<name>[^\s()]+) \((?P<paren>[^\s()]+)\)\s*$")
_UT_START = re.compile(r"^(?P<name>[^\s()]+) \((?P<paren>[^\s()]+)\)(?: [^()]*?)? \.\.\. ")
_UT_DOC_STATUS = re.compile(r"^.* \.\.\. (?P<status>" + _UT_STATUS + r")\s*$")
_UT_BARE_STATUS = re.compile(r"^(?P<status>" + _UT_STATUS + r")\s*$")
_UT_SECTION = re.compile(r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<name>[^\s()]+) "
                         r"\((?P<paren>[^\s()]+)\)(?: \(.*\))?\s*$")
_UT_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*$")
_UT_RAN_ANY = re.compile(r"^Ran \d+ tests? in ", re.M)
_UT_LINE_ANY = re.compile(_UT_LINE.pattern, re.M)
_FAILED_TEST = "unittest.loader._FailedTest."


def _ut_status(word: str) -> str:
    if word == "ok" or word == "expected failure":
        return "passed"
    if word.startswith("skipped"):
        return "skipped"
    if word == "ERROR":
        return "error"
    return "failed"  # FAIL, unexpected success


def parse_unittest(output: str) -> TestResults:
    """Read ``python -m unittest -v`` output (Python 3.8+: ``name (module.Class)``,
    3.11+: ``name (module.Class.name)``)."""
    res = TestResults(source="unittest")

    def put(name: str, paren: str, status: str) -> None:
        if paren.startswith(_FAILED_TEST):
            res.errors.append(f"{paren[len(_FAILED_TEST):]}: could not be imported")
            return
        if name in _LIFECYCLE:
            res.errors.append(f"{name} ({paren}): {status}")
            return
        tid = paren if paren.endswith("." + name) else f"{paren}.{name}"
        old = res.statuses.get(tid)
        if old is None or _SEVERITY[status] > _SEVERITY[old]:
            res.statuses[tid] = status

    pending: tuple[str, str] | None = None
    for raw in output.splitlines():
        line = raw.strip()
        m = _UT_RAN.match(line)
        if m:
            res.ran, res.complete = int(m.group(1)), True
            pending = None
            continue
        m = _UT_SECTION.match(line)
        if m:
            put(m.group("name"), m.group("paren"), "error" if m.group("kind") == "ERROR" else "failed")
            pending = None
            continue
        m = _UT_LINE.match(line)
        if m:
            name, paren, status = m.group("name"), m.group("paren"), m.group("status")
            if m.group("sub"):  # a subtest: only failures are reported
                if status and _ut_status(status) in ("failed", "error"):
                    put(name, paren, _ut_status(status))
                continue
            if status:
                put(name, paren, _ut_status(status))
                pending = None
            else:  # status follows later (after the test's own output, or its subtests)
                pending = (name, paren)
            continue
        m = _UT_HEADER.match(line) or _UT_START.match(line)
        if m:  # the status follows: after a docstring line, or after the test's own output
            pending = (m.group("name"), m.group("paren"))
            continue
        if pending is not None:
            m = _UT_DOC_STATUS.match(line) or _UT_BARE_STATUS.match(line)
            if m:
                put(*pending, _ut_status(m.group("status")))
                pending = None
    return res


def parse_results(output: str, junit_xml: str | None = None) -> TestResults:
    """Per-test results of a run: junit XML when given, else unittest's verbose report,
    else pytest's ``-rA`` / count lines (`codegym.judge.harness.parse_test_report`)."""
    from codegym.judge import harness  # noqa: PLC0415
    if not junit_xml and (_UT_RAN_ANY.search(output) or _UT_LINE_ANY.search(output)
                          and not re.search(r"^(PASSED|FAILED|ERROR) \S+::", output, re.M)):
        return parse_unittest(output)
    rep = harness.parse_test_report(output, junit_xml)
    res = TestResults(statuses=dict(rep.statuses), source=rep.source)
    if rep.source == "junit":
        res.complete = True
    elif rep.counts:
        res.complete = True
        res.ran = sum(v for k, v in rep.counts.items() if k in ("passed", "failed", "error", "xfailed", "xpassed"))
    if not res.statuses and res.ran is None and rep.counts:
        res.ran = 0
    if re.search(r"^(?:ERROR collecting|E\s+\w+Error)", output, re.M) and rep.counts.get("error"):
        res.errors.append("collection errors")
    return res


def _case_status_lines(statuses: Mapping[str, str]) -> str:
    """The `CaseResult.diff` of a repo case: one ``<status>  <test id>`` line per listed
    test that did not pass (read back by `resolution`)."""
    return "\n".join(f"{s}  {t}" for t, s in statuses.items() if s != "passed")


def evaluate_case(wanted: Sequence[str], run: CommandRun) -> tuple[bool, float, str, dict[str, str]]:
    """(passed, score, message, statuses of the listed tests) of one case on one run."""
    from codegym.judge.run import _clip, _tail  # noqa: PLC0415
    res = parse_results(run.output, run.junit)
    statuses: dict[str, str] = {}
    problems: list[str] = []  # the causes first: the message is clipped
    if not res.complete:
        problems.append("the test run did not finish (no final summary): no test counts as passed")
    if res.errors:
        problems.append("errors outside tests: " + "; ".join(e[:120] for e in res.errors[:3])
                        + (" ..." if len(res.errors) > 3 else ""))
    if wanted:
        for t in wanted:
            st = res.status_of(t)
            if st is None:
                st = "missing"
            elif not res.complete:
                st = "incomplete"
            statuses[t] = st
        bad = [t for t, s in statuses.items() if s != "passed"]
        ok = not bad
        score = 1.0 - len(bad) / len(wanted)
        if bad:
            shown = "; ".join(f"{t}: {'missing from the report' if statuses[t] == 'missing' else statuses[t]}"
                              for t in bad[:4])
            problems.append(f"{len(bad)} of {len(wanted)} listed test(s) did not pass: {shown}"
                            + (" ..." if len(bad) > 4 else ""))
    else:
        ran = res.ran if res.ran is not None else len(res.statuses)
        ok = run.rc == 0 and res.complete and ran > 0 and res.failures == 0
        score = 1.0 if ok else 0.0
        if not ok:
            problems.append(f"exit code {run.rc}, {res.failures} failed, {ran} ran")
    message = "" if ok else _clip("\n".join(problems) + "\n" + _tail(run.output, 400))
    return ok, score, message, statuses


def run_repo_cases(task, files: Mapping[str, Any], cases: Sequence[Any], sandbox, early_exit: bool) -> list:
    """The judge's ``repo`` kind: a `CaseResult` (or None: not run) per case.

    Cases of one split that share a command share one run. A case passes when every
    listed test passed (score: the fraction that did), or, without a list, when the
    command exited 0 after running at least one test with no failure."""
    from codegym.judge.run import CaseResult  # noqa: PLC0415
    out: list[Any] = [None] * len(cases)
    trees: dict[str, tuple[dict, list[str]] | SWEError] = {}
    runs: dict[tuple, CommandRun] = {}
    setup = list(getattr(getattr(task, "repo", None), "setup", None) or ())
    for i, c in enumerate(cases):
        base = dict(index=c.index, name=c.name, split=c.split, weight=c.weight)
        if c.split not in trees:
            try:
                trees[c.split] = grading_tree(task, files, c.split)
            except SWEError as e:
                trees[c.split] = e
        tree = trees[c.split]
        if isinstance(tree, SWEError):
            out[i] = CaseResult(status="sandbox_error", message=str(tree), **base)
            if early_exit:
                break
            continue
        limits = task.limits.replace(time_s=c.time_s) if c.time_s else task.limits
        command = with_setup(list(c.command or []), setup)
        key = (c.split, tuple(command), limits)
        run = runs.get(key)
        if run is None:
            run = runs[key] = run_command(sandbox, tree[0], command, limits)
        base.update(time_s=run.cpu_s, wall_s=run.wall_s, memory_mb=run.memory_mb)
        if run.status != "ok":
            status = run.status if run.status in ("timeout", "memory_limit", "output_limit", "sandbox_error") \
                else "runtime_error"
            out[i] = CaseResult(status=status, message=run.message, **base)
        else:
            ok, score, message, statuses = evaluate_case(list(c.tests or []), run)
            if tree[1] and not ok:
                message = (message + "\nnote: " + "; ".join(tree[1]))[:1200]
            out[i] = CaseResult(status="passed" if ok else "wrong_answer", score=score, message=message,
                                diff=_case_status_lines(statuses), **base)
        if early_exit and not out[i].passed:
            break
    return out


# =========================================================================== resolution


@dataclass
class Resolution:
    """SWE-bench's verdict on a hidden-split report: status FULL | PARTIAL | NO, and the
    status of every FAIL_TO_PASS and PASS_TO_PASS test."""

    status: str
    fail_to_pass: dict[str, str] = field(default_factory=dict)
    pass_to_pass: dict[str, str] = field(default_factory=dict)

    @property
    def resolved(self) -> bool:
        return self.status == "FULL"

    @staticmethod
    def _count(d: Mapping[str, str]) -> tuple[int, int]:
        return sum(1 for s in d.values() if s == "passed"), len(d)

    @property
    def f2p_fraction(self) -> float:
        a, n = self._count(self.fail_to_pass)
        return a / n if n else 1.0

    @property
    def p2p_fraction(self) -> float:
        a, n = self._count(self.pass_to_pass)
        return a / n if n else 1.0

    def summary(self) -> str:
        (a, n), (b, m) = self._count(self.fail_to_pass), self._count(self.pass_to_pass)
        return f"resolution {self.status}: {FAIL_TO_PASS} {a}/{n}, {PASS_TO_PASS} {b}/{m}"

    def to_dict(self) -> dict:
        return {"resolution": self.status, "resolved": self.resolved,
                "fail_to_pass": dict(self.fail_to_pass), "pass_to_pass": dict(self.pass_to_pass),
                "summary": self.summary()}


def _statuses_from_case(tests: Sequence[str], cr: Mapping[str, Any] | Any | None) -> dict[str, str]:
    get = (lambda k: cr.get(k)) if isinstance(cr, Mapping) else (lambda k: getattr(cr, k, None))
    if cr is None:
        return {t: "skipped" for t in tests}
    status = get("status")
    if status == "passed":
        return {t: "passed" for t in tests}
    if status != "wrong_answer":  # timeout, runtime_error, skipped, sandbox_error
        return {t: str(status) for t in tests}
    listed = {}
    for line in (get("diff") or "").splitlines():
        st, _, tid = line.partition("  ")
        if tid:
            listed[tid] = st
    return {t: listed.get(t, "passed") for t in tests}


def resolution(task, report) -> Resolution:
    """The `Resolution` of a hidden (or "all") judge report of a repo task (a
    `JudgeReport` or its ``to_dict()``). Tasks without FAIL_TO_PASS / PASS_TO_PASS cases
    count the tests of every hidden case as FAIL_TO_PASS."""
    cases = report["cases"] if isinstance(report, Mapping) else report.cases
    by_name = {}
    for cr in cases:
        name = cr.get("name") if isinstance(cr, Mapping) else cr.name
        split = cr.get("split") if isinstance(cr, Mapping) else cr.split
        if split in ("hidden", ""):
            by_name.setdefault(name, cr)
    hidden = task.cases("hidden")
    named = [c for c in hidden if c.name in (FAIL_TO_PASS, PASS_TO_PASS)]
    f2p: dict[str, str] = {}
    p2p: dict[str, str] = {}
    if named:
        for c in named:
            target = f2p if c.name == FAIL_TO_PASS else p2p
            target.update(_statuses_from_case(list(c.tests or []), by_name.get(c.name)))
    else:
        for k, c in enumerate(hidden):
            name = c.name or f"hidden[{k}]"
            tests = list(c.tests or []) or [name]
            f2p.update(_statuses_from_case(tests, by_name.get(name)))
    res = Resolution("NO", f2p, p2p)
    if res.f2p_fraction == 1.0 and res.p2p_fraction == 1.0:
        res.status = "FULL"
    elif 0.0 < res.f2p_fraction < 1.0 and res.p2p_fraction == 1.0:
        res.status = "PARTIAL"
    return res


def annotate_report(report, task) -> None:
    """Prefix a repo task's hidden-split `JudgeReport.message` with its resolution."""
    if report.split not in ("hidden", "all") or report.verdict == "sandbox_error" and not report.cases:
        return
    summary = resolution(task, report).summary()
    report.message = summary + (f"; {report.message}" if report.message else "")


@dataclass
class SWEGrade:
    """`grade`'s answer: the resolution and the judge report it comes from."""

    resolution: Resolution
    report: Any

    @property
    def resolved(self) -> bool:
        return self.resolution.resolved

    def to_dict(self) -> dict:
        return {**self.resolution.to_dict(), "report": self.report.to_dict()}


def grade(task, files: Mapping[str, Any], sandbox=None) -> SWEGrade:
    """Judge `files` (an overlay of the base repository, None deletes) on the hidden split
    and return the SWE-bench resolution."""
    from codegym.judge.run import judge  # noqa: PLC0415
    rep = judge(task, files, sandbox=sandbox, split="hidden")
    return SWEGrade(resolution(task, rep), rep)


# =========================================================================== reference


def gold_patch(task) -> str:
    """The task's gold patch (unified diff)."""
    patch = swe_data(task).patch
    if not patch:
        raise SWEError(f"task {task.id} has no gold patch (metadata.extra.swe.patch)")
    return patch


def reference_files(task) -> dict[str, str | None]:
    """The files the gold patch changes, after it: {path: text, None = deleted}."""
    return apply_patch(base_tree(task).files, gold_patch(task))


def with_reference(task):
    """`task` with a ``reference`` solution holding the gold patch's files (what
    `codegym.agents.OracleAgent` writes), or `task` itself when it already has one or
    has no gold patch. The copy keeps the task's content_hash: the solution is a function
    of the task's repository and patch, so it names the same task."""
    if "reference" in task.solutions or not swe_data(task).patch:
        return task
    from codegym.tasks.schema import Solution  # noqa: PLC0415
    files = {p: c for p, c in reference_files(task).items() if c is not None}
    if not files:
        return task
    sol = Solution(language=task.language, files=files, description="gold patch applied to the base")
    new = task.model_copy(update={"solutions": {**task.solutions, "reference": sol}})
    new.__dict__["content_hash"] = task.content_hash  # see the docstring
    return new


# =========================================================================== SWE-bench import

#: SWE-bench's test runners of repositories that do not use plain pytest
#: (argv prefix; the test targets derived from the test patch are appended)
_REPO_COMMANDS: dict[str, tuple[str, ...]] = {
    "django/django": ("./tests/runtests.py", "--verbosity", "2", "--settings=test_sqlite", "--parallel", "1"),
    "sympy/sympy": ("bin/test", "-C", "--verbose"),
}
_PYTEST_COMMAND = ("pytest", "-rA", "-p", "no:cacheprovider")


def _id_list(value: Any, field_name: str, iid: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise SWEError(f"{iid}: {field_name} is not JSON: {value[:80]!r}") from None
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise SWEError(f"{iid}: {field_name} must be a list of test ids")
    return list(value)


def _test_targets(repo: str, test_patch: str) -> list[str]:
    """What SWE-bench passes its runner: the test files of the test patch (Django:
    dotted module names under tests/)."""
    modified, added, _removed = patch_paths(test_patch)
    files = sorted(p for p in modified | added if p.endswith(".py"))
    if repo == "django/django":
        out = []
        for p in files:
            p = p[len("tests/"):] if p.startswith("tests/") else p
            out.append(p[:-3].replace("/", "."))
        return out
    return files


def _instance_image(iid: str) -> str:
    # SWE-bench's published evaluation images (namespace "swebench" on Docker Hub)
    return f"swebench/sweb.eval.x86_64.{iid.lower().replace('__', '_1776_')}:latest"


def swebench_task(rec: Mapping[str, Any], *, suite: str = "swebench", test_command: Sequence[str] | None = None,
                  repo_url: str = "https://github.com/{repo}.git") -> tuple[dict, dict[str, str]]:
    """One SWE-bench instance -> (task mapping, sibling files {relative path: text}).
    `repo_url` is formatted with the record's ``repo`` (``owner/name``): a mirror or a
    local clone can stand in for GitHub."""
    iid = str(rec.get("instance_id") or "")
    for k in ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement"):
        if not rec.get(k):
            raise SWEError(f"{iid or '?'}: missing field {k}")
    from codegym.importers.common import task_name  # noqa: PLC0415
    name = task_name(iid)
    repo = str(rec["repo"])
    f2p = _id_list(rec.get("FAIL_TO_PASS"), "FAIL_TO_PASS", iid)
    p2p = _id_list(rec.get("PASS_TO_PASS"), "PASS_TO_PASS", iid)
    if not f2p:
        raise SWEError(f"{iid}: FAIL_TO_PASS is empty")
    patch_paths(rec["patch"])  # both must be readable diffs
    prefix = tuple(test_command) if test_command else _REPO_COMMANDS.get(repo, _PYTEST_COMMAND)
    command = [*prefix, *_test_targets(repo, str(rec["test_patch"]))]
    hidden = [{"name": FAIL_TO_PASS, "command": command, "tests": f2p}]
    if p2p:
        hidden.append({"name": PASS_TO_PASS, "command": command, "tests": p2p})
    extra = {"patch": {"file": f"{name}/gold.patch"}, "test_patch": {"file": f"{name}/test.patch"},
             "instance_id": iid}
    for k in ("version", "environment_setup_commit", "created_at", "hints_text"):
        if rec.get(k) not in (None, ""):
            extra[k] = str(rec[k])
    task = {
        "id": f"{suite}/{name}",
        "title": f"{repo}: {iid}",
        "statement": {"file": f"{name}/issue.md"},
        "kind": "repo",
        "language": "python",
        "repo": {"url": repo_url.format(repo=repo), "commit": str(rec["base_commit"]),
                 "image": _instance_image(iid)},
        "tests": {"hidden": hidden},
        "metadata": {"source": "swe-bench", "url": f"https://github.com/{repo}", "tags": [repo],
                     "extra": {"swe": extra}},
    }
    files = {f"{name}/gold.patch": str(rec["patch"]), f"{name}/test.patch": str(rec["test_patch"]),
             f"{name}/issue.md": str(rec["problem_statement"])}
    return task, files


def import_swebench(path: str | os.PathLike, out_dir: str | os.PathLike, *, suite: str | None = None,
                    ids: Sequence[str] | None = None, limit: int | None = None,
                    test_command: Sequence[str] | None = None, validate: bool = True,
                    repo_url: str = "https://github.com/{repo}.git"):
    """Import SWE-bench instances (JSON list, JSON lines, optionally gzip) into a suite
    folder: ``suite.yaml``, ``<name>.yaml`` per instance and ``<name>/{issue.md,
    gold.patch, test.patch}``. Returns a `codegym.importers.common.ImportReport`.

    Ids are ``<suite>/<instance_id>`` (suite: the folder name by default). Tests run
    SWE-bench's way: the test files of the test patch, with pytest ``-rA`` (Django's and
    SymPy's own runners for those repositories) or `test_command`; the repositories need
    their environment (``repo.image``: SWE-bench's evaluation image) to run."""
    import time  # noqa: PLC0415
    from codegym.importers.common import ImportReport, read_records, write_suite  # noqa: PLC0415
    t0 = time.monotonic()
    out = Path(out_dir)
    suite = suite or out.name
    report = ImportReport(source=str(path), out_dir=str(out))
    records = read_records(path)
    wanted = set(ids) if ids else None
    tasks: list[dict] = []
    siblings: dict[str, str] = {}
    for rec in records:
        iid = str(rec.get("instance_id", "?")) if isinstance(rec, Mapping) else "?"
        if wanted is not None and iid not in wanted:
            continue
        if limit is not None and len(tasks) >= limit:
            break
        try:
            if not isinstance(rec, Mapping):
                raise SWEError("record is not a JSON object")
            task, files = swebench_task(rec, suite=suite, test_command=test_command, repo_url=repo_url)
        except SWEError as e:
            report.skipped.append((iid, str(e)))
            continue
        tasks.append(task)
        siblings.update(files)
        report.count(str(rec.get("repo")))
    for rel, text in siblings.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    defaults = {"kind": "repo", "language": "python",
                "limits": {"time_s": 600, "memory_mb": 8192, "processes": 512, "disk_mb": 8192,
                           "output_bytes": 1 << 25, "open_files": 4096, "file_size_mb": 1024}}
    write_suite(out, tasks, name=suite, defaults=defaults, validate=validate,
                description=f"SWE-bench instances imported from {Path(path).name}")
    report.written = [t["id"] for t in tasks]
    report.elapsed_s = time.monotonic() - t0
    return report


def _cmd_import_swebench(args: argparse.Namespace) -> int:
    try:
        rep = import_swebench(args.file, args.out, suite=args.suite_name, ids=args.ids or None, limit=args.limit,
                              test_command=shlex.split(args.test_command) if args.test_command else None,
                              validate=not args.no_validate, repo_url=args.repo_url)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(rep.to_dict(), indent=2) if args.json else rep.summary())
    return 0 if rep.written else 1


def add_swebench_import(import_subparsers) -> argparse.ArgumentParser:
    """Add ``swebench`` to the subcommands of ``codegym import`` (the options follow
    codegym.cli.imports's: FILE, --out, --suite-name, --limit, --no-validate, --json)."""
    p = import_subparsers.add_parser(
        "swebench", help="SWE-bench instances (.json / .jsonl[.gz]) as repo tasks",
        description="Import SWE-bench task instances (fields instance_id, repo, base_commit, patch, "
                    "test_patch, problem_statement, FAIL_TO_PASS, PASS_TO_PASS, version, "
                    "environment_setup_commit) into a suite folder of repo tasks.")
    p.add_argument("file", metavar="FILE", help="instances: .json (list) or .jsonl, optionally .gz")
    p.add_argument("--out", required=True, metavar="DIR", help="suite folder to write (e.g. tasks/swebench)")
    p.add_argument("--suite-name", default=None, help="suite part of the task ids (default: the folder name)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N instances")
    p.add_argument("--ids", nargs="+", default=None, metavar="INSTANCE_ID", help="only these instance ids")
    p.add_argument("--test-command", default=None,
                   help="test runner argv prefix (default: pytest -rA, or the repository's SWE-bench runner)")
    p.add_argument("--repo-url", default="https://github.com/{repo}.git",
                   help="repository URL template; {repo} is the record's owner/name (default: GitHub)")
    p.add_argument("--no-validate", action="store_true", help="do not load the written files back")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    p.set_defaults(func=_cmd_import_swebench)
    return p


#: the hook codegym.cli.imports calls for modules listed in its IMPORT_MODULES
register_import = add_swebench_import
