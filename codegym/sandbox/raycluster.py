"""A Ray cluster of several nodes on this machine, started with ``ray start`` (tests, benchmarks).

`LocalCluster(nodes=[{"num_cpus": 1}, {"num_cpus": 1}])` starts a head node
(``ray start --head``) and one worker node per further entry (``ray start --address``),
each with its own resources, all under a temporary directory of their own; `address`
is what ``ray.init(address=...)`` and ``make_sandbox("ray", address=...)`` join. `stop()`
ends exactly the processes this cluster started (those whose command line names its
directory, and their children), never another cluster's (``ray stop`` would end them
all). `connect()` joins it from this process and waits until every node is up (Ray's own
wait for a node is 30 s, which a loaded machine can exceed). Ray's token authentication
is off by default (``auth="disabled"``, the same on every node and the driver: a process
that imported Ray before the token mode was set cannot turn it on); ``auth="token"``
needs ``~/.ray/auth_token`` and a driver started with ``RAY_AUTH_MODE=token``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["LocalCluster"]

#: what Ray says when its raylet missed Ray's fixed 30 s start-up wait (a loaded machine)
SLOW_START = "timed out during startup"


def ray_cli() -> str | None:
    """Path of the ``ray`` command (None when Ray's CLI is not installed)."""
    return shutil.which("ray")


def init_local(num_cpus: int, attempts: int = 3, **init_kw: Any):
    """``ray.init(num_cpus=...)`` of a new single-node cluster in this process, started again
    when Ray's raylet missed its fixed 30 s start-up wait (a loaded machine), at most
    `attempts` times."""
    import ray  # noqa: PLC0415 -- optional dependency
    init_kw.setdefault("include_dashboard", False)
    init_kw.setdefault("log_to_driver", False)
    for attempt in range(attempts):
        try:
            return ray.init(num_cpus=num_cpus, **init_kw)
        except Exception as e:
            if SLOW_START not in str(e) or attempt == attempts - 1:
                raise
            ray.shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pids: set[int]) -> set[int]:
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out, grew = set(pids), True
    while grew:
        more = {p for p, pp in parent.items() if pp in out and p not in out}
        out |= more
        grew = bool(more)
    return out


class LocalCluster:
    """See the module docstring. A context manager; `start()` returns ``self``."""

    def __init__(self, nodes: Sequence[Mapping[str, Any]] = ({"num_cpus": 1}, {"num_cpus": 1}),
                 object_store_mb: int = 200, timeout_s: float = 180.0, auth: str = "disabled"):
        if not nodes:
            raise ValueError("a cluster needs a head node")
        if auth not in ("disabled", "token"):
            raise ValueError("auth must be 'disabled' or 'token'")
        self.nodes = [dict(n) for n in nodes]
        self.object_store_mb = object_store_mb
        self.timeout_s = timeout_s
        self.dir: str | None = None
        self.address: str | None = None
        self.auth = auth
        # explicit on every node: `ray start --address` does not turn token auth on by itself
        self.env = {**os.environ, "RAY_AUTH_MODE": auth, "RAY_USAGE_STATS_ENABLED": "0"}
        self._saved_mode: str | None = None

    def _node_args(self, node: Mapping[str, Any]) -> list[str]:
        args = [f"--num-cpus={node.get('num_cpus', 1)}", f"--object-store-memory={self.object_store_mb << 20}",
                "--disable-usage-stats"]
        if node.get("resources"):
            args.append(f"--resources={json.dumps(dict(node['resources']))}")
        return args

    def _ray(self, *args: str) -> None:
        cli = ray_cli()
        if cli is None:
            raise RuntimeError("the `ray` command is not installed (pip install 'codegym[ray]')")
        r = subprocess.run([cli, "start", *args], env=self.env, capture_output=True, text=True,
                           timeout=self.timeout_s)
        if r.returncode != 0:
            out = (r.stdout + r.stderr)[-3000:]
            if SLOW_START in out:  # Ray waits 30 s, hard-coded: a loaded machine's node comes up later
                return
            raise RuntimeError(f"ray start {' '.join(args)} failed ({r.returncode}):\n{out}")

    def start(self) -> LocalCluster:
        self.dir = tempfile.mkdtemp(prefix="cgray", dir="/tmp")  # short: Ray's socket paths must fit
        port = _free_port()
        try:
            self._ray("--head", f"--port={port}", "--node-ip-address=127.0.0.1", "--include-dashboard=false",
                      f"--temp-dir={self.dir}", *self._node_args(self.nodes[0]))
            self.address = f"127.0.0.1:{port}"
            for node in self.nodes[1:]:
                self._ray(f"--address={self.address}", "--node-ip-address=127.0.0.1", *self._node_args(node))
        except BaseException:
            self.stop()
            raise
        return self

    def connect(self, **init_kw: Any):
        """``ray.init(address=...)`` of this cluster from this process (its auth mode set in
        the environment first; `stop` restores it)."""
        import ray  # noqa: PLC0415 -- optional dependency
        if self.address is None:
            raise RuntimeError("the cluster is not started")
        if self._saved_mode is None:
            self._saved_mode = os.environ.get("RAY_AUTH_MODE", "")
        os.environ["RAY_AUTH_MODE"] = self.auth
        init_kw.setdefault("log_to_driver", False)
        ctx = ray.init(address=self.address, **init_kw)
        deadline = time.monotonic() + self.timeout_s
        while sum(1 for n in ray.nodes() if n.get("Alive")) < len(self.nodes):
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {sum(1 for n in ray.nodes() if n.get('Alive'))} of "
                                   f"{len(self.nodes)} nodes came up within {self.timeout_s:.0f} s")
            time.sleep(0.5)
        return ctx

    def pids(self) -> set[int]:
        """The processes of this cluster (its own command lines and their children)."""
        if not self.dir:
            return set()
        own = set()
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    if self.dir.encode() in (d / "cmdline").read_bytes():
                        own.add(int(d.name))
                except OSError:
                    continue
        own.discard(os.getpid())
        return _children(own) if own else set()

    def stop(self) -> None:
        """End this cluster's processes (TERM, then KILL after 3 s) and remove its directory."""
        pids = self.pids()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for p in pids:
                try:
                    os.kill(p, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 3
            while pids and time.monotonic() < deadline:
                pids = {p for p in pids if Path(f"/proc/{p}").exists() and not _zombie(p)}
                time.sleep(0.1)
            if not pids:
                break
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.address = None
        if self._saved_mode is not None:
            if self._saved_mode:
                os.environ["RAY_AUTH_MODE"] = self._saved_mode
            else:
                os.environ.pop("RAY_AUTH_MODE", None)
            self._saved_mode = None

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True
