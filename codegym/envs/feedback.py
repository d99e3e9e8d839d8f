"""Text the environment shows the agent: the reset prompt and per-step feedback.

Everything here is a pure function of its arguments (no timings unless the
caller passes them), so observations are deterministic for the same task,
seed and actions. Program output is shown with the workspace's own paths
(`workspace_paths`): a traceback names ``main.py``, not where the sandbox ran it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from codegym.core.languages import language_of_path
from codegym.sandbox.launcher import HIDDEN_DIR
from codegym.tasks.schema import Task

#: longest excerpt of one stream (input / expected / got / compiler output) shown
EXCERPT_CHARS = 600


#: a path into the run directory where the launcher put the program (``/box/hidden/main.py``,
#: or the run directory's host path without bubblewrap), as Python prints it in a traceback
_RUN_PATH = re.compile(r'(?P<q>["\'])(?:/[^"\'\n]*)?/' + re.escape(HIDDEN_DIR) + r'/(?P<rel>[^"\'\n]+)(?P=q)')


def workspace_paths(text: str) -> str:
    """`text` with the sandbox's paths of the program's files replaced by their workspace
    paths (``File "/box/hidden/main.py"`` -> ``File "main.py"``)."""
    if not text or HIDDEN_DIR not in text:
        return text
    return _RUN_PATH.sub(lambda m: m["q"] + m["rel"] + m["q"], text)


def truncate(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` cut to `limit` characters with a note saying how much was dropped."""
    if text is None:
        return ""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n... [{len(text) - limit} characters omitted] ...\n{text[-tail:]}"


def fence_lang(path: str) -> str:
    """The info-string language of a file's fenced block ("" when the table has none)."""
    return language_of_path(path) or ""


def fenced(path: str, text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{fence_lang(path)} path={path}\n{body}{fence}"


def render_files(files: Mapping[str, str], max_chars: int = 60_000) -> str:
    """The workspace as fenced blocks (large files cut, listing kept complete)."""
    out: list[str] = []
    budget = max_chars
    for path in sorted(files):
        text = files[path]
        if len(text) > budget:
            out.append(f"### {path}\n({len(text)} characters; too large to show here, "
                       f"use view_file to read it)")
            continue
        budget -= len(text)
        out.append(f"### {path}\n{fenced(path, text)}")
    return "\n\n".join(out) if out else "(no files)"


def reset_prompt(task: Task, files: Mapping[str, str], language: str, main_file: str,
                 format_help: str, max_turns: int, feedback: str) -> str:
    """The first observation: statement, files, how to answer, turns."""
    title = task.title or task.id
    parts = [f"# {title}", f"Task `{task.id}` ({task.kind}, language: {language}, main file: "
             f"`{main_file}`).", "", task.statement.strip(), "", "## Files", render_files(files), "",
             "## How to answer", format_help.strip(), "",
             f"You have {max_turns} turn(s). "]
    if feedback == "none":
        parts[-1] += "Edits are applied without running tests until you submit."
    else:
        parts[-1] += ("After each edit the public tests run and you see the result; "
                      "`submit` runs the hidden tests and ends the episode.")
    if max_turns > 0:
        parts[-1] += " The last turn submits automatically."
    return "\n".join(parts)


def _case_block(case: Mapping[str, Any], inputs: Mapping[int, str] | None) -> str:
    lines = [f"Case {case.get('index', '?')}"
             + (f" ({case['name']})" if case.get("name") else "")
             + f": {case.get('status')}"]
    if inputs is not None and case.get("index") in inputs:
        lines.append("input:\n" + truncate(inputs[case["index"]]))
    if case.get("message"):
        lines.append(truncate(workspace_paths(str(case["message"]))))
    if case.get("diff"):
        lines.append(truncate(workspace_paths(str(case["diff"]))))
    return "\n".join(lines)


def judge_feedback(report: Mapping[str, Any], split: str, mode: str,
                   inputs: Mapping[int, str] | None = None) -> str:
    """Feedback for a judge report (a JudgeReport.to_dict()).

    mode "public": verdict, counts and the first failing case with input /
    expected / got; "full": every failing case; "none": only the verdict.
    """
    verdict = report.get("verdict")
    passed, total = report.get("passed", 0), report.get("total", 0)
    head = f"{split.capitalize()} tests: {verdict} ({passed}/{total} passed)."
    if mode == "none":
        return head
    lines = [head]
    if verdict == "compile_error":
        lines.append("Compiler output:\n" + truncate(workspace_paths(report.get("compile_output") or ""), 1500))
        return "\n".join(lines)
    if verdict in ("no_code", "sandbox_error") and report.get("message"):
        lines.append(truncate(workspace_paths(report["message"]), 1500))
    failing = [c for c in report.get("cases", []) if c.get("status") not in ("passed", "skipped", None)]
    if mode == "public":
        failing = failing[:1]
    for c in failing:
        lines.append(_case_block(c, inputs))
    return "\n".join(lines)
