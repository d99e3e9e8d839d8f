"""Special-judge generation (ScaleBox): a model writes a task's checker program, execution validates it.

For a stdio task whose outputs admit several correct answers, `validation_set` gathers
what a checker must accept -- every accepted solution's output on the task's cases and
equivalent layouts of the expected answer -- and what it must reject -- perturbations
of those outputs, the outputs of output-mutants of the reference, and of solutions
expected to fail. `generate_checker` asks a model (an `LLMAgent`) for a Python checker
(`codegym.judge.checkers.ProgramChecker` conventions), runs it on that set in the
sandbox (`validate_checker`: it must accept, reject, and never crash or time out), and
asks again with the failures as feedback; `write_checker` puts the kept checker and its
validation record into the task YAML. docs/checkergen.md has the details.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from codegym.agents.mutant import MutantAgent
from codegym.core.yamldoc import Doc, DocValidationError, dump_yaml
from codegym.judge.checkers.program import ProgramChecker
from codegym.judge.kinds.stdio import stdio_build, stdio_launch
from codegym.judge.testgen import materialize
from codegym.sandbox import RunRequest
from codegym.sandbox.types import Sandbox
from codegym.tasks.load import load_task
from codegym.tasks.schema import Task

CHECKER_SYSTEM_PROMPT = (
    "You write checker programs (special judges) for competitive-programming tasks whose outputs admit "
    "several correct answers. A checker is a Python 3 program run as `python3 checker.py input.txt "
    "output.txt answer.txt`: the test's input, the contestant's output and the jury's answer (one correct "
    "output). It exits 0 when the contestant's output is correct, 1 when it is wrong; it must never crash "
    "on malformed output (treat it as wrong). Reply with the whole program in one ```python block.")
_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)
_NUM = re.compile(r"^[+-]?\d+(\.\d+)?$")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:")
_TRACEBACK = "Traceback (most recent call last)"
#: where the validation record goes in the task YAML (``metadata.extra.<RECORD_KEY>``)
RECORD_KEY = "checker_validation"


@dataclass
class Sample:
    """One (input, answer, output) triple and what a checker must say of it.

    accept  True: a correct output (a solution's, or the answer laid out otherwise)
    origin  where the output comes from (``solution:baseline``, ``layout:spaces``,
            ``perturb:drop-last-token``, ``mutant:output``, ``solution:wrong``)
    """

    case: str
    input: str
    answer: str
    output: str
    accept: bool
    origin: str


@dataclass
class Validation:
    """What a checker did on a validation set."""

    ok: bool
    accepted: int = 0            # correct outputs it accepted, of `positives`
    positives: int = 0
    rejected: int = 0            # wrong outputs it rejected, of `negatives`
    negatives: int = 0
    failures: list[dict] = field(default_factory=list)   # the samples it got wrong (first ones)
    crashes: int = 0             # samples on which it crashed, timed out or answered an unknown code

    def record(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("failures")
        return d


@dataclass
class Attempt:
    """One model answer: the code extracted and its validation (None: no code in the reply)."""

    code: str | None
    validation: Validation | None
    reply_chars: int = 0


@dataclass
class Generated:
    """The outcome for one task: the kept checker (None when every attempt failed)."""

    task_id: str
    code: str | None
    attempts: list[Attempt]
    samples: int
    model: str = ""

    @property
    def ok(self) -> bool:
        return self.code is not None

    def record(self) -> dict[str, Any]:
        """The validation record written next to the checker in the task YAML."""
        last = self.attempts[-1].validation if self.attempts else None
        return {"generated_by": self.model, "attempts": len(self.attempts),
                "validated_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "code_sha256": hashlib.sha256((self.code or "").encode()).hexdigest(),
                **(last.record() if last else {})}


# --------------------------------------------------------------------------- the validation set


def _run_outputs(task: Task, language: str, files: dict, inputs: Sequence[str], sandbox: Sandbox) -> list[str | None]:
    """stdout of `files` on each input (None where the run did not end ok)."""
    main = task.main_file_for(language) or ""
    argv, extra = stdio_launch(language, files, main, task.preamble)
    build = stdio_build(sandbox, language, files, extra)
    if not build.ok:
        return [None] * len(inputs)
    reqs = [RunRequest(stdin=s, argv=argv, extra_files=extra) for s in inputs]
    res = sandbox.run_many(build, reqs, limits=task.limits)
    return [r.stdout if r is not None and r.status == "ok" and not r.stdout_truncated else None for r in res]


def _layouts(answer: str) -> list[tuple[str, str]]:
    toks = answer.split()
    lines = [" ".join(ln.split()) for ln in answer.strip().splitlines()]
    out = [("layout:no-final-newline", answer.rstrip("\n")), ("layout:trailing-spaces", "\n".join(
        ln + "  " for ln in lines) + "\n"), ("layout:spaces", "\n".join("  ".join(ln.split()) for ln in lines) + "\n")]
    if toks and len(lines) == 1:
        out.append(("layout:extra-newline", answer.rstrip("\n") + "\n\n"))
    return out


def _perturbations(output: str) -> list[tuple[str, str]]:
    toks = output.split()
    out = [("perturb:empty", ""), ("perturb:extra-token", output.rstrip("\n") + " 7\n"),
           ("perturb:garbage", "codegym?\n"), ("perturb:doubled", output + output)]
    if len(toks) >= 1:
        out.append(("perturb:drop-last-token", " ".join(toks[:-1]) + "\n"))
        k = next((i for i, t in enumerate(toks) if _NUM.match(t)), None)
        if k is not None:
            bumped = list(toks)
            bumped[k] = str(int(float(toks[k])) + 1_000_000_007)
            out.append(("perturb:number", " ".join(bumped) + "\n"))
    return out


def _tokens(s: str) -> tuple[str, ...]:
    return tuple(s.split())


def validation_set(task: Task, sandbox: Sandbox, max_cases: int = 24, mutants: int = 2, seed: int = 0) -> list[Sample]:
    """The samples a checker of `task` must get right (see the module docstring)."""
    if task.kind != "stdio":
        raise ValueError(f"{task.id}: checker programs judge stdio tasks (this one is {task.kind})")
    cases = [c for c in materialize(task, "public", sandbox) + materialize(task, "hidden", sandbox)
             if c.stdin is not None and isinstance(c.expected, str)]
    if len(cases) > max_cases:  # spread over the list: small and large cases both
        step = len(cases) / max_cases
        cases = [cases[int(i * step)] for i in range(max_cases)]
    inputs = [c.stdin for c in cases]
    samples: list[Sample] = []
    good: list[set[tuple[str, ...]]] = [{_tokens(c.expected)} for c in cases]
    for name, sol in task.solutions.items():
        lang = sol.language or task.language
        outs = _run_outputs(task, lang, dict(sol.files), inputs, sandbox)
        accept = getattr(sol, "expect", "accepted") == "accepted"
        for k, (c, o) in enumerate(zip(cases, outs)):
            if o is None:
                continue
            samples.append(Sample(c.name, c.stdin, c.expected, o, accept, f"solution:{name}"))
            if accept:
                good[k].add(_tokens(o))
    for k, c in enumerate(cases):
        for origin, o in _layouts(c.expected):
            samples.append(Sample(c.name, c.stdin, c.expected, o, True, origin))
        for origin, o in _perturbations(c.expected):
            if _tokens(o) not in good[k]:
                samples.append(Sample(c.name, c.stdin, c.expected, o, False, origin))
    ref = task.reference_name
    if ref is not None and mutants > 0:
        lang = task.solution(ref).language or task.language
        files = dict(task.solution(ref).files)
        main = task.main_file_for(lang) or ""
        agent = MutantAgent(kinds=("output",), seed=seed)
        for j in range(mutants):
            agent.reset(seed=seed + j)
            mutated = {**files, main: agent.mutate(files[main], lang, "output", True, None)}
            for k, (c, o) in enumerate(zip(cases, _run_outputs(task, lang, mutated, inputs, sandbox))):
                if o is not None and _tokens(o) not in good[k]:
                    samples.append(Sample(c.name, c.stdin, c.expected, o, False, "mutant:output"))
    seen, out = set(), []
    for s in samples:  # one sample per (case, output, verdict)
        key = (s.case, s.output, s.accept)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def outputs_differ(samples: Sequence[Sample]) -> bool:
    """True when accepted solutions print different answers to one case (several are correct)."""
    by_case: dict[str, set] = {}
    for s in samples:
        if s.accept and s.origin.startswith("solution:"):
            by_case.setdefault(s.case, set()).add(_tokens(s.output))
    return any(len(v) > 1 for v in by_case.values())


# --------------------------------------------------------------------------- validating a checker


def validate_checker(code: str, samples: Sequence[Sample], sandbox: Sandbox, language: str = "python",
                     time_s: float = 10.0, keep: int = 8) -> Validation:
    """Run the checker on every sample: it must accept the correct outputs, reject the
    wrong ones, and never fail (crash -- an exit code the checker conventions do not
    know, or a Python traceback --, time out, or exit 3)."""
    chk = ProgramChecker(code, language, time_s=time_s)
    results = chk.check_many(sandbox, [(s.input, s.answer, s.output) for s in samples])
    v = Validation(ok=True, positives=sum(s.accept for s in samples), negatives=sum(not s.accept for s in samples))
    for s, r in zip(samples, results):
        # an uncaught exception exits 1 like "wrong answer": its traceback tells the crash apart
        if r.failed or _TRACEBACK in (r.diff or ""):
            v.crashes += 1
            why = f"the checker failed: {r.message} {r.diff}".strip()
        elif s.accept and r.ok:
            v.accepted += 1
            continue
        elif not s.accept and not r.ok:
            v.rejected += 1
            continue
        else:
            why = "accepted a wrong output" if r.ok else "rejected a correct output"
        v.ok = False
        if len(v.failures) < keep:
            v.failures.append({"case": s.case, "origin": s.origin, "why": why, "input": s.input[:300],
                               "answer": s.answer[:300], "output": s.output[:300]})
    return v


# --------------------------------------------------------------------------- talking to the model


def checker_prompt(task: Task, samples: Sequence[Sample], examples: int = 3) -> str:
    """The first message: statement, the checker protocol, a few cases with valid outputs."""
    parts = [f"Task: {task.title or task.id}\n\n{task.statement.strip()}\n",
             "Write the checker for this task (protocol in the system message). Examples of a test's input, "
             "the jury's answer, and outputs that are also correct:"]
    shown = 0
    for case in dict.fromkeys(s.case for s in samples):
        ss = [s for s in samples if s.case == case]
        alts = sorted({s.output for s in ss if s.accept and s.origin.startswith("solution:")
                       and _tokens(s.output) != _tokens(s.answer)})
        if not alts and shown:
            continue
        parts.append(f"\n--- input ---\n{ss[0].input[:600]}--- answer ---\n{ss[0].answer[:600]}"
                     + "".join(f"--- also correct ---\n{a[:600]}" for a in alts[:2]))
        shown += 1
        if shown >= examples:
            break
    return "\n".join(parts)


def feedback_text(v: Validation | None) -> str:
    """The retry message: what the last checker got wrong."""
    if v is None:
        return "Your reply held no ```python block with the checker. Reply with the whole program in one block."
    lines = [f"Your checker was run on {v.positives} correct and {v.negatives} wrong outputs: it accepted "
             f"{v.accepted}/{v.positives} correct ones, rejected {v.rejected}/{v.negatives} wrong ones and "
             f"failed (crash, timeout or bad exit code) on {v.crashes}. Some of its mistakes:"]
    for f in v.failures:
        lines.append(f"\n* {f['why']} ({f['origin']}):\n--- input ---\n{f['input']}--- answer ---\n{f['answer']}"
                     f"--- output ---\n{f['output']}")
    lines.append("\nFix the checker and reply with the whole program in one ```python block.")
    return "\n".join(lines)


def extract_code(reply: str) -> str | None:
    """The program in a reply: its last ```python block (None without one)."""
    blocks = _FENCE.findall(reply or "")
    return blocks[-1] if blocks else None


def generate_checker(task: Task, agent, sandbox: Sandbox, samples: Sequence[Sample] | None = None, attempts: int = 3,
                     time_s: float = 10.0) -> Generated:
    """Ask `agent` (an `LLMAgent`) for a checker of `task` until one passes validation,
    at most `attempts` times, each retry with the last failures as feedback."""
    samples = list(samples) if samples is not None else validation_set(task, sandbox)
    agent.reset(task=None, seed=0)
    out = Generated(task.id, None, [], len(samples), getattr(agent, "name", ""))
    message = checker_prompt(task, samples)
    for _ in range(max(1, attempts)):
        reply = agent.act(message, {})
        code = extract_code(reply)
        v = validate_checker(code, samples, sandbox, time_s=time_s) if code else None
        out.attempts.append(Attempt(code, v, len(reply or "")))
        if v is not None and v.ok:
            out.code = code
            break
        message = feedback_text(v)
    return out


# --------------------------------------------------------------------------- the task file


def _top_blocks(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Top-level key -> [start, end) line range of its block (comments and blank lines
    just before the next key belong to that key)."""
    starts = [(i, m.group(1)) for i, ln in enumerate(lines) if (m := _TOP_KEY.match(ln))]
    out: dict[str, tuple[int, int]] = {}
    for j, (i, key) in enumerate(starts):
        end = starts[j + 1][0] if j + 1 < len(starts) else len(lines)
        while end > i + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
            end -= 1
        out[key] = (i, end)
    return out


def write_checker(path: str | os.PathLike, code: str, record: Mapping[str, Any], language: str = "python") -> None:
    """Put a program checker and its validation record (``metadata.extra.checker_validation``)
    into a task file. Only the top-level ``checker`` and ``metadata`` blocks are rewritten;
    the rest of the file stays as written. The file must load as a task afterwards (else it
    is restored and the error raised)."""
    p = Path(path)
    before = p.read_text(encoding="utf-8")
    doc = Doc(p)
    if not doc.load() or not isinstance(doc.data, Mapping):
        raise DocValidationError(doc.errors)
    meta = dict(doc.data.get("metadata") or {})
    meta["extra"] = {**dict(meta.get("extra") or {}), RECORD_KEY: dict(record)}
    new = {"checker": dump_yaml({"checker": {"type": "program", "language": language, "code": code}}),
           "metadata": dump_yaml({"metadata": meta})}
    lines = before.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    blocks = _top_blocks(lines)
    if any(k in doc.data and k not in blocks for k in new):  # e.g. a flow-style document
        raise ValueError(f"{p}: cannot find the top-level block of checker/metadata to rewrite")
    for key, (i, j) in sorted(((k, blocks[k]) for k in new if k in blocks), key=lambda kv: -kv[1][0]):
        lines[i:j] = [new.pop(key)]
    text = "".join(lines) + "".join(new.values())
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, p)
    try:
        task = load_task(p)
        if task.checker.type != "program" or (task.checker.code or "").strip() != code.strip():
            raise ValueError(f"{p}: the checker written does not load back as written")
    except Exception:
        p.write_text(before, encoding="utf-8")
        raise
