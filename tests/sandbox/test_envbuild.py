"""Environments built inside the sandbox (codegym.sandbox.repoenv, envbuild): real builds from the
package registry, the repository installed at its base commit (metadata, entry points, a
setuptools-scm version file and a custom build's output visible to the tests), the tests without
network, a second grade building nothing, and the attacks of issue 28's "environment builds"
class -- a ``pkg @ file:///...`` requirement, an in-tree build backend, option injection --
leaving no sentinel on the host and no host file's content in any report.

Needs PyPI (skips with the reason when it is unreachable outside CI) and bubblewrap."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import textwrap
import uuid
from pathlib import Path

import pytest
from _tools import docker_or_skip, missing, need_bwrap

from codegym.importers.swebench import grade
from codegym.judge.run import judge
from codegym.sandbox.envbuild import EnvBuildError
from codegym.sandbox.local import LocalSandbox
from codegym.sandbox.repoenv import PythonEnvSpec, build_env, env_root
from codegym.tasks.schema import Task

PYTEST = ["python", "-m", "pytest", "-rA", "-p", "no:cacheprovider", "--junitxml=.codegym-junit.xml"]
LIMITS = {"time_s": 300, "memory_mb": 4096, "processes": 256, "disk_mb": 2048}


def _registry_reachable() -> bool:
    try:
        with socket.create_connection(("pypi.org", 443), timeout=10):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def world():
    """A private environment root (not under /tmp: a slot mounts its own), a sandbox made after
    it (its slots bind it), and host paths the attacks aim at."""
    need_bwrap()
    if not _registry_reachable():
        missing("PyPI (pypi.org:443) is unreachable: environment builds cannot be tested")
    root = Path(tempfile.mkdtemp(prefix="codegym-envtest-", dir="/var/tmp"))
    os.chmod(root, 0o755)
    secret = root / "host-secret.txt"
    token = f"HOST-SECRET-{uuid.uuid4().hex}"
    secret.write_text(token + "\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CODEGYM_ENVS", str(root / "envs"))
        mp.setenv("CODEGYM_CACHE", str(root / "cache"))
        sb = LocalSandbox(workers=2)
        try:
            yield {"root": root, "sb": sb, "secret": secret, "token": token,
                   "sentinels": [root / "SENTINEL-host", Path("/var/tmp") / f"codegym-sentinel-{uuid.uuid4().hex}"]}
        finally:
            sb.close()
            subprocess.run(["rm", "-rf", "--one-file-system", str(root)], check=False)


def _git_repo(path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(textwrap.dedent(text))
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True)
    return path


def _attack(world) -> str:
    """Python that tries to leave the sandbox: write the sentinels, read the host's secret."""
    paths = [str(p) for p in world["sentinels"]]
    return textwrap.dedent(f"""
        import os
        for p in {paths!r}:
            try:
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w") as f:
                    f.write("escaped")
            except OSError as e:
                print("sentinel refused:", p, e)
        for p in ({str(world["secret"])!r}, "/etc/shadow", "/root/.bash_history"):
            try:
                print("READ", p, open(p).read())
            except OSError as e:
                print("unreadable:", p, e)
        """)


def _evil_requirement(world, tmp_path: Path) -> str:
    """``evilpkg @ file:///<a host folder>``: a package whose setup.py is `_attack`."""
    pkg = tmp_path / "evilpkg"
    (pkg / "evilpkg").mkdir(parents=True)
    (pkg / "evilpkg" / "__init__.py").write_text("")
    (pkg / "setup.py").write_text(_attack(world) + "from setuptools import setup\nsetup(name='evilpkg', "
                                  "version='1', packages=['evilpkg'])\n")
    return f"evilpkg @ file://{pkg}"


def _no_trace(world, *reports: str) -> None:
    for p in world["sentinels"]:
        assert not p.exists(), f"a build wrote {p} on the host"
    shadow = Path("/etc/shadow").read_text().splitlines()[0] if Path("/etc/shadow").exists() else "root:"
    for text in reports:
        assert world["token"] not in text and shadow not in text


META_REPO = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64", "setuptools-scm>=8"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "mypkg"
        dynamic = ["version"]
        [project.scripts]
        mypkg-hello = "mypkg:hello"
        [project.entry-points."mypkg.plugins"]
        one = "mypkg:hello"
        [tool.setuptools_scm]
        version_file = "src/mypkg/_version.py"
        """,
    "src/mypkg/__init__.py": """
        from mypkg._version import version as __version__
        def hello():
            print("hello")
        """,
    "tests/test_meta.py": """
        import importlib.metadata as md, json, os, shutil, socket, subprocess
        import pytest
        import mypkg

        def test_version_metadata_and_generated_file():
            assert md.version("mypkg") == "1.2.3" == mypkg.__version__

        def test_entry_point_and_console_script():
            assert [e.name for e in md.entry_points(group="mypkg.plugins")] == ["one"]
            exe = shutil.which("mypkg-hello")
            assert exe and subprocess.run([exe], capture_output=True, text=True).stdout == "hello\\n"

        def test_the_checkout_is_what_is_installed():
            assert mypkg.__file__.startswith("/box/ws/"), mypkg.__file__

        def test_built_confined():
            info = json.load(open("src/mypkg/_build_info.json"))
            assert info["uid"] != 0 and info["home"] == "/tmp/home"
            assert not info["sees"], info["sees"]

        def test_no_network_once_built():
            with pytest.raises(OSError):
                socket.create_connection(("pypi.org", 443), timeout=5)
        """,
}


def test_environment_built_in_the_sandbox_with_the_repository_installed(world, tmp_path):
    """The recipe of an imported instance: packages from the registry and the repository itself,
    editable at /box/ws, each step confined; the tests see its metadata, entry points and the files
    its install generated, have no network, and the second grade builds nothing."""
    setup_py = (_attack(world) + textwrap.dedent("""
        import json, os
        from setuptools import setup
        seen = [p for p in ("/root", "/work", "/home", "/var/lib/codegym", "/etc/shadow") if os.path.exists(p)]
        os.makedirs("src/mypkg", exist_ok=True)
        with open("src/mypkg/_build_info.json", "w") as f:
            json.dump({"uid": os.getuid(), "home": os.environ.get("HOME"), "sees": seen}, f)
        setup()
        """))
    repo = _git_repo(tmp_path / "repo", {**META_REPO, "setup.py": setup_py})
    ids = [f"tests/test_meta.py::{n}" for n in ("test_version_metadata_and_generated_file",
                                                "test_entry_point_and_console_script",
                                                "test_the_checkout_is_what_is_installed", "test_built_confined",
                                                "test_no_network_once_built")]
    task = Task.model_validate({
        "id": "t/meta", "kind": "repo", "language": "python", "statement": "s", "limits": LIMITS,
        "repo": {"url": str(repo)},
        "tests": {"hidden": [{"name": "FAIL_TO_PASS", "command": [*PYTEST, "tests/test_meta.py"], "tests": ids}]},
        "metadata": {"extra": {"swe": {"repo": "codegym/meta", "version": "1.2", "install": ["pytest"],
                                       "repo_install": "python -m pip install -e .", "scm_version": "1.2.3"}}}})
    g = grade(task, {}, world["sb"])
    assert g.resolution.status == "FULL", g.report.message
    _no_trace(world, g.report.message, json.dumps(g.report.to_dict()))
    # what the host holds: the environment, root's and read-only to others; its records out of reach
    envs = env_root()
    metas = sorted((envs / ".meta").glob("codegym__meta-*.json"))
    assert len(metas) == 2 and oct((envs / ".meta").stat().st_mode & 0o777) == "0o700"
    layers = [p for p in [*envs.iterdir(), *(envs / "i").iterdir()] if p.name.startswith("codegym__meta-")]
    assert len(layers) == 2
    for d in layers:
        for dirpath, dirs, files in os.walk(d):
            for n in dirs + files:
                st = os.lstat(os.path.join(dirpath, n))
                assert st.st_uid == 0 and (os.path.islink(os.path.join(dirpath, n)) or not st.st_mode & 0o022), \
                    os.path.join(dirpath, n)
    built = {p: p.stat().st_mtime_ns for p in metas}
    g = grade(task, {}, world["sb"])                   # found, not built again
    assert g.resolution.status == "FULL"
    assert {p: p.stat().st_mtime_ns for p in metas} == built
    # the candidate's own files still win over what the install generated
    g = grade(task, {"src/mypkg/__init__.py": "raise ImportError('candidate')\n"}, world["sb"])
    assert g.resolution.status == "NO"


@pytest.mark.parametrize("python", [None, "3.13"])
def test_the_docker_backend_runs_the_same_environment_in_its_images(world, tmp_path, python):
    """The same task on the Docker backend: the tests run, with no network, in codegym's image of
    the instance (the shared environment's image plus what the repository's install added). With
    a Python asked for, the environment is built in build containers of that Python root's image
    (`--network host`, an unprivileged uid, read-only) and the tests run on that image."""
    docker_or_skip()
    if python is not None:
        from codegym.sandbox.roots import find_root, roots_unbuildable  # noqa: PLC0415
        why = None if find_root(python) else roots_unbuildable()
        if why:
            missing(f"no Python {python} root: {why}")
    from codegym.sandbox import make_sandbox  # noqa: PLC0415 -- the docker extra
    setup_py = textwrap.dedent("""
        import json, os
        from setuptools import setup
        os.makedirs("src/mypkg", exist_ok=True)
        with open("src/mypkg/_build_info.json", "w") as f:
            json.dump({"uid": os.getuid(), "home": os.environ.get("HOME"), "sees": []}, f)
        setup()
        """)
    repo = _git_repo(tmp_path / "repo", {**META_REPO, "setup.py": setup_py})
    ids = [f"tests/test_meta.py::{n}" for n in ("test_version_metadata_and_generated_file",
                                                "test_entry_point_and_console_script",
                                                "test_the_checkout_is_what_is_installed", "test_no_network_once_built")]
    task = Task.model_validate({
        "id": "t/meta-docker", "kind": "repo", "language": "python", "statement": "s", "limits": LIMITS,
        "repo": {"url": str(repo)},
        "tests": {"hidden": [{"name": "FAIL_TO_PASS", "command": [*PYTEST, "tests/test_meta.py"], "tests": ids}]},
        "metadata": {"extra": {"swe": {"repo": "codegym/meta", "version": "1.2", "install": ["pytest"],
                                       "repo_install": True, "scm_version": "1.2.3",
                                       **({"python": python} if python else {})}}}})
    sb = make_sandbox("docker", workers=1)
    try:
        g = grade(task, {}, sb)
    finally:
        sb.close()
    assert g.resolution.status == "FULL", g.report.message


def test_a_file_url_requirement_never_runs_on_the_host(world, tmp_path):
    """``x @ file:///<a package whose setup.py writes a sentinel>``: refused from a task file; given
    on the command line it is installed inside the sandbox, where the host's folder is not there."""
    req = _evil_requirement(world, tmp_path)
    repo = _git_repo(tmp_path / "repo", {"tests/test_x.py": "def test_x():\n    pass\n"})
    task = Task.model_validate({
        "id": "t/url", "kind": "repo", "language": "python", "statement": "s", "limits": LIMITS,
        "repo": {"url": str(repo)},
        "tests": {"hidden": [{"name": "FAIL_TO_PASS", "command": [*PYTEST, "tests"],
                              "tests": ["tests/test_x.py::test_x"]}]},
        "metadata": {"extra": {"swe": {"repo": "codegym/url", "install": ["pytest", req]}}}})
    rep = judge(task, {}, sandbox=world["sb"], split="hidden")
    assert rep.verdict == "sandbox_error" and "URL or local path" in rep.cases[0].message
    with pytest.raises(EnvBuildError) as e:          # trusted: it runs, inside the sandbox
        build_env(PythonEnvSpec(repo="codegym/url", packages=(req,), trusted=(req,)))
    assert "pip install" in str(e.value)
    _no_trace(world, rep.message, rep.cases[0].message, str(e.value))


def test_a_file_url_requirement_in_a_build_container(world, tmp_path):
    """The same on Docker: pip runs in a build container of the Python root's image, where the
    host's folder is not mounted."""
    docker_or_skip()
    _root_or_skip("3.13")
    req = _evil_requirement(world, tmp_path)
    with pytest.raises(EnvBuildError) as e:
        build_env(PythonEnvSpec(repo="codegym/url", packages=(req,), trusted=(req,), python="3.13"), "docker")
    assert "pip install" in str(e.value)
    _no_trace(world, str(e.value))


def test_the_python_asked_for_or_the_nearest_with_a_note(world):
    """A Python the roots do not have: the nearest, with a note; strict: an error naming it."""
    from codegym.sandbox.repoenv import resolve_system  # noqa: PLC0415
    _root_or_skip("3.11")
    system = resolve_system(PythonEnvSpec(repo="a/b", python="3.10"))
    assert system.version == "3.11" and "3.10" in (system.note or "") and system.root != "/"
    assert resolve_system(PythonEnvSpec(repo="a/b", python="3.9")).note is None
    with pytest.raises(EnvBuildError, match="3.10"):
        resolve_system(PythonEnvSpec(repo="a/b", python="3.10", strict=True))


def _root_or_skip(version: str) -> None:
    from codegym.sandbox.roots import find_root, roots_unbuildable  # noqa: PLC0415
    why = None if find_root(version) else roots_unbuildable()
    if why:
        missing(f"no Python {version} root: {why}")


@pytest.mark.parametrize("backend", ["local", "docker"])
def test_an_in_tree_build_backend_runs_confined(world, tmp_path, backend):
    """A repository whose pyproject names a build backend in its own tree (backend-path): the
    backend runs when the repository is installed -- inside the sandbox, as its uid (on Docker:
    in a build container of the Python root's image)."""
    python = None
    if backend == "docker":
        docker_or_skip()
        _root_or_skip("3.13")
        python = "3.13"
    backend = _attack(world) + textwrap.dedent("""
        from setuptools import build_meta as _b
        def __getattr__(name):
            return getattr(_b, name)
        """)
    repo = _git_repo(tmp_path / "repo", {
        "pyproject.toml": """
            [build-system]
            requires = ["setuptools>=64"]
            build-backend = "evil_backend"
            backend-path = ["."]
            [project]
            name = "victim"
            version = "1"
            """,
        "evil_backend.py": backend, "victim/__init__.py": "",
        "tests/test_x.py": "def test_x():\n    import victim\n"})
    task = Task.model_validate({
        "id": "t/backend", "kind": "repo", "language": "python", "statement": "s", "limits": LIMITS,
        "repo": {"url": str(repo)},
        "tests": {"hidden": [{"name": "FAIL_TO_PASS", "command": [*PYTEST, "tests"],
                              "tests": ["tests/test_x.py::test_x"]}]},
        "metadata": {"extra": {"swe": {"repo": "codegym/backend", "install": ["pytest"], "repo_install": True,
                                       **({"python": python} if python else {})}}}})
    if backend == "docker":
        from codegym.sandbox import make_sandbox  # noqa: PLC0415 -- the docker extra
        sb = make_sandbox("docker", workers=1)
        try:
            g = grade(task, {}, sb)
        finally:
            sb.close()
    else:
        g = grade(task, {}, world["sb"])
    assert g.resolution.status == "FULL", g.report.message
    _no_trace(world, g.report.message, json.dumps(g.report.to_dict()))


@pytest.mark.parametrize("bad", ["-r/etc/shadow", f"-r{Path.home()}/.bash_history", "--index-url=http://127.0.0.1:9/x",
                                 "-e /root"])
def test_option_injection_is_refused_with_one_line(world, tmp_path, bad):
    repo = _git_repo(tmp_path / "repo", {"tests/test_x.py": "def test_x():\n    pass\n"})
    task = Task.model_validate({
        "id": "t/opt", "kind": "repo", "language": "python", "statement": "s", "limits": LIMITS,
        "repo": {"url": str(repo)},
        "tests": {"hidden": [{"name": "FAIL_TO_PASS", "command": [*PYTEST, "tests"],
                              "tests": ["tests/test_x.py::test_x"]}]},
        "metadata": {"extra": {"swe": {"repo": "codegym/opt", "pip_packages": ["pytest", bad]}}}})
    rep = judge(task, {}, sandbox=world["sb"], split="hidden")
    assert rep.verdict == "sandbox_error"
    msg = rep.cases[0].message
    assert "pip option" in msg and len(msg.splitlines()) == 1, msg
    _no_trace(world, msg, json.dumps(rep.to_dict()))
