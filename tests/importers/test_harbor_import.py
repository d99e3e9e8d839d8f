"""Harbor import as Harbor runs tasks (issue 29, item 1).

- ``tests/test.sh`` and ``solution/solve.sh`` of mode 644 (as public repositories have
  them) work: Harbor runs ``chmod +x`` as root, and so does codegym (the judge image, the
  trial); before, the unprivileged chmod failed silently and a correct answer scored 0;
- ``solution/solve.sh`` becomes the task's ``reference`` solution: ``codegym tasks validate
  --oracle`` passes it (1) and the unchanged starter is judged wrong (0);
- where images come from (`plan_environment`, no engine needed): local, pulled (``--pull``,
  or by default when a registry answers), a local stand-in with the difference said, else
  one line naming the image and why none can be had (Ubuntu: not from Debian's mirror);
  a ``docker_image`` is used as is, a Dockerfile built only when it cannot be had;
- ``[verifier].env`` reaches ``test.sh``;
- an environment without a working directory runs ``solve.sh`` and ``test.sh`` in ``/`` as
  Harbor does (through ``bash -c``); the agent gets the directory ``solve.sh`` writes in,
  else the home of the image's user; never a system directory;
- ``--build-network``: pip in the build trusts the host's CA bundle, the image keeps no
  variable of it; a stand-in's apt sources are its root's.
"""

from __future__ import annotations

import os
from pathlib import Path

import docker.errors
import pytest
from _harbor_tasks import STARTER, TEST_SH, docker_ready, good_folder

from codegym import load_suite
from codegym.cli.main import main
from codegym.importers.harbor_env import StandIn, plan_environment
from codegym.importers.harbor_import import import_harbor
from codegym.importers.harbor_read import HarborError, read_harbor_task
from codegym.importers.harbor_trial import run_trial
from codegym.judge import judge
from codegym.sandbox import make_sandbox

CI = bool(os.environ.get("CI"))


def _need_docker() -> None:
    if not docker_ready():
        if CI:
            pytest.fail("CI needs the docker engine and codegym/python:3.11 (.ci/run builds them)")
        pytest.skip("no docker engine with codegym/python:3.11 (codegym images build python)")


class _Images:
    def __init__(self, have):
        self.have = set(have)

    def get(self, name):
        if name not in self.have:
            raise docker.errors.ImageNotFound(f"no such image: {name}")
        return object()


class _Client:
    def __init__(self, *have):
        self.images = _Images(have)


# --------------------------------------------------------------------------- images (no engine)


def test_a_missing_base_is_pulled_when_allowed_or_when_a_registry_answers(tmp_path):
    ht = read_harbor_task(good_folder(tmp_path, "t", dockerfile="FROM python:3.12-slim\nWORKDIR /app\n"))
    assert plan_environment(ht, _Client(), pull="yes").pull == ["python:3.12-slim"]
    assert plan_environment(ht, _Client(), pull="auto", registry=lambda: True).pull == ["python:3.12-slim"]
    assert plan_environment(ht, _Client("python:3.12-slim"), pull="yes").pull == []
    with pytest.raises(HarborError, match=r"'python:3.12-slim' is not available locally; no registry answers "
                                          r"\(--pull to try anyway\)"):
        plan_environment(ht, _Client(), pull="auto", registry=lambda: False)
    with pytest.raises(HarborError, match="pulling is off"):
        plan_environment(ht, _Client(), pull="no", registry=lambda: True)


def test_offline_a_stand_in_is_used_and_its_difference_said(tmp_path):
    ht = read_harbor_task(good_folder(tmp_path, "t", dockerfile="FROM python:3.12-slim AS b\nFROM b\nWORKDIR /app\n"))
    sub = StandIn("codegym/pyroot:3.13", lambda client: "codegym/pyroot:3.13", "python:3.12-slim -> 3.13")
    plan = plan_environment(ht, _Client(), pull="no", stand_in=lambda img: sub if img.startswith("python:") else None)
    assert plan.replace == {"python:3.12-slim": "codegym/pyroot:3.13"} and plan.notes == ["python:3.12-slim -> 3.13"]


def test_ubuntu_cannot_be_made_here_and_the_refusal_says_so(tmp_path):
    ht = read_harbor_task(good_folder(tmp_path, "t", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\n"))
    with pytest.raises(HarborError) as e:
        plan_environment(ht, _Client(), pull="no", stand_in=lambda img: None)
    assert "Dockerfile:1: FROM 'ubuntu:24.04' is not available locally" in str(e.value)
    assert "Ubuntu's images cannot be made from the Debian mirror" in str(e.value)


def test_a_docker_image_is_used_as_harbor_uses_it_and_the_dockerfile_built_only_without_it(tmp_path):
    ht = read_harbor_task(good_folder(tmp_path, "t", toml='[environment]\ndocker_image = "org/prebuilt:1"\n'))
    assert plan_environment(ht, _Client("org/prebuilt:1", "codegym/python:3.11")).use == "org/prebuilt:1"
    plan = plan_environment(ht, _Client("codegym/python:3.11"), pull="no")
    assert plan.use is None and "environment/Dockerfile is built instead" in plan.notes[0]


# --------------------------------------------------------------------------- with the engine


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    if not docker_ready():
        return None
    root = tmp_path_factory.mktemp("harbor-import")
    src = root / "src"
    src.mkdir()
    good_folder(src, "adder")
    good_folder(src, "no-solution", solve_sh=None)
    good_folder(src, "env-var", toml='[verifier.env]\nWANT = "5"\n',
                test_sh="#!/bin/sh\nmkdir -p /logs/verifier\n[ \"$(python3 -c 'import main; print(main.add(2, 3))')\" "
                        "= \"$WANT\" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n")
    return src, root / "suite", import_harbor(src, root / "suite")


@pytest.mark.docker
def test_mode_644_scripts_run_and_the_solution_is_the_reference(imported):
    _need_docker()
    src, suite, res = imported
    assert sorted(res.imported) == ["suite/adder", "suite/env-var", "suite/no-solution"] and not res.failed
    assert oct(os.stat(src / "adder" / "tests" / "test.sh").st_mode & 0o777) == "0o644"
    tasks = {t.id: t for t in load_suite(suite)}
    adder = tasks["suite/adder"]
    assert adder.solutions["reference"].files == {"main.py": "def add(a, b):\n    return a + b\n"}
    assert "no solution/solve.sh: the task has no reference solution" in res.notes["suite/no-solution"]
    assert ("verified: the reference gets reward 1, the unchanged starting files wrong_answer"
            in res.notes["suite/adder"])
    sb = make_sandbox("docker")
    try:
        assert judge(adder, dict(adder.solution("reference").files), sandbox=sb, split="hidden").verdict == "accepted"
        assert judge(adder, adder.starter_files(), sandbox=sb, split="hidden").verdict == "wrong_answer"
        env_var = tasks["suite/env-var"]   # test.sh compares add(2, 3) with $WANT from [verifier.env]
        assert judge(env_var, dict(env_var.solution("reference").files), sandbox=sb,
                     split="hidden").verdict == "accepted"
    finally:
        sb.close()


@pytest.mark.docker
def test_tasks_validate_oracle_checks_an_imported_task(imported, capsys):
    _need_docker()
    _, suite, _ = imported
    assert main(["tasks", "validate", str(suite / "adder.yaml"), "--oracle", "--sandbox", "docker"]) == 0
    assert "ORACLE ok   suite/adder reference [python]: accepted" in capsys.readouterr().out


@pytest.mark.docker
def test_a_harbor_style_trial_chmods_as_root(imported):
    _need_docker()
    src, _, _ = imported
    good, bad = run_trial(src / "adder", solve=True), run_trial(src / "adder", solve=False)
    assert (good.reward, bad.reward) == (1.0, 0.0), (good.test_output, good.solve_output, bad.error)
    assert (Path(src / "adder" / "environment" / "app" / "main.py").read_text() == STARTER)


@pytest.mark.docker
def test_a_task_codegym_cannot_grade_is_refused_with_the_reason(tmp_path):
    """Judged at import as codegym will judge it: a verifier that downloads its tools at
    test time gets 0 with the task's own solution (no network); a verifier that checks
    nothing gives the unchanged starter 1; a solution that works outside the working
    directory cannot be an agent's edit. All are refused, the others kept."""
    _need_docker()
    src = tmp_path / "src"
    src.mkdir()
    good_folder(src, "fetches", test_sh="#!/bin/bash\nmkdir -p /logs/verifier\ncurl -LsSf https://astral.sh/uv/"
                                       "install.sh | sh && uvx pytest /tests && echo 1 > /logs/verifier/reward.txt "
                                       "|| echo 0 > /logs/verifier/reward.txt\n")
    good_folder(src, "lenient", test_sh="#!/bin/sh\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n")
    good_folder(src, "elsewhere", solve_sh="#!/bin/sh\nmkdir -p /output && echo 5 > /output/answer.txt\n")
    good_folder(src, "ok")
    res = import_harbor(src, tmp_path / "out")
    assert res.imported == ["out/ok"]
    reasons = {Path(f).name: why for f, why in res.failed}
    assert "solution/solve.sh changes no text file of the working directory /app: its work lies elsewhere" in \
        reasons["elsewhere"]
    assert "with its own solution the task gets wrong_answer, not reward 1" in reasons["fetches"]
    assert "test.sh runs curl, uvx at test time" in reasons["fetches"]
    assert "the unchanged starting files already get reward 1" in reasons["lenient"]
    assert not (tmp_path / "out" / "fetches").exists() and not (tmp_path / "out" / "lenient.yaml").exists()


ROOT_CONTEXT_DOCKERFILE = "FROM codegym/python:3.11\nWORKDIR /app\nCOPY environment/app/ /app/\n"
COMPOSE_MAIN = """services:
  main:
    build:
      context: ${CONTEXT_DIR}/..
      dockerfile: ${CONTEXT_DIR}/Dockerfile
    image: ${MAIN_IMAGE_NAME}
    command: ["sh", "-c", "sleep infinity"]
    environment:
      - TEST_DIR=${TEST_DIR}
    volumes:
      - ${HOST_VERIFIER_LOGS_PATH}:${ENV_VERIFIER_LOGS_PATH}
"""


def test_a_compose_file_with_one_main_service_is_read_and_more_services_refused(tmp_path):
    f = good_folder(tmp_path, "compose", dockerfile=ROOT_CONTEXT_DOCKERFILE)
    (f / "environment" / "docker-compose.yaml").write_text(COMPOSE_MAIN)
    ht = read_harbor_task(f)
    assert (ht.context, ht.dockerfile_path) == (".", "environment/Dockerfile")
    (f / "environment" / "docker-compose.yaml").write_text(COMPOSE_MAIN + "  db:\n    image: postgres:16\n")
    with pytest.raises(HarborError, match=r"multi-container environments are not supported \(services: main, db"):
        read_harbor_task(f)
    (f / "environment" / "docker-compose.yaml").write_text(COMPOSE_MAIN + "    ports: ['8080:80']\n")
    with pytest.raises(HarborError, match="services.main.ports: not supported"):
        read_harbor_task(f)
    (f / "environment" / "docker-compose.yaml").write_text(COMPOSE_MAIN.replace("${CONTEXT_DIR}/..", "/etc"))
    with pytest.raises(HarborError, match="only paths inside the task folder"):
        read_harbor_task(f)


@pytest.mark.docker
def test_a_compose_built_task_imports_with_the_task_folder_as_context(tmp_path):
    _need_docker()
    f = good_folder(tmp_path, "compose", dockerfile=ROOT_CONTEXT_DOCKERFILE)
    (f / "environment" / "docker-compose.yaml").write_text(COMPOSE_MAIN)
    res = import_harbor(f, tmp_path / "out")
    assert res.imported == ["out/compose"], res.failed
    assert (tmp_path / "out" / "compose" / "repo" / "main.py").read_text() == STARTER


def _need_roots() -> None:
    _need_docker()
    from codegym.sandbox.roots import find_root, roots_unbuildable
    if find_root("3.11") is None or find_root("3.13") is None:
        why = roots_unbuildable()
        if why:
            if CI:
                pytest.fail(f"CI builds the Python roots: {why}")
            pytest.skip(f"no Python roots here and none can be made: {why}")


@pytest.mark.docker
@pytest.mark.timeout(3600)
def test_offline_python_and_debian_bases_get_stand_ins_made_from_debian(tmp_path):
    """No registry: python:3.12-slim is made from Debian trixie (3.13, the nearest, with
    `python` and `pip`), debian:bookworm-slim is the bookworm root; the report says what
    differs; the tasks solve with their solution and not without."""
    _need_roots()
    src = tmp_path / "src"
    src.mkdir()
    test_sh = TEST_SH.replace("python3 -c", "python -c").replace(
        "mkdir -p /logs/verifier", "mkdir -p /logs/verifier\npython --version && pip --version")
    good_folder(src, "py312", dockerfile="FROM python:3.12-slim\nWORKDIR /app\nCOPY app/ /app/\n", test_sh=test_sh)
    good_folder(src, "deb", dockerfile="FROM debian:bookworm-slim\nWORKDIR /app\nCOPY app/ /app/\n")
    good_folder(src, "ubuntu", dockerfile="FROM ubuntu:24.04\nWORKDIR /app\n")
    res = import_harbor(src, tmp_path / "out", pull="no")
    assert sorted(res.imported) == ["out/deb", "out/py312"]
    (folder, why), = res.failed
    assert Path(folder).name == "ubuntu" and "Ubuntu's images cannot be made from the Debian mirror" in why
    py = " ".join(res.notes["out/py312"])
    assert "stands in codegym/harbor-base:python3.12, made from a Debian trixie root" in py
    assert "Python 3.12 is in no Debian suite here, 3.13 is the nearest" in py
    assert "verified: the reference gets reward 1, the unchanged starting files wrong_answer" in py
    deb = " ".join(res.notes["out/deb"])
    assert "debian:bookworm-slim is not available: stands in codegym/pyroot:3.11" in deb and "verified:" in deb


def test_which_images_have_a_stand_in():
    from codegym.importers.harbor_bases import stand_in
    want = {"python:3.11-slim-bookworm": "codegym/harbor-base:python3.11",
            "python:3.10": "codegym/harbor-base:python3.10",
            "python:3.11.9-slim-bookworm": "codegym/harbor-base:python3.11",
            "docker.io/library/python:3.9-slim": "codegym/harbor-base:python3.9",
            "debian:bookworm-slim": "codegym/pyroot:3.11", "debian:12.7-slim": "codegym/pyroot:3.11",
            "debian:11": "codegym/pyroot:3.9", "debian:trixie": "codegym/pyroot:3.13",
            "python:3.11-alpine": None, "python:2.7": None, "debian:stable": None, "ubuntu:24.04": None,
            "golang:1.22": None, "node:20-bookworm": None, "rust:1.83-slim-bookworm": None}
    got = {img: (s.image if (s := stand_in(img)) else None) for img in want}
    assert got == want
    note = stand_in("python:3.13-slim-bullseye").note
    assert "the tag names Debian bullseye, whose Python is not 3.13: trixie is used" in note
    assert "python.org's 3.11.9 at /usr/local/bin" in stand_in("python:3.11.9-slim").note


# --------------------------------------------------------------------------- no WORKDIR: Harbor runs in /

NO_WORKDIR_TEST = """#!/bin/sh
# Harbor runs this in / (the environment sets no WORKDIR)
mkdir -p /logs/verifier
if [ "$PWD" = / ] && python3 -c 'import sys; sys.path.insert(0, "/srv/calc"); import main; assert main.add(2, 3) == 5'
then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


@pytest.mark.docker
@pytest.mark.timeout(900)
def test_an_environment_without_a_workdir_runs_in_root_as_harbor_does(tmp_path):
    """Harbor runs the agent, solve.sh and test.sh in / when the environment sets no
    working directory. codegym does the same for solve.sh and test.sh, and gives the agent
    the directory the task is about: where solve.sh writes (a cache in a hidden folder
    aside), else the home directory of the image's user; never a system directory. The
    statement and the report say which. Before: refused ("sets no WORKDIR"). Scripts run
    through bash -c, as Harbor runs them (a script without a #! line is bash's)."""
    _need_docker()
    src = tmp_path / "src"
    src.mkdir()
    good_folder(src, "solved", dockerfile="FROM codegym/python:3.11\nCOPY app/ /srv/calc/\n", test_sh=NO_WORKDIR_TEST,
                solve_sh="#!/bin/sh\n[ \"$PWD\" = / ] || exit 1\nmkdir -p /root/.cache/tool && echo x > "
                         "/root/.cache/tool/state\nprintf 'def add(a, b):\\n    return a + b\\n' > srv/calc/main.py\n")
    good_folder(src, "home", dockerfile="FROM codegym/python:3.11\n", solve_sh=None,
                test_sh="#!/bin/sh\nmkdir -p /logs/verifier\n[ \"$(cat /root/hello.txt)\" = hi ] && echo 1 > "
                        "/logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n")
    good_folder(src, "system", dockerfile="FROM codegym/python:3.11\n",
                solve_sh="#!/bin/sh\necho 'x = 1' > /etc/answer.conf\n")
    # no #! line and bash's syntax: Harbor runs every command through bash -c, and so does codegym
    good_folder(src, "bashism", solve_sh="# a comment first: no #! line\nset -euo pipefail\n[[ -d /app ]]\n"
                                         "printf 'def add(a, b):\\n    return a + b\\n' > /app/main.py\n",
                test_sh="mkdir -p /logs/verifier\nif [[ $(python3 -c 'import main; print(main.add(2, 3))') == 5 ]]"
                        "; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n")
    shared = make_sandbox("docker")
    res = import_harbor(src, tmp_path / "out")
    assert sorted(res.imported) == ["out/bashism", "out/home", "out/solved"], res.failed
    (folder, why), = res.failed
    assert Path(folder).name == "system" and "the environment sets no WORKDIR (Harbor runs the task in /)" in why
    assert "(/etc/answer.conf) has no common directory outside the system's" in why
    assert ("solve.sh (run there) writes in /srv/calc, which is the agent's working directory here"
            in " ".join(res.notes["out/solved"]))
    assert "the agent's working directory here is /root, the home directory" in " ".join(res.notes["out/home"])
    tasks = {t.id: t for t in load_suite(tmp_path / "out")}
    solved, home = tasks["out/solved"], tasks["out/home"]
    assert solved.solutions["reference"].files == {"main.py": "def add(a, b):\n    return a + b\n"}
    assert "Here your working directory is `/srv/calc`" in solved.statement
    assert solved.metadata.extra["harbor"]["cwd"] == "/"
    try:   # the shared sandbox is still open: the import closed only its own
        assert judge(solved, dict(solved.solution("reference").files), sandbox=shared,
                     split="hidden").verdict == "accepted"
        assert judge(solved, solved.starter_files(), sandbox=shared, split="hidden").verdict != "accepted"
        assert judge(home, {**home.starter_files(), "hello.txt": "hi\n"}, sandbox=shared,
                     split="hidden").verdict == "accepted"
        assert judge(home, home.starter_files(), sandbox=shared, split="hidden").verdict != "accepted"
    finally:
        shared.close()


@pytest.mark.docker
@pytest.mark.timeout(900)
def test_the_home_of_a_non_root_user_is_read_from_the_images_passwd_and_a_system_workdir_refused(tmp_path):
    """No WORKDIR and no solve.sh: the agent's directory is the home of the image's user,
    read from the image's /etc/passwd without running anything; a user the file does not
    name is a clear error. An image whose WORKDIR is a system directory is refused."""
    _need_docker()
    import subprocess

    from codegym.importers.harbor_trial import home_dir
    from codegym.sandbox.imagebuild import build_image
    from codegym.sandbox.images import docker_client
    client = docker_client()
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    tags = []
    try:
        for n, (df, want) in enumerate((("RUN useradd -m -d /home/agent agent\nUSER agent", "/home/agent"),
                                         ("USER 4242", None))):
            (ctx / "Dockerfile").write_text(f"FROM codegym/python:3.11\n{df}\n")
            tag = f"codegym/test-harbor-home:{os.getpid()}-{n}"
            build_image(tag, path=str(ctx), timeout_s=300, labels={"codegym.test": "harbor-home"})
            tags.append(tag)
            if want:
                assert home_dir(client, tag) == want
            else:
                with pytest.raises(HarborError, match="the home directory of its user '4242' cannot be told"):
                    home_dir(client, tag)
    finally:
        for tag in tags:
            subprocess.run(["docker", "image", "rm", "-f", tag], capture_output=True, timeout=120)
    src = tmp_path / "src"
    src.mkdir()
    good_folder(src, "etc", dockerfile="FROM codegym/python:3.11\nWORKDIR /etc\n", solve_sh=None)
    res = import_harbor(src, tmp_path / "out", verify=False)
    (folder, why), = res.failed
    assert "the working directory /etc is a system directory or holds one" in why and not res.imported


def test_a_working_directory_is_never_a_system_one():
    from codegym.importers.harbor_trial import usable_workdir
    assert all(usable_workdir(p) for p in ("/app", "/usr/src/app", "/var/www/html", "/root", "/opt/app"))
    assert not any(usable_workdir(p) for p in ("/", "/usr", "/etc", "/tmp/x", "/opt", "/opt/codegym-harbor/x",
                                               "/logs/verifier", "/a/../etc", "relative"))
    # one codegym chooses (no WORKDIR) is not inside a system directory either
    assert not usable_workdir("/usr/src/app", inside_system=False) and usable_workdir("/srv/x", inside_system=False)


# --------------------------------------------------------------------------- builds with the network


def _pypi_answers() -> bool:
    import ssl
    import urllib.request

    from codegym.sandbox.hostnet import host_ca_bundle
    try:
        ctx = ssl.create_default_context(cafile=host_ca_bundle())
        with urllib.request.urlopen("https://pypi.org/simple/toml/", timeout=15, context=ctx) as r:
            return r.status == 200
    except OSError:
        return False


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_with_the_users_build_network_pip_trusts_what_the_host_trusts(tmp_path):
    """--build-network host: a Dockerfile's pip install reaches PyPI through the host's CA
    bundle (where egress goes through a TLS-inspecting proxy, the image's own CAs fail),
    the report says what the build was given, and the image's environment keeps none of it."""
    _need_roots()
    if not _pypi_answers():
        pytest.skip("PyPI does not answer from this host")
    src = tmp_path / "src"
    src.mkdir()
    test_sh = TEST_SH.replace("import main;", "import main, toml;")
    good_folder(src, "pip", test_sh=test_sh, dockerfile="FROM python:3.11-slim\nRUN pip install --no-cache-dir "
                                                        "toml==0.10.2\nWORKDIR /app\nCOPY app/ /app/\n")
    res = import_harbor(src, tmp_path / "out", pull="no", build_network="host")
    assert res.imported == ["out/pip"], res.failed
    notes = " ".join(res.notes["out/pip"])
    assert "the build's RUN steps had the network (--build-network) with this host's CA bundle" in notes
    assert "during the build only (not in the image's environment)" in notes
    assert "verified: the reference gets reward 1" in notes
    task = next(iter(load_suite(tmp_path / "out")))
    env = docker.from_env().images.get(task.repo.image).attrs["Config"].get("Env") or []
    assert not [e for e in env if e.startswith(("PIP_CERT=", "SSL_CERT_FILE=", "REQUESTS_CA_BUNDLE="))], env


@pytest.mark.docker
def test_a_stand_in_base_carries_the_apt_sources_its_root_was_made_with():
    """apt-get in a Dockerfile built on a stand-in asks the mirror the roots came from."""
    _need_roots()
    from codegym.importers.harbor_bases import stand_in
    from codegym.sandbox.roots import find_root, root_info
    client = docker.from_env()
    for image in ("python:3.11-slim", "debian:bookworm-slim"):
        tag = stand_in(image).make(client)
        out = client.containers.run(tag, ["cat", "/etc/apt/sources.list"], remove=True, network_mode="none",
                                    entrypoint=[])
        lines = [ln for ln in out.decode().splitlines() if ln.strip()]
        assert lines == root_info(find_root("3.11"))["sources"], (image, lines)
