"""What a build given the network takes from the host (codegym.sandbox.hostnet), and such a build.

`with_host_settings`: after every ``FROM`` the host's CA bundle is copied in and the
variables are declared ``ARG`` (build arguments, never ``ENV``); a variable the
Dockerfile declares itself keeps its default; a value holding credentials (a proxy's
too) is not passed (the RUN steps are the task's code, with the network); the note says
what was given.
With a Docker engine: a networked build's RUN steps see the bundle and the variables,
and the image's environment has neither. The environment builds of
`codegym.sandbox.envbuild` get the same variables (one definition).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from _harbor_tasks import docker_ready

from codegym.sandbox.dockerfile import parse
from codegym.sandbox.hostnet import (
    BUILD_CA,
    CA_VARIABLES,
    CONTEXT_CA,
    network_variables,
    with_host_settings,
)

DOCKERFILE = """# escape=\\
ARG BASE=codegym/python:3.11
FROM ${BASE} \\
  AS first
RUN echo one
FROM first
ARG PIP_DEFAULT_TIMEOUT=30
RUN echo two
"""


def test_every_stage_gets_the_bundle_and_the_variables_for_its_build_only(tmp_path):
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n" * 3)
    env = {"PIP_INDEX_URL": "https://mirror.example/simple", "HTTPS_PROXY": "http://proxy:3128",
           "PIP_DEFAULT_TIMEOUT": "180", "PIP_EXTRA_INDEX_URL": "https://bob:s3cret@private.example/simple",
           "GITHUB_TOKEN": "not-passed", "HTTP_PROXY": "http://alice:pr0xy@proxy:3128"}
    got = with_host_settings(DOCKERFILE, ca=str(ca), environ=env)
    instrs = parse(got.dockerfile)
    kinds = [(i.keyword, i.args) for i in instrs]
    copy = ("COPY", f"{CONTEXT_CA} {BUILD_CA}")
    # right after each FROM (the first one spans two lines): the bundle, then the ARGs
    froms = [n for n, (k, _) in enumerate(kinds) if k == "FROM"]
    assert len(froms) == 2 and all(kinds[n + 1] == copy for n in froms)
    args = {a for k, a in kinds if k == "ARG"}
    assert {*CA_VARIABLES, "PIP_INDEX_URL"} <= args
    assert "HTTPS_PROXY" not in args                 # Docker's predefined argument: no ARG, not in the history
    assert "PIP_DEFAULT_TIMEOUT=30" in args and "PIP_DEFAULT_TIMEOUT" not in args   # its own default wins
    assert got.buildargs["SSL_CERT_FILE"] == BUILD_CA and got.buildargs["HTTPS_PROXY"] == "http://proxy:3128"
    assert "PIP_DEFAULT_TIMEOUT" not in got.buildargs and "GITHUB_TOKEN" not in got.buildargs
    assert "PIP_EXTRA_INDEX_URL" not in got.buildargs and "s3cret" not in got.dockerfile
    # a proxy's credentials neither: the RUN steps are the task's code, with the network
    assert "HTTP_PROXY" not in got.buildargs and "pr0xy" not in got.dockerfile
    assert "ENV" not in {k for k, _ in kinds}
    assert got.files == {CONTEXT_CA: str(ca)}
    assert "3 certificates" in got.note
    assert "not HTTP_PROXY, PIP_EXTRA_INDEX_URL: its value holds credentials" in got.note
    assert "s3cret" not in got.note and "pr0xy" not in got.note
    # the digest follows the bundle's bytes (a changed CA gives a new image)
    ca.write_text("-----BEGIN CERTIFICATE-----\ny\n-----END CERTIFICATE-----\n")
    assert with_host_settings(DOCKERFILE, ca=str(ca), environ=env).digest != got.digest
    # no bundle on the host: only the variables
    bare = with_host_settings("FROM scratch\n", ca="", environ={"PIP_RETRIES": "2"})
    assert "COPY" not in bare.dockerfile and bare.buildargs == {"PIP_RETRIES": "2"} and not bare.files


def test_the_environment_builds_get_the_same_variables(monkeypatch):
    from codegym.sandbox import envbuild
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple")
    got = envbuild._variables({})
    assert got["PIP_INDEX_URL"] == "https://mirror.example/simple"
    want = network_variables(envbuild.CA_INSIDE if envbuild.host_ca_bundle() else None)
    assert {k: got[k] for k in want} == want


@pytest.mark.docker
@pytest.mark.timeout(600)
def test_a_networked_build_sees_the_hosts_bundle_and_the_image_keeps_no_variable(tmp_path, monkeypatch):
    if not docker_ready():
        pytest.skip("no docker engine with codegym/python:3.11")
    from codegym.sandbox.imagebuild import build_image
    from codegym.sandbox.images import docker_client
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\ncodegym-test\n-----END CERTIFICATE-----\n")
    monkeypatch.setenv("PIP_RETRIES", "7")
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / ".dockerignore").write_text("*\n")          # the stranger's ignore file does not drop the bundle
    text = ("FROM codegym/python:3.11\nUSER nobody\n"
            'RUN grep -q codegym-test "$SSL_CERT_FILE" && [ "$PIP_CERT" = "$CURL_CA_BUNDLE" ] '
            '&& [ "$PIP_RETRIES" = 7 ] && echo "$SSL_CERT_FILE" > /tmp/seen\n')
    host = with_host_settings(text, ca=str(ca))
    df = tmp_path / "Dockerfile"
    df.write_text(host.dockerfile)
    tag = f"codegym/test-hostnet:{host.digest}"
    client = docker_client()
    try:
        build_image(tag, path=str(ctx), dockerfile=str(df), network="host", timeout_s=300, files=host.files,
                    buildargs=host.buildargs, labels={"codegym.test": "hostnet"})
        env = client.images.get(tag).attrs["Config"].get("Env") or []
        assert not [e for e in env if e.split("=", 1)[0] in (*CA_VARIABLES, "PIP_RETRIES")], env
        out = client.containers.run(tag, ["cat", "/tmp/seen", BUILD_CA], remove=True, network_mode="none")
        assert out.decode().splitlines()[0] == BUILD_CA and b"codegym-test" in out
    finally:
        subprocess.run(["docker", "image", "rm", "-f", tag], capture_output=True, timeout=120)


def test_the_hosts_bundle_is_found_where_pip_finds_it(monkeypatch, tmp_path):
    from codegym.sandbox.hostnet import host_ca_bundle
    f = tmp_path / "bundle.pem"
    f.write_text("x")
    monkeypatch.setenv("PIP_CERT", str(f))
    assert host_ca_bundle() == str(f)
    monkeypatch.setenv("PIP_CERT", str(tmp_path / "absent.pem"))
    for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    assert host_ca_bundle() in (None, "/etc/ssl/certs/ca-certificates.crt")
    assert (host_ca_bundle() is None) == (not Path("/etc/ssl/certs/ca-certificates.crt").is_file())
    assert os.environ["PIP_CERT"].endswith("absent.pem")
