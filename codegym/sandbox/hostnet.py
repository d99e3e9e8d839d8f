"""What a build step given the network takes from the host: the user's pip and proxy settings and its CA bundle.

Builds from strangers run without network. A step runs with it only where the user
allowed it -- an environment build (`codegym.sandbox.envbuild`: pip in the sandbox), a
Harbor task's Dockerfile built with ``--build-network`` -- and then it gets two things of
the host, both the user's own settings (trusted), nothing else of its environment:

- the host's **certificate authorities** (`host_ca_bundle`: the bundle the host's pip
  uses). Where egress goes through a proxy that re-signs TLS with its own CA (a machine
  whose traffic is inspected), a container trusts only its image's CAs and pip, curl
  and git fail; with the host's bundle they trust what the host trusts. The variables of
  `CA_VARIABLES` point each tool at it (`network_variables`).
- the user's pip and proxy variables that are set (`PASSED_VARIABLES`).

`with_host_settings` gives a stranger's Dockerfile both **for its build only**: after
every ``FROM`` the bundle is copied to `BUILD_CA` (a file the builder adds to the context)
and the variables are declared ``ARG`` and passed as build arguments (not those the
Dockerfile declares itself: its defaults win) -- never ``ENV``, so
the image's programs do not see them at run time (the bundle's file stays in the image:
public certificates). A variable whose value holds credentials
(``https://user:secret@host``, a proxy's included) is not passed: the build's ``RUN``
steps are the stranger's code, with the network, and could send it anywhere (and Docker
records build arguments other than its predefined proxy ones in the image's history).
The note says what was given and what was not.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from codegym.sandbox.dockerfile import parse

#: the host's settings a build step with network gets (the user's own pip and proxy configuration)
PASSED_VARIABLES = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_TRUSTED_HOST",
                    "PIP_DEFAULT_TIMEOUT", "PIP_RETRIES", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                    "http_proxy", "https_proxy", "no_proxy")
#: what points pip, requests, Python's ssl, curl, git and node at a CA bundle
CA_VARIABLES = ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
                "NODE_EXTRA_CA_CERTS")
#: Debian's CA bundle: where a sandboxed step sees the host's (bound over it)
CA_INSIDE = "/etc/ssl/certs/ca-certificates.crt"
#: where a Docker build given the network finds the host's bundle (beside the image's own)
BUILD_CA = "/usr/local/share/codegym/host-ca-certificates.crt"
#: the bundle's name in the build context
CONTEXT_CA = ".codegym-host-ca-certificates.crt"
#: Docker's predefined build arguments: usable without ARG, kept out of the image's history
_PREDEFINED = {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "FTP_PROXY", "ALL_PROXY",
               "http_proxy", "https_proxy", "no_proxy", "ftp_proxy", "all_proxy"}
_CREDENTIALS = re.compile(r"://[^/@\s]*:[^/@\s]*@")


def host_ca_bundle() -> str | None:
    """The CA bundle the host's pip uses (``PIP_CERT``, ``SSL_CERT_FILE``,
    ``REQUESTS_CA_BUNDLE``, else Debian's `CA_INSIDE`), or None when there is none."""
    for name in ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        p = os.environ.get(name)
        if p and os.path.isfile(p):
            return p
    return CA_INSIDE if os.path.isfile(CA_INSIDE) else None


def network_variables(ca: str | None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables a step with network gets: each of `PASSED_VARIABLES` the user set, and
    every one of `CA_VARIABLES` naming `ca` (the bundle's path where the step sees it)."""
    environ = os.environ if environ is None else environ
    out = {name: environ[name] for name in PASSED_VARIABLES if environ.get(name)}
    if ca:
        out.update(dict.fromkeys(CA_VARIABLES, ca))
    return out


@dataclass
class HostSettings:
    """A Dockerfile given the host's settings for its build: the text to build, the files
    the builder adds to the context (name -> host path), the build arguments, what they
    are digested (for an image's cache key), and the report's note."""

    dockerfile: str
    files: dict[str, str] = field(default_factory=dict)
    buildargs: dict[str, str] = field(default_factory=dict)
    digest: str = ""
    note: str = ""


def with_host_settings(text: str, where: str = "Dockerfile", ca: str | None = None,
                       environ: Mapping[str, str] | None = None) -> HostSettings:
    """`text` whose every stage gets, during its build only, the host's CA bundle (`ca`,
    default `host_ca_bundle`) and the user's variables (module docstring)."""
    ca = ca if ca is not None else host_ca_bundle()
    instrs = parse(text, where)
    own = {tok.partition("=")[0] for i in instrs if i.keyword == "ARG" for tok in i.args.split()}
    # a build argument the Dockerfile declares itself keeps the Dockerfile's default
    variables = {k: v for k, v in network_variables(BUILD_CA if ca else None, environ).items() if k not in own}
    # credentials never reach a stranger's RUN steps (a proxy's neither: they could send them anywhere)
    withheld = sorted(k for k, v in variables.items() if _CREDENTIALS.search(v))
    for k in withheld:
        del variables[k]
    declared = [k for k in variables if k not in _PREDEFINED]
    insert = ([f"COPY {CONTEXT_CA} {BUILD_CA}"] if ca else []) + [f"ARG {k}" for k in declared]
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for ins in reversed([i for i in instrs if i.keyword == "FROM"]):
        lines[ins.end:ins.end] = insert
    h = hashlib.sha256()
    for k, v in sorted(variables.items()):
        h.update(f"{k}={v}\0".encode())
    parts = []
    files = {}
    if ca:
        with open(ca, "rb") as f:
            data = f.read()
        h.update(data)
        files[CONTEXT_CA] = ca
        parts.append(f"this host's CA bundle ({ca}, {data.count(b'BEGIN CERTIFICATE')} certificates) at {BUILD_CA}, "
                     f"named by {', '.join(CA_VARIABLES)} during the build only (not in the image's environment)")
    user = [k for k in variables if k not in CA_VARIABLES]
    if user:
        parts.append("the user's " + ", ".join(user))
    if withheld:
        parts.append(f"not {', '.join(withheld)}: its value holds credentials, which the build's RUN steps (the "
                     "task's code, with the network) could send anywhere")
    note = ("the build's RUN steps had the network (--build-network) with " + "; ".join(parts)) if parts else \
        "the build's RUN steps had the network (--build-network); this host has no CA bundle to give them"
    return HostSettings("\n".join(lines), files, variables, h.hexdigest()[:16], note)
