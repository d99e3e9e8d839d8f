"""``codegym tasks gen-checker``: a model writes a task's special judge, execution validates it.

    codegym tasks gen-checker TASK.yaml|SUITE --agent llm:model=...,base_url=... [--attempts 3]
        [--all] [--force] [--max-cases 24] [--dry-run] [--sandbox KIND]

A task file is always processed; in a suite, the stdio tasks whose accepted solutions
print different answers to one case (or tagged ``multiple-answers``) that have no
checker program yet (``--all``: every stdio task; ``--force``: replace checkers). The
kept checker and its validation record are written into the task YAML
(`codegym.evaluation.checkergen`). Exit status: 0 every task got a checker, 1 some did
not, 2 usage or input errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from codegym.agents.llm import LLMAgent
from codegym.agents.llm_client import LLMError
from codegym.agents.llm_spec import parse_spec
from codegym.evaluation.checkergen import (
    CHECKER_SYSTEM_PROMPT,
    generate_checker,
    outputs_differ,
    validation_set,
    write_checker,
)
from codegym.sandbox import make_sandbox
from codegym.tasks.load import TaskValidationError, load_task
from codegym.tasks.suite import load_suite

#: tags that mark a task whose outputs admit several correct answers
MULTI_TAGS = ("multiple-answers", "special-judge")


def register_tasks(tasks_sub):
    """Add ``codegym tasks gen-checker``."""
    g = tasks_sub.add_parser("gen-checker", help="generate and validate a checker program with a model",
                             description="Ask a model for a task's checker program (special judge), validate "
                                         "it by execution, write it into the task YAML (docs/checkergen.md).")
    g.add_argument("target", metavar="TASK|SUITE", help="a task file, or a suite name or folder")
    g.add_argument("--agent", required=True, metavar="llm:SPEC",
                   help="the model: llm:model=NAME,base_url=URL[,temperature=...]")
    g.add_argument("--attempts", type=int, default=3, help="answers asked per task (default 3)")
    g.add_argument("--all", action="store_true", help="every stdio task of the suite")
    g.add_argument("--force", action="store_true", help="replace existing checker programs")
    g.add_argument("--max-cases", type=int, default=24, help="cases in the validation set (default 24)")
    g.add_argument("--dry-run", action="store_true", help="validate, but do not write the task files")
    g.add_argument("--sandbox", default=None, help="sandbox kind (default: local)")
    g.set_defaults(func=cmd_gen_checker)
    return g


def _agent(spec: str) -> LLMAgent:
    kind, _, arg = spec.partition(":")
    if kind != "llm":
        raise ValueError(f"--agent must be an llm:SPEC, not {spec!r}")
    kw = parse_spec(arg)
    kw.setdefault("system_prompt", CHECKER_SYSTEM_PROMPT)
    kw.setdefault("logprobs", False)
    kw.setdefault("token_ids", "off")
    return LLMAgent(**kw)


def _tasks(target: str) -> tuple[list, bool]:
    """(tasks, explicit): a task file is explicit; a suite's tasks are candidates."""
    p = Path(target)
    if p.is_file() and p.suffix in (".yaml", ".yml") and p.name != "suite.yaml":
        return [load_task(p)], True
    return list(load_suite(target)), False


def cmd_gen_checker(args: argparse.Namespace) -> int:
    try:
        agent = _agent(args.agent)
        tasks, explicit = _tasks(args.target)
    except (ValueError, FileNotFoundError, TaskValidationError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    sb = make_sandbox(args.sandbox) if args.sandbox else make_sandbox()
    done = failed = 0
    for task in tasks:
        if task.kind != "stdio":
            if explicit:
                print(f"error: {task.id}: checker programs judge stdio tasks", file=sys.stderr)
                return 2
            continue
        if task.checker.type == "program" and not args.force:
            print(f"skip {task.id}: it has a checker program (--force replaces it)")
            continue
        samples = validation_set(task, sb, max_cases=args.max_cases)
        wanted = explicit or args.all or outputs_differ(samples) or any(t in MULTI_TAGS for t in task.tags)
        if not wanted:
            continue
        try:
            gen = generate_checker(task, agent.fork(), sb, samples, attempts=args.attempts)
        except LLMError as e:
            print(f"FAIL {task.id}: the model could not be asked: {e}")
            failed += 1
            continue
        tries = "; ".join(f"#{k}: no code" if a.validation is None else
                          f"#{k}: {a.validation.accepted}/{a.validation.positives} correct accepted, "
                          f"{a.validation.rejected}/{a.validation.negatives} wrong rejected, "
                          f"{a.validation.crashes} crashes" for k, a in enumerate(gen.attempts, 1))
        if not gen.ok:
            print(f"FAIL {task.id}: no valid checker in {len(gen.attempts)} attempt(s) [{tries}]")
            failed += 1
            continue
        if not args.dry_run:
            write_checker(task.source_path, gen.code, gen.record())
        done += 1
        print(f"OK   {task.id}: checker kept after {len(gen.attempts)} attempt(s) [{tries}]"
              + ("" if args.dry_run else f" -> {task.source_path}"))
    print(f"{done} checker(s) written, {failed} task(s) without one" + (" (dry run)" if args.dry_run else ""))
    return 1 if failed else 0
