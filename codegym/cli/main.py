"""The ``codegym`` command line (entry point ``codegym = codegym.cli.main:main``): parser and dispatch.

Every verb group is one module that adds its commands to the parser (`build_parser` calls
each one's ``register(subparsers)``, or ``register_tasks(subparsers)`` for ``codegym tasks
...``):

- `codegym.cli.tasks`: ``tasks list|validate``; under ``tasks`` too: `codegym.cli.calibrate`
  (``tasks calibrate``), `codegym.cli.checkergen` (``tasks gen-checker``) and
  `codegym.cli.mine` (``tasks mine|pack``);
- `codegym.cli.run`: ``run``;
- `codegym.cli.imports`: ``import ...`` (public benchmark files, Harbor folders);
- `codegym.cli.eval`: ``eval``, ``report``;
- `codegym.cli.images`: ``images build|list|prune``;
- `codegym.cli.rewards`: ``rewards simulate``;
- `codegym.cli.synthesize`: ``synthesize``;
- `codegym.cli.harbor`: ``export harbor``;
- `codegym.cli.replay`: ``replay``;
- `codegym.cli.serve`: ``serve`` (OpenEnv, the Open Reward Standard).

A command sets ``func=handler`` with ``handler(args) -> int`` (the exit code). A command
that would run programs where no sandbox can isolate them ends with the remedies
(`codegym.sandbox.IsolationUnavailable`, exit code 2), not a traceback.
`COMMAND_MODULES` / `TASKS_COMMAND_MODULES` name out-of-tree modules adding commands the
same way; one that cannot be imported is reported on stderr and the rest of the CLI keeps
working.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from codegym.cli import calibrate, checkergen, harbor, images, imports, mine, replay, rewards, run, synthesize, tasks
from codegym.cli import eval as eval_commands
from codegym.cli import serve as serve_command
from codegym.core.version import __version__
from codegym.sandbox import IsolationUnavailable

#: out-of-tree modules adding top-level commands: each defines ``register(subparsers)``
COMMAND_MODULES: list[str] = []
#: out-of-tree modules adding ``codegym tasks ...`` commands: each defines ``register_tasks(subparsers)``
TASKS_COMMAND_MODULES: list[str] = []

Handler = Callable[[argparse.Namespace], int]


def _load_plugins(names: Sequence[str], hook: str, subparsers) -> None:
    for name in names:
        try:
            mod = importlib.import_module(name)
        except ImportError as e:
            print(f"codegym: commands from {name} are unavailable: {e}", file=sys.stderr)
            continue
        getattr(mod, hook)(subparsers)


def build_parser() -> argparse.ArgumentParser:
    """The full parser: every verb group's commands, then the out-of-tree ones."""
    parser = argparse.ArgumentParser(prog="codegym", description="Gymnasium coding environments: "
                                     "tasks, sandboxed judging, rollouts.")
    parser.add_argument("--version", action="version", version=f"codegym {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    tasks_sub = tasks.register(sub)
    calibrate.register_tasks(tasks_sub)
    checkergen.register_tasks(tasks_sub)  # tasks gen-checker
    mine.register_tasks(tasks_sub)  # tasks mine / tasks pack
    _load_plugins(TASKS_COMMAND_MODULES, "register_tasks", tasks_sub)
    for group in (run, imports, eval_commands, images):
        group.register(sub)
    rewards.register(sub)  # rewards simulate
    synthesize.register(sub)  # synthesize CONFIG.yaml
    harbor.register(sub)  # export harbor
    replay.register(sub)  # replay FILE.jsonl
    serve_command.register(sub)  # serve (OpenEnv, ORS)
    _load_plugins(COMMAND_MODULES, "register", sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 problems found, 2 usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Handler | None = getattr(args, "func", None)
    if func is None:
        # A group without a subcommand: show that group's help.
        (getattr(args, "_group_parser", None) or parser).print_help(sys.stderr)
        return 2
    try:
        return int(func(args) or 0)
    except IsolationUnavailable as e:  # no sandbox that isolates: the remedies, not a traceback
        print(f"codegym: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`codegym tasks list | head`): not an error of ours.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 -- silence the flush at exit
        return 0


if __name__ == "__main__":
    sys.exit(main())
