"""`codegym.timing.compare` takes the builds, their inputs and one `CompareSettings`; every
setting is still taken one by one as a keyword (``metric=``, ``max_pairs=`` ...), and any
other keyword is named in the error."""

from __future__ import annotations

import inspect

import pytest

import codegym.timing as T
from codegym.core.groups import field_names

PY = "import sys\nn = int(sys.stdin.read() or 0)\nprint(sum(range(n)))\n"
#: the settings compare took one by one before they were grouped
OLD_KEYWORDS = ("metric", "warmups", "repeats", "max_pairs", "budget_s", "alpha", "min_effect", "method",
                "min_of", "seed", "calibrate", "min_worth", "reject_spikes", "futile")


def test_compare_takes_the_builds_their_inputs_and_one_settings_object():
    params = [n for n, p in inspect.signature(T.compare).parameters.items()
              if p.kind is not inspect.Parameter.VAR_KEYWORD]
    assert params == ["sandbox", "build_a", "build_b", "inputs", "settings", "limits", "verify_a", "verify_b",
                      "inputs_b"]
    assert set(field_names(T.CompareSettings)) == set(OLD_KEYWORDS)
    assert T.CompareSettings() == T.CompareSettings(metric="cpu", warmups=1, repeats=8, max_pairs=30,
                                                    budget_s=60.0, alpha=0.01, method="cs", futile="band")


def test_unknown_keyword_is_named(sb):
    b = sb.build("python", {"main.py": PY})
    with pytest.raises(TypeError, match=r"compare\(\) got unexpected keyword argument\(s\) 'max_pair' "
                                        r"\(did you mean 'max_pairs'\?\)"):
        T.compare(sb, b, b, ["10"], max_pair=4)


def test_flat_keywords_and_the_settings_object_agree(sb):
    a = sb.build("python", {"main.py": PY})
    b = sb.build("python", {"main.py": PY + "# another build\n"})
    flat = T.compare(sb, a, b, ["1000"], method="wilcoxon", repeats=3, max_pairs=3, warmups=0, min_of=1,
                     calibrate=False, min_worth=0.2, seed=3, reject_spikes=False)
    grouped = T.compare(sb, a, b, ["1000"], T.CompareSettings(method="wilcoxon", repeats=3, max_pairs=3,
                                                              warmups=0, min_of=1, calibrate=False,
                                                              min_worth=0.2, seed=3, reject_spikes=False))
    over = T.compare(sb, a, b, ["1000"], T.CompareSettings(method="t", max_pairs=30), method="wilcoxon",
                     repeats=3, max_pairs=3, warmups=0, min_of=1, calibrate=False, min_worth=0.2, seed=3,
                     reject_spikes=False)
    # the settings reached the loop: 3 pairs, the seeded order (no pair measured again), no calibration
    for c in (flat, grouped, over):
        assert c.ok, c.reason
        assert (c.method, c.n_pairs, c.min_worth, c.calibration) == ("wilcoxon", 3, 0.2, None)
    assert flat.a_first == grouped.a_first == over.a_first
