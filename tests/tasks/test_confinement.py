"""Task files are untrusted input: every file they name stays inside their suite folder,
under the caps (defaults, and a suite's own ``suite: {caps: ...}``), and every refusal
names the file, the line and the field (issue 21).

The attacks: ``{file: ../../etc/passwd}`` (statement, starter, solutions),
``stdin_file``, ``expected_file``, generator and checker files, a glob that climbs
out, symlinks in the suite folder (a file, a folder, the task file itself, a
suite.yaml), a FIFO, a file over the cap; and `codegym tasks validate` on them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codegym.tasks.load import TaskValidationError, load_task, read_suite_file
from codegym.tasks.suite import check_suite

SECRET = "CODEGYM-CONFINE-" + "SECRET"
BASE = "kind: stdio\nlanguage: python\nsolutions: {reference: {files: {main.py: 'print(1)'}}}\n"


@pytest.fixture
def suite(tmp_path) -> Path:
    """tasks/evil/ (a suite) next to a secret, with symlinks that leave the suite."""
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "data.in").write_text(SECRET + "\n")
    s = tmp_path / "tasks" / "evil"
    (s / "sub").mkdir(parents=True)
    (s / "suite.yaml").write_text("suite: {description: evil}\nlimits: {time_s: 1}\n")
    (s / "ok.in").write_text("1\n")
    (s / "gen.py").write_text("print(1)\n")
    os.symlink(tmp_path / "secret.txt", s / "link.txt")
    os.symlink(tmp_path / "outside", s / "linkdir")
    return s


def _errors(path: Path) -> list[str]:
    with pytest.raises(TaskValidationError) as e:
        load_task(path)
    text = [str(x) for x in e.value.errors]
    assert not any(SECRET in t for t in text)
    return text


@pytest.mark.parametrize("field, line, path", [
    ("starter: {main.py: {file: ../../secret.txt}}", 4, "starter[main.py].file"),
    ("statement: {file: sub/../../../secret.txt}", 4, "statement.file"),
    ("tests: {hidden: [{stdin_file: ../../secret.txt, expected: '1'}]}", 4, "tests.hidden[0].stdin_file"),
    ("tests: {hidden: [{stdin: '1', expected_file: link.txt}]}", 4, "tests.hidden[0].expected_file"),
    ("tests: {hidden: [{stdin_file: linkdir/data.in, expected: '1'}]}", 4, "tests.hidden[0].stdin_file"),
    ("tests: {hidden: [{generator: {file: ../../secret.txt, language: python}}]}", 4,
     "tests.hidden[0].generator.file"),
    ("checker: {type: program, file: link.txt}", 4, "checker.file"),
])
def test_a_file_outside_the_suite_is_refused_with_file_line_field(suite, field, line, path):
    t = suite / "t.yaml"
    t.write_text(BASE + field + "\n" + ("" if "tests:" in field else "tests: {hidden: [{stdin: '1', expected: '1'}]}\n")
                 + ("" if "statement" in field else "statement: s\n"))
    errs = _errors(t)
    hit = [e for e in errs if f"t.yaml:{line}: {path}: " in e]
    assert hit and "outside the suite folder" in hit[0], errs


def test_inside_the_suite_is_fine_and_absolute_is_refused(suite):
    (suite / "sub" / "t.yaml").write_text(BASE + "statement: s\n"
                                          "tests: {hidden: [{stdin_file: ../ok.in, expected: '1'}]}\n")
    task = load_task(suite / "sub" / "t.yaml")  # ../ok.in: up from sub/, still in the suite
    assert task.cases("hidden")[0].stdin == "1\n"
    (suite / "a.yaml").write_text(BASE + "statement: s\n"
                                  "tests: {hidden: [{stdin_file: /etc/hostname, expected: '1'}]}\n")
    assert any("must be relative" in e for e in _errors(suite / "a.yaml"))


def test_a_glob_cannot_climb_and_its_matches_are_confined(suite):
    (suite / "g.yaml").write_text(BASE + "statement: s\ntests: {hidden: {glob: '../../outside/*.in'}}\n")
    assert any("cannot go up a folder" in e for e in _errors(suite / "g.yaml"))
    (suite / "h.yaml").write_text(BASE + "statement: s\ntests: {hidden: {glob: 'linkdir/*.in'}}\n")
    assert any("outside the suite folder" in e for e in _errors(suite / "h.yaml"))


def test_symlinked_task_and_suite_files_are_refused(suite, tmp_path):
    (tmp_path / "outside" / "task.yaml").write_text(BASE + f"title: {SECRET}\n")
    os.symlink(tmp_path / "outside" / "task.yaml", suite / "linked.yaml")
    assert any("is a symlink to" in e and "outside its suite folder" in e for e in _errors(suite / "linked.yaml"))
    other = tmp_path / "tasks" / "other"
    other.mkdir()
    (tmp_path / "outside" / "suite.yaml").write_text(f"statement: {SECRET}\n")
    os.symlink(tmp_path / "outside" / "suite.yaml", other / "suite.yaml")
    sd = read_suite_file(other / "suite.yaml")
    assert sd.defaults == {} and "is a symlink to" in str(sd.doc.errors[0])


def test_fifos_and_files_over_the_cap(suite):
    os.mkfifo(suite / "pipe.in")
    (suite / "f.yaml").write_text(BASE + "statement: s\ntests: {hidden: [{stdin_file: pipe.in, expected: '1'}]}\n")
    assert any("not a regular file" in e for e in _errors(suite / "f.yaml"))  # and no hang
    with open(suite / "big.in", "wb") as f:
        f.truncate(20 << 20)
    (suite / "b.yaml").write_text(BASE + "statement: s\ntests: {hidden: [{stdin_file: big.in, expected: '1'}]}\n")
    errs = _errors(suite / "b.yaml")
    assert any(":5: tests.hidden[0].stdin_file: big.in is 20.0 MB, over the cap of 16.0 MB" in e and
               "suite: {caps" in e for e in errs), errs


def test_a_suite_raises_or_lowers_its_caps(suite):
    with open(suite / "big.in", "wb") as f:
        f.truncate(20 << 20)
    (suite / "b.yaml").write_text(BASE + "statement: s\ntests: {hidden: [{stdin_file: big.in, expected: '1'}]}\n")
    (suite / "suite.yaml").write_text("suite: {description: evil, caps: {inlined_mb: 32, total_mb: 64}}\n")
    assert len(load_task(suite / "b.yaml").cases("hidden")[0].stdin) == 20 << 20
    (suite / "suite.yaml").write_text("suite: {caps: {file_mb: 0.0001, nodes: -1, bogus: 1}}\n")
    errs = _errors(suite / "b.yaml")
    assert any("suite.yaml:1: suite.caps.nodes: expected a number > 0" in e for e in errs), errs
    assert any("suite.caps.bogus: unknown cap 'bogus'" in e for e in errs)
    assert any("b.yaml:1: the file is" in e and "over the cap of 104 bytes" in e for e in errs), errs


@pytest.mark.parametrize("url, message", [
    ("../../outside", "outside the suite folder"), ("linkdir", "outside the suite folder"),
    ("file:///etc", "file:// repository URLs are not allowed"), ("/etc", "outside the suite folder")])
def test_a_local_repository_must_be_inside_the_suite(suite, url, message):
    (suite / "r.yaml").write_text(f"kind: repo\nlanguage: python\nstatement: s\nrepo:\n  url: {url}\n"
                                  "tests: {hidden: [{name: t, cmd: 'true'}]}\n")
    errs = _errors(suite / "r.yaml")
    assert any("r.yaml:5: repo.url: " in e and message in e for e in errs), errs


def test_validate_reports_every_escape(suite, capsys):
    from codegym.cli.main import main
    (suite / "t.yaml").write_text(BASE + "statement: s\nstarter: {main.py: {file: ../../secret.txt}}\n"
                                  "tests: {hidden: [{stdin_file: link.txt, expected: '1'}]}\n")
    assert main(["tasks", "validate", str(suite)]) != 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert text.count("outside the suite folder") == 2 and SECRET not in text
    result = check_suite(suite)
    assert SECRET not in repr(result)
