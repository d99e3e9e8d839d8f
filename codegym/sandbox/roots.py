"""Python interpreters of other versions, as root filesystems the sandbox runs on.

Owns the Debian suites that carry each Python (`PYTHON_SUITES`), the choice of the
nearest one for a requested version (`choose_python`), the roots themselves
(`ensure_root` -> `PythonRoot`: made once per suite with mmdebstrap from the Debian
mirror the host's apt sources name, under a file lock, in a temporary directory
renamed into place when complete, cached under `roots_dir()`), and their Docker
images (`root_image`: ``docker import`` of the same root, no registry).  The local
backend runs its slots on a root (``make_sandbox("local", python="3.9")``,
`codegym.sandbox.local`); the docker backend runs containers of its image.
docs/sandbox.md, "Python roots", says what a root holds and guarantees.

    >>> choose_python("3.10")[0]             # the note says which rule chose it
    '3.11'
    >>> ensure_root("3.9").python          # (minutes the first time on this machine)
    '/usr/bin/python3'
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codegym.sandbox.images import ROOT_IMAGE, docker_client, image_info
from codegym.sandbox.isolation import bwrap_available, rmtree

__all__ = ["PYTHON_SUITES", "RootError", "choose_python", "ensure_root", "root_image"]

log_ = logging.getLogger("codegym.sandbox.roots")

#: Python version -> the Debian suite whose python3 it is (what the mirror serves)
PYTHON_SUITES: dict[str, str] = {"3.9": "bullseye", "3.11": "bookworm", "3.13": "trixie"}
#: what every root holds besides Debian's minimal base: enough to pip-install sdists with C extensions
PACKAGES: tuple[str, ...] = ("python3", "python3-venv", "python3-pip", "python3-dev", "build-essential",
                             "git", "ca-certificates")
#: bump when what a root holds or its layout changes (part of its directory's name)
ROOT_FORMAT = 1
#: the interpreter inside every root
ROOT_PYTHON = "/usr/bin/python3"
MARKER = ".codegym-root.json"
#: seconds mmdebstrap may take (downloads ~150 MB and unpacks ~500 MB)
BUILD_TIMEOUT_S = 3600

_MMDEBSTRAP_OPTS = (
    "--quiet", "--variant=minbase",
    '--aptopt=APT::Install-Recommends "false"',
    "--dpkgopt=force-unsafe-io",
    "--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/info/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*", "--dpkgopt=path-include=/usr/share/locale/locale.alias",
    "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-include=/usr/share/doc/*/copyright",
    "--dpkgopt=path-exclude=/usr/share/lintian/*",
)


#: merged /usr without usrmerge and perl (mmdebstrap's hooks); bullseye has no usr-is-merged
#: package, so only the setup hook (the directory symlinks, as bullseye's debootstrap made them)
_MERGED_USR = "/usr/share/mmdebstrap/hooks/merged-usr"
_MERGED_USR_HOOK = {"bullseye": f"--setup-hook={_MERGED_USR}/setup00.sh"}


class RootError(RuntimeError):
    """A Python root that cannot be had: no such version (strict), no mmdebstrap, no mirror, a failed build."""


@dataclass(frozen=True)
class PythonRoot:
    """A built root: its Python `version` ("3.9"), Debian `suite`, `path` (the root filesystem on
    this host) and `python` (the interpreter's path inside the root)."""

    version: str
    suite: str
    path: Path
    python: str = ROOT_PYTHON

    @property
    def key(self) -> str:
        """Identifies this build of the root (directory name and build time): part of cache keys."""
        return f"{self.path.name}@{root_info(self).get('built', '')}"

    def host_path(self, inside: str) -> Path:
        """The host file behind path `inside` of the root."""
        return self.path / inside.lstrip("/")


# ----------------------------------------------------------------------------- choosing a version


def parse_version(requested: str) -> tuple[int, int]:
    """(major, minor) of "3.9", "3.9.7", "python3.9", "py39"; RootError for anything else."""
    s = str(requested).strip().lower()
    m = re.fullmatch(r"(?:python|py)?\s*(\d)\.(\d{1,2})(?:\.\d+)?(?:[a-z]+\d*)?", s) or \
        re.fullmatch(r"(?:python|py)(\d)(\d{1,2})", s)
    if not m:
        raise RootError(f"not a Python version: {requested!r} (expected e.g. '3.9')")
    return int(m.group(1)), int(m.group(2))


def choose_python(requested: str | None, strict: bool = False) -> tuple[str, str | None]:
    """The available version for `requested` and a note when it is not the one requested.

    None (nothing requested) is the default sandbox's 3.11.  Another 3.x falls back to the
    nearest available minor version; at equal distance ("3.10", "3.12") the newer one, because
    a newer interpreter runs the older one's syntax while the older cannot run the newer's.
    `strict`: RootError instead of a fallback.  Python 2 has no root (RootError).
    """
    if requested is None or str(requested).strip() == "":
        return "3.11", None
    major, minor = parse_version(requested)
    have = sorted((tuple(int(x) for x in v.split(".")), v) for v in PYTHON_SUITES)
    exact = f"{major}.{minor}"
    if exact in PYTHON_SUITES:
        return exact, None
    listed = ", ".join(v for _, v in have)
    if major != 3:
        raise RootError(f"Python {exact} has no root here (available: {listed})")
    if strict:
        raise RootError(f"Python {exact} has no root here (available: {listed}) and strict was asked")
    best = min(have, key=lambda h: (abs(h[0][1] - minor), -h[0][1]))[1]
    tie = any(abs(h[0][1] - minor) == abs(int(best.split(".")[1]) - minor) and h[1] != best for h in have)
    why = "the nearest (a tie goes to the newer)" if tie else "the nearest"
    return best, f"Python {exact} has no root here (available: {listed}); using {best}, {why}"


# ----------------------------------------------------------------------------- where, from what


def roots_dir() -> Path:
    """``$CODEGYM_ROOTS``, else /var/lib/codegym/roots as root, else ~/.cache/codegym/roots."""
    env = os.environ.get("CODEGYM_ROOTS")
    if env:
        return Path(env).resolve()
    if os.geteuid() == 0:
        return Path("/var/lib/codegym/roots")
    return Path.home() / ".cache" / "codegym" / "roots"


def _apt_entries() -> list[tuple[str, str]]:
    """(URI, suite) of every enabled ``deb`` entry of this host's apt sources (both formats)."""
    out: list[tuple[str, str]] = []
    d = Path("/etc/apt")
    for f in [d / "sources.list", *sorted((d / "sources.list.d").glob("*.list"))]:
        try:
            lines = f.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            w = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
            if len(w) >= 3 and w[0] == "deb":
                out.append((w[1], w[2]))
    for f in sorted((d / "sources.list.d").glob("*.sources")):
        try:
            stanzas = re.split(r"\n\s*\n", f.read_text(errors="replace"))
        except OSError:
            continue
        for st in stanzas:
            fields: dict[str, str] = {}
            for line in st.splitlines():
                if line.lstrip().startswith("#") or ":" not in line or line[:1].isspace():
                    continue
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.strip()
            if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes").lower() != "no":
                out += [(u, s) for u in fields.get("uris", "").split() for s in fields.get("suites", "").split()]
    return [(u.rstrip("/"), s) for u, s in out if re.match(r"(https?|file)://", u)]


def _serves(uri: str, suite: str, timeout: float = 10.0) -> bool:
    """Whether the archive at `uri` has a release file for `suite`."""
    if uri.startswith("file://"):
        return any((Path(uri[7:]) / "dists" / suite / f).is_file() for f in ("InRelease", "Release"))
    for f in ("InRelease", "Release"):
        req = urllib.request.Request(f"{uri}/dists/{suite}/{f}", method="HEAD")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 -- the host's own apt sources
                if r.status == 200:
                    return True
        except OSError:
            continue
    return False


def debian_sources(suite: str) -> list[str]:
    """mmdebstrap's source lines for `suite`: ``$CODEGYM_APT_MIRROR``, else the archives this host's
    apt sources name (its main archive for SUITE and SUITE-updates, its security archive for
    SUITE-security), each only when the archive serves that suite.  RootError when none serves SUITE."""
    mirror = os.environ.get("CODEGYM_APT_MIRROR")
    entries = [(mirror.rstrip("/"), suite)] if mirror else _apt_entries()
    main = [u for u, s in entries if "-" not in s]
    security = [u for u, s in entries if s.endswith("-security")]
    lines: list[str] = []
    for uri in dict.fromkeys(main):
        if _serves(uri, suite):
            lines.append(f"deb {uri} {suite} main")
            if not mirror and _serves(uri, f"{suite}-updates"):
                lines.append(f"deb {uri} {suite}-updates main")
            break
    if not lines:
        where = mirror or ", ".join(dict.fromkeys(main)) or "no Debian archive in /etc/apt/sources.list*"
        raise RootError(f"no Debian mirror serves {suite} ({where}); set CODEGYM_APT_MIRROR=<archive URI>")
    for uri in dict.fromkeys(security):
        if _serves(uri, f"{suite}-security"):
            lines.append(f"deb {uri} {suite}-security main")
            break
    return lines


def roots_unbuildable() -> str | None:
    """Why roots cannot be built on this machine (no mmdebstrap, not root and no user
    namespaces, no mirror), or None.  Tests skip (or, in CI, fail) with this reason."""
    if shutil.which("mmdebstrap") is None:
        return "mmdebstrap is not installed (apt-get install mmdebstrap)"
    try:
        debian_sources(PYTHON_SUITES["3.11"])
    except RootError as e:
        return str(e)
    return None


# ----------------------------------------------------------------------------- building


_THREAD_LOCK = threading.Lock()


def _root_of(version: str) -> PythonRoot:
    """The root of `version` ("3.9", also "3.9.2" or "python3.9"), built or not; RootError when
    no suite has it (`choose_python` picks the nearest)."""
    try:
        major, minor = parse_version(version)
        key = f"{major}.{minor}"
    except RootError:
        key = str(version)
    suite = PYTHON_SUITES.get(key)
    if suite is None:
        raise RootError(f"no Python root for {version!r} (available: {', '.join(PYTHON_SUITES)}; "
                        "choose_python() picks the nearest)")
    return PythonRoot(key, suite, roots_dir() / f"{suite}.r{ROOT_FORMAT}")


def root_info(root: PythonRoot) -> dict:
    """What the root's marker records (versions, packages, sources, build time and size); {} if unbuilt."""
    try:
        return json.loads((root.path / MARKER).read_text())
    except (OSError, ValueError):
        return {}


def find_root(version: str) -> PythonRoot | None:
    """The built root of `version`, or None (nothing is built)."""
    root = _root_of(version)
    return root if (root.path / MARKER).is_file() else None


def ensure_root(version: str, log: Callable[[str], None] | None = None) -> PythonRoot:
    """The root of Python `version` (a key of PYTHON_SUITES), built first if this machine has none.

    One build per machine: a file lock serialises builders (a second process waits and then
    finds the root), the build happens in a temporary directory renamed into place once
    complete and checked, so a half-built root is never used (a crashed build's leftovers are
    removed by the next).  `log` gets progress lines (default: the logger).  RootError names
    what failed (mmdebstrap's last lines)."""
    say = log or log_.info
    found = find_root(version)
    if found is not None:
        return found
    root = _root_of(version)
    base = root.path.parent
    _make_dirs(base)
    with _THREAD_LOCK, open(base / f".{root.path.name}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = find_root(version)
        if found is not None:
            return found
        for stale in base.glob(f".{root.path.name}.tmp-*"):
            _remove_build(stale)
        _build(root, say)
        return root


def _make_dirs(base: Path) -> None:
    """`base` and its missing parents, traversable by everyone (slot uids read the roots)."""
    missing = []
    p = base
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir(exist_ok=True)
        os.chmod(d, 0o755)


def _build(root: PythonRoot, say: Callable[[str], None]) -> None:
    if shutil.which("mmdebstrap") is None:
        raise RootError("building a Python root needs mmdebstrap (apt-get install mmdebstrap)")
    sources = debian_sources(root.suite)
    tmp = root.path.parent / f".{root.path.name}.tmp-{os.getpid()}"
    logfile = root.path.parent / f".{root.path.name}.log"
    mode = "root" if os.geteuid() == 0 else "unshare"
    merged = _MERGED_USR_HOOK.get(root.suite, f"--hook-dir={_MERGED_USR}")
    argv = ["mmdebstrap", *_MMDEBSTRAP_OPTS, merged, f"--mode={mode}", "--format=directory",
            f"--include={','.join(PACKAGES)}", root.suite, str(tmp), *sources]
    say(f"building the Python {root.version} root ({root.suite}, {len(PACKAGES)} packages) with mmdebstrap "
        f"from {sources[0].split()[1]}; a few minutes, once per machine")
    t0 = time.monotonic()
    try:
        with open(logfile, "wb") as out:
            rc = _run_mmdebstrap(argv, out)
    except OSError as e:
        _remove_build(tmp)
        raise RootError(f"mmdebstrap could not build the {root.suite} root: {e}") from None
    if rc != 0:
        _remove_build(tmp)
        why = f"timed out after {BUILD_TIMEOUT_S} s" if rc is None else f"exit {rc}"
        raise RootError(f"mmdebstrap failed building the {root.suite} root ({why}): {_tail(logfile)}")
    build_s = time.monotonic() - t0
    try:
        os.chmod(tmp, 0o755)
        info = {"format": ROOT_FORMAT, "version": root.version, "suite": root.suite, "python": root.python,
                "python_version": _check_python(tmp, root), "packages": list(PACKAGES),
                "package_versions": _dpkg_versions(tmp), "sources": sources, "build_s": round(build_s, 1),
                "size_mb": round(_du(tmp) / 1e6), "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        marker = tmp / MARKER
        marker.write_text(json.dumps(info, indent=1) + "\n")
        os.chmod(marker, 0o644)
        os.rename(tmp, root.path)
    except BaseException:
        _remove_build(tmp)
        raise
    say(f"Python {info['python_version']} root built in {build_s:.0f} s: {root.path} ({info['size_mb']} MB)")


def _run_mmdebstrap(argv: list[str], out) -> int | None:
    """mmdebstrap's exit code (None: timed out). On a timeout it gets SIGTERM first, so that it
    undoes the mounts it made in the tree (/dev nodes, /proc, /sys), then SIGKILL."""
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        return p.wait(timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        p.terminate()
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        return None
    except BaseException:
        p.terminate()
        p.wait()
        raise


def _mounts_under(path: Path) -> list[str]:
    """Mount points at or below `path` (deepest first), from this process's mount table."""
    top = os.path.realpath(path)
    found = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                mp = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4])
                if mp == top or mp.startswith(top + "/"):
                    found.append(mp)
    except OSError:
        pass
    return sorted(found, key=len, reverse=True)


def _remove_build(path: Path) -> None:
    """Remove a temporary build tree. A build that was killed can leave mmdebstrap's mounts in
    it (host device nodes bound, /sys bound recursively): they are unmounted first, never
    walked into; a tree still holding a mount is left alone (RootError)."""
    for mp in _mounts_under(path):
        subprocess.run(["umount", "--lazy", mp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
    left = _mounts_under(path)
    if left:
        raise RootError(f"cannot remove the unfinished root {path}: {', '.join(left[:3])} still mounted")
    rmtree(str(path))


def _tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:])


def _check_python(path: Path, root: PythonRoot) -> str:
    """The root's Python version, run inside it (bubblewrap) when this host can; RootError when it
    is not the version of the suite."""
    exe = path / root.python.lstrip("/")
    if not exe.exists():
        raise RootError(f"the {root.suite} root has no {root.python}")
    version = ""
    if bwrap_available():
        argv = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", str(path), "/", "--proc", "/proc",
                "--dev", "/dev", "--tmpfs", "/tmp", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin",
                root.python, "-I", "-c", "import sys, venv, ensurepip; print('%d.%d.%d' % sys.version_info[:3])"]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        if r.returncode != 0:
            raise RootError(f"the {root.suite} root's {root.python} does not run: {r.stderr.strip()[-300:]}")
        version = r.stdout.strip()
    else:
        version = os.path.basename(os.path.realpath(exe)).replace("python", "")
    if not version.startswith(root.version + ".") and version != root.version:
        raise RootError(f"the {root.suite} root has Python {version}, not {root.version}")
    return version


def _dpkg_versions(path: Path) -> dict[str, str]:
    """Versions of the root's python3, gcc and git packages (from its dpkg status)."""
    want = re.compile(r"(python3(\.\d+)?|python3-pip|gcc|git|libc6)$")
    out: dict[str, str] = {}
    try:
        text = (path / "var/lib/dpkg/status").read_text(errors="replace")
    except OSError:
        return out
    for st in text.split("\n\n"):
        m = re.search(r"^Package: (\S+)$", st, re.M)
        v = re.search(r"^Version: (\S+)$", st, re.M)
        if m and v and want.match(m.group(1)):
            out[m.group(1)] = v.group(1)
    return out


def _du(path: Path) -> int:
    """Bytes the tree under `path` occupies (hard links once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for d, dirs, files in os.walk(path):
        for name in dirs + files:
            try:
                st = os.lstat(os.path.join(d, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def sandbox_root(python: str | PythonRoot | None, strict: bool = False,
                 log: Callable[[str], None] | None = None) -> tuple[PythonRoot | None, str | None]:
    """What a sandbox's ``python=`` names: a `PythonRoot` as is; a version ("3.9"; "3.10": the
    nearest, with its note; `strict`: RootError) -> its root, built first if needed; anything
    else (None, an interpreter's path) -> (None, None): the host's own system."""
    if isinstance(python, PythonRoot):
        return python, None
    if not isinstance(python, str) or "/" in python:
        return None, None
    try:
        parse_version(python)
    except RootError:
        return None, None
    version, note = choose_python(python, strict)
    return ensure_root(version, log), note


# ----------------------------------------------------------------------------- Docker


_IMAGE_LOCK = threading.Lock()


def root_image(version: str, client=None, log: Callable[[str], None] | None = None) -> str:
    """The Docker tag of `version`'s root (``codegym/pyroot:3.9``): ``docker import`` of the very
    root the local backend uses (built first if needed), no registry and no network; re-imported
    when the root was rebuilt (the image's label names the root's build)."""
    root = ensure_root(version, log)
    tag = f"{ROOT_IMAGE}:{root.version}"
    client = client or docker_client()
    with _IMAGE_LOCK:
        if image_info(client, tag) is not None:
            labels = (client.api.inspect_image(tag).get("Config") or {}).get("Labels") or {}
            if labels.get("codegym.root") == root.key:
                return tag
        (log or log_.info)(f"docker import {root.path} -> {tag}")
        tar = subprocess.Popen(["tar", "--numeric-owner", "--exclude", f"./{MARKER}", "-C", str(root.path),
                                "-cf", "-", "."], stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        def chunks():
            assert tar.stdout is not None
            while True:
                b = tar.stdout.read(1 << 20)
                if not b:
                    return
                yield b
        changes = ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "ENV LANG=C.UTF-8",
                   'CMD ["python3"]', f'LABEL codegym.root="{root.key}" codegym.recipe="pyroot"']
        try:
            client.api.import_image(src=chunks(), repository=ROOT_IMAGE, tag=root.version, changes=changes,
                                    stream_src=True)
        finally:
            _, err = tar.communicate()
        if tar.returncode != 0:
            raise RootError(f"tar of the {root.suite} root failed: {err.decode(errors='replace')[-300:]}")
        if image_info(client, tag) is None:
            raise RootError(f"docker import of the {root.suite} root did not make {tag}")
    return tag
