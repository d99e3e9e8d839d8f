"""Shaping and penalty wrappers: terms added to whatever reward the inner env gives.

This module owns:

- `ProgressShaping`: potential-based shaping ``F = gamma * Phi(s') - Phi(s)`` with
  ``Phi`` = the public tests' pass fraction of the workspace relative to the start's
  (policy-invariant; the shaped return equals the unshaped one).
- `FormatPenalty`: a penalty for actions that cannot be parsed or applied (``info["error"]``).
- `DiffSizePenalty`: a penalty for churn (lines changed beyond a free budget), for edits
  outside allowed files, and protected paths (edits to them are refused by the env's
  workspace; docs/rewards.md).
- `diff_paths(diff)`, `changed_lines(diff)`: what a unified diff touches.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym

from codegym.wrappers.base import ShallowSpec, env_attr, set_component
from codegym.wrappers.program import FinalProgram

#: prefix CodeEnv gives errors of edits that parsed but could not be applied
APPLY_ERROR_PREFIX = "the edit was not applied"
#: default protected paths: tests and the timing harness are not the agent's to edit
DEFAULT_PROTECTED = ("tests/*", "test_*.py", "*_test.py", "conftest.py", "codegym_*", ".github/*")

_DIFF_PATH = re.compile(r"^(?:\+\+\+ b/|--- a/)(.+?)\s*$")


def diff_paths(diff: str) -> list[str]:
    """Paths a unified diff touches (from its ``--- a/`` and ``+++ b/`` lines), sorted."""
    paths = set()
    for line in (diff or "").splitlines():
        m = _DIFF_PATH.match(line)
        if m:
            paths.add(m.group(1))
    return sorted(paths)


def changed_lines(diff: str) -> int:
    """Lines removed plus lines added in a unified diff (file headers excluded)."""
    n = 0
    for line in (diff or "").splitlines():
        if line.startswith(("+++ ", "--- ")):
            continue
        if line.startswith(("+", "-")):
            n += 1
    return n


def _matches(path: str, patterns: Sequence[str]) -> str | None:
    """The first pattern matching `path` or one of its parent directories (as the
    workspace's `protected` globs do), else None."""
    parts = path.split("/")
    candidates = [path] + ["/".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]
    for c in candidates:
        for pat in patterns:
            if fnmatch.fnmatchcase(c, pat):
                return pat
    return None


# =========================================================================== progress shaping


class ProgressShaping(ShallowSpec, gym.utils.RecordConstructorArgs):
    """Potential-based shaping with the public tests' pass fraction as the potential.

    Adds to every step's reward ``F = weight * (gamma * Phi(s') - Phi(s))`` with
    ``Phi(s) = P(s) - P(s_0)``, ``P(s)`` the fraction of the task's public tests the
    workspace passes (0 without public tests), and ``Phi = 0`` at the end of the episode:
    policy-invariant, and the shaped discounted return equals the unshaped one
    (``sum gamma^t F_t = gamma^T Phi(s_T) - Phi(s_0) = 0``), so shaping never turns an
    accepted submission's return into 0 or less, whatever the starter passed
    (docs/rewards.md). Use the learner's discount as ``gamma``. ``P`` comes from
    ``info["judge"]`` when the env judged every public case on this step, else the public
    split is judged here in full (cached by the files' content). ``info["potential"]``
    holds ``Phi(s')``, ``info["public_fraction"]`` ``P(s')``,
    ``info["reward_components"]["progress_shaping"]`` F.

    Example:
        >>> import gymnasium as gym, codegym
        >>> from codegym.wrappers import ProgressShaping
        >>> env = ProgressShaping(gym.make("codegym/Suite-v0", suite="examples", max_turns=3))
        >>> obs, info = env.reset(options={"task_id": "examples/best-window-mean"})
        >>> info["potential"]                       # the starter passes no public test
        0.0
        >>> fix = env.unwrapped.task.solution("reference").files["main.py"]
        >>> obs, r, term, trunc, info = env.step(f"```python\\n{fix}```")
        >>> r, info["potential"]                    # base reward 0 + (1.0 - 0.0)
        (1.0, 1.0)
    """

    def __init__(self, env: gym.Env, gamma: float = 1.0, weight: float = 1.0):
        if not 0.0 < gamma <= 1.0:
            raise ValueError("gamma must be in (0, 1]")
        gym.utils.RecordConstructorArgs.__init__(self, gamma=gamma, weight=weight)
        gym.Wrapper.__init__(self, env)
        self.gamma = float(gamma)
        self.weight = float(weight)
        self.potential = 0.0
        self.start_fraction = 0.0
        self._cache: dict[str, float] = {}

    def _files_key(self, program: FinalProgram) -> str:
        blob = json.dumps([getattr(program.task, "content_hash", ""), program.language or "",
                           sorted((k, v if isinstance(v, str) else repr(v)) for k, v in program.files.items())])
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()

    def phi(self, program: FinalProgram, report: Mapping[str, Any] | None = None) -> float:
        """The public pass fraction ``P`` of the program the env holds (the potential is ``P - P(s_0)``)."""
        if not program.task.cases("public"):
            return 0.0
        key = self._files_key(program)
        if key in self._cache:
            return self._cache[key]
        if (report is not None and report.get("split") == "public" and report.get("total")
                and not any(c.get("status") == "skipped" for c in report.get("cases") or ())):
            value = report["passed"] / report["total"]
        else:
            rep = program.bench.judge(program.files, "public", program.language, early_exit=False)
            value = rep.passed / rep.total if rep.total else 0.0
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[key] = value
        return value

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.start_fraction = self.phi(self.env.get_wrapper_attr("program")())
        self.potential = 0.0
        info = dict(info)
        info["potential"] = self.potential
        info["public_fraction"] = self.start_fraction
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = dict(info)
        if terminated or truncated:
            new, fraction = 0.0, None
        elif not info.get("diff") and not info.get("judge"):
            new = self.potential  # nothing changed: same state, same potential
            fraction = new + self.start_fraction
        else:
            fraction = self.phi(self.env.get_wrapper_attr("program")(), info.get("judge"))
            new = fraction - self.start_fraction
        f = self.weight * (self.gamma * new - self.potential)
        self.potential = new
        info["potential"] = new
        info["public_fraction"] = fraction
        set_component(info, "progress_shaping", f)
        return obs, float(reward) + f, terminated, truncated, info


# =========================================================================== format penalty


class FormatPenalty(ShallowSpec, gym.utils.RecordConstructorArgs):
    """Subtract a penalty for an action that could not be used (``info["error"]`` set).

    ``penalty`` applies to text that does not parse into edits; ``apply_penalty`` (default:
    the same) to edits that parsed but could not be applied (a search block not found, a
    protected or invalid path: errors starting with "the edit was not applied").
    ``info["reward_components"]["format_penalty"]`` holds the (negative) term.

    Example:
        >>> import gymnasium as gym, codegym
        >>> from codegym.wrappers import FormatPenalty
        >>> env = FormatPenalty(gym.make("codegym/Suite-v0", suite="examples"), penalty=0.1)
        >>> _ = env.reset(seed=0)
        >>> obs, r, term, trunc, info = env.step("<<<<<<< SEARCH\\nnot there\\n=======\\nx\\n>>>>>>> REPLACE\\n")
        >>> r, info["reward_components"]["format_penalty"]
        (-0.1, -0.1)
    """

    def __init__(self, env: gym.Env, penalty: float = 0.1, apply_penalty: float | None = None):
        if penalty < 0 or (apply_penalty is not None and apply_penalty < 0):
            raise ValueError("penalties are given as non-negative amounts")
        gym.utils.RecordConstructorArgs.__init__(self, penalty=penalty, apply_penalty=apply_penalty)
        gym.Wrapper.__init__(self, env)
        self.penalty = float(penalty)
        self.apply_penalty = float(penalty if apply_penalty is None else apply_penalty)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        err = info.get("error")
        if not err:
            return obs, reward, terminated, truncated, info
        p = self.apply_penalty if str(err).startswith(APPLY_ERROR_PREFIX) else self.penalty
        info = dict(info)
        set_component(info, "format_penalty", -p)
        return obs, float(reward) - p, terminated, truncated, info


# =========================================================================== diff size / paths


class DiffSizePenalty(ShallowSpec, gym.utils.RecordConstructorArgs):
    """Penalise churn beyond a free budget, edits outside allowed files, and protect paths.

    An episode pays ``min(max_penalty, per_line * max(0, lines - free_lines))`` for the
    lines its diffs change (each step pays its share when it is made), plus
    ``outside_penalty`` per file touched outside the ``allowed`` globs. ``protected`` globs
    (`DEFAULT_PROTECTED`: tests and timing files) are passed to the env at reset, whose
    workspace refuses edits to them; a refused attempt costs ``protected_penalty`` (an env
    without protected paths is penalised per violating file instead, with a warning).
    docs/rewards.md has the details.

    ``info["reward_components"]["diff_size_penalty"]`` holds the (negative) term and
    ``info["churn"]`` = {"step_lines", "episode_lines", "outside", "protected"}.

    Example:
        >>> import gymnasium as gym, codegym
        >>> from codegym.wrappers import DiffSizePenalty
        >>> env = DiffSizePenalty(gym.make("codegym/Suite-v0", suite="examples"), free_lines=0,
        ...                       per_line=0.01, allowed=["main.py"])
        >>> _ = env.reset(options={"task_id": "examples/digit-sum-queries"})
        >>> obs, r, term, trunc, info = env.step("```python path=notes.py\\nA = 1\\nB = 2\\n```")
        >>> info["churn"]["outside"], round(info["reward_components"]["diff_size_penalty"], 3)
        (['notes.py'], -0.12)
    """

    def __init__(self, env: gym.Env, free_lines: int = 200, per_line: float = 0.001,
                 max_penalty: float = 0.5, allowed: Sequence[str] | None = None,
                 outside_penalty: float = 0.1, protected: Sequence[str] | None = DEFAULT_PROTECTED,
                 protected_penalty: float = 0.2):
        if free_lines < 0 or per_line < 0 or max_penalty < 0 or outside_penalty < 0 or protected_penalty < 0:
            raise ValueError("budgets and penalties are non-negative")
        allowed_t = tuple([allowed] if isinstance(allowed, str) else allowed) if allowed is not None else None
        protected_t = tuple([protected] if isinstance(protected, str) else (protected or ()))
        gym.utils.RecordConstructorArgs.__init__(
            self, free_lines=free_lines, per_line=per_line, max_penalty=max_penalty, allowed=allowed_t,
            outside_penalty=outside_penalty, protected=protected_t, protected_penalty=protected_penalty)
        gym.Wrapper.__init__(self, env)
        self.free_lines, self.per_line, self.max_penalty = int(free_lines), float(per_line), float(max_penalty)
        self.allowed = allowed_t
        self.outside_penalty = float(outside_penalty)
        self.protected = protected_t
        self.protected_penalty = float(protected_penalty)
        self.enforced = env_attr(self.env, "protected") is not None
        self._lines = 0
        self._paid = 0.0
        self._warned = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._lines, self._paid = 0, 0.0
        if self.protected and self.enforced:
            options = dict(options or {})
            options["protected"] = list(dict.fromkeys([*options.get("protected", ()), *self.protected]))
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = dict(info)
        diff = info.get("diff") or ""
        step_lines = changed_lines(diff)
        before = min(self.max_penalty, self.per_line * max(0, self._lines - self.free_lines))
        self._lines += step_lines
        after = min(self.max_penalty, self.per_line * max(0, self._lines - self.free_lines))
        penalty = after - before
        paths = diff_paths(diff)
        outside = [p for p in paths if self.allowed is not None and _matches(p, self.allowed) is None]
        penalty += self.outside_penalty * len(outside)
        protected_hits: list[str] = []
        err = str(info.get("error") or "")
        if self.protected and err.startswith(APPLY_ERROR_PREFIX) and " is protected " in err:
            protected_hits.append(err)
            penalty += self.protected_penalty
        if self.protected and not self.enforced:
            violations = [p for p in paths if _matches(p, self.protected) is not None]
            if violations:
                if not self._warned:
                    warnings.warn("DiffSizePenalty: this env cannot refuse edits to protected paths "
                                  "(no `protected` support); the edits are penalised instead",
                                  RuntimeWarning, stacklevel=2)
                    self._warned = True
                info["protected_violations"] = violations
                protected_hits.extend(violations)
                penalty += self.protected_penalty * len(violations)
        info["churn"] = {"step_lines": step_lines, "episode_lines": self._lines, "outside": outside,
                         "protected": protected_hits}
        if penalty:
            set_component(info, "diff_size_penalty", -penalty)
        return obs, float(reward) - penalty, terminated, truncated, info


