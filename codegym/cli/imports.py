"""``codegym import``: turn benchmark files into task suites (registered by codegym.cli.main).

    codegym import FILE --out DIR                 (= codegym import auto FILE ...: the schema is detected)
    codegym import humaneval FILE --out DIR [--mode auto|plain|plus] [--max-plus N]
    codegym import multipl-e FILE --out DIR [--no-repair] [--public none|tests]
    codegym import lcb FILE_OR_DATASET --out DIR [--since D] [--until D] [--difficulty easy,medium]
    codegym import leetcode-contest FILE --out DIR [--since D] [--until D] [--difficulty ...]
    codegym import swebench FILE --out DIR [--ids ID ...] [--test-command CMD] [--repo-url URL]
                            [--install [OWNER/NAME=]REQ ...] [--setup SHELL ...] [--env NAME=VALUE ...] [--image TAG]

Each writes ``DIR/suite.yaml`` and one task YAML per problem (ids keep the
source's: ``HumanEval/0`` -> ``humaneval/HumanEval_0``), judges the references it
has (``--no-verify``: not), prints a summary (records skipped with their line and
why, counted by reason; ``--json``: the `ImportReport` as JSON) and exits 0, or 1
when nothing could be imported. A file no importer reads exits 1 naming what it
is and what to use. The suite is then usable as ``gym.make("codegym/Suite-v0",
suite=DIR)`` and ``codegym tasks validate DIR``.

`register(subparsers)` adds the group (``codegym.cli.main`` calls it).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from codegym.cli.harbor import add_harbor_import
from codegym.core.jsonl import DEFAULT_DATA_CAPS, DataCaps
from codegym.importers.auto import import_file
from codegym.importers.common import ImportError_
from codegym.importers.detect import detect_file
from codegym.importers.humaneval import EVALPLUS_MEMORY_MB, import_humaneval
from codegym.importers.lcb import LCB_MEMORY_MB, import_lcb
from codegym.importers.leetcode import DEEPSEEK_TIME_S, import_leetcode_contest
from codegym.importers.leetcode import MEMORY_MB as LEETCODE_MEMORY_MB
from codegym.importers.multiple import import_multiple
from codegym.importers.swebench import GITHUB_URL, import_swebench
from codegym.sandbox import make_sandbox
from codegym.tasks.load import TaskValidationError

#: the sub-command ``codegym import FILE`` stands for
AUTO = "auto"


class _ImportCommands(argparse._SubParsersAction):
    """The import sub-commands; a first word that names none of them is the FILE of
    ``codegym import FILE`` (the `AUTO` command)."""

    class _Names(dict):
        def __contains__(self, key: object) -> bool:   # argparse checks the choice before calling
            return True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.choices = self._Names()

    def add_parser(self, name, **kwargs):
        p = super().add_parser(name, **kwargs)
        self.choices[name] = p
        return p

    def __call__(self, parser, namespace, values, option_string=None):
        if values and values[0] not in self._name_parser_map:
            values = [AUTO, *values]
        super().__call__(parser, namespace, values, option_string)


def register(subparsers) -> None:
    """Add the ``import`` command group."""
    p = subparsers.add_parser("import", help="import a benchmark file as a task suite",
                              description="Import benchmark files (HumanEval/EvalPlus, MultiPL-E, LiveCodeBench, "
                                          "LeetCode contest, SWE-bench) as codegym task suites: "
                                          "`codegym import FILE --out DIR` detects the schema.")
    p.set_defaults(_group_parser=p)
    sub = p.add_subparsers(dest="import_command", metavar="BENCHMARK | FILE", action=_ImportCommands)

    a = sub.add_parser(AUTO, help="detect the file's schema and run its importer (also: codegym import FILE)",
                       description="Detect which importer reads FILE (HumanEval, EvalPlus, MBPP+, MultiPL-E, "
                                   "LiveCodeBench and its few-shot files, the LeetCode contest set, SWE-bench / "
                                   "SWE-smith / SWE-rebench) and run it with the options below that it takes; "
                                   "a file none reads is named with what to use instead.")
    _common(a, out_required=False)
    a.add_argument("--ids", nargs="+", default=None, metavar="ID", help="only these source ids")
    a.add_argument("--time-s", type=float, default=None, help="seconds per test (default: the benchmark's)")
    a.add_argument("--memory-mb", type=int, default=None, help="memory limit (default: the benchmark's)")
    a.add_argument("--sandbox", default=None, help="sandbox kind for the reference runs (default: local)")
    a.add_argument("--detect-only", action="store_true", help="only say which importer reads FILE")
    a.set_defaults(func=cmd_auto)

    h = sub.add_parser("humaneval", help="HumanEval, HumanEval+ / MBPP+ (EvalPlus) .jsonl[.gz]",
                       description="HumanEval (script tasks) and EvalPlus HumanEval+/MBPP+ (function tasks "
                                   "whose expected outputs are computed by the reference in the sandbox).")
    _common(h)
    h.add_argument("--mode", choices=("auto", "plain", "plus"), default="auto",
                   help="plain: script tasks with the original tests; plus: EvalPlus differential tests "
                        "(auto: plus when records have base_input)")
    h.add_argument("--max-plus", type=int, default=None, metavar="N",
                   help="keep only the first N plus inputs per problem (default: all)")
    h.add_argument("--ids", nargs="+", default=None, metavar="TASK_ID", help="only these source ids")
    h.add_argument("--time-floor", type=float, default=1.0, help="EvalPlus per-input time floor, s (default 1)")
    h.add_argument("--time-factor", type=float, default=4.0,
                   help="EvalPlus per-input limit = max(floor, factor x reference CPU time) (default 4)")
    h.add_argument("--memory-mb", type=int, default=EVALPLUS_MEMORY_MB,
                   help=f"memory limit of the tasks (default {EVALPLUS_MEMORY_MB}: EvalPlus's 4 GiB)")
    h.add_argument("--no-public", action="store_true",
                   help="EvalPlus: do not copy the base inputs into the public split")
    h.add_argument("--sandbox", default=None, help="sandbox kind for the reference runs (default: local)")
    h.set_defaults(func=cmd_humaneval)

    m = sub.add_parser("multipl-e", help="MultiPL-E prompts .jsonl (Julia, JavaScript)",
                       description="MultiPL-E problems as script tasks: prompt + completion + tests.")
    _common(m)
    m.add_argument("--no-repair", action="store_true", help="keep known-defective prompts verbatim")
    m.add_argument("--public", choices=("none", "tests"), default="none",
                   help="tests: also use the tests as the public split (reveals them)")
    m.add_argument("--time-s", type=float, default=None, help="CPU seconds per program (Julia default 15)")
    m.add_argument("--ids", nargs="+", default=None, metavar="NAME", help="only these problem names")
    m.set_defaults(func=cmd_multiple)

    lc = sub.add_parser("lcb", help="LiveCodeBench .jsonl (or a hub dataset with `datasets`), or its few-shot files",
                        description="LiveCodeBench problems (functional -> function tasks, stdin -> stdio "
                                    "tasks), filtered by release date and difficulty, judged like LCB's harness.")
    _common(lc)
    _window(lc)
    lc.add_argument("--platform", default=None, help="leetcode, atcoder, codeforces (comma-separated)")
    lc.add_argument("--time-s", type=float, default=6.0, help="seconds per test (LCB default 6)")
    lc.add_argument("--memory-mb", type=int, default=LCB_MEMORY_MB, help=f"memory limit (default {LCB_MEMORY_MB})")
    lc.add_argument("--float-tol", type=float, default=None, metavar="TOL",
                    help="compare answers holding floats within TOL (LCB compares them exactly)")
    lc.set_defaults(func=cmd_lcb)

    lt = sub.add_parser("leetcode-contest", help="DeepSeek-Coder LeetCode contest .jsonl[.gz]",
                        description="LeetCode contest problems (prompt + assert tests) as function tasks, "
                                    "judged like DeepSeek-Coder's harness.")
    _common(lt)
    _window(lt)
    lt.add_argument("--time-s", type=float, default=DEEPSEEK_TIME_S,
                    help=f"CPU seconds per test (default {DEEPSEEK_TIME_S:g}: DeepSeek's program timeout)")
    lt.add_argument("--memory-mb", type=int, default=LEETCODE_MEMORY_MB,
                    help=f"memory limit (default {LEETCODE_MEMORY_MB})")
    lt.add_argument("--ids", nargs="+", default=None, metavar="TASK_ID", help="only these task ids")
    lt.set_defaults(func=cmd_leetcode_contest)

    add_swebench_import(sub)
    add_harbor_import(sub)  # codegym.cli.harbor


def _common(p: argparse.ArgumentParser, out_required: bool = True) -> None:
    p.add_argument("file", metavar="FILE", help="the benchmark file")
    p.add_argument("--out", required=out_required, metavar="DIR", help="suite folder to write")
    p.add_argument("--suite-name", default=None, help="suite part of the task ids (default per benchmark)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N problems")
    p.add_argument("--no-validate", action="store_true", help="do not load the written files back")
    p.add_argument("--no-verify", action="store_true", help="do not judge the imported references")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    add_cap_option(p)


def add_cap_option(p: argparse.ArgumentParser) -> None:
    """``--cap NAME=VALUE`` (repeatable): raise or lower a cap of the data reader."""
    p.add_argument("--cap", action="append", default=None, metavar="NAME=VALUE",
                   help="a cap of what the file may cost (repeatable; sizes take K, M, G): "
                        + ", ".join(f"{f}={v:,}" for f, v in DEFAULT_DATA_CAPS.__dict__.items())
                        + " (docs/importers.md)")


def data_caps(args: argparse.Namespace) -> DataCaps:
    """The caps of ``--cap`` options (ValueError naming a bad one)."""
    return DEFAULT_DATA_CAPS.with_overrides(getattr(args, "cap", None) or ())


def _window(p: argparse.ArgumentParser) -> None:
    p.add_argument("--since", default=None, metavar="YYYY-MM-DD", help="release date >= this")
    p.add_argument("--until", default=None, metavar="YYYY-MM-DD", help="release date <= this")
    p.add_argument("--difficulty", default=None, help="easy, medium, hard (comma-separated)")


def _finish(args: argparse.Namespace, report) -> int:
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.summary())
        if report.written:
            print(f"use it: codegym tasks validate {args.out}  |  "
                  f"gym.make('codegym/Suite-v0', suite={args.out!r})")
    return 0 if report.written else 1


def _guard(fn):
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (ImportError_, TaskValidationError, ValueError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    run.__name__ = fn.__name__
    return run


@_guard
def cmd_auto(args: argparse.Namespace) -> int:
    det = detect_file(args.file, data_caps(args))
    if args.detect_only or det.command is None:
        print(det.message, file=sys.stdout if det.command else sys.stderr)
        return 0 if det.command else 1
    print(f"detected: {det.message}", file=sys.stderr)
    if not args.out:
        print("error: --out DIR is required to import", file=sys.stderr)
        return 2
    report = import_file(args.file, args.out, detection=det, suite_name=args.suite_name, suite=args.suite_name,
                         ids=args.ids, limit=args.limit, time_s=args.time_s, memory_mb=args.memory_mb,
                         sandbox=make_sandbox(args.sandbox) if args.sandbox else None,
                         validate=not args.no_validate, verify=not args.no_verify, caps=data_caps(args))
    return _finish(args, report)


@_guard
def cmd_humaneval(args: argparse.Namespace) -> int:
    sandbox = make_sandbox(args.sandbox) if args.sandbox else None
    report = import_humaneval(args.file, args.out, mode=args.mode, max_plus=args.max_plus,
                              suite_name=args.suite_name, sandbox=sandbox, ids=args.ids, limit=args.limit,
                              time_floor=args.time_floor, time_factor=args.time_factor,
                              memory_mb=args.memory_mb, public_base=not args.no_public,
                              validate=not args.no_validate, verify=not args.no_verify, caps=data_caps(args))
    return _finish(args, report)


@_guard
def cmd_multiple(args: argparse.Namespace) -> int:
    report = import_multiple(args.file, args.out, suite_name=args.suite_name, repair=not args.no_repair,
                             public=args.public, time_s=args.time_s, ids=args.ids, limit=args.limit,
                             validate=not args.no_validate, caps=data_caps(args))
    return _finish(args, report)


@_guard
def cmd_lcb(args: argparse.Namespace) -> int:
    report = import_lcb(args.file, args.out, since=args.since, until=args.until, difficulty=args.difficulty,
                        platform=args.platform, suite_name=args.suite_name or "lcb", time_s=args.time_s,
                        memory_mb=args.memory_mb, float_tol=args.float_tol, limit=args.limit,
                        validate=not args.no_validate, verify=not args.no_verify, caps=data_caps(args))
    return _finish(args, report)


@_guard
def cmd_leetcode_contest(args: argparse.Namespace) -> int:
    report = import_leetcode_contest(args.file, args.out, since=args.since, until=args.until,
                                     difficulty=args.difficulty, suite_name=args.suite_name or "leetcode-contest",
                                     time_s=args.time_s, memory_mb=args.memory_mb, limit=args.limit,
                                     ids=args.ids, validate=not args.no_validate, caps=data_caps(args))
    return _finish(args, report)


def env_pairs(pairs) -> dict[str, str]:
    """``--env NAME=VALUE`` options as a mapping (ValueError names a malformed one)."""
    out = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--env wants NAME=VALUE, got {pair!r}")
        out[key] = value
    return out


def _cmd_import_swebench(args: argparse.Namespace) -> int:
    try:
        rep = import_swebench(args.file, args.out, suite=args.suite_name, ids=args.ids or None, limit=args.limit,
                              test_command=shlex.split(args.test_command) if args.test_command else None,
                              validate=not args.no_validate, repo_url=args.repo_url, install=args.install or None,
                              setup=args.setup or (), env=env_pairs(args.env), image=args.image,
                              caps=data_caps(args))
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(rep.to_dict(), indent=2) if args.json else rep.summary())
    return 0 if rep.written else 1


def add_swebench_import(import_subparsers) -> argparse.ArgumentParser:
    """Add ``swebench`` to the subcommands of ``codegym import`` (FILE, --out, --suite-name,
    --limit, --no-validate, --json as the others', plus --ids, --test-command, --repo-url,
    --install, --setup, --env, --image)."""
    p = import_subparsers.add_parser(
        "swebench", help="SWE-bench / SWE-smith / SWE-rebench instances (.json / .jsonl[.gz]) as repo tasks",
        description="Import SWE-bench-schema task instances (fields instance_id, repo, base_commit, patch, "
                    "test_patch, problem_statement, FAIL_TO_PASS, PASS_TO_PASS, version, "
                    "environment_setup_commit; SWE-rebench's install_config) into a suite folder of repo "
                    "tasks. Each task's tests run in an environment made as SWE-bench's harness makes it "
                    "(its per-version spec, SWE-rebench's install_config, else the declared dependencies; the "
                    "repository installed at its base commit), built inside the sandbox once per repository, "
                    "version, packages and Python when first judged; the tests themselves run offline.")
    p.add_argument("file", metavar="FILE", help="instances: .json (list) or .jsonl, optionally .gz")
    p.add_argument("--out", required=True, metavar="DIR", help="suite folder to write (e.g. tasks/swebench)")
    p.add_argument("--suite-name", default=None, help="suite part of the task ids (default: the folder name)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N instances")
    p.add_argument("--ids", nargs="+", default=None, metavar="INSTANCE_ID", help="only these instance ids")
    p.add_argument("--test-command", default=None,
                   help="test runner argv prefix for every instance (default: the record's test_cmd, else "
                        "python -m pytest -rA with a junit report, or the repository's SWE-bench runner)")
    p.add_argument("--repo-url", default=GITHUB_URL,
                   help="repository URL or path template: {repo} (owner/name), {owner}, {name}, {repo_plus} "
                        "(owner+name). The default, GitHub, needs the network: offline, name a local mirror")
    p.add_argument("--install", action="append", default=None, metavar="[OWNER/NAME=]REQ",
                   help="PEP 508 requirement added to the tests' environment (repeatable), to every record's or, "
                        "as owner/name=REQ, to that repository's; it adds to the recipe's last pip call (SWE-bench's "
                        "spec, SWE-rebench's install_config, else pytest and what the repository declares); a "
                        "distribution the list names again takes this version")
    p.add_argument("--setup", action="append", default=None, metavar="SHELL",
                   help="shell command run once per checkout before the tests (repeatable; no network then)")
    p.add_argument("--env", action="append", default=None, metavar="NAME=VALUE",
                   help="environment variable of the test commands (repeatable)")
    p.add_argument("--image", default=None,
                   help="a prebuilt container image for the Docker backend ({instance_id}, {repo}); default: "
                        "codegym builds its own per-repository image from the environment")
    p.add_argument("--no-validate", action="store_true", help="do not load the written files back")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    add_cap_option(p)
    p.set_defaults(func=_cmd_import_swebench)
    return p
