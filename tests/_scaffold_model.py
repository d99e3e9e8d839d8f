"""A scripted model for scaffold tests: solves one task and fails another, through real scaffolds.

`scripted_model(solve_id, fail_id)` returns a `FakeOpenAIServer` responder. It tells
the two tasks apart by their statements and answers the two kinds of client the tests
run:

- mini-swe-agent (requests with ``tools``): bash tool calls, one per model call. On the
  solved task: ``ls``, then a wrong ``main.py``, then the reference, then the submit
  marker (so three turns change nothing, one, one: two diffs); on the failed task: a
  wrong ``main.py``, then the submit marker;
- the tests' shell scaffold (`SHELL_SCAFFOLD`, no tools): one answer with a ```python
  block holding the reference (solved task) or the wrong program (failed task).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from _fake_openai import Reply

from codegym import load_suite

SOLVE_ID = "examples/run-length"
FAIL_ID = "examples/bracket-depth"

#: a scaffold of our own, started as a shell command: one model call, the code block to main.py
SHELL_SCAFFOLD = r'''
import json, os, re, sys, urllib.request
task = open(sys.argv[1]).read()
body = {"model": os.environ["CODEGYM_LLM_MODEL"], "messages": [{"role": "user", "content": task}]}
req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=json.dumps(body).encode(),
                             headers={"Content-Type": "application/json",
                                      "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
reply = json.load(urllib.request.urlopen(req))["choices"][0]["message"]["content"]
code = re.search(r"```python\n(.*?)```", reply, re.S).group(1)
open("main.py", "w").write(code)
print("wrote main.py")
'''


def programs() -> dict[str, tuple[str, str]]:
    """task id -> (right program, wrong program)."""
    suite = {t.id: t for t in load_suite("examples")}
    solve = suite[SOLVE_ID].solutions["reference"].files["main.py"]
    fail_wrong = "def max_depth(text: str) -> int:\n    return 0\n"
    solve_wrong = solve.replace("def squeeze(s: str) -> str:\n", "def squeeze(s: str) -> str:\n    return s\n", 1)
    assert solve_wrong != solve
    return {SOLVE_ID: (solve, solve_wrong), FAIL_ID: (fail_wrong, fail_wrong)}


def _bash(command: str, text: str = "ok") -> Reply:
    return Reply(content=text, tool_calls=[{"name": "bash", "arguments": {"command": command}}])


def _write(code: str) -> Reply:
    return _bash(f"echo {base64.b64encode(code.encode()).decode()} | base64 -d > main.py", "writing main.py")


def _task_of(request: dict[str, Any]) -> str:
    text = json.dumps(request.get("messages"))
    if "squeeze(" in text:
        return SOLVE_ID
    if "max_depth(" in text:
        return FAIL_ID
    raise AssertionError("the scripted model does not know this task")


def scripted_model(progs: dict[str, tuple[str, str]] | None = None):
    """The responder (see the module docstring)."""
    progs = progs or programs()

    def respond(request: dict[str, Any]) -> Reply:
        task = _task_of(request)
        right, wrong = progs[task]
        if not request.get("tools"):  # the shell scaffold
            code = right if task == SOLVE_ID else wrong
            return Reply(content=f"Here it is.\n```python\n{code}```\n")
        n = sum(1 for m in request["messages"] if m.get("role") == "assistant")
        script = ([_bash("ls -la && cat main.py"), _write(wrong), _write(right)] if task == SOLVE_ID
                  else [_write(wrong)])
        if n < len(script):
            return script[n]
        return _bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "done")

    return respond
