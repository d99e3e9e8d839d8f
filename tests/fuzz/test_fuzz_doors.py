"""The doors where strangers' data comes in (issue 28 item 7): every attack is one line, bounded, harmless.

Two parts:

- `tests/_doors.py`'s attacks on ``codegym import FILE``, ``codegym replay FILE``, ``codegym
  eval CONFIG``, ``codegym synthesize CONFIG`` and task folders (decompression bombs of a
  file and of a field, pickles, JSON nested 500 and 100,000 deep, infinite numbers, fields
  of the wrong type, two records of one task name, a task over the loader's cap, FIFOs
  and devices, an ``--out`` that is not a suite folder, replayed files that leave the
  workspace), each run as a user runs it, in a child process: no hang (a time bound), a
  bounded peak memory, the one line naming the bad item, no traceback, the exit status of a
  clean refusal, no sentinel written, no host file's content (`SECRET`) in the output or in
  any file written, and what an import leaves behind whole;
- fuzzing: replay records and eval / synthesis configs with fields of any type (one line
  each, only ``file:line`` errors); records of each importer's schema with fields replaced by values of every
  kind (wrong types, deep nesting, non-finite and huge numbers, control characters, shell
  text naming a sentinel) and lines of junk: an import never raises (only a file that is
  not records at all is an `ImportError_`), every record is written or skipped with one
  line naming where it is, nothing runs.

`ISSUE_28` is the index of every attack class of the issue and the tests that cover it,
here and in the other helpers' suites; `test_every_attack_class_has_its_tests` checks they
exist. `benchmarks/untrusted_doors.py` prints the before/after table of the attacks here.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest
from _doors import ATTACKS, SECRET, run_attack
from _fuzz import budget
from _tools import need_bwrap
from hypothesis import given
from hypothesis import strategies as st

from codegym.cli.replay import replay_episode
from codegym.core.keys import KeyGrants
from codegym.evaluation.config import ConfigError, load_config
from codegym.evaluation.synthesis import load_synthesis_config
from codegym.importers.common import ImportError_
from codegym.importers.humaneval import import_humaneval
from codegym.importers.lcb import import_lcb
from codegym.importers.leetcode import import_leetcode_contest
from codegym.importers.multiple import import_multiple
from codegym.importers.swebench import import_swebench

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"

# --------------------------------------------------------------------------- the attacks


def _left_behind(name: str, root: Path) -> str | None:
    """What is wrong with the files an attack's import left (None: nothing)."""
    out = root / "out"
    names = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if any(n.startswith(".") for n in names) or any(p.name.startswith(".out.") for p in root.iterdir()):
        return f"a temporary folder was left: {names}"
    want = {"two records, one task name": ["a_b.yaml", "suite.yaml"],
            "a task over the loader's cap": ["q-good.yaml", "suite.yaml"],
            "LCB zlib field 0.5 MB -> 500 MB": ["q-good.yaml", "suite.yaml"],
            "fields of the wrong type": ["HumanEval_2.yaml", "suite.yaml"]}.get(name)
    if want is not None and names != want:
        return f"out/ holds {names}, not {want}"
    if name in ("FILE is a FIFO", "FILE is /dev/zero", "gzip file 0.5 MB -> 500 MB") and out.exists():
        return "a refused file left an output folder"
    if name.startswith("--out") and sorted(p.name for p in (root / "host").iterdir()) != ["secret.txt"]:
        return "the folder that is not a suite was written into"
    return None


@pytest.mark.timeout(300)
@pytest.mark.parametrize("attack", ATTACKS, ids=[f"{a.door.split()[1]}: {a.name}" for a in ATTACKS])
def test_an_attack_on_a_door_is_one_line_bounded_and_harmless(tmp_path, attack):
    if attack.needs == "bwrap":
        need_bwrap()
    root = tmp_path / "w"
    root.mkdir()
    o = run_attack(attack, root, timeout=150)
    assert not o.hung, f"{attack.name}: no answer in 150 s"
    assert "Traceback" not in o.out, o.out[-3000:]
    assert o.rc in attack.ok_rc, (o.rc, o.out[-2000:])
    hits = [ln for ln in o.out.splitlines() if attack.expect in ln]
    assert len(hits) == 1, (attack.expect, o.out[-2000:])      # one clear line for the bad item
    assert ".tmp" not in hits[0], hits[0]                         # naming the files the user sees
    assert not o.sentinel, "a program named by the input ran on the host"
    assert not o.leaked, f"the host file's content is in {o.leaked}"
    assert o.peak_mb < attack.mem_mb, f"peak memory {o.peak_mb:.0f} MB (bound {attack.mem_mb} MB)"
    assert _left_behind(attack.name, root) is None, _left_behind(attack.name, root)


# --------------------------------------------------------------------------- fuzzed records

SENTINEL_NAME = "FUZZ-SENTINEL"
_TEXT = st.sampled_from(["", " ", "\x00", "\x1b[2J", "\u2028", "\ud800", "a" * 300, "../../../etc/passwd",
                         f"$(touch {SENTINEL_NAME})", f"`touch {SENTINEL_NAME}`", "{{x}}", "%s%n", "NaN",
                         "Infinity", "1e400", "-0", "[" * 120, "]" * 5, "\\", '"', "null", "HumanEval/0",
                         "lcb/a", "a/b", "a_b", "2024-13-45", "9" * 5000])
_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                    st.sampled_from([float("inf"), float("-inf"), 1e308, -0.0, 10**4000]), _TEXT,
                    st.text(max_size=12))


def _nest(depth: int, leaf):
    for _ in range(depth):
        leaf = [leaf]
    return leaf


_VALUES = st.one_of(_LEAVES, st.lists(_LEAVES, max_size=4), st.dictionaries(st.text(max_size=5), _LEAVES,
                                                                               max_size=3),
                    st.builds(_nest, st.sampled_from([99, 101, 500]), _LEAVES))



def _patch(f: str) -> str:
    return f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-a\n+b\n"


_GOOD = {
    "humaneval": {"task_id": "HumanEval/7", "prompt": "def f():\n", "entry_point": "f",
                  "canonical_solution": "    return 1\n", "test": "def check(c):\n    assert c() == 1\n"},
    "lcb": {"question_id": "q7", "question_title": "t", "question_content": "Print 1.", "platform": "atcoder",
            "contest_date": "2024-01-01T00:00:00", "difficulty": "easy", "starter_code": "",
            "public_test_cases": json.dumps([{"input": "1\n", "output": "1\n", "testtype": "stdin"}]),
            "private_test_cases": "[]", "metadata": "{}"},
    "leetcode": {"task_id": "weekly-1-q", "prompt": '"""\nReturn x.\n\nExample 1:\n"""\nclass Solution:\n'
                                                     "    def f(self, x: int) -> int:\n        ",
                 "test": 'my_solution = Solution()\ntest_input = { "x": 1 }\nassert my_solution.f(**test_input) == 1\n',
                 "meta": {"title": "q", "difficulty": "Easy"}, "start_time": 1700000000},
    "multiple": {"name": "HumanEval_7_f", "language": "jl", "prompt": "function f(x)\n",
                 "tests": "using Test\n@testset begin\n@test f(1) == 1\nend\n", "stop_tokens": ["\nend"]},
    "swebench": {"instance_id": "acme__x-7", "repo": "acme/x", "base_commit": "a" * 40, "patch": _patch("x.py"),
                 "test_patch": _patch("t.py"), "problem_statement": "fix", "FAIL_TO_PASS": '["t.py::test_a"]',
                 "PASS_TO_PASS": "[]", "version": "1.0"},
}
_IMPORT = {
    "humaneval": lambda src, out: import_humaneval(src, out, mode="plain", verify=False),
    "lcb": lambda src, out: import_lcb(src, out, verify=False),
    "leetcode": lambda src, out: import_leetcode_contest(src, out),
    "multiple": lambda src, out: import_multiple(src, out),
    "swebench": lambda src, out: import_swebench(src, out),
}


@st.composite
def _records(draw, schema: str) -> list[str]:
    """JSON lines: the good record once, mutated copies of it, junk lines."""
    good = _GOOD[schema]
    keys = sorted(good) + ["extra"]
    lines = []
    for _n in range(draw(st.integers(1, 4))):
        rec = dict(good)
        for _ in range(draw(st.integers(1, 3))):
            rec[draw(st.sampled_from(keys))] = draw(_VALUES)
        lines.append(json.dumps(rec))
    for _ in range(draw(st.integers(0, 2))):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.one_of(
            st.sampled_from(["{", "[]", "7", '"x"', "[" * 3000 + "]" * 3000, '{"a": NaN}', "\x00\x01"]),
            st.text(max_size=30).filter(lambda t: "\n" not in t and "\r" not in t))))
    lines.insert(draw(st.integers(0, len(lines))), json.dumps(good))
    return lines


@pytest.mark.timeout(600)
@pytest.mark.parametrize("schema", sorted(_GOOD))
def test_fuzzed_records_never_end_an_import(tmp_path_factory, schema):
    @budget(25)
    @given(_records(schema))
    def check(lines):
        d = tmp_path_factory.mktemp(schema)
        src = d / "records.jsonl"
        src.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        cwd = os.getcwd()
        os.chdir(d)   # a command a record names would write its sentinel here
        try:
            rep = _IMPORT[schema](src, d / "out")
        except ImportError_ as e:   # the file as a whole: only when no line is a record
            assert "\n" not in str(e)
            return
        finally:
            os.chdir(cwd)
        assert not (d / SENTINEL_NAME).exists()
        for where, why in rep.skipped:
            assert re.match(r"(line|record) \d+|[\w./-]+", where), where
            assert "\n" not in why and "Traceback" not in why and why.strip(), why
        assert rep.written, rep.summary()             # the good record is imported every time
        blank = sum(1 for ln in lines if not ln.strip())
        assert len(rep.written) + rep.skipped_total <= len(lines) - blank
        written = "".join(p.read_text(errors="replace") for p in (d / "out").glob("*.yaml"))
        assert SECRET not in written
    check()


# --------------------------------------------------------------------------- fuzzed replay records and configs

_EPISODE = {"kind": "episode", "task_id": "examples/bracket-depth", "verdict": "accepted", "key": "k",
            "passed": 1, "total": 1, "final_files": {"main.py": "print(1)"}, "metadata": {"language": "python"},
            "steps": [{"diff": "", "pre_state": "x", "judge": {"passed": 1}}], "group_id": "g", "suite": "examples"}


class _NoTasks:
    def get(self, task_id, label=None):
        return None


@budget(150)
@given(st.dictionaries(st.sampled_from(sorted(_EPISODE) + ["seed", "language", "task_hash", "sample_index"]),
                       _VALUES, max_size=4))
def test_fuzzed_replay_records_are_one_line_each(changes):
    """Any mix of fields of any type: `replay_episode` answers with one line, never raises."""
    rec = {**_EPISODE, **changes}
    got = replay_episode("line 3", rec, _NoTasks(), sandbox=None)
    assert got.status in ("error", "skipped"), got
    assert got.message.strip() and "\n" not in got.message and "Traceback" not in got.message, got.message
    assert "\n" not in got.line()


_CONFIG = {"agents": ["oracle"], "suites": [{"suite": "examples", "ids": ["examples/run-length"]}], "max_turns": 1,
           "seeds": [0], "out": "out", "progress": False, "report": False,
           "synthesis": {"exports": ["chat"]}}


@pytest.mark.timeout(600)
def test_fuzzed_configs_are_file_line_errors(tmp_path_factory):
    """Eval and synthesis configs with fields of any type, nested, non-finite, naming keys and
    paths: only `ConfigError` (``file:line: field: message``) comes out, never another exception."""
    @budget(60)
    @given(st.dictionaries(st.sampled_from(sorted(_CONFIG) + ["agents", "timing", "reward", "workers",
                                                              "samples", "k", "keys"]), _VALUES, max_size=3),
           st.booleans())
    def check(changes, synth):
        d = tmp_path_factory.mktemp("cfg")
        data = {**_CONFIG, **changes}
        if not synth:
            data.pop("synthesis", None)
        path = d / "cfg.yaml"
        try:
            path.write_text(json.dumps(data, allow_nan=True), encoding="utf-8", errors="surrogatepass")
        except ValueError:
            return
        try:
            if synth:
                load_synthesis_config(path, keys=KeyGrants())
            else:
                load_config(path, keys=KeyGrants())
        except ConfigError as e:
            for err in e.errors:
                assert str(err).startswith("cfg.yaml:") or str(err).startswith(str(path)), str(err)
    check()


# --------------------------------------------------------------------------- the index

#: every attack class of issue 28 (its list, in its words) -> the tests that cover it
#: (``path::function``); the other helpers' suites are named where they own the class
ISSUE_28: dict[str, list[str]] = {
    "host code execution, mining (diff.external, textconv, hooks, filters, pager)": [
        "tests/core/test_git.py::test_mining_reads_real_patches_and_runs_nothing",
        "tests/core/test_git.py::test_diffs_logs_and_reads_run_nothing_and_read_the_real_content",
        "tests/core/test_git.py::test_base_trees_workspaces_and_packing_run_nothing",
        "tests/core/test_git.py::test_the_users_own_git_configuration_is_not_read",
        "tests/architecture/test_git_helper.py::test_no_git_outside_the_helper"],
    "host code execution, environment builds (pip on the host)": [
        "tests/sandbox/test_envbuild.py::test_environment_built_in_the_sandbox_with_the_repository_installed",
        "tests/sandbox/test_envbuild.py::test_a_file_url_requirement_never_runs_on_the_host",
        "tests/sandbox/test_envbuild.py::test_an_in_tree_build_backend_runs_confined",
        "tests/sandbox/test_envbuild.py::test_option_injection_is_refused_with_one_line",
        "tests/sandbox/test_pyreqs.py::test_pip_options_are_refused",
        "tests/sandbox/test_pyreqs.py::test_urls_and_paths_only_from_the_command_line"],
    "host file read through symlinks in patches; a record's repo escaping --repo-url": [
        "tests/tasks/test_patches.py::test_a_patch_that_makes_a_link_is_refused",
        "tests/tasks/test_patches.py::test_no_file_is_read_through_a_link_out_of_the_tree",
        "tests/tasks/test_patches.py::test_a_patch_that_leaves_the_tree_writes_nothing",
        "tests/importers/test_swebench_import.py::test_bad_records_are_one_line_each_and_the_rest_imports"],
    "secrets: api_key_env and base_url of a config; out: outside the config's folder": [
        "tests/evaluation/test_config_secrets.py::test_a_config_naming_a_variable_the_user_did_not_allow_is_refused_at_its_line",
        "tests/evaluation/test_config_secrets.py::test_a_config_chosen_base_url_gets_no_key",
        "tests/evaluation/test_config_secrets.py::test_out_stays_under_the_configs_folder"],
    "hangs: a FIFO or device in a Harbor folder, a benchmark file, a replay file, a config, a task folder": [
        "tests/importers/test_harbor_attacks.py::test_a_hostile_folder_is_refused_before_any_image",
        "tests/fuzz/test_fuzz_doors.py::test_an_attack_on_a_door_is_one_line_bounded_and_harmless",
        "tests/core/test_jsonl.py::test_only_regular_files_are_read"],
    "bombs: gzip file, LCB zlib field, a Harbor image's 200 MB working-directory file": [
        "tests/fuzz/test_fuzz_doors.py::test_an_attack_on_a_door_is_one_line_bounded_and_harmless",
        "tests/core/test_jsonl.py::test_decompression_is_bounded_in_size_and_ratio",
        "tests/importers/test_harbor_attacks.py::test_a_200_mb_working_directory_file_stays_in_the_image_and_memory_stays_low"],
    "file counts and sizes per folder": [
        "tests/importers/test_harbor_attacks.py::test_a_hostile_folder_is_refused_before_any_image",
        "tests/tasks/test_suite_caps.py::test_a_suite_folder_of_too_many_entries_is_one_error"],
    "pulls: COPY --from, RUN --mount=from, ADD <url>; builds without network, bounded": [
        "tests/sandbox/test_dockerfile.py::test_every_image_reference_is_found",
        "tests/sandbox/test_dockerfile.py::test_a_task_dockerfile_naming_an_absent_image_is_refused_before_the_build",
        "tests/sandbox/test_dockerfile.py::test_a_build_is_stopped_at_its_bound",
        "tests/importers/test_harbor_attacks.py::test_an_image_attack_costs_its_folder_one_line_and_the_others_import"],
    "tracebacks: deep JSON (FAIL_TO_PASS, lines, fields), a pickle, non-finite numbers, wrong types": [
        "tests/fuzz/test_fuzz_doors.py::test_an_attack_on_a_door_is_one_line_bounded_and_harmless",
        "tests/fuzz/test_fuzz_doors.py::test_fuzzed_records_never_end_an_import",
        "tests/importers/test_importers.py::test_lcb_private_tests_never_unpickle_objects",
        "tests/core/test_jsonl.py::test_nesting_is_bounded"],
    "tracebacks: task.toml nested deep, timeout_sec = inf, FROM with an escaped continuation": [
        "tests/importers/test_harbor_attacks.py::test_a_hostile_folder_is_refused_before_any_image",
        "tests/importers/test_harbor_attacks.py::test_an_image_attack_costs_its_folder_one_line_and_the_others_import"],
    "tracebacks: replay records whose steps / final_files / metadata have the wrong type": [
        "tests/cli/test_replay.py::test_malformed_records_are_one_line_each_and_the_rest_goes_on",
        "tests/fuzz/test_fuzz_doors.py::test_fuzzed_replay_records_are_one_line_each"],
    "eval and synthesis configs of any shape (types, nesting, non-finite numbers)": [
        "tests/fuzz/test_fuzz_doors.py::test_fuzzed_configs_are_file_line_errors",
        "tests/fuzz/test_fuzz_yaml.py::test_bombs_end_in_bounded_work_with_a_line"],
    "one bad item stops the batch; a duplicate name overwrites; half-written output": [
        "tests/importers/test_harbor_attacks.py::test_refusals_come_before_any_build_and_a_duplicate_name_never_overwrites",
        "tests/importers/test_harbor_attacks.py::test_a_task_failing_late_writes_nothing_and_keeps_the_earlier_import",
        "tests/importers/test_swebench_import.py::test_a_failed_import_leaves_the_old_suite",
        "tests/importers/test_import_staged.py::test_a_failed_import_leaves_the_old_suite_and_no_temporary_folder",
        "tests/fuzz/test_fuzz_doors.py::test_an_attack_on_a_door_is_one_line_bounded_and_harmless"],
    "serve: refusals as 500s with tracebacks; shutdown with live sessions": [
        "tests/integrations/test_serve_clients.py::test_a_full_server_answers_503",
        "tests/integrations/test_serve_clients.py::test_refusals_log_one_line_and_shutdown_closes_live_sessions"],
}


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_every_attack_class_has_its_tests():
    missing = []
    for klass, refs in ISSUE_28.items():
        assert refs, klass
        for ref in refs:
            rel, _, fn = ref.partition("::")
            path = REPO / rel
            if not path.is_file() or (fn and fn not in _defined(path)):
                missing.append(f"{klass}: {ref}")
    assert not missing, "\n".join(missing)
