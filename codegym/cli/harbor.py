"""``codegym export harbor`` and ``codegym import harbor``: Harbor task folders out and in.

    codegym export harbor SUITE|TASK --out DIR [--check] [--correctness-only]
    codegym import harbor DIR --out SUITE_DIR [--suite-name NAME] [--pull | --no-pull] [--build-network [host]]
                          [--build-timeout S] [--json]

`register(subparsers)` adds the ``export`` group; `add_harbor_import(import_subparsers)`
adds ``harbor`` to ``codegym import``. ``--check`` runs a Harbor-style trial of every
exported task in its container (reference: reward 1; starter: reward 0 when the starter
is not already accepted; on a speed task exported ``--correctness-only``, a starter that
earns the reference's reward fails the check). docs/harbor.md.
"""

from __future__ import annotations

import argparse
import json
import sys

from codegym.importers.harbor import export_harbor, is_speed_task, tasks_of
from codegym.importers.harbor_import import import_harbor
from codegym.importers.harbor_read import HarborError
from codegym.importers.harbor_trial import run_trial
from codegym.judge.run import judge
from codegym.tasks.load import TaskValidationError


def register(subparsers) -> None:
    """Add the ``export`` command group (``export harbor``)."""
    p = subparsers.add_parser("export", help="export tasks in another format (Harbor task folders)",
                              description="Export codegym tasks in public formats.")
    p.set_defaults(_group_parser=p)
    sub = p.add_subparsers(dest="export_command", metavar="FORMAT")
    h = sub.add_parser("harbor", help="one Harbor task folder per task (task.toml, instruction.md, environment/, "
                                      "solution/solve.sh, tests/test.sh)",
                       description="Write Harbor task folders: the environment FROM codegym's local images, "
                                   "tests/test.sh judging /app with codegym's own judge, solution/solve.sh "
                                   "writing the reference. Repo tasks, special-judge checkers and speed tasks "
                                   "(perf tests: the verifier would not time them) are skipped with the reason.")
    h.add_argument("target", metavar="SUITE|TASK", help="a suite name or folder, a task YAML, or a task id")
    h.add_argument("--out", required=True, metavar="DIR", help="folder to write the task folders into")
    h.add_argument("--check", action="store_true",
                   help="run a Harbor-style trial of each exported task (needs Docker): solve.sh then test.sh "
                        "must give reward 1, test.sh alone 0")
    h.add_argument("--correctness-only", action="store_true",
                   help="also export speed tasks (PerfCode, DMC-Optim), as correctness tasks: their verifier does "
                        "not time the program, and their instruction says so")
    h.add_argument("--json", action="store_true", help="print the result as JSON")
    h.set_defaults(func=cmd_export_harbor)


def add_harbor_import(import_subparsers) -> argparse.ArgumentParser:
    """Add ``harbor`` to the subcommands of ``codegym import``."""
    p = import_subparsers.add_parser(
        "harbor", help="Harbor task folders as repo tasks (tests/test.sh in the task's environment)",
        description="Import Harbor task folders (a folder with task.toml, or a folder of them) into a suite "
                    "folder of repo tasks: the environment image is built from environment/ (images that are not "
                    "local are pulled when allowed, or made locally where Debian's packages can: Python and "
                    "Debian bases), its working directory is the task's repository, solution/solve.sh gives the "
                    "reference solution, and grading runs the task's tests/test.sh there and reads its reward "
                    "(needs the docker sandbox). A bad folder is refused with one line; the others go on.")
    p.add_argument("file", metavar="DIR", help="a Harbor task folder or a folder of them")
    p.add_argument("--out", required=True, metavar="DIR", help="suite folder to write")
    p.add_argument("--suite-name", default=None, help="suite part of the task ids (default: the folder name)")
    pull = p.add_mutually_exclusive_group()
    pull.add_argument("--pull", dest="pull", action="store_const", const="yes",
                      help="pull images that are not local from their registry (default: only when Docker Hub "
                           "answers; else a local stand-in where one can be made, else the task is refused)")
    pull.add_argument("--no-pull", dest="pull", action="store_const", const="no",
                      help="never pull: local images and local stand-ins only")
    p.set_defaults(pull="auto")
    p.add_argument("--build-network", nargs="?", const="bridge", default=False, choices=("bridge", "host"),
                   help="let the environment's docker build reach the network (RUN apt-get / pip install, ADD "
                        "<url>): Docker's default network (bridge), or 'host' where containers have no DNS of their "
                        "own (RUN then also reaches the host's loopback services); by default builds have none. "
                        "The build's RUN steps then also trust this host's CA bundle and get your pip and proxy "
                        "settings without credentials, for the build only (the report says so)")
    p.add_argument("--build-timeout", type=float, default=None, metavar="S",
                   help="the longest an environment build may take (default: the task's build_timeout_sec)")
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="keep tasks without judging them first (by default each task is judged through the docker "
                        "sandbox: its solution must get reward 1 and the unchanged starting files must not)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_import_harbor)
    return p


def _check(folders, tasks) -> list[str]:
    problems = []
    by_name = {f.name: t for f, t in zip(folders, tasks)}
    for folder in folders:
        good = run_trial(folder, solve=True)
        bad = run_trial(folder, solve=False)
        task = by_name[folder.name]
        starter_ok = judge(task, task.starter_files(), split="hidden").verdict == "accepted"
        ok = good.reward == 1.0 and (bad.reward == (1.0 if starter_ok else 0.0))
        why = "" if ok else "  <- WRONG"
        if ok and is_speed_task(task) and bad.reward == good.reward:
            ok, why = False, ("  <- WRONG: a speed task whose unchanged starter earns the reference's reward "
                              "(the export does not reward speed)")
        print(f"  {folder.name}: reference {good.reward}, starter {bad.reward}{why}")
        if not ok:
            problems.append(folder.name)
    return problems


def cmd_export_harbor(args: argparse.Namespace) -> int:
    try:
        tasks = tasks_of(args.target)
        res = export_harbor(tasks, args.out, correctness_only=args.correctness_only)
    except (HarborError, TaskValidationError, KeyError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    exported_tasks = [t for t in tasks if t.id not in dict(res.skipped)]
    problems = _check(res.exported, exported_tasks) if args.check else []
    if args.json:
        print(json.dumps({"exported": [str(p) for p in res.exported], "skipped": res.skipped,
                          "check_failed": problems}, indent=2))
    else:
        print(f"exported {len(res.exported)} task(s) to {args.out}" + (f", skipped {len(res.skipped)}:"
                                                                       if res.skipped else ""))
        for tid, why in res.skipped:
            print(f"  {tid}: {why}")
    if not res.exported:
        print(f"error: nothing exported from {args.target}" + (" (every task was skipped, reasons above)"
                                                             if res.skipped else ""), file=sys.stderr)
    return 1 if problems or not res.exported else 0


def cmd_import_harbor(args: argparse.Namespace) -> int:
    try:
        res = import_harbor(args.file, args.out, suite=args.suite_name, pull=args.pull,
                            build_network=args.build_network, build_timeout_s=args.build_timeout, verify=args.verify,
                            progress=None if args.json else (lambda m: print(f"  ... {m}", file=sys.stderr)))
    except (HarborError, TaskValidationError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"imported": res.imported, "failed": res.failed, "notes": res.notes}, indent=2))
    else:
        print(f"imported {len(res.imported)} task(s) into {args.out}" + (f"; {len(res.failed)} refused:"
                                                                         if res.failed else ""))
        for folder, why in res.failed:
            print(f"  {folder}: {why}")
        for tid, notes in res.notes.items():
            for note in notes:
                print(f"  {tid}: {note}")
        if res.imported:
            print(f"judge them with the docker sandbox: gym.make('codegym/Suite-v0', suite={args.out!r}, "
                  "sandbox='docker')")
    return 0 if res.imported and not res.failed else 1
