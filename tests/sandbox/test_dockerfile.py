"""Dockerfiles read before a build (codegym.sandbox.dockerfile) and builds with a bound (imagebuild).

Every image a build would make the engine fetch is found: ``FROM`` (build arguments,
an escaped continuation, the ``escape`` directive), ``COPY --from`` / ``ADD --from`` and
``RUN --mount=from=``; stage names and indices and ``scratch`` are not images; heredoc
bodies are not instructions; ``ADD <url>`` is reported. A task's Dockerfile naming an
image that is not local is refused before the build (before: ``COPY --from`` made the
engine go to a registry).
"""

from __future__ import annotations

import subprocess

import pytest

from codegym.sandbox.dockerfile import DockerfileError, image_refs, parse, remote_sources, substitute

TRICKY = """# escape=\\
ARG V=3.12
ARG BASE
FROM \\
  python:${V}-slim AS build
# a comment
RUN echo a \\
# a comment inside the instruction

  && echo b
COPY --from=build /a /b
COPY --from=golang:1.22 /usr/local/go /usr/local/go
RUN --mount=type=bind,from=node:20,source=/x,target=/y true
RUN <<EOT
FROM not-an-instruction:1
EOT
ADD https://example.invalid/x.tgz /tmp/
FROM build
COPY --from=0 /a /c
FROM ${BASE:-debian:bookworm-slim}
FROM scratch
"""


def test_every_image_reference_is_found():
    refs = [(r.how, r.image, r.line) for r in image_refs(TRICKY)]
    assert refs == [("FROM", "python:3.12-slim", 4), ("COPY --from", "golang:1.22", 12),
                    ("RUN --mount", "node:20", 13), ("FROM", "debian:bookworm-slim", 20)]
    assert remote_sources(TRICKY) == [(17, "https://example.invalid/x.tgz")]
    run = [i for i in parse(TRICKY) if i.keyword == "RUN"]
    assert run[0].args == "echo a   && echo b" and run[2].heredocs == ["FROM not-an-instruction:1"]


def test_the_escape_directive_and_unresolved_arguments():
    assert [r.image for r in image_refs("# escape=`\nFROM `\n  python:3.11\nRUN dir c:\\\n")] == ["python:3.11"]
    for text, msg in (("RUN true\n", "no FROM line"), ("FROM $X\n", r"\$X: a build argument with no default"),
                      ("ARG X\nFROM $X\n", "resolves to no image name"), ("RUN <<E\nx\n", "never closed")):
        with pytest.raises(DockerfileError, match=msg):
            image_refs(text)


def test_substitute_rewrites_the_references_and_keeps_the_lines():
    out = substitute(TRICKY, {"python:3.12-slim": "codegym/pyroot:3.13", "node:20": "codegym/node:latest"})
    assert out.count("\n") == TRICKY.count("\n")
    assert [r.image for r in image_refs(out)] == ["codegym/pyroot:3.13", "golang:1.22", "codegym/node:latest",
                                                  "debian:bookworm-slim"]


def _docker() -> bool:
    try:
        return subprocess.run(["docker", "image", "inspect", "codegym/python:3.11"], capture_output=True,
                              timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.docker
def test_a_task_dockerfile_naming_an_absent_image_is_refused_before_the_build():
    if not _docker():
        pytest.skip("no docker engine with codegym/python:3.11")
    from codegym.sandbox.images import docker_client, task_image
    client = docker_client()
    text = "FROM codegym/python:3.11\nCOPY --from=busybox:codegym-absent /bin/busybox /bb\n"
    with pytest.raises(RuntimeError, match=r"Dockerfile:2: COPY --from busybox:codegym-absent: docker image "
                                           r"'busybox:codegym-absent' is not present"):
        task_image(client, text)
    with pytest.raises(RuntimeError, match="the daemon would download it"):
        task_image(client, "FROM codegym/python:3.11\nADD https://example.invalid/x /x\n")


@pytest.mark.docker
@pytest.mark.timeout(300)
def test_a_build_is_stopped_at_its_bound():
    if not _docker():
        pytest.skip("no docker engine with codegym/python:3.11")
    import time

    from codegym.sandbox.imagebuild import ImageBuildError, build_image
    t0 = time.monotonic()
    with pytest.raises(ImageBuildError, match=r"stopped after \d+ s \(its bound is 5 s\)"):
        build_image("codegym/test-bound:1", fileobj=_tar({"Dockerfile": "FROM codegym/python:3.11\nRUN sleep 613\n"}),
                    timeout_s=5)
    assert time.monotonic() - t0 < 60
    for _ in range(60):   # the daemon cancels the build when its client goes: soon, not at once
        ps = subprocess.run(["docker", "ps", "-a", "--no-trunc", "--format", "{{.Command}}"], capture_output=True,
                            text=True, timeout=60).stdout
        if "sleep 613" not in ps:
            break
        time.sleep(1)
    assert "sleep 613" not in ps


def _tar(files: dict[str, str]):
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf
