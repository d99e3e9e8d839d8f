"""`TimedReward` takes a handful of arguments: its settings come in groups (`TimedValues`,
`SpeedScoring`, `TimingSettings`), and every field of a group is still taken one by one as a
keyword (as reward configs and older callers give them), with a clear error for any other
keyword; the spec rebuilds the wrapper from those flat keywords."""

from __future__ import annotations

import inspect

import gymnasium as gym
import pytest

import codegym  # noqa: F401  (registers the ids)
from codegym.wrappers import SpeedScoring, TimedReward, TimedValues, TimingSettings
from codegym.wrappers.config import RewardConfigError, parse_reward_config

#: the keywords TimedReward took one by one before its settings were grouped (the group each sets, a value)
OLD_KEYWORDS = {
    "transform": ("scoring", "ratio"), "cap": ("scoring", 5.0), "percentiles": ("scoring", (90.0, 50.0)),
    "distribution": ("scoring", "measured"), "correct_reward": ("values", 2.0),
    "speed_weight": ("values", 0.5), "fail_reward": ("values", -1.0), "unscorable_reward": ("values", 0.25),
    "max_noise": ("scoring", 0.3), "max_score_span": ("scoring", 0.1), "retries": ("scoring", 3),
    "skip_identical": ("scoring", False), "seed": ("scoring", 7), "slow_bound": ("scoring", None),
    "futility": ("scoring", False), "metric": ("settings", "wall"), "repeats": ("settings", 4),
    "max_pairs": ("settings", 9), "warmups": ("settings", 0), "min_of": ("settings", 2),
    "budget_s": ("settings", 30.0), "alpha": ("settings", 0.01), "min_effect": ("settings", 0.02),
}


@pytest.fixture(scope="module")
def base():
    env = gym.make("codegym/PerfCode-v0")
    yield env
    env.close()


def test_the_constructor_takes_a_handful_of_arguments():
    params = [n for n, p in inspect.signature(TimedReward).parameters.items()
              if p.kind is not inspect.Parameter.VAR_KEYWORD]
    assert params == ["env", "mode", "against", "values", "scoring", "timing", "check_perf"]


def test_every_old_keyword_is_still_taken_one_by_one(base):
    env = TimedReward(base, mode="percentile", against="reference", check_perf=False,
                      **{k: v for k, (_, v) in OLD_KEYWORDS.items()})
    for k, (group, v) in OLD_KEYWORDS.items():
        assert getattr(getattr(env, group), k) == v, k
    assert (env.mode, env.against, env.check_perf) == ("percentile", "reference", False)
    # the same settings given as groups make the same wrapper
    grouped = TimedReward(
        base, mode="percentile", against="reference", check_perf=False,
        values=TimedValues(correct_reward=2.0, speed_weight=0.5, fail_reward=-1.0, unscorable_reward=0.25),
        scoring=SpeedScoring(transform="ratio", cap=5.0, percentiles=[90, 50], distribution="measured",
                             max_noise=0.3, max_score_span=0.1, retries=3, skip_identical=False, seed=7,
                             slow_bound=None, futility=False),
        timing=TimingSettings(metric="wall", repeats=4, max_pairs=9, warmups=0, min_of=2, budget_s=30.0,
                              alpha=0.01, min_effect=0.02))
    assert (grouped.values, grouped.scoring, grouped.settings) == (env.values, env.scoring, env.settings)
    # a field given one by one overrides the group's; numbers are converted as before
    one = TimedReward(base, scoring=SpeedScoring(cap=3.0), cap=4, percentiles=75, repeats=5.0)
    assert one.scoring.cap == 4.0 and one.scoring.percentiles == (75.0,) and one.settings.repeats == 5
    assert TimedReward(base).values == TimedValues() and TimedReward(base).scoring == SpeedScoring()
    # a group given as a mapping of its fields (a config's); the fields read as attributes, as before
    env = TimedReward(base, values={"correct_reward": 2}, scoring={"cap": 4})
    assert (env.correct_reward, env.cap, env.slow_bound, env.seed) == (2.0, 4.0, 1.0, 0)
    with pytest.raises(TypeError, match="values"):
        TimedReward(base, values=2.0)


def test_an_unknown_keyword_is_named(base):
    with pytest.raises(TypeError, match=r"TimedReward got unexpected keyword argument\(s\) 'cpa' "
                                        r"\(did you mean 'cap'\?\)"):
        TimedReward(base, cpa=5.0)
    with pytest.raises(TypeError, match="bogus"):
        TimedReward(base, repeats=3, bogus=1)


@pytest.mark.parametrize("kwargs, message", [
    ({"mode": "fastest"}, "mode must be one of"), ({"against": "oracle"}, "against must be one of"),
    ({"transform": "sqrt"}, "transform must be one of"), ({"cap": 1.0}, "cap must be > 1"),
    ({"percentiles": [0]}, "percentiles must be"), ({"percentiles": []}, "percentiles must be"),
    ({"distribution": "guessed"}, "distribution must be one of"), ({"max_noise": 0}, "max_noise must be > 0"),
    ({"slow_bound": 0}, "slow_bound must be > 0"), ({"metric": "joules"}, "metric must be cpu"),
])
def test_values_it_cannot_use_are_refused(base, kwargs, message):
    with pytest.raises(ValueError, match=message):
        TimedReward(base, **kwargs)


def test_the_spec_rebuilds_the_wrapper_from_flat_keywords(base):
    env = TimedReward(base, mode="interpolate", values=TimedValues(correct_reward=1.5),
                      scoring=SpeedScoring(cap=4.0, slow_bound=None), repeats=3, max_noise=0.2)
    kwargs = env.spec.additional_wrappers[-1].kwargs
    assert "values" not in kwargs and "scoring" not in kwargs and "timing" not in kwargs
    assert kwargs["correct_reward"] == 1.5 and kwargs["cap"] == 4.0 and kwargs["repeats"] == 3
    assert set(kwargs) == {"mode", "against", "check_perf", *OLD_KEYWORDS}
    again = gym.make(env.spec)
    assert isinstance(again, TimedReward) and again.mode == "interpolate"
    assert (again.values, again.scoring, again.settings) == (env.values, env.scoring, env.settings)
    again.close()


def test_a_reward_config_gives_the_fields_one_by_one():
    specs = parse_reward_config([{"type": "timed", "mode": "percentile", "percentiles": [50, 90], "cap": 5,
                                  "repeats": 3, "correct_reward": 2, "slow_bound": None}])
    assert specs[0].kwargs["cap"] == 5
    assert set(TimedReward.flat_options()) == set(OLD_KEYWORDS)
    with pytest.raises(RewardConfigError, match=r"reward\[0\].capp: unknown field 'capp' \(did you mean 'cap'\?\)"):
        parse_reward_config([{"type": "timed", "capp": 5}])
    with pytest.raises(RewardConfigError, match="cap must be > 1"):  # refused when read, not when applied
        parse_reward_config([{"type": "timed", "cap": 1}])
    with pytest.raises(RewardConfigError, match="values"):  # a group is given field by field in YAML
        parse_reward_config([{"type": "timed", "values": {"correct_reward": 2}}])
