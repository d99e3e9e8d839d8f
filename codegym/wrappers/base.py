"""The skeleton the episode-deciding reward wrappers share (`StagedReward`, `TimedReward`).

`FinalReward` is the step loop: it scores only the step whose judge report decides the
episode (`is_final`), reads that report from ``info["judge"]`` together with the final
files, judges the perf split when the report does not cover it (`check_perf_split`,
`merge_reports`), times the scoring, and writes the details to ``info[info_key]`` and the
reward to ``info["reward_components"][component]`` (`set_component`); the line a subclass
makes of its details for the agent (`feedback`: the measured speedup and the stage) is added
to the final observation, which the env made before the wrapper ran (`add_to_observation`).
`ShallowSpec` is the spec every codegym wrapper gives (the env's kwargs are not
deep-copied). A subclass says how a `FinalProgram` is scored (`score_program`). docs/rewards.md describes the rewards.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec, WrapperSpec

from codegym.judge.report import ran_progress
from codegym.wrappers.program import FinalProgram

#: why a report that is not a verdict is not scored
JUDGE_FAILED = "the judge failed (sandbox_error): not a verdict"


def is_final(info: Mapping[str, Any]) -> bool:
    """True when this step's judge report decides the episode (the hidden tests ran)."""
    return bool(info.get("submitted")) and isinstance(info.get("judge"), Mapping)


def set_component(info: dict, name: str, value: float) -> None:
    """Record a reward component in ``info["reward_components"]`` (copied, not shared)."""
    comps = dict(info.get("reward_components") or {})
    comps[name] = float(value)
    info["reward_components"] = comps


def perf_cases_judged(report: Mapping[str, Any]) -> bool:
    """True when the report's verdict already covers the perf split (env ``timing=True``)."""
    return any((c.get("split") == "perf") for c in report.get("cases") or ())


def check_perf_split(program: FinalProgram) -> dict | None:
    """Judge the perf split of `program` when its report does not cover it yet; returns the
    perf report as a dict (None when the report already covers it or the task has no perf
    split). Correctness on the large inputs is part of correctness: a program that fails
    them is not scored as correct."""
    if perf_cases_judged(program.report) or not program.task.cases("perf"):
        return None
    return program.bench.judge(program.files, "perf", program.language).to_dict()


def failed_report(report: Mapping[str, Any], verdict: str, message: str, passed: int | None = None) -> dict:
    """A copy of an accepted report made to fail with `verdict` after its runs (stage
    ``ran``), `passed` tests passed (default: as reported) and its progress recomputed."""
    out = dict(report)
    if passed is not None:
        out["passed"] = passed
    progress = ran_progress(int(out.get("passed") or 0), int(out.get("total") or 0))  # the judge's rule
    out.update(verdict=verdict, stage="ran", message=message, progress=progress)
    return out


def merge_reports(hidden: Mapping[str, Any], perf: Mapping[str, Any] | None) -> dict:
    """The hidden report with the perf report's cases appended (passed/total over both; the
    verdict is the hidden one unless it was accepted and the perf split failed)."""
    if perf is None:
        return dict(hidden)
    out = dict(hidden)
    out["passed"] = int(hidden.get("passed") or 0) + int(perf.get("passed") or 0)
    out["total"] = int(hidden.get("total") or 0) + int(perf.get("total") or 0)
    out["cases"] = list(hidden.get("cases") or []) + list(perf.get("cases") or [])
    if hidden.get("verdict") == "accepted" and perf.get("verdict") != "accepted":
        out = failed_report(out, perf["verdict"], "perf split: " + str(perf.get("message") or ""))
    return out


def env_attr(env: gym.Env, name: str, default: Any = None) -> Any:
    """The env's attribute `name` through its wrappers (Gymnasium's `get_wrapper_attr`), or
    `default` when no layer has it: how a wrapper asks the env, never by ``env.unwrapped``."""
    try:
        return env.get_wrapper_attr(name)
    except AttributeError:
        return default


def add_to_observation(env: gym.Env, obs: Any, line: str) -> Any:
    """The final observation `obs` with `line` added: by the env's own
    ``add_final_feedback(obs, line)`` when it has one (codegym's envs put it before the
    closing line and keep it as ``last_observation``), else appended to a text observation."""
    add = env_attr(env, "add_final_feedback")
    if add is not None:
        return add(obs, line)
    return f"{obs}\n{line}" if isinstance(obs, str) else obs


class ShallowSpec(gym.Wrapper):
    """A wrapper whose ``spec`` is built without deep-copying the env's keyword arguments.

    Gymnasium's `Wrapper.spec` deep-copies the inner spec, which fails (and makes
    ``gym.make`` fail) when the env was made with an object that cannot be copied, such
    as a sandbox instance or a sampler. Here the spec is a new `EnvSpec` holding the same
    kwargs (a shallow copy) and this wrapper's `WrapperSpec`: it rebuilds the same stack."""

    @property
    def spec(self) -> EnvSpec | None:  # type: ignore[override]  # (as gymnasium's own Wrapper.spec: a property over Env's attribute)
        if self._cached_spec is not None:
            return self._cached_spec
        inner = self.env.spec
        if inner is None:
            return None
        saved = getattr(self, "_saved_kwargs", None)
        kwargs = None if saved is None else {k: v for k, v in saved.items() if k != "env"}
        mine = WrapperSpec(name=self.class_name(), entry_point=f"{type(self).__module__}:{type(self).__name__}",
                           kwargs=kwargs)
        self._cached_spec = dataclasses.replace(inner, kwargs=dict(inner.kwargs),
                                                additional_wrappers=(*inner.additional_wrappers, mine))
        return self._cached_spec


class FinalReward(ShallowSpec):
    """Base of the rewards given when the episode is judged; earlier steps pass through.

    A subclass sets `info_key` (``info[info_key]`` holds its details) and `component` (its
    name in ``info["reward_components"]``) and implements `score_program`; `score(info)`
    gives (reward, details) of a final step's info, ``details["elapsed_s"]`` the seconds
    the scoring took (the perf split's judging included). With `check_perf`, an accepted
    program is judged on the perf split too, unless the env judged it. Wrapped around an
    env whose suite default (`suite_default`) is an episode-deciding reward, it replaces
    that one, which then passes the reward through (`replaced_by`).
    """

    info_key: str = ""
    component: str = ""
    #: set on the wrappers a suite's declared default reward applied (`codegym.wrappers.config`)
    suite_default: bool = False

    def __init__(self, env: gym.Env, check_perf: bool = True):
        gym.Wrapper.__init__(self, env)
        self.check_perf = check_perf
        #: the outer episode-deciding reward that replaces this suite default (then it passes through)
        self.replaced_by: str | None = None
        inner = env
        while isinstance(inner, gym.Wrapper):  # a reward stacked on a suite default replaces it
            if isinstance(inner, FinalReward) and inner.suite_default and inner.replaced_by is None:
                inner.replaced_by = type(self).__name__
            inner = inner.env

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if not is_final(info) or self.replaced_by is not None:
            return obs, reward, terminated, truncated, info
        info = dict(info)
        reward, details = self.score(info)
        line = self.feedback(details)
        if line:
            details["feedback"] = line
            obs = add_to_observation(self.env, obs, line)
        info[self.info_key] = details
        set_component(info, self.component, reward)
        if info["judge"].get("verdict") == "sandbox_error":
            info["no_sample"] = True  # not a verdict: collect retries the episode, then drops it
        return obs, reward, terminated, truncated, info

    def feedback(self, details: Mapping[str, Any]) -> str | None:
        """The line the agent reads on the final observation (None: nothing to add)."""
        return None

    def score(self, info: Mapping[str, Any]) -> tuple[float, dict]:
        """(reward, ``info[info_key]``) of a final step's info."""
        t0 = time.monotonic()
        reward, details = self.score_program(self.final_program(info))
        details["elapsed_s"] = time.monotonic() - t0
        return reward, details

    def final_program(self, info: Mapping[str, Any]) -> FinalProgram:
        """The program a final step's info judged, as the env hands it
        (`codegym.envs.episode.EpisodeEnv.program`), its perf split checked (`check_perf`)."""
        program = self.env.get_wrapper_attr("program")(info)
        if program.accepted and self.check_perf:
            perf = check_perf_split(program)
            if perf is not None:
                program.perf = perf
                program.report = merge_reports(program.report, perf)
        return program

    def score_program(self, program: FinalProgram) -> tuple[float, dict]:
        """(reward, details) of the judged program; ``details["elapsed_s"]`` is set after."""
        raise NotImplementedError


