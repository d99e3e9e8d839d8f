"""`CodeEnv`: the multi-turn, diff-native coding environment (a `gymnasium.Env[str, str]`).

One task is one episode. `reset` lays out the task's starter workspace and
returns the prompt; each `step(text)` parses the text into edits
(`codegym.edits.parse`), applies them to the workspace (`codegym.edits.workspace`) so the
step produces a diff, splits that diff into syntax-aware units with the
character span of the action text that wrote each (`codegym.edits.units`), and
answers with feedback from the public tests (`codegym.judge.run`). `submit`, or the
last turn with `auto_submit`, runs the hidden tests (and, with `timing`, measures
the perf split) and ends the episode.

Example:
    >>> import gymnasium as gym, codegym
    >>> env = gym.make("codegym/PerfCode-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step("submit")
    >>> info["judge"]["verdict"]
    'accepted'
    >>> env.close()

`info` after every step carries: task_id, task_hash, turn, turns_left, language,
diff, cumulative_diff, diff_units (dicts of `codegym.edits.units.DiffUnit`), edits
(formats used, spans, tool calls), error (None or the message), judge (the
report of this step as a dict, None if no tests ran), submitted,
reward_components, action_chars.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping, Sequence

import gymnasium as gym
import numpy as np

from codegym.edits.parse import FORMATS, format_help, parse_action, view_file
from codegym.edits.units import EditSpan, attach_spans, split_units
from codegym.envs import feedback as fb
from codegym.core.spaces import CodeText
from codegym.tasks.schema import Task, canonical_language
from codegym.edits.workspace import Workspace, WorkspaceError

#: largest observation and action, in characters (the spaces' max_length)
MAX_OBSERVATION_CHARS = 1 << 20
MAX_ACTION_CHARS = 1 << 24

FEEDBACK_MODES = ("public", "none", "full")
REWARD_MODES = ("pass_fraction", "binary")


def _resolve_tasks(suite: Any, tasks: Sequence[Task] | None) -> list[Task]:
    if tasks is not None:
        return list(tasks)
    from codegym.tasks.suite import Suite, load_suite
    if isinstance(suite, Suite):
        return list(suite)
    if suite is None:
        raise ValueError("CodeEnv needs suite= (a suite name, a directory or YAML path) or tasks=")
    return list(load_suite(suite))


class CodeEnv(gym.Env[str, str]):
    """A coding task as a multi-turn episode; every step is an edit that produces a diff.

    Args:
        suite: suite name (``"perfcode"``), a directory of task YAMLs, one YAML file,
            or a `codegym.tasks.suite.Suite`.
        tasks: explicit list of `Task`s (instead of `suite`).
        task_id: always use this task (else seeded sampling, or ``options["task_id"]``).
        max_turns: turns per episode (>= 1).
        feedback: ``"public"`` (verdict and first failing public case), ``"full"``
            (every failing public case) or ``"none"`` (no tests before submission).
        auto_submit: the last turn submits (else running out of turns truncates unjudged).
        formats: accepted edit formats (subset of `codegym.edits.parse.FORMATS`).
        language: submission language (for stdio tasks that accept several).
        reward: ``"pass_fraction"`` (hidden tests passed / total) or ``"binary"``.
        timing: measure the perf split of an accepted submission (adds
            ``info["judge"]["timing"]``; wall-clock dependent, so off by default).
        sandbox: a `codegym.sandbox.Sandbox`, or a backend name for `make_sandbox`.
        sampler: object with ``sample(rng, tasks) -> Task`` (and optionally
            ``update(task_id, reward)``), e.g. a curriculum.
        early_exit: stop judging the hidden tests at the first failure (training speed).
        protected: glob patterns of files the agent may not edit (tests, timing harness);
            edits to them are refused with feedback. ``options["protected"]`` adds more.
        render_mode: ``"ansi"`` or None.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, suite: Any = None, *, tasks: Sequence[Task] | None = None,
                 task_id: str | None = None, max_turns: int = 4, feedback: str = "public",
                 auto_submit: bool = True, formats: Sequence[str] | None = None,
                 language: str | None = None, reward: str = "pass_fraction",
                 timing: bool | str = False, sandbox: Any = None, sampler: Any = None,
                 early_exit: bool = False, protected: Sequence[str] = (),
                 render_mode: str | None = None,
                 max_observation_chars: int = MAX_OBSERVATION_CHARS):
        if max_turns < 1:
            raise ValueError("max_turns must be >= 1")
        if feedback not in FEEDBACK_MODES:
            raise ValueError(f"feedback must be one of {FEEDBACK_MODES}, not {feedback!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, not {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.tasks = _resolve_tasks(suite, tasks)
        if not self.tasks:
            raise ValueError(f"no tasks in suite {suite!r}")
        self._by_id = {t.id: t for t in self.tasks}
        if task_id is not None and task_id not in self._by_id:
            raise KeyError(f"unknown task {task_id!r}")
        self.suite_name = suite if isinstance(suite, str) else None
        self.fixed_task_id = task_id
        self.max_turns = int(max_turns)
        self.feedback = feedback
        self.auto_submit = auto_submit
        self.formats = frozenset(formats) if formats else frozenset(FORMATS)
        unknown = self.formats - set(FORMATS)
        if unknown:
            raise ValueError(f"unknown edit formats {sorted(unknown)}; known: {list(FORMATS)}")
        self.language_option = canonical_language(language) if language else None
        if language and self.language_option is None:
            raise ValueError(f"unknown language {language!r}")
        self.reward_mode = reward
        self.timing = timing
        self._sandbox_arg = sandbox
        self._sandbox = None
        self.sampler = sampler
        self.early_exit = early_exit
        self.protected = tuple(protected)
        self.render_mode = render_mode
        self.max_observation_chars = max_observation_chars
        self.observation_space = CodeText(max_observation_chars)
        self.action_space = CodeText(MAX_ACTION_CHARS)
        # episode state
        self.task: Task | None = None
        self.workspace: Workspace | None = None
        self.language: str | None = None
        self.main_file: str | None = None
        self.turn = 0
        self.done = False
        self.last_observation = ""
        self.last_report: dict | None = None
        self._cumulative_diff = ""
        self._closed = False

    # ------------------------------------------------------------------ helpers

    @property
    def sandbox(self):
        if self._sandbox is None:
            from codegym.sandbox import make_sandbox
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
            "files": self.workspace.files,
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
        from codegym.judge.run import judge
        report = judge(self.task, self.workspace.files, sandbox=self.sandbox, split=split,
                       timing=timing, early_exit=early_exit, language=self.language)
        return report.to_dict()

    def _starter(self, task: Task, language: str) -> dict[str, str]:
        files = task.starter_files()
        if language == task.language or not files:
            return files or {self.main_file: ""}
        # another language than the starter's: an empty main file in that language
        return {self.main_file: ""}

    # ------------------------------------------------------------------ step pieces
    # (shared with subclasses such as codegym.envs.swe_env.SWEEnv)

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

    @staticmethod
    def _edits_info(parsed: Any, extra_calls: Sequence[Any] = ()) -> dict[str, Any]:
        """``info["edits"]``: formats used, exact spans, tool calls (in text order), warnings."""
        calls = sorted([*parsed.tool_calls, *extra_calls], key=lambda t: t.start) if extra_calls \
            else parsed.tool_calls
        return {"formats": list(parsed.formats_used),
                "spans": [dict(path=s.path, start=s.start, end=s.end, format=s.format)
                          for s in parsed.edit_spans],
                "tool_calls": [dict(name=t.name, arguments=t.arguments) for t in calls],
                "warnings": list(parsed.warnings)}

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
                    spans = [EditSpan(**b.diff_span_kwargs()) for b in parsed.edit_blocks]
                    units = attach_spans(units, action, spans, new_files=after, old_files=before)
                info["diff_units"] = [u.to_dict() for u in units]
                lines.append(f"Edit applied ({len(step_diff.paths)} file(s) changed)." if info["diff"]
                             else "Edit applied, but it changed nothing.")
        if error is not None:
            info["error"] = error
            lines.append("Your action could not be used: " + error)
        return error

    # ------------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        task = self._pick_task(options)
        language = canonical_language(options["language"]) if options.get("language") else None
        language = language or self.language_option or task.language
        if language not in task.accepted_languages():
            raise ValueError(f"task {task.id} does not accept language {language!r} "
                             f"(accepts {task.accepted_languages()})")
        self.task = task
        self.language = language
        self.main_file = task.main_file_for(language) or "main.py"
        if self.workspace is not None:
            self.workspace.close()
        protected = tuple(dict.fromkeys((*self.protected, *options.get("protected", ()))))
        self.workspace = Workspace.in_memory(self._starter(task, language), protected=protected)
        self.turn = 0
        self.done = False
        self.last_report = None
        self._cumulative_diff = ""
        help_text = format_help(sorted(self.formats), main_file=self.main_file)
        obs = fb.reset_prompt(task, self.workspace.files, language, self.main_file, help_text,
                              self.max_turns, self.feedback)
        info = self._base_info()
        return self._observe(obs), info

    def step(self, action: str):
        action, info = self._begin_step(action)
        before = self.workspace.files
        parsed = parse_action(action, before, self.main_file, self.formats)
        info["edits"] = self._edits_info(parsed)
        lines: list[str] = [f"## Turn {self.turn}/{self.max_turns}"]
        error = self._apply_edits(parsed, action, before, info, lines)
        # non-edit tools
        run_tests = False
        for call in parsed.tool_calls if error is None else ():
            if call.name == "view_file":
                args = call.arguments
                lines.append(view_file(self.workspace.files, str(args.get("path", self.main_file)),
                                       args.get("start_line"), args.get("end_line")))
            elif call.name == "run_tests":
                run_tests = True
        submit = (error is None and parsed.submit) or (self.auto_submit and self.turn >= self.max_turns)
        reward = 0.0
        terminated = truncated = False
        if submit:
            report = self._judge("hidden", self.early_exit, self.timing)
            self.last_report = report
            info["judge"] = report
            info["submitted"] = True
            passed_frac = report["passed"] / report["total"] if report.get("total") else 0.0
            correct = 1.0 if report["verdict"] == "accepted" else 0.0
            reward = correct if self.reward_mode == "binary" else passed_frac
            info["reward_components"] = {"pass_fraction": passed_frac, "correct": correct,
                                         "progress": report.get("progress", 0.0)}
            lines.append(fb.judge_feedback(report, "hidden", "none"))
            lines.append("The episode is over.")
            terminated = True
        else:
            changed = bool(info["diff"])
            if self.feedback != "none" and (changed or run_tests) and self.task.cases("public"):
                report = self._judge("public", True, False)
                self.last_report = report
                info["judge"] = report
                inputs = {i: c.stdin for i, c in enumerate(self.task.cases("public"))
                          if c.stdin is not None}
                lines.append(fb.judge_feedback(report, "public", self.feedback, inputs))
            elif self.turn >= self.max_turns:
                truncated = True
                lines.append("No turns left; the episode ends without a submission.")
            turns_left = self.max_turns - self.turn
            if not truncated:
                lines.append(f"Turns left: {turns_left}."
                             + (" The next turn submits automatically." if turns_left == 1 and self.auto_submit else ""))
        self.done = terminated or truncated
        if self.done and self.sampler is not None and hasattr(self.sampler, "update"):
            self.sampler.update(self.task.id, reward)
        return self._observe("\n".join(lines)), float(reward), terminated, truncated, info

    def render(self):
        if self.render_mode == "ansi":
            return self.last_observation
        return None

    def close(self):
        # idempotent; the shared sandbox outlives the env, an owned one is closed
        if self._closed:
            return
        self._closed = True
        if self.workspace is not None:
            self.workspace.close()
        if isinstance(self._sandbox_arg, str) and self._sandbox is not None:
            pass  # make_sandbox(kind) returns shared instances: never closed by one env
        super().close()

    # ------------------------------------------------------------------ tree search

    def fork(self) -> "CodeEnv":
        """An independent copy at the current state (workspace, history, turn, RNG).

        Shares the tasks and the sandbox (both are stateless for the env); the copy's
        workspace and random generator evolve separately."""
        new = copy.copy(self)
        new.workspace = self.workspace.copy() if self.workspace is not None else None
        new._np_random = copy.deepcopy(self._np_random)
        new.last_report = copy.deepcopy(self.last_report)
        new._closed = False
        return new
