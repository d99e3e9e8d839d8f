"""``codegym images``: build and list the Docker images of the docker sandbox backend.

    codegym images build [NAME ...] [--method auto|dockerfile|debootstrap|host] [--rebuild]
    codegym images list [--json]
    codegym images prune [--all] [--dry-run]

The recipes and the ways of making them are `codegym.sandbox.images`'s; this
module parses the arguments and prints.  ``auto`` (default) copies the host's own
program onto a local image where a recipe can (``node``: the node the local
backend runs), else uses the Dockerfiles when a registry answers and the
debootstrap script otherwise.  Names: ``python`` (codegym/python:3.11),
``polyglot`` (codegym/polyglot:latest: python3 + g++ + make), ``node``
(codegym/node:latest: python3 + node), ``cpp`` (codegym/cpp:latest, no python:
not usable by the sandbox).  Default: the images of the default pool.  ``prune``
removes the containers of docker sandboxes whose process died (``--all``: every
docker sandbox container of this host).

`register(subparsers)` adds the commands (`codegym.cli.main.build_parser` calls it).
"""

from __future__ import annotations

import argparse
import json
import sys

from codegym.sandbox.containers import prune_containers
from codegym.sandbox.images import (
    DEFAULT_IMAGES,
    RECIPES,
    ROOT_IMAGE,
    build_from_host,
    build_with_dockerfile,
    build_with_script,
    default_names,
    docker_client,
    host_available,
    image_info,
    list_rows,
    registry_reachable,
)
from codegym.sandbox.roots import PACKAGES, PYTHON_SUITES, ensure_root, root_image, root_info


def cmd_build(args: argparse.Namespace) -> int:
    names = args.names or default_names()
    roots = [n for n in names if n.startswith("py") and n[2:] in PYTHON_SUITES]
    names = [n for n in names if n not in roots]
    unknown = [n for n in names if n not in RECIPES]
    if unknown:
        known = [*RECIPES, *(f"py{v}" for v in PYTHON_SUITES)]
        print(f"codegym images: unknown image {unknown} (known: {', '.join(known)})", file=sys.stderr)
        return 2
    if roots and _build_roots([n[2:] for n in roots], args.rebuild):
        return 1
    if not names:
        return 0
    method, host = args.method, []
    if method == "auto":
        host = [n for n in names if host_available(RECIPES[n])]  # built last: FROM another image
        names = [n for n in names if n not in host]
        method = "dockerfile" if names and registry_reachable() else "debootstrap"
        if names:
            print(f"codegym images: {'a registry answers' if method == 'dockerfile' else 'no registry answers'}"
                  f"; using the {method} method for {', '.join(names)}", file=sys.stderr)
        if host:
            print(f"codegym images: {', '.join(host)} from this host's own programs (host method)",
                  file=sys.stderr)
    elif method == "host":
        names, host = [], names
    if method == "debootstrap" and names:
        rc = build_with_script(names, args.rebuild)
        if rc or not host:
            return rc
        names = []
    return _build_with_engine(names, host, args.rebuild)


def _build_with_engine(names: list[str], host: list[str], rebuild: bool) -> int:
    try:
        client = docker_client()
    except Exception as e:  # noqa: BLE001
        print(f"codegym images: no Docker engine answers ({e}); start one, or use --method debootstrap "
              "(as root on Debian: it starts dockerd)", file=sys.stderr)
        return 1
    for n in names + host:
        try:
            if n in host:
                build_from_host(client, RECIPES[n], rebuild)
            else:
                build_with_dockerfile(client, RECIPES[n], rebuild)
        except Exception as e:  # noqa: BLE001 - reported per image
            print(f"codegym images: building {n} failed: {e}", file=sys.stderr)
            return 1
    return 0


def _build_roots(versions: list[str], rebuild: bool) -> int:
    """The Python roots of `versions` (mmdebstrap, once per machine) and their images."""
    def say(line: str) -> None:
        print(f"codegym images: {line}", file=sys.stderr)
    try:
        client = docker_client()
    except Exception as e:  # noqa: BLE001
        client = None
        say(f"no Docker engine answers ({e}): building the roots only")
    for v in versions:
        try:
            root = ensure_root(v, log=say)
            info = root_info(root)
            say(f"Python {info.get('python_version', v)} root: {root.path} ({info.get('size_mb', '?')} MB, "
                f"built in {info.get('build_s', '?')} s)")
            if client is not None:
                if rebuild:
                    say("(--rebuild re-imports an image whose root changed; a root is rebuilt by removing "
                        f"{root.path})")
                say(f"{root_image(v, client, log=say)} ready")
        except Exception as e:  # noqa: BLE001 - reported per root
            say(f"the Python {v} root failed: {e}")
            return 1
    return 1 if client is None else 0


def cmd_prune(args: argparse.Namespace) -> int:
    try:
        client = docker_client()
    except Exception as e:  # noqa: BLE001
        print(f"codegym images: no Docker engine answers ({e})", file=sys.stderr)
        return 1
    found = prune_containers(client, everything=args.all, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    for c in found:
        labels = c.get("Labels") or {}
        print(f"{verb} {c['Id'][:12]}  {c.get('State', '?'):<8} owner {labels.get('codegym.owner', '?')}  "
              f"scope {labels.get('codegym.scope') or '-'}")
    print(f"codegym images: {verb} {len(found)} container(s)", file=sys.stderr)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    try:
        client = docker_client()
        engine = None
    except Exception as e:  # noqa: BLE001
        client, engine = None, f"no Docker engine answers ({e})"
    rows = list_rows(client)
    for v, suite in PYTHON_SUITES.items():  # the Python roots' images (`codegym images build py3.9`)
        info = image_info(client, f"{ROOT_IMAGE}:{v}") if client is not None else None
        rows.append({"name": f"py{v}", "image": f"{ROOT_IMAGE}:{v}", "present": info is not None,
                     "languages": [f"python={v}"], "packages": list(PACKAGES), **(info or {}),
                     "note": f"the Python {v} root ({suite}); make_sandbox('docker', python='{v}')"})
    if args.json:
        print(json.dumps({"engine_error": engine, "images": rows}, indent=2))
        return 0 if engine is None else 1
    if engine:
        print(f"codegym images: {engine}; presence unknown", file=sys.stderr)
    print(f"{'name':<9} {'image':<26} {'present':<8} {'id':<13} {'size':>7}  languages")
    for r in rows:
        size = f"{r['size_mb']} MB" if r.get("size_mb") is not None else "-"
        present = "?" if engine else ("yes" if r["present"] else "no")
        print(f"{r['name']:<9} {r['image']:<26} {present:<8} {r.get('id', '-'):<13} {size:>7}  "
              f"{', '.join(r['languages']) or '-'}")
    pool = set(DEFAULT_IMAGES.values())
    missing = [r["name"] for r in rows if not r["present"] and r["image"] in pool]
    if missing and not engine:
        print(f"\nmissing images of the default pool: run `codegym images build {' '.join(missing)}`",
              file=sys.stderr)
    return 0 if engine is None else 1


def register(subparsers) -> None:
    """Add the ``images`` command group."""
    p = subparsers.add_parser("images", help="build and list the docker sandbox's images",
                              description="Images of the docker sandbox backend (make_sandbox('docker')).")
    p.set_defaults(_group_parser=p)
    sub = p.add_subparsers(dest="images_command", metavar="COMMAND")
    b = sub.add_parser("build", help="build images (Dockerfile with a registry, else debootstrap)",
                       description="Build the docker sandbox's images. dockerfile: `docker build` of the "
                                   "Dockerfiles shipped in codegym/_scripts/docker (needs a registry); "
                                   "debootstrap: the shipped docker-up.sh, which starts an engine if needed "
                                   "and builds the same images from the host's Debian mirror without any "
                                   "registry (root, Debian). Existing images are kept unless --rebuild.")
    b.add_argument("names", nargs="*", metavar="NAME",
                   help=f"images to build: {', '.join(RECIPES)} (default: those of the default pool); "
                        f"{', '.join('py' + v for v in PYTHON_SUITES)}: the Python root of that version "
                        "(mmdebstrap from the host's Debian mirror, once) and its image codegym/pyroot:<version>")
    b.add_argument("--method", choices=("auto", "dockerfile", "debootstrap", "host"), default="auto",
                   help="dockerfile: docker build FROM debian:bookworm-slim; debootstrap: the shipped "
                        "docker-up.sh (root, Debian, no registry); host: a local base image plus this "
                        "host's own program (node); auto: host where it can, else dockerfile if a "
                        "registry answers, else debootstrap")
    b.add_argument("--rebuild", action="store_true", help="rebuild images that exist")
    b.set_defaults(func=cmd_build)
    ls = sub.add_parser("list", help="the images, whether present, and which languages use them")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)
    pr = sub.add_parser("prune", help="remove the containers of docker sandboxes whose process died",
                        description="Remove the containers (labelled codegym.sandbox=docker, this host) whose "
                                    "owning process died without closing its sandbox; --all: every one.")
    pr.add_argument("--all", action="store_true", help="also the containers of live sandboxes")
    pr.add_argument("--dry-run", action="store_true", help="list them, remove nothing")
    pr.set_defaults(func=cmd_prune)


