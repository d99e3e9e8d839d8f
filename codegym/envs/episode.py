"""`EpisodeEnv`: the one step loop of codegym's environments (a `gymnasium.Env[str, str]`).

Owns what every episode does: the constructor's options, picking a task, counting
turns, parsing an action and applying its edits so the step has a diff (its units
carry the span of the action text that wrote them), deciding submit / feedback /
truncation, `render`, `close` and `fork`. What differs between kinds of tasks is
left to a few hooks: `_start` (lay out the workspace), `_prompt` (first
observation), `_parse` (edits and extra tool calls), `_tool` (a non-edit tool),
`_score` (reward of the hidden report), `_feedback_text` (public report as text)
and `_judge_files`. `codegym.envs.code_env.CodeEnv` and
`codegym.envs.swe_env.SWEEnv` fill them in; docs/environments.md tells the episode.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym

from codegym.core.groups import GroupField, as_group, grouped
from codegym.core.spaces import CodeText
from codegym.core.yamldoc import suggest
from codegym.edits.spans import attach_spans
from codegym.edits.stores import WorkspaceError
from codegym.edits.units import split_units
from codegym.edits.workspace import Workspace
from codegym.envs.settings import EpisodeSettings
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox, require_isolation
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task
from codegym.tasks.suite import Suite, load_suite
from codegym.wrappers.config import SUITE_DEFAULT, resolve_reward
from codegym.wrappers.program import Bench, FinalProgram

#: the last line of the observation of the step that decides the episode
EPISODE_OVER = "The episode is over."
#: the action space's max_length (the parser has its own, smaller limit: edits.parse.MAX_ACTION_CHARS)
ACTION_SPACE_CHARS = 1 << 24

#: the ``options`` `reset` understands (EpisodeEnv's; a subclass adds its own to `reset_options`)
RESET_OPTIONS = ("task_id", "sampler", "language", "protected")
#: what every env reports in ``info["reward_components"]`` on submission
REWARD_COMPONENTS = ("pass_fraction", "correct", "progress")
#: `EpisodeEnv`'s own arguments (besides the `EpisodeSettings` fields it takes one by one)
ENV_ARGUMENTS = ("suite", "tasks", "task_id", "sampler", "sandbox", "settings", "render_mode")


def resolve_tasks(suite: Any, tasks: Sequence[Task] | None) -> list[Task]:
    """The env's tasks: `tasks` as given, else the tasks of `suite` (a name, a path or a `Suite`)."""
    if tasks is not None:
        return list(tasks)
    if isinstance(suite, Suite):
        return list(suite)
    if suite is None:
        raise ValueError("CodeEnv needs suite= (a suite name, a directory or YAML path) or tasks=")
    return list(load_suite(suite))


def make_env(cls: type, suite: Any = None, *, reward: Any = SUITE_DEFAULT, **kwargs: Any) -> gym.Env:
    """An env of class `cls` with its reward: what the registered ids' entry points build.

    `reward`: ``"suite"`` (the ids' default: the reward the suite declares in its
    suite.yaml, e.g. PerfCode's staged reward; the class's own default when it declares
    none), a base reward (``"pass_fraction"``, ``"binary"``: no wrapper), a wrapper type
    (``"staged"``) or a list of wrapper entries (`codegym.wrappers.config`), applied over
    the class's default base reward. The wrappers are the env's innermost ones, so
    ``env.spec.additional_wrappers`` lists them and ``gym.make(env.spec)`` rebuilds them.
    """
    decl, default = resolve_reward(reward, suite=suite, tasks=kwargs.get("tasks"))
    if decl.base is not None:
        kwargs["reward"] = decl.base
    env = cls(suite, **kwargs) if suite is not None else cls(**kwargs)
    return decl.apply(env, suite_default=default)


def edits_info(parsed: Any, extra_calls: Sequence[Any] = ()) -> dict[str, Any]:
    """``info["edits"]``: formats used, exact spans, tool calls (in text order), warnings."""
    return {"formats": list(parsed.formats_used),
            "spans": [dict(path=s.path, start=s.start, end=s.end, format=s.format)
                      for s in parsed.edit_spans],
            "tool_calls": [dict(name=t.name, arguments=t.arguments) for t in _calls(parsed, extra_calls)],
            "warnings": list(parsed.warnings)}


def _calls(parsed: Any, extra_calls: Sequence[Any]) -> list[Any]:
    """The parser's tool calls and `extra_calls`, in text order."""
    if not extra_calls:
        return parsed.tool_calls
    return sorted([*parsed.tool_calls, *extra_calls], key=lambda t: t.start)


class EpisodeEnv(gym.Env[str, str]):
    """A coding task as a multi-turn episode; every step is an edit that produces a diff.

    Args:
        suite: suite name (``"perfcode"``), a directory of task YAMLs, one YAML file,
            or a `codegym.tasks.suite.Suite`.
        tasks: explicit list of `Task`s (instead of `suite`).
        task_id: always use this task (else seeded sampling, or ``options["task_id"]``).
        sampler: object with ``sample(rng, tasks) -> Task`` (and optionally
            ``update(task_id, reward)``), e.g. a curriculum.
        sandbox: a `codegym.sandbox.Sandbox`, or a backend name for `make_sandbox`.
        settings: how the episode runs (`EpisodeSettings`: max_turns, feedback, auto_submit,
            formats, language, reward, timing, early_exit, protected, max_observation_chars;
            or a mapping of those fields over `default_settings`, the default).
            ``options["protected"]`` adds protected files.
        render_mode: ``"ansi"`` or None.
        **options: `EpisodeSettings` fields one by one (``max_turns=6``), over `settings`;
            any other keyword is a TypeError that names it.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}
    #: a last turn whose public tests ran ends truncated (False: only a turn without tests does)
    truncate_tested_turn = True

    #: the settings of an env made without `settings` (the flat keywords go over them)
    default_settings = EpisodeSettings()
    # the settings read (and set) as the env's attributes: ``env.max_turns`` is ``env.settings.max_turns``
    max_turns = GroupField("settings")
    feedback = GroupField("settings")
    auto_submit = GroupField("settings")
    timing = GroupField("settings")
    early_exit = GroupField("settings")
    protected = GroupField("settings")
    max_observation_chars = GroupField("settings")

    @property
    def formats(self) -> frozenset[str]:
        """The edit formats the agent may use."""
        return self.settings.accepted_formats

    @property
    def language_option(self) -> str | None:
        return self.settings.language_option

    @property
    def reward_mode(self) -> str:
        return self.settings.reward

    def __init__(self, suite: Any = None, *, tasks: Sequence[Task] | None = None, task_id: str | None = None,
                 sampler: Any = None, sandbox: Sandbox | None = None, settings: EpisodeSettings | None = None,
                 render_mode: str | None = None, **options: Any):
        who = type(self).__name__
        settings = grouped(who, options, also=ENV_ARGUMENTS,
                           settings=as_group(settings, self.default_settings, who, "settings"))["settings"]
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.tasks = resolve_tasks(suite, tasks)
        if not self.tasks:
            raise ValueError(f"no tasks in suite {suite!r}")
        self._by_id = {t.id: t for t in self.tasks}
        if task_id is not None and task_id not in self._by_id:
            raise KeyError(f"unknown task {task_id!r}")
        self.suite_name = suite if isinstance(suite, str) else None
        self.fixed_task_id = task_id
        self.settings, self.sampler, self.render_mode = settings, sampler, render_mode
        if sandbox is None or isinstance(sandbox, str):
            require_isolation(sandbox)  # refuse now, not at the first judged step
        self._sandbox_arg, self._sandbox = sandbox, None
        self.observation_space = CodeText(settings.max_observation_chars)
        self.action_space = CodeText(ACTION_SPACE_CHARS)
        # episode state
        self.task: Task | None = None
        self.workspace: Workspace | None = None
        self.language: str | None = None
        self.main_file: str | None = None
        self.turn = 0
        self.done = False
        self.last_observation = ""
        self.last_report: dict | None = None
        self._judged: tuple[dict, Any] | None = None
        self._cumulative_diff = ""
        self._closed = False

    # ------------------------------------------------------------------ hooks

    def _start(self, task: Task, options: Mapping[str, Any]) -> dict[str, Any]:
        """Set ``task``, ``language``, ``main_file`` and a fresh ``workspace`` (closing the
        previous one); returns extra keys of the reset's info."""
        raise NotImplementedError

    def _prompt(self) -> str:
        """The first observation of the episode just started."""
        raise NotImplementedError

    def _parse(self, action: str, files: Mapping[str, str]) -> tuple[Any, Sequence[Any]]:
        """(the action's `ParsedAction`, tool calls read besides the parser's)."""
        raise NotImplementedError

    def _tool(self, name: str, args: Mapping[str, Any], lines: list[str]) -> bool:
        """Run a non-edit tool, appending its output to `lines`; True asks for the public tests."""
        raise NotImplementedError

    def _score(self, report: dict, info: dict[str, Any]) -> tuple[float, str]:
        """(reward, feedback line) of the hidden-split report; fills ``info["reward_components"]``."""
        raise NotImplementedError

    def _feedback_text(self, report: dict, run_tests: bool) -> str:
        """Feedback on a public-split report (`run_tests`: the agent asked for the tests)."""
        raise NotImplementedError

    def _judge_files(self) -> Mapping[str, Any]:
        """The files the judge sees."""
        return self.workspace.files

    def _current_files(self) -> dict[str, str]:
        """The workspace's files now (a fresh dict; `info["files"]`)."""
        return self.workspace.files

    # ------------------------------------------------------------------ helpers

    @property
    def sandbox(self):
        if self._sandbox is None:
            arg = self._sandbox_arg
            self._sandbox = arg if arg is not None and not isinstance(arg, str) else make_sandbox(arg)
        return self._sandbox

    def _pick_task(self, options: Mapping[str, Any]) -> Task:
        task_id = options.get("task_id") or self.fixed_task_id
        if task_id is not None:
            if task_id not in self._by_id:
                raise KeyError(f"unknown task {task_id!r}; this env has {len(self.tasks)} tasks "
                               f"(e.g. {', '.join(list(self._by_id)[:5])})")
            return self._by_id[task_id]
        sampler = options.get("sampler") or self.sampler
        if sampler is not None:
            return sampler.sample(self.np_random, self.tasks)
        return self.tasks[int(self.np_random.integers(len(self.tasks)))]

    def _observe(self, text: str) -> str:
        if len(text) > self.max_observation_chars:
            keep = self.max_observation_chars - 200
            text = text[:keep] + f"\n... [observation cut: {len(text) - keep} characters omitted]"
        self.last_observation = text
        return text

    def _base_info(self) -> dict[str, Any]:
        assert self.task is not None and self.workspace is not None
        return {
            "task_id": self.task.id,
            "task_hash": self.task.content_hash,
            "turn": self.turn,
            "turns_left": self.max_turns - self.turn,
            "language": self.language,
            "main_file": self.main_file,
            "files": self._current_files(),
            "diff": "",
            "cumulative_diff": self._cumulative_diff,
            "diff_units": [],
            "edits": {},
            "error": None,
            "judge": None,
            "submitted": False,
            "reward_components": {},
        }

    def _judge(self, split: str, early_exit: bool, timing: bool | str = False) -> dict:
        report = judge(self.task, self._judge_files(), sandbox=self.sandbox, split=split,
                       timing=timing, early_exit=early_exit, language=self.language)
        out = report.to_dict()
        self._judged = (out, report)   # the typed report of ``info["judge"]``, for `program`
        return out

    def program(self, info: Mapping[str, Any] | None = None) -> FinalProgram:
        """The program this env holds now, as a reward sees it (`codegym.wrappers.program`):
        the task, the workspace's files and language, the report of the step whose `info`
        is given (``info["judge"]``, and its typed `JudgeReport` when this env made it),
        and the `Bench` that judges and times programs of the task in this env's sandbox.
        What a reward wrapper needs of the env; none reaches into it otherwise."""
        info = info or {}
        report = info.get("judge")
        made = self._judged
        judged = made[1] if made is not None and report is made[0] else None
        return FinalProgram(self.task, self.workspace.files, info.get("language") or self.language, judged,
                            Bench(self.task, self.sandbox), report=dict(report) if isinstance(report, Mapping) else {})

    def _begin_step(self, action: Any) -> tuple[str, dict[str, Any]]:
        """Check the episode is live, count the turn; returns (action text, fresh info)."""
        if self.task is None or self.workspace is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.done:
            raise gym.error.ResetNeeded("the episode is over; call reset()")
        if not isinstance(action, str):
            action = str(action)
        self.turn += 1
        info = self._base_info()
        info["action_chars"] = len(action)
        return action, info

    def _apply_edits(self, parsed: Any, action: str, before: Mapping[str, str],
                     info: dict[str, Any], lines: list[str]) -> str | None:
        """Apply a parsed action's changes to the workspace and fill ``info`` with the step's
        diff, cumulative diff and diff units (with action spans); appends feedback to
        `lines`. Returns the error (parse or apply), also stored in ``info["error"]``."""
        error = parsed.error
        if error is None and parsed.changes:
            try:
                step_diff = self.workspace.apply(parsed.changes)
            except WorkspaceError as e:
                error = f"the edit was not applied: {e}"
            else:
                after = self.workspace.files
                info["diff"] = step_diff.text
                info["files"] = after
                if info["diff"]:  # unchanged steps keep the cached cumulative diff
                    self._cumulative_diff = self.workspace.cumulative_diff()
                info["cumulative_diff"] = self._cumulative_diff
                units = split_units(step_diff.old_files, step_diff.new_files)
                if parsed.edit_blocks:
                    units = attach_spans(units, action, parsed.edit_blocks, new_files=after, old_files=before)
                info["diff_units"] = [u.to_dict() for u in units]
                lines.append(f"Edit applied ({len(step_diff.paths)} file(s) changed)." if info["diff"]
                             else "Edit applied, but it changed nothing.")
        if error is not None:
            info["error"] = error
            lines.append("Your action could not be used: " + error)
        return error

    def _submit(self, info: dict[str, Any], lines: list[str]) -> float:
        """Judge the hidden split, record it in ``info``; returns the reward."""
        report = self._judge("hidden", self.early_exit, self.timing)
        self.last_report = report
        info["judge"] = report
        info["submitted"] = True
        reward, text = self._score(report, info)
        lines.append(text)
        lines.append(EPISODE_OVER)
        return reward

    def _between_turns(self, info: dict[str, Any], lines: list[str], run_tests: bool) -> bool:
        """Public tests (after a change, or when asked) and the turns left; returns truncated."""
        tested = False
        if self.feedback != "none" and (info["diff"] or run_tests) and self.task.cases("public"):
            report = self._judge("public", True, False)
            self.last_report = report
            info["judge"] = report
            lines.append(self._feedback_text(report, run_tests))
            tested = True
        if self.turn >= self.max_turns and (self.truncate_tested_turn or not tested):
            lines.append("No turns left; the episode ends without a submission.")
            return True
        left = self.max_turns - self.turn
        lines.append(f"Turns left: {left}."
                     + (" The next turn submits automatically." if left == 1 and self.auto_submit else ""))
        return False

    # ------------------------------------------------------------------ gymnasium API

    #: the keys `reset(options=...)` accepts (anything else is refused, naming these)
    reset_options: tuple[str, ...] = RESET_OPTIONS

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = sorted(set(options) - set(self.reset_options), key=str)
        if unknown:
            hints = [f"{k!r}{suggest(k, self.reset_options, listed=())}" for k in unknown]
            raise ValueError(f"unknown reset option(s) {', '.join(hints)}; "
                             f"known: {', '.join(self.reset_options)}")
        extra = self._start(self._pick_task(options), options)
        self.turn = 0
        self.done = False
        self.last_report = None
        self._cumulative_diff = ""
        obs = self._prompt()
        info = self._base_info()
        info.update(extra)
        return self._observe(obs), info

    def step(self, action: str):
        action, info = self._begin_step(action)
        before = self.workspace.files
        parsed, extra_calls = self._parse(action, before)
        info["edits"] = edits_info(parsed, extra_calls)
        lines: list[str] = [f"## Turn {self.turn}/{self.max_turns}"]
        error = self._apply_edits(parsed, action, before, info, lines)
        run_tests = False
        for call in _calls(parsed, extra_calls) if error is None else ():
            run_tests = self._tool(call.name, call.arguments, lines) or run_tests
        reward = 0.0
        terminated = truncated = False
        if (error is None and parsed.submit) or (self.auto_submit and self.turn >= self.max_turns):
            reward = self._submit(info, lines)
            terminated = True
        else:
            truncated = self._between_turns(info, lines, run_tests)
        self.done = terminated or truncated
        if self.done and self.sampler is not None and hasattr(self.sampler, "update"):
            self.sampler.update(self.task.id, reward)
        return self._observe("\n".join(lines)), float(reward), terminated, truncated, info

    def add_final_feedback(self, obs: str, line: str) -> str:
        """`obs` (the observation of the step that submitted) with `line` before its closing
        line: what a reward wrapper measured after the step (`codegym.wrappers.base`)."""
        head, sep, tail = obs.rpartition("\n" + EPISODE_OVER)
        text = f"{head}\n{line}{sep}{tail}" if sep else f"{obs}\n{line}"
        return self._observe(text)

    def render(self):
        if self.render_mode == "ansi":
            return self.last_observation
        return None

    def close(self):
        # idempotent; a sandbox from make_sandbox(kind) is shared and outlives the env
        if self._closed:
            return
        self._closed = True
        if self.workspace is not None:
            self.workspace.close()
        super().close()

    # ------------------------------------------------------------------ tree search

    def fork(self) -> EpisodeEnv:
        """An independent copy at the current state (workspace, history, turn, RNG).

        Shares the tasks and the sandbox (both are stateless for the env); the copy's
        workspace and random generator evolve separately."""
        new = copy.copy(self)
        new.workspace = self.workspace.copy() if self.workspace is not None else None
        new._np_random = copy.deepcopy(self._np_random)
        new.last_report = copy.deepcopy(self.last_report)
        new._closed = False
        return new
