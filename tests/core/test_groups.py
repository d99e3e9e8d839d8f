"""Settings groups (codegym.core.groups): fields one by one, unknown keywords named, flat attributes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from codegym.core.groups import GroupField, as_group, grouped, with_fields


@dataclass(frozen=True)
class Speed:
    repeats: int = 3
    budget_s: float = 10.0
    metric: str | None = None

    def __post_init__(self) -> None:
        if self.repeats < 1:
            raise ValueError("repeats must be >= 1")


@dataclass(frozen=True)
class Look:
    colour: str = "red"
    verbose: bool = False


def test_with_fields_converts_numbers_to_the_fields_type():
    s = with_fields(Speed(), {"repeats": 5.0, "budget_s": 2}, ("repeats", "budget_s", "metric"), "X")
    assert s == Speed(repeats=5, budget_s=2.0) and type(s.repeats) is int and type(s.budget_s) is float
    assert with_fields(Speed(), {}, ("repeats",), "X") == Speed()


def test_grouped_spreads_flat_keywords_over_the_groups():
    out = grouped("Thing", {"repeats": 4, "colour": "blue"}, speed=Speed(budget_s=1.0), look=Look())
    assert out == {"speed": Speed(repeats=4, budget_s=1.0), "look": Look(colour="blue")}


def test_an_unknown_keyword_is_a_type_error_that_names_it_and_the_closest():
    named = r"Thing got unexpected keyword argument\(s\) 'colr' \(did you mean 'colour'\?\)"
    with pytest.raises(TypeError, match=named):
        grouped("Thing", {"colr": "x"}, speed=Speed(), look=Look())
    with pytest.raises(TypeError, match=r"'modle' \(did you mean 'model'\?\)"):
        grouped("Thing", {"modle": "x"}, also=("model",), speed=Speed())
    with pytest.raises(TypeError, match="'zzz'"):
        with_fields(Speed(), {"zzz": 1}, ("repeats",), "X")


def test_group_field_reads_and_sets_through_the_group():
    class Owner:
        repeats = GroupField("speed")
        colour = GroupField("look")

        def __init__(self) -> None:
            self.speed, self.look = Speed(), Look()

    o = Owner()
    assert (o.repeats, o.colour) == (3, "red")
    o.repeats = 7
    assert o.speed == Speed(repeats=7) and o.repeats == 7
    with pytest.raises(ValueError, match="repeats must be >= 1"):  # the group's checks run again
        o.repeats = 0
    assert isinstance(Owner.repeats, GroupField)


def test_as_group_takes_the_dataclass_a_mapping_or_none():
    base = Speed(repeats=2)
    assert as_group(None, base, "X", "speed") is base
    assert as_group(Speed(), base, "X", "speed") == Speed()
    assert as_group({"budget_s": 1}, base, "X", "speed") == Speed(repeats=2, budget_s=1.0)
    with pytest.raises(TypeError, match=r"X speed= got unexpected keyword argument\(s\) 'colour'"):
        as_group({"colour": "red"}, base, "X", "speed")
    with pytest.raises(TypeError, match=r"X: speed= takes Speed\(...\) or a mapping of its fields, not Look"):
        as_group(Look(), base, "X", "speed")
