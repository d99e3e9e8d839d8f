"""EpisodeEnv's narrow constructor (issue 31): `EpisodeSettings` whole, or its fields one by one.

The old flat keywords (``gym.make(id, max_turns=2, feedback="full", ...)``) still work,
through `gym.make`, the spec round trip and vector envs; an unknown keyword is refused
with a TypeError that names it.
"""

from __future__ import annotations

import inspect
import pickle

import gymnasium as gym
import pytest

import codegym  # noqa: F401  (registers the ids)
from codegym.envs.code_env import CodeEnv
from codegym.envs.episode import EpisodeEnv
from codegym.envs.settings import EpisodeSettings
from codegym.envs.swe_env import SWEEnv

EXAMPLES = "examples"
TASK = "examples/digit-sum-queries"
#: every keyword EpisodeEnv took before it was narrowed, with a value that is not its default
OLD_FLAT = dict(max_turns=2, feedback="full", auto_submit=False, formats=["code_block", "unified_diff"],
                language="py", reward="binary", timing="wall", early_exit=True, protected=["tests/*"],
                max_observation_chars=5000)


def _explicit(cls: type) -> list[str]:
    return [n for n, p in inspect.signature(cls.__init__).parameters.items()
            if n != "self" and p.kind is not inspect.Parameter.VAR_KEYWORD]


def test_the_constructor_takes_a_handful_of_arguments():
    assert _explicit(EpisodeEnv) == ["suite", "tasks", "task_id", "sampler", "sandbox", "settings", "render_mode"]
    assert len(_explicit(SWEEnv)) == 1  # suite; the rest is EpisodeEnv's


def test_old_flat_keywords_set_the_same_attributes_as_before():
    env = CodeEnv(EXAMPLES, task_id=TASK, **OLD_FLAT)
    assert env.settings == EpisodeSettings(**OLD_FLAT)
    assert (env.max_turns, env.feedback, env.auto_submit, env.reward_mode, env.timing, env.early_exit) == \
        (2, "full", False, "binary", "wall", True)
    assert env.formats == frozenset({"code_block", "unified_diff"}) and env.language_option == "python"
    assert env.protected == ("tests/*",) and env.max_observation_chars == 5000
    assert env.observation_space.max_length == 5000
    _, info = env.reset()
    assert info["turns_left"] == 2 and info["language"] == "python"
    env.close()


def test_settings_whole_and_flat_keywords_over_them():
    s = EpisodeSettings(max_turns=3, feedback="none")
    env = CodeEnv(EXAMPLES, settings=s, max_turns=5)
    assert env.settings == EpisodeSettings(max_turns=5, feedback="none") and s.max_turns == 3
    env.max_turns = 6  # an attribute set goes to the settings
    assert env.settings.max_turns == 6
    assert CodeEnv(EXAMPLES).settings == EpisodeSettings()
    # a mapping of the fields (a YAML config's env kwargs) is taken over the defaults
    assert CodeEnv(EXAMPLES, settings={"feedback": "full"}).settings == EpisodeSettings(feedback="full")
    with pytest.raises(TypeError, match=r"CodeEnv settings= got unexpected keyword argument\(s\) 'turns'"):
        CodeEnv(EXAMPLES, settings={"turns": 2})
    with pytest.raises(TypeError, match=r"settings= takes EpisodeSettings\(...\) or a mapping of its fields, not int"):
        CodeEnv(EXAMPLES, settings=3)


def test_swe_env_defaults_and_its_overrides():
    assert SWEEnv.default_settings == EpisodeSettings(max_turns=10, reward="binary")


def test_an_unknown_keyword_is_refused_naming_it():
    with pytest.raises(TypeError, match=r"CodeEnv got unexpected keyword argument\(s\) 'max_turn' "
                                        r"\(did you mean 'max_turns'\?\)"):
        CodeEnv(EXAMPLES, max_turn=3)
    with pytest.raises(TypeError, match=r"'taskid' \(did you mean 'task_id'\?\)"):
        CodeEnv(EXAMPLES, taskid=TASK)
    with pytest.raises(TypeError, match="'feedbak'"):
        gym.make("codegym/Suite-v0", suite=EXAMPLES, feedbak="full")


@pytest.mark.parametrize("bad, message", [
    (dict(max_turns=0), "max_turns must be >= 1"),
    (dict(feedback="loud"), "feedback must be one of"),
    (dict(reward="staged"), "reward must be one of"),
    (dict(formats=["nope"]), r"unknown edit formats \['nope'\]"),
    (dict(language="cobol-74"), "unknown language 'cobol-74'"),
])
def test_bad_values_are_refused_as_before(bad, message):
    with pytest.raises(ValueError, match=message):
        CodeEnv(EXAMPLES, **bad)
    with pytest.raises(ValueError, match=message):
        EpisodeSettings(**bad)


def test_gym_make_with_old_keywords_and_the_spec_round_trip():
    kw = {k: v for k, v in OLD_FLAT.items() if k != "reward"}
    env = gym.make("codegym/Suite-v0", suite=EXAMPLES, reward="binary", **kw)
    assert env.unwrapped.settings == EpisodeSettings(**{**kw, "reward": "binary"})
    assert {k: env.spec.kwargs[k] for k in kw} == kw  # the spec records the flat keywords as given
    again = gym.make(env.spec)
    assert again.unwrapped.settings == env.unwrapped.settings
    env.close()
    again.close()
    made = gym.make("codegym/PerfCode-v0", max_turns=2, early_exit=True, task_id="perfcode/py-sum-numbers")
    assert (made.unwrapped.max_turns, made.unwrapped.early_exit) == (2, True)
    assert gym.make(made.spec).unwrapped.settings == made.unwrapped.settings
    made.close()


def test_gym_make_with_settings_and_a_vector_env():
    env = gym.make("codegym/Suite-v0", suite=EXAMPLES, settings=EpisodeSettings(early_exit=True), feedback="none")
    assert env.unwrapped.settings == EpisodeSettings(early_exit=True, feedback="none")
    # an id's own keywords (max_turns) are flat ones too: they go over `settings`
    lcb = gym.make("codegym/LCB-v0", settings=EpisodeSettings(max_turns=2))
    assert lcb.unwrapped.max_turns == 3
    lcb.close()
    assert pickle.loads(pickle.dumps(env.unwrapped.settings)) == env.unwrapped.settings
    env.close()
    venv = gym.make_vec("codegym/Suite-v0", num_envs=2, vectorization_mode="async", suite=EXAMPLES,
                        max_turns=1, settings=EpisodeSettings(feedback="none"))
    obs, _ = venv.reset(seed=[0, 1])
    assert all("1" in o for o in obs)
    _, _, term, _, _ = venv.step(["garbage", "garbage"])  # one turn: the last turn submits
    assert all(bool(t) for t in term)
    venv.close()
