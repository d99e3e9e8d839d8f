"""Issue #18's small items: unknown reset options are refused, tracebacks name workspace paths."""

from __future__ import annotations

import gymnasium as gym
import pytest

import codegym  # noqa: F401  (registers the ids)
from codegym.envs.feedback import workspace_paths
from codegym.wrappers import DiffSizePenalty


def test_an_unknown_reset_option_is_an_error_naming_the_known_ones():
    env = gym.make("codegym/Suite-v0", suite="examples")
    with pytest.raises(ValueError) as e:
        env.reset(options={"taskid": "examples/digit-sum-queries"})
    msg = str(e.value)
    assert "'taskid' (did you mean 'task_id'?)" in msg and "known: task_id, sampler, language, protected" in msg
    _, info = env.reset(options={"task_id": "examples/digit-sum-queries", "language": "python"})
    assert info["task_id"] == "examples/digit-sum-queries"
    env.close()
    # a wrapper's own option (protected paths) is one of the known ones
    guarded = DiffSizePenalty(gym.make("codegym/Suite-v0", suite="examples"))
    guarded.reset(options={"task_id": "examples/digit-sum-queries"})
    guarded.close()


def test_public_test_tracebacks_name_the_workspace_file_not_the_sandbox_layout():
    env = gym.make("codegym/Suite-v0", suite="examples")
    env.reset(options={"task_id": "examples/digit-sum-queries"})
    obs, _, _, _, info = env.step("```python\ndef f():\n    raise ValueError('boom')\nf()\n```")
    assert info["judge"]["verdict"] == "runtime_error"
    assert 'File "main.py", line 2, in f' in obs and "ValueError: boom" in obs
    assert "/hidden/" not in obs and "/box" not in obs
    env.close()
    text = 'File "/box/hidden/pkg/a.py", line 1\nFile "/usr/lib/python3.11/re.py", line 9'
    assert workspace_paths(text) == 'File "pkg/a.py", line 1\nFile "/usr/lib/python3.11/re.py", line 9'
