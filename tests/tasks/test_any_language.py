"""Language-agnostic stdio tasks (issue #4): any stdio task of any suite can be posed
in any registered language; the prompt and starter follow the language, the tests and
the task's identity do not."""

from __future__ import annotations

import shutil

import gymnasium as gym
import pytest

import codegym  # noqa: F401

TASK = "dmcoptim/coprime-pairs"  # its bundled solutions are all Python
CPP = r"""#include <cstdio>
#include <vector>
int main() {
    long long n; if (std::scanf("%lld", &n) != 1) return 0;
    std::vector<long long> phi(n + 1);
    for (long long i = 0; i <= n; ++i) phi[i] = i;
    for (long long p = 2; p <= n; ++p)
        if (phi[p] == p)
            for (long long k = p; k <= n; k += p) phi[k] -= phi[k] / p;
    long long total = 0;
    for (long long b = 2; b <= n; ++b) total += phi[b];
    std::printf("%lld\n", total);
}
"""


def _play(env, *actions):
    obs, info = env.reset(options={"task_id": TASK})
    first = (obs, info)
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
    return first, (obs, info)


def test_a_python_only_stdio_task_posed_in_cpp_is_judged_with_the_same_tests():
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    py = gym.make("codegym/DMCOptim-v0", reward="pass_fraction")   # verdicts, untimed
    cpp = gym.make("codegym/DMCOptim-v0", language="cpp", reward="pass_fraction")
    (obs0, info0), _ = _play(py)
    (obs, info), (_, final) = _play(cpp, f"```cpp path=main.cpp\n{CPP}```", "submit")
    assert info["language"] == "cpp" and info["main_file"] == "main.cpp" and "main.cpp" in info["files"]
    assert "main.py" not in info["files"] and "main.cpp" in obs
    assert info["task_hash"] == info0["task_hash"]  # same task, same tests
    assert final["judge"]["verdict"] == "accepted", final["judge"]
    assert final["judge"]["total"] == _hidden_total(py)
    # a per-episode choice works too, and a wrong C++ program is judged, not crashed
    obs, info2 = py.reset(options={"task_id": TASK, "language": "c++"})
    assert info2["language"] == "cpp"
    py.step("```cpp path=main.cpp\n#include <cstdio>\nint main(){std::puts(\"0\");}\n```")
    *_, bad = py.step("submit")
    assert bad["judge"]["verdict"] == "wrong_answer"
    py.close()
    cpp.close()


def _hidden_total(env) -> int:
    from codegym.judge.testgen import materialize
    env.reset(options={"task_id": TASK})
    return len(materialize(env.unwrapped.task, "hidden"))


def test_julia_instance_without_julia_names_the_install():
    env = gym.make("codegym/DMCOptim-v0", language="julia", reward="pass_fraction")
    (obs, info), (_, final) = _play(env, "```julia path=main.jl\nprintln(parse(Int, readline()))\n```",
                                     "submit")
    assert info["language"] == "julia" and info["main_file"] == "main.jl"
    if shutil.which("julia") is None:
        assert final["judge"]["verdict"] == "sandbox_error"
        assert "julia" in final["judge"]["message"].lower()
    else:
        assert final["judge"]["verdict"] == "wrong_answer"
    env.close()
