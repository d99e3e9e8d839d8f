"""Repository sources and patches of repo tasks (``kind: repo``); docs/swe.md explains them.

- `RepoSource`, `repo_source`: where a task's repository comes from (a directory, a git
  bundle, a tarball or a git URL; relative paths are relative to the task's YAML file).
- `materialize`, `base_tree`: the base tree on disk; a `BaseTree` is the one pristine git
  working tree per source and process (clones cached under ``$CODEGYM_CACHE/swe``).
- `SWEData`, `swe_data`: the task's gold patch, test patch, FAIL_TO_PASS / PASS_TO_PASS
  ids, test command, setup commands, environment variables and its environment's recipe
  (Python version, packages, the repository's own install); `env_spec` and `repo_install`:
  that recipe as `codegym.sandbox.repoenv`'s `PythonEnvSpec` (the shared environment) and
  `RepoInstall` (the repository installed at the base commit).
- `git_dir`: a local git directory of a git, bundle or directory source (history walks).
- patches (`patch_paths`, `apply_patch`, checked first) are `codegym.tasks.patches`'.
- `gold_patch`, `reference_files`, `with_reference`: the gold patch as the task's
  ``reference`` solution.

Grading is `codegym.judge.kinds.repo`; the SWE-bench import `codegym.importers.swebench`.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import re
import shutil
import tarfile
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codegym.core.git import git, git_text
from codegym.sandbox.pyreqs import RequirementError
from codegym.sandbox.repoenv import DEFAULT_INSTALL, PythonEnvSpec, RepoInstall
from codegym.tasks.basecommit import commit_base
from codegym.tasks.patches import SWEError, apply_patch, check_relpath
from codegym.tasks.schema import Solution

if TYPE_CHECKING:
    from codegym.tasks.schema import Task


#: names of the hidden cases that hold the two SWE-bench test lists
FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"
#: test command of the bundled repositories (the stdlib runner: see docs/swe.md)
UNITTEST_COMMAND = ("python3", "-m", "unittest", "-v", "-b")

_TARBALL_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_GIT_URL_RE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*://|[\w.\-]+@[\w.\-]+:)")
#: what a commit of a task or record may be: a hex object id or a plain ref name (never an
#: option: it is given to git)
_COMMIT_RE = re.compile(r"^(?:[0-9a-fA-F]{4,64}|[A-Za-z0-9_][A-Za-z0-9_./+-]{0,200})(?:[~^][0-9]{0,4})*$")


def check_commit(commit: str, what: str = "commit") -> str:
    """`commit` when it is a hex object id or a plain ref name (``HEAD``, ``v1.2``,
    ``main~1``); `SWEError` otherwise (it is given to git, so never an option)."""
    if not isinstance(commit, str) or not _COMMIT_RE.match(commit) or ".." in commit:
        raise SWEError(f"{what} {str(commit)[:80]!r} is not a commit id or a ref name")
    return commit


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


def _task_dir(task: Task) -> Path:
    sp = getattr(task, "source_path", None)
    return Path(sp).resolve().parent if sp else Path.cwd()


def repo_source(task: Task) -> RepoSource:
    """The `RepoSource` of a repo task (relative paths: relative to its YAML file, or to
    the working directory for tasks built in code)."""
    repo = getattr(task, "repo", None)
    if repo is None or not getattr(repo, "url", None):
        raise SWEError(f"task {task.id} has no repository (repo.url)")
    url, commit = str(repo.url), (str(repo.commit) if repo.commit else None)
    if commit is not None:
        check_commit(commit, f"task {task.id}: repo.commit")
    return source_of(url, commit, _task_dir(task), f"task {task.id}: repo.url")


def source_of(url: str, commit: str | None, base: Path, what: str = "repository") -> RepoSource:
    """The `RepoSource` a repository URL or path names: a git URL (``scheme://`` or
    ``user@host:``), else a path (relative to `base`) to a folder, a ``.bundle`` or a tarball;
    SWEError naming `what` otherwise. The one reading of a repository location (tasks,
    mined suites, ``codegym tasks mine``)."""
    if _GIT_URL_RE.match(url):
        return RepoSource("git", url, commit)
    path = Path(url).expanduser()
    if not path.is_absolute():
        path = base / path
    path = path.resolve()
    name = path.name.lower()
    if name.endswith(".bundle"):
        kind = "bundle"
    elif name.endswith(_TARBALL_SUFFIXES):
        kind = "tarball"
    elif path.is_dir():
        kind = "dir"
    else:
        raise SWEError(f"{what} {url!r} is neither a directory, a .bundle, "
                       f"a tarball nor a git URL (looked at {path})")
    if kind != "dir" and not path.is_file():
        raise SWEError(f"{what}: repository file not found: {path}")
    return RepoSource(kind, str(path), commit)


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
                git(["clone", "--quiet", "--bare", "--template=", "--end-of-options", location, str(tmp / "r")],
                    error=SWEError)
                try:
                    os.rename(tmp / "r", dest)
                except OSError:  # another process finished first: use theirs
                    pass
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        if commit and not has_commit(dest, commit):
            # a shallow mirror's commits come with their own shallow boundary
            git(["fetch", "--quiet", "--update-shallow", "--no-tags", "--end-of-options", location, commit], dest,
                error=SWEError)
    return dest


def has_commit(git_dir: str | os.PathLike, commit: str) -> bool:
    """`commit` names a commit whose object is in `git_dir` (its tree may still miss objects)."""
    return git(["cat-file", "-e", f"{check_commit(commit)}^{{commit}}"], git_dir, check=False).returncode == 0


def _safe_member(m: tarfile.TarInfo, dest: Path) -> bool:
    """What tarfile's "data" filter allows (it exists from Python 3.11.4 only): regular files,
    directories and links that stay inside `dest`, no devices; modes as given, no owners."""
    if not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
        return False
    target = os.path.realpath(dest / m.name)
    inside = str(os.path.realpath(dest)) + os.sep
    if m.name.startswith("/") or not (target + os.sep).startswith(inside):
        return False
    if m.issym():
        link = os.path.realpath(os.path.join(os.path.dirname(target), m.linkname))
        return not m.linkname.startswith("/") and (link + os.sep).startswith(inside)
    if m.islnk():
        return (os.path.realpath(dest / m.linkname) + os.sep).startswith(inside)
    return True


def _extract_tar_stream(stream, dest: Path) -> None:
    with tarfile.open(fileobj=stream, mode="r|*") as tf:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4
            try:
                tf.extractall(dest, filter="data")
            except tarfile.FilterError as e:
                raise SWEError(f"unsafe member in the archive: {e}") from None
            return
        for m in tf:  # Debian 12's 3.11.2: the same rule by hand
            if not _safe_member(m, dest):
                raise SWEError(f"unsafe member in the archive: {m.name!r}")
            m.uid = m.gid = 0
            m.uname = m.gname = ""
            m.mode &= 0o755
            tf.extract(m, dest, set_attrs=not m.issym())


def _git_export(git_dir: Path, rev: str, dest: Path) -> None:
    """Write the tree of `rev` into `dest` (no .git): every blob as stored, as a checkout on
    this machine has it (not ``git archive``, whose export-subst rewrites files such as a
    ``_version.py`` and export-ignore drops others, so patches would not apply). A path
    that leaves the tree or enters a ``.git`` is refused; a symbolic link whose target
    leaves the tree is not written (links come last, so no file is written through one)."""
    check_commit(rev, "revision")
    ls = git(["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", rev], git_dir, check=False)
    if ls.returncode != 0:
        raise SWEError(f"commit {rev} cannot be read from {git_dir}: {_git_words(ls.stderr)}")
    entries = []
    for item in ls.stdout.split(b"\0"):
        if not item:
            continue
        meta, _, path = item.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind != b"blob":
            continue  # submodules
        rel = os.fsdecode(path)
        why = check_relpath(rel)
        if why:
            raise SWEError(f"commit {rev} holds {why}: {rel!r}")
        entries.append((mode, sha, rel))
    proc = git(["cat-file", "--batch"], git_dir, input=b"".join(sha + b"\n" for _, sha, _ in entries), check=False)
    if proc.returncode != 0:
        raise SWEError(f"the files of commit {rev} cannot be read from {git_dir}: {_git_words(proc.stderr)}")
    out, pos, links = proc.stdout, 0, []
    try:
        for mode, sha, rel in entries:
            header_end = out.index(b"\n", pos)
            header = out[pos:header_end].split()
            if len(header) != 3:  # "<sha> missing": an incomplete repository
                raise SWEError(f"commit {rev}: object {sha.decode()} ({rel}) is missing from {git_dir}")
            size = int(header[2])
            data = out[header_end + 1:header_end + 1 + size]
            pos = header_end + 1 + size + 1
            if mode == b"120000":
                links.append((rel, os.fsdecode(data)))
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if mode == b"100755":
                target.chmod(0o755)
        for rel, link in links:
            inside = os.path.normpath(os.path.join(os.path.dirname(rel), link))
            if link.startswith("/") or check_relpath(inside) or inside == ".":
                continue  # a link out of the tree is not part of it
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(link, dest / rel)
    except OSError as e:  # a tree that names a path twice, as a file and as a folder
        raise SWEError(f"commit {rev} cannot be written out: {e}") from None


def _git_words(stderr: bytes) -> str:
    return " ".join(stderr.decode("utf-8", "replace").split())[:300]


def _is_bare(path: Path) -> bool:
    """A bare git repository (a mirror): HEAD, objects/ and refs/ at the top."""
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def _copy_ignore(top: Path):
    """`shutil.copytree`'s ignore of a source directory: version control, caches, and links
    whose target leaves `top` (they are not part of the tree: nothing is read through them)."""
    real_top = os.path.realpath(top)

    def ignore(folder: str, names: list[str]) -> list[str]:
        out = []
        for n in names:
            full = os.path.join(folder, n)
            if n.lower() == ".git" or n == "__pycache__" or n.endswith(".pyc"):
                out.append(n)
            elif os.path.islink(full):
                target = os.path.realpath(full)
                if not (target + os.sep).startswith(real_top + os.sep) or target == real_top:
                    out.append(n)
        return out
    return ignore


def materialize(source: RepoSource, dest: str | os.PathLike) -> Path:
    """Write the base tree of `source` into `dest` (created; must be absent or empty).
    The result holds no ``.git``."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise SWEError(f"cannot materialise into {dest}: directory is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    loc = Path(source.location)
    if source.kind == "dir":
        if source.commit or _is_bare(loc):
            if not (loc / ".git").exists() and not _is_bare(loc):
                raise SWEError(f"{loc}: commit {source.commit} given but the directory is not a git repository")
            _git_export(loc, source.commit or "HEAD", dest)
        else:
            shutil.copytree(loc, dest, symlinks=True, dirs_exist_ok=True, ignore=_copy_ignore(loc))
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
                st = os.lstat(os.path.join(root, f))
            except OSError:
                continue
            h.update(f"{os.path.relpath(os.path.join(root, f), path)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    if (path / ".git").exists():
        h.update(git(["rev-parse", "HEAD"], path, check=False).stdout)
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
    never edited). `files` lists what git tracks there: every file of the source's tree,
    those its ``.gitignore`` names too, as in the episode's workspace, a copy of `root`."""

    def __init__(self, source: RepoSource, root: Path):
        self.source = source
        self.root = root
        # The base is committed on a branch (so it is the workspace's starter commit as is)
        # and packed: every episode copies this .git, and a packed one is a few files
        # instead of hundreds of object directories to copy and delete.
        # every file of the tree, ignored ones too: the upstream tree holds files its own
        # .gitignore names (flask's tests/test_apps/.env), and its tests read them
        commit_base(root, SWEError)
        self._files: dict[str, str] | None = None
        self._lock = threading.Lock()

    @property
    def files(self) -> dict[str, str]:
        """{path: text} of the base (a shared dict: do not modify)."""
        with self._lock:
            if self._files is None:
                self._files = _tracked_files(self.root)
            return self._files

    @functools.cached_property
    def digest(self) -> str:
        """sha256 of the base tree (paths and contents): names the repository state."""
        h = hashlib.sha256()
        for p in sorted(self.files):
            data = self.files[p].encode("utf-8", "surrogateescape")
            h.update(p.encode("utf-8", "surrogateescape") + b"\0" + len(data).to_bytes(8, "big") + data)
        return h.hexdigest()


def _tracked_files(root: Path) -> dict[str, str]:
    """{path: text} of the files git tracks in `root`, read as the episode's workspace
    reads them: a symbolic link that leads out of the tree is not part of it."""
    listed = git_text(["ls-files", "-z"], root, error=SWEError)
    real_root = os.path.realpath(root) + os.sep
    files: dict[str, str] = {}
    for p in sorted(x for x in listed.split("\0") if x):
        real = os.path.realpath(root / p)
        if real.startswith(real_root) and os.path.isfile(real):
            with open(root / p, encoding="utf-8", errors="surrogateescape", newline="") as fh:
                files[p] = fh.read()
    return files


def git_dir(source: RepoSource) -> Path:
    """A local git directory holding the history of a git, bundle or (git) directory source
    (clones of URLs and bundles are cached, as for `materialize`)."""
    loc = Path(source.location)
    if source.kind == "git":
        return _bare_clone(source.location, _key("git", source.location), source.commit)
    if source.kind == "bundle":
        st = loc.stat()
        return _bare_clone(str(loc), _key("bundle", loc, st.st_mtime_ns, st.st_size), None)
    if source.kind == "dir" and (loc / ".git").exists():
        return loc / ".git" if (loc / ".git").is_dir() else loc
    if source.kind == "dir" and _is_bare(loc):
        return loc
    raise SWEError(f"{source.describe()} has no git history")


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
    setup              shell commands run once per checkout, before its test commands
    install            PEP 508 requirements of the tests' environment (``metadata.extra.swe.install``;
                       with none of the environment fields below: the sandbox's own Python,
                       standard library only)
    pip_packages       requirements installed after them (SWE-bench's ``pip_packages``)
    python             the Python version the environment asks for ("3.9")
    pre_install        shell commands run in the checkout before the repository's install
    repo_install       the repository's install command (``python -m pip install -e .``;
                       ``true``: the default one); None: the repository is not installed
    scm_version        the version setuptools-scm reports for the base commit
    env                environment variables of the test commands (``PYTHONPATH: src``)
    log_parser         the SWE-bench log parser to read text reports with (``parse_log_django``)
    extra              the other keys of ``metadata.extra.swe`` (instance_id, repo, version ...)
    """

    patch: str | None = None
    test_patch: str | None = None
    test_files: tuple[str, ...] = ()
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    test_command: tuple[str, ...] | None = None
    setup: tuple[str, ...] = ()
    install: tuple[str, ...] = ()
    pip_packages: tuple[str, ...] = ()
    python: str | None = None
    pre_install: tuple[str, ...] = ()
    repo_install: str | None = None
    scm_version: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    log_parser: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def _text_ref(task: Task, value: Any, what: str) -> str | None:
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


def swe_data(task: Task) -> SWEData:
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
    install = _words(task, raw.pop("install", None), "install", "PEP 508 requirements")
    pip_packages = _words(task, raw.pop("pip_packages", None), "pip_packages", "PEP 508 requirements")
    pre_install = _words(task, raw.pop("pre_install", None), "pre_install", "shell commands")
    repo_install = raw.pop("repo_install", None)
    if repo_install is True:
        repo_install = DEFAULT_INSTALL
    if repo_install is not None and (not isinstance(repo_install, str) or not repo_install.strip()):
        raise SWEError(f"task {task.id}: metadata.extra.swe.repo_install must be a shell command or true")
    python = raw.pop("python", None)
    scm_version = raw.pop("scm_version", None)
    env = raw.pop("env", None) or {}
    if not isinstance(env, Mapping):
        raise SWEError(f"task {task.id}: metadata.extra.swe.env must be a mapping of variables")
    data = SWEData(
        patch=_text_ref(task, raw.pop("patch", None), "metadata.extra.swe.patch"),
        test_patch=_text_ref(task, raw.pop("test_patch", None), "metadata.extra.swe.test_patch"),
        test_files=tuple(str(g) for g in globs),
        fail_to_pass=tuple(f2p.tests or ()) if f2p else (),
        pass_to_pass=tuple(p2p.tests or ()) if p2p else (),
        test_command=command,
        setup=tuple(getattr(repo, "setup", None) or ()),
        install=install,
        pip_packages=pip_packages,
        python=str(python) if python not in (None, "") else None,
        pre_install=pre_install,
        repo_install=repo_install,
        scm_version=str(scm_version) if scm_version not in (None, "") else None,
        env={str(k): str(v) for k, v in env.items()},
        log_parser=raw.pop("log_parser", None),
        extra=raw,
    )
    _DATA_CACHE[key] = data
    return data


def _words(task: Task, value: Any, name: str, what: str) -> tuple[str, ...]:
    if value in (None, ""):
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(x, str) for x in value):
        raise SWEError(f"task {task.id}: metadata.extra.swe.{name} must be a list of {what}")
    return tuple(value)


def env_spec(task: Task) -> PythonEnvSpec | None:
    """The shared environment the task's tests run in (None: the sandbox's own Python,
    standard library only). Its cache key names the repository (``metadata.extra.swe.repo``,
    else the repository URL), the version (``metadata.extra.swe.version``), the packages
    and the Python. ``metadata.extra.swe.python_strict: true`` (or the user's
    ``CODEGYM_PYTHON_STRICT=1``) makes a Python the sandbox does not have a sandbox_error
    instead of the nearest one. A task file is not the user's command line: its requirements are
    PEP 508 specifiers only (SWEError names a bad one)."""
    data = swe_data(task)
    if not (data.install or data.pip_packages or data.repo_install or data.python):
        return None
    repo = getattr(task, "repo", None)
    label = str(data.extra.get("repo") or getattr(repo, "url", "") or "")
    try:
        return PythonEnvSpec(repo=label, version=str(data.extra.get("version") or ""), packages=data.install,
                       python=data.python, pip_packages=data.pip_packages,
                       strict=bool(data.extra.get("python_strict")) or os.environ.get("CODEGYM_PYTHON_STRICT") == "1")
    except RequirementError as e:
        raise SWEError(f"task {task.id}: {e}") from None


def repo_install(task: Task) -> RepoInstall | None:
    """How the task's repository is installed in its environment at the base commit (None:
    it is not installed; the tests import the checkout from the working directory)."""
    data = swe_data(task)
    if not data.repo_install or getattr(task, "repo", None) is None:
        return None
    tree = base_tree(task)
    return RepoInstall(checkout=tree.root, digest=tree.digest, command=data.repo_install,
                       pre_install=data.pre_install, scm_version=data.scm_version)


# =========================================================================== reference


def gold_patch(task: Task) -> str:
    """The task's gold patch (unified diff)."""
    patch = swe_data(task).patch
    if not patch:
        raise SWEError(f"task {task.id} has no gold patch (metadata.extra.swe.patch)")
    return patch


def reference_files(task: Task) -> dict[str, str | None]:
    """The files the gold patch changes, after it: {path: text, None = deleted}."""
    return apply_patch(base_tree(task).files, gold_patch(task))


def with_reference(task: Task):
    """`task` with a ``reference`` solution holding the gold patch's files (what
    `codegym.agents.OracleAgent` writes), or `task` itself when it already has one or
    has no gold patch. The copy keeps the task's content_hash: the solution is a function
    of the task's repository and patch, so it names the same task."""
    if "reference" in task.solutions or not swe_data(task).patch:
        return task
    files = {p: c for p, c in reference_files(task).items() if c is not None}
    if not files:
        return task
    sol = Solution(language=task.language, files=files, description="gold patch applied to the base")
    new = task.model_copy(update={"solutions": {**task.solutions, "reference": sol}})
    new.__dict__["content_hash"] = task.content_hash  # see the docstring
    return new
