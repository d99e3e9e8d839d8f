"""`EpisodeSettings`: how an episode of an `EpisodeEnv` runs (turns, feedback, edit formats,
language, base reward, timing, protected files, observation size), checked when made.

An env takes them whole (``CodeEnv(suite, settings=EpisodeSettings(max_turns=6))``) or
field by field as keywords (``gym.make("codegym/PerfCode-v0", max_turns=6,
feedback="full")``), the flat ones over the group (`codegym.core.groups`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from codegym.edits.formats import FORMATS
from codegym.tasks.fields import canonical_language
from codegym.wrappers.config import BASE_REWARDS

#: largest observation, in characters (the observation space's max_length)
MAX_OBSERVATION_CHARS = 1 << 20
FEEDBACK_MODES = ("public", "none", "full")
#: the env's own rewards (a reward stack is the wrappers': `make_env`)
REWARD_MODES = BASE_REWARDS


@dataclass(frozen=True)
class EpisodeSettings:
    """How an episode runs.

    max_turns               turns per episode (>= 1)
    feedback                ``"public"`` (verdict and first failing public case), ``"full"``
                            (every failing public case) or ``"none"`` (no tests before submission)
    auto_submit             the last turn submits (else running out of turns truncates unjudged)
    formats                 accepted edit formats (subset of `codegym.edits.formats.FORMATS`;
                            None: all)
    language                submission language (for stdio tasks that accept several)
    reward                  the base reward: ``"pass_fraction"`` (hidden tests passed / total)
                            or ``"binary"``
    timing                  measure the perf split of an accepted submission (adds
                            ``info["judge"]["timing"]``; wall-clock dependent, so off by default)
    early_exit              stop judging the hidden tests at the first failure (training speed)
    protected               glob patterns of files the agent may not edit (tests, timing
                            harness); edits to them are refused with feedback
    max_observation_chars   longest observation; a longer one is cut with a note
    """

    max_turns: int = 4
    feedback: str = "public"
    auto_submit: bool = True
    formats: Sequence[str] | None = None
    language: str | None = None
    reward: str = "pass_fraction"
    timing: bool | str = False
    early_exit: bool = False
    protected: Sequence[str] = ()
    max_observation_chars: int = MAX_OBSERVATION_CHARS

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise ValueError("max_turns must be >= 1")
        if self.feedback not in FEEDBACK_MODES:
            raise ValueError(f"feedback must be one of {FEEDBACK_MODES}, not {self.feedback!r}")
        if self.reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, not {self.reward!r} (a reward stack, or "
                             "the suite's default, is made of wrappers: gym.make(id, reward=...) or make_env)")
        if self.formats:
            unknown = set(self.formats) - set(FORMATS)
            if unknown:
                raise ValueError(f"unknown edit formats {sorted(unknown)}; known: {list(FORMATS)}")
            object.__setattr__(self, "formats", tuple(self.formats))
        if self.language and canonical_language(self.language) is None:
            raise ValueError(f"unknown language {self.language!r}")
        object.__setattr__(self, "protected", tuple(self.protected))

    @cached_property
    def accepted_formats(self) -> frozenset[str]:
        """The edit formats the agent may use."""
        return frozenset(self.formats) if self.formats else frozenset(FORMATS)

    @property
    def language_option(self) -> str | None:
        """The submission language asked for, canonical (None: the task's)."""
        return canonical_language(self.language) if self.language else None
