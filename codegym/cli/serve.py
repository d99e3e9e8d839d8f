"""``codegym serve``: every codegym env over OpenEnv and the Open Reward Standard, in one server process.

    codegym serve --port 8000 [--protocol openenv|ors|both] [--env ID ...] [--suite NAME ...]
        [--max-sessions 64] [--idle-timeout 600] [--max-request-bytes 8388608]
        [--token-env CODEGYM_SERVE_TOKEN] [--sandbox docker] [--reward pass_fraction|FILE.yaml]

OpenEnv clients connect to ``http://HOST:PORT/openenv``, ORS clients to ``http://HOST:PORT``.
The app is `codegym.integrations.serve`'s; docs/serve.md describes the protocols and limits.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from pathlib import Path

from codegym.cli.run import parse_key_values
from codegym.integrations.sessions import ServeLimits, SessionManager, served_env_ids
from codegym.wrappers.config import load_reward_declaration

TOKEN_ENV = "CODEGYM_SERVE_TOKEN"


def _env_kwargs(args: argparse.Namespace) -> dict:
    kwargs = parse_key_values(args.env_arg)
    if args.sandbox:
        kwargs["sandbox"] = args.sandbox
    if args.reward:
        path = Path(args.reward)
        if path.suffix in (".yaml", ".yml"):
            decl = load_reward_declaration(path)
            if decl is None:
                raise ValueError(f"{path}: declares no reward (a top-level `reward:` list)")
            kwargs["reward"] = decl
        else:
            kwargs["reward"] = args.reward
    return kwargs


def _cmd_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get(args.token_env) or None
    protocols = ("openenv", "ors") if args.protocol == "both" else (args.protocol,)
    # ors' loggers read their level when ors is imported (below, with the app)
    os.environ.setdefault("ORS_LOG_LEVEL", args.log_level.upper())
    try:
        limits = ServeLimits(max_sessions=args.max_sessions, max_request_bytes=args.max_request_bytes,
                             idle_timeout_s=args.idle_timeout if args.idle_timeout > 0 else None, token=token)
        manager = SessionManager(limits, env_ids=args.env, env_kwargs=_env_kwargs(args), suites=args.suite or ())
        serve = importlib.import_module("codegym.integrations.serve")
    except (ValueError, OSError) as e:
        print(f"codegym serve: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(f"codegym serve: needs the server extras: pip install 'codegym[openenv,ors]' ({e})", file=sys.stderr)
        return 2
    base = f"http://{args.host}:{args.port}"
    if "openenv" in protocols:
        print(f"codegym serve: OpenEnv at {base}{serve.OPENENV_PREFIX} (CodegymEnvClient / openenv EnvClient)")
    if "ors" in protocols:
        print(f"codegym serve: ORS at {base} (ors.client.ORS; environments: GET {base}/codegym/envs)")
    print(f"codegym serve: {len(manager.env_ids)} env id(s), at most {limits.max_sessions} sessions, idle timeout "
          f"{limits.idle_timeout_s or 'none'}, token {'required' if token else 'not set'}", flush=True)
    # uvicorn stops on SIGINT whatever its disposition and re-raises it after: a SIGINT this
    # process inherited as ignored (a shell's background job) would end it with 0, not 130
    with contextlib.suppress(ValueError):  # not the main thread: the caller's handlers stay
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        serve.run(manager, host=args.host, port=args.port, protocols=protocols, default_env_id=args.default_env,
                  log_level=args.log_level)
    except KeyboardInterrupt:  # uvicorn stops on Ctrl-C (sessions closed), then re-raises it
        print(f"codegym serve: stopped ({manager.counts['closed']} session(s) closed)", file=sys.stderr)
        return 130
    return 0


def register(subparsers) -> None:
    """Add ``codegym serve``."""
    p = subparsers.add_parser("serve", help="serve the envs over OpenEnv and the Open Reward Standard",
                              description="One server process for every codegym env id: OpenEnv sessions at "
                                          "/openenv, ORS at the root. docs/serve.md.")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--protocol", choices=("both", "openenv", "ors"), default="both")
    p.add_argument("--env", action="append", metavar="ID", help=f"serve this id (repeatable; default: all of "
                   f"{', '.join(served_env_ids())})")
    p.add_argument("--default-env", metavar="ID", help="the env of an OpenEnv reset() that names none")
    p.add_argument("--suite", action="append", metavar="NAME|PATH",
                   help="also serve this suite (codegym/Suite-v0; repeatable; bundled suites are served)")
    p.add_argument("--max-sessions", type=int, default=64, help="live sessions at once, both protocols (64)")
    p.add_argument("--idle-timeout", type=float, default=600.0,
                   help="close a session after this many seconds without a request (0: never; default 600)")
    p.add_argument("--max-request-bytes", type=int, default=8 * 1024 * 1024,
                   help="largest request body / WebSocket message (default 8 MiB)")
    p.add_argument("--token", help="bearer token clients must send (prefer --token-env: arguments are visible "
                                   "to other users)")
    p.add_argument("--token-env", default=TOKEN_ENV, metavar="VAR",
                   help=f"read the bearer token from this environment variable (default {TOKEN_ENV})")
    p.add_argument("--sandbox", help="sandbox backend of the envs: local | docker | ray")
    p.add_argument("--reward", help="reward of every env: pass_fraction | binary | a wrapper type | a YAML file "
                                    "with a `reward:` list (clients may override it at reset)")
    p.add_argument("--env-arg", action="append", metavar="KEY=VALUE",
                   help="extra gym.make argument for every env (VALUE parsed as JSON when possible)")
    p.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"))
    p.set_defaults(func=_cmd_serve)
