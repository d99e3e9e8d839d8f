"""`CodeEnv`: the multi-turn, diff-native coding environment of program tasks.

An `EpisodeEnv` (the step loop) whose workspace is the task's starter files in
memory: the prompt shows them whole, the ``view_file`` and ``run_tests`` tools are
answered here, and the hidden tests' pass fraction (or 0/1) is the reward.

    >>> import gymnasium as gym, codegym
    >>> env = gym.make("codegym/PerfCode-v0")        # the suite's reward: staged (RLPF)
    >>> obs, info = env.reset(options={"task_id": "perfcode/py-sum-numbers"})
    >>> obs, reward, terminated, truncated, info = env.step("submit")   # the slow starter
    >>> info["judge"]["verdict"], reward             # correct, no faster than the baseline
    ('accepted', 0.6)
    >>> env.close()

`make_code_env` is the registered ids' entry point: a `CodeEnv` with the reward its
suite declares (``gym.make("codegym/PerfCode-v0")`` is staged: `codegym.envs.episode.make_env`).
The info keys of every step are listed in docs/environments.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from codegym.edits.parse import parse_action
from codegym.edits.render import format_help, view_file
from codegym.edits.workspace import Workspace
from codegym.envs import feedback as fb
from codegym.envs.episode import (
    EpisodeEnv,
    make_env,
)
from codegym.tasks.fields import canonical_language
from codegym.tasks.schema import Task


def make_code_env(suite: Any = None, **kwargs: Any):
    """A `CodeEnv` wrapped in its reward (``reward="suite"`` by default): `make_env`."""
    return make_env(CodeEnv, suite, **kwargs)


class CodeEnv(EpisodeEnv):
    """A program task as a multi-turn episode (constructor arguments: `EpisodeEnv`)."""

    # kept as first built: a last turn whose public tests ran (auto_submit=False) is not
    # truncated by them; only a turn without tests ends the episode unjudged
    truncate_tested_turn = False

    def _starter(self, task: Task, language: str) -> dict[str, str]:
        files = task.starter_files()
        if language == task.language or not files:
            return files or {self.main_file: ""}
        # another language than the starter's: an empty main file in that language
        return {self.main_file: ""}

    def _start(self, task: Task, options: Mapping[str, Any]) -> dict[str, Any]:
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
        return {}

    def _prompt(self) -> str:
        help_text = format_help(sorted(self.formats), main_file=self.main_file)
        return fb.reset_prompt(self.task, self.workspace.files, self.language, self.main_file, help_text,
                               self.max_turns, self.feedback)

    def _parse(self, action: str, files: Mapping[str, str]) -> tuple[Any, Sequence[Any]]:
        return parse_action(action, files, self.main_file, self.formats), ()

    def _tool(self, name: str, args: Mapping[str, Any], lines: list[str]) -> bool:
        if name == "view_file":
            lines.append(view_file(self.workspace.files, str(args.get("path", self.main_file)),
                                   args.get("start_line"), args.get("end_line")))
        return name == "run_tests"

    def _score(self, report: dict, info: dict[str, Any]) -> tuple[float, str]:
        passed_frac = report["passed"] / report["total"] if report.get("total") else 0.0
        correct = 1.0 if report["verdict"] == "accepted" else 0.0
        info["reward_components"] = {"pass_fraction": passed_frac, "correct": correct,
                                     "progress": report.get("progress", 0.0)}
        reward = correct if self.reward_mode == "binary" else passed_frac
        return reward, fb.judge_feedback(report, "hidden", "none")

    def _feedback_text(self, report: dict, run_tests: bool) -> str:
        inputs = {i: c.stdin for i, c in enumerate(self.task.cases("public")) if c.stdin is not None}
        return fb.judge_feedback(report, "public", self.feedback, inputs)
