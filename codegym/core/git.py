"""Every git command codegym runs: `git` (and `git_text`), with the repository's own
configuration neutralised (docs/swe.md, "Untrusted repositories and patches").

Repositories are untrusted (mined histories, SWE-bench mirrors, bundles): their
``.git/config``, ``.git/info/attributes`` and hooks must not make the host run a program.
Each call therefore runs git with

- no system or global configuration (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL`` /
  ``GIT_CONFIG_SYSTEM=/dev/null``, ``GIT_ATTR_NOSYSTEM``) and none of the caller's ``GIT_*``
  variables except the transport ones in `KEPT_ENV` (a stray ``GIT_DIR`` or
  ``GIT_EXTERNAL_DIFF`` would redirect it);
- command-line overrides of every key that names a program or changes what is read
  (`OVERRIDES`: hooks, fsmonitor, pager, askpass, credential helpers, attribute file,
  signature verification, ext:: transports; ``safe.directory=*`` since the neutralised
  repository may belong to another user);
- ``--no-ext-diff --no-textconv`` added to every command that can diff (`DIFFING`):
  ``diff.external`` and the ``diff.<driver>.command`` / ``textconv`` drivers that an
  attributes file selects are never run (git has no setting that empties
  ``diff.external``: ``-c diff.external=`` makes git try to run the empty string);
- replace refs ignored (``GIT_NO_REPLACE_OBJECTS``): a commit names its own tree; paths
  given to git are literal (``GIT_LITERAL_PATHSPECS``: no ``:(magic)`` from a file name);
- the filter drivers (``filter.<driver>.clean/smudge/process``) that the repository's
  own configuration defines emptied and made optional (`repo_overrides`: its keys are
  read once per configuration file state), so an attributes file that selects them
  (``.git/info/attributes``, a tracked ``.gitattributes``) runs nothing; a configured
  ``core.worktree`` of a working tree is pinned to the tree itself (``--work-tree``: git
  reads that key before any ``-c``).

tests/core/test_git.py runs sentinel programs from each of these places.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path


class GitError(ValueError):
    """A git command that failed; the message names the command and git's own words."""


#: a fixed identity (and date) for the commits codegym makes: reproducible object ids
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "codegym", "GIT_AUTHOR_EMAIL": "codegym@localhost",
    "GIT_COMMITTER_NAME": "codegym", "GIT_COMMITTER_EMAIL": "codegym@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}

#: ``-c`` overrides given to every command (command-line configuration wins over the
#: repository's ``.git/config`` and anything it includes)
OVERRIDES = (
    "core.hooksPath=/dev/null",          # no hook of the repository (reference-transaction, post-commit ...)
    "core.fsmonitor=false",              # no fsmonitor hook program
    "core.pager=cat", "pager.log=false", "pager.diff=false", "pager.show=false",
    "core.askPass=", "credential.helper=",  # no credential program (empty resets the list)
    "core.attributesFile=/dev/null",     # no attribute file named by the configuration
    "core.sshCommand=ssh",
    "core.alternateRefsCommand=",
    "log.showSignature=false", "gpg.program=false", "gpg.ssh.program=false", "gpg.x509.program=false",
    "commit.gpgSign=false", "tag.gpgSign=false",
    "protocol.ext.allow=never",          # ext:: URLs run commands
    "submodule.recurse=false", "fetch.recurseSubmodules=false",
    "safe.directory=*",
    "core.quotePath=false",
    "advice.detachedHead=false", "init.defaultBranch=main",
)

#: the subcommands that can run a diff: they get ``--no-ext-diff --no-textconv``
DIFFING = frozenset({"diff", "log", "show", "diff-tree", "diff-index", "diff-files", "format-patch", "whatchanged"})

#: the caller's git variables that are kept (transport settings of the user); every
#: other ``GIT_*`` variable is dropped
KEPT_ENV = frozenset({"GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY",
                      "GIT_HTTP_LOW_SPEED_LIMIT", "GIT_HTTP_LOW_SPEED_TIME"})

_FIXED_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_SYSTEM": "/dev/null", "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1", "GIT_NO_REPLACE_OBJECTS": "1", "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat", "PAGER": "cat", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0",
    "GIT_LITERAL_PATHSPECS": "1",       # a file named ':(exclude)*' is a file name
}


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git command: the process's, its ``GIT_*`` variables dropped
    (but `KEPT_ENV`), the neutralising ones set, then `extra` (``GIT_INDEX_FILE``,
    ``GIT_CEILING_DIRECTORIES``, `GIT_IDENTITY` ...)."""
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("GIT_") and k not in KEPT_ENV) and k not in ("SSH_ASKPASS", "EDITOR", "VISUAL")}
    env.update(_FIXED_ENV)
    if extra:
        env.update(extra)
    return env


_DRIVER_KEY = re.compile(r"^filter\.(.+)\.(clean|smudge|process|required)$", re.S)
_SEEN: dict[str, tuple[tuple, tuple[str, ...]]] = {}
_SEEN_LOCK = threading.Lock()


def _find_git_dir(cwd: Path) -> tuple[Path, Path | None] | None:
    """(git directory, working tree or None) of the repository `cwd` is in, found as git
    finds it (a ``.git`` folder or file upwards, or a bare repository)."""
    d = cwd.resolve()
    for top in (d, *d.parents):
        dot = top / ".git"
        if dot.is_dir():
            return dot, top
        if dot.is_file():
            m = re.match(r"gitdir: (.+)", dot.read_text(errors="replace").strip())
            return ((top / m.group(1)).resolve(), top) if m else None
        if (top / "HEAD").is_file() and (top / "objects").is_dir() and (top / "refs").is_dir():
            return top, None
    return None


def repo_overrides(cwd: str | os.PathLike | None) -> tuple[str, ...]:
    """git's global options against what the configuration of the repository at `cwd`
    itself defines: every filter driver emptied and optional (``-c`` pairs),
    ``core.worktree`` pinned (``--work-tree``); see the module docstring. Read once per
    state of its config file."""
    if cwd is None:
        return ()
    try:
        found = _find_git_dir(Path(cwd))
        if found is None:
            return ()
        gdir, tree = found
        st = os.stat(gdir / "config")
    except OSError:
        return ()
    sig = (st.st_ino, st.st_size, st.st_mtime_ns)
    with _SEEN_LOCK:
        hit = _SEEN.get(str(gdir))
    if hit is not None and hit[0] == sig:
        return hit[1]
    p = subprocess.run(git_argv(["config", "--local", "--includes", "--name-only", "--list", "-z"]),
                       cwd=cwd, env=git_env(), capture_output=True, stdin=subprocess.DEVNULL)
    keys = p.stdout.decode("utf-8", "surrogateescape").split("\0") if p.returncode == 0 else []
    out: list[str] = []
    for name in dict.fromkeys(m.group(1) for k in keys if (m := _DRIVER_KEY.match(k))):
        if "=" in name or "\n" in name:
            raise GitError(f"the repository at {cwd} names a filter driver git cannot be told to ignore: {name!r}")
        for kv in (f"filter.{name}.clean=", f"filter.{name}.smudge=", f"filter.{name}.process=",
                   f"filter.{name}.required=false"):
            out += ["-c", kv]
    if tree is not None and "core.worktree" in keys:
        out.append(f"--work-tree={tree}")
    with _SEEN_LOCK:
        _SEEN[str(gdir)] = (sig, tuple(out))
    return tuple(out)


def git_argv(args: Sequence[str], extra: Sequence[str] = ()) -> list[str]:
    """The full argv of ``git ARGS``: the overrides (then the `extra` global options)
    first, ``--no-ext-diff --no-textconv`` right after a diffing subcommand."""
    argv = ["git"]
    for kv in OVERRIDES:
        argv += ["-c", kv]
    argv += extra
    args = [os.fspath(a) for a in args]
    i = 0
    while i < len(args) and args[i] == "-c":  # the caller's own -c pairs come before the subcommand
        i += 2
    if i < len(args) and args[i] in DIFFING:
        args = [*args[:i + 1], "--no-ext-diff", "--no-textconv", *args[i + 1:]]
    return argv + args


def git(args: Sequence[str], cwd: str | os.PathLike | None = None, *, input: bytes | None = None,
        env: Mapping[str, str] | None = None, check: bool = True, capture: bool = True,
        timeout: float | None = None, error: type[Exception] = GitError) -> subprocess.CompletedProcess:
    """Run ``git ARGS`` in `cwd` with the repository's configuration neutralised (see the
    module docstring); bytes in, bytes out. `check`: a non-zero exit raises `error` (default
    `GitError`) naming the command and git's message; `timeout` (seconds) raises it too."""
    try:
        extra = repo_overrides(cwd)
    except GitError as e:
        raise error(str(e)) from None
    try:
        p = subprocess.run(git_argv(args, extra), cwd=cwd, env=git_env(env), input=input,
                           stdout=subprocess.PIPE if capture else subprocess.DEVNULL, stderr=subprocess.PIPE,
                           stdin=None if input is not None else subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise error(f"git {_shown(args)} did not finish within {timeout:g} s") from None
    except OSError as e:
        raise error(f"git cannot be run: {e}") from None
    if check and p.returncode != 0:
        raise error(f"git {_shown(args)} failed: {message(p.stderr)}")
    return p


def git_text(args: Sequence[str], cwd: str | os.PathLike | None = None, **kwargs) -> str:
    """`git`'s stdout as text (UTF-8, undecodable bytes kept as surrogates)."""
    return git(args, cwd, **kwargs).stdout.decode("utf-8", "surrogateescape")


def message(stderr: bytes | str | None, limit: int = 300) -> str:
    """git's error message, one line per line it wrote, at most `limit` characters."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else (stderr or "")
    text = " ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _shown(args: Sequence[str]) -> str:
    words = [os.fspath(a) for a in args]
    while words[:1] == ["-c"]:
        words = words[2:]
    return " ".join(words[:4]) + (" ..." if len(words) > 4 else "")
