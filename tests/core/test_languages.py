"""Tests of the language registry (codegym/sandbox/languages.yaml + languages.py)."""

from __future__ import annotations

import os
import shutil
import textwrap

import pytest

from codegym.core.languages import DEFAULT_PYTHON, UnknownLanguageError, language_for_file, python_path
from codegym.sandbox import get_language, list_languages


def test_registered_names_aliases_and_main_files():
    names = {s.name for s in list_languages()}
    assert {"python", "c", "cpp", "javascript", "julia"} <= names
    expect = {"py": ("python", "main.py"), "python3": ("python", "main.py"), "c": ("c", "main.c"),
              "c++": ("cpp", "main.cpp"), "CPP": ("cpp", "main.cpp"), "js": ("javascript", "main.js"),
              "node": ("javascript", "main.js"), "jl": ("julia", "main.jl")}
    for alias, (name, main) in expect.items():
        spec = get_language(alias)
        assert (spec.name, spec.main_file) == (name, main)


def test_unknown_language():
    with pytest.raises(UnknownLanguageError) as e:
        get_language("cobol")
    assert "cobol" in str(e.value) and "python" in str(e.value)
    with pytest.raises(ValueError):  # also a ValueError for callers that catch that
        get_language("cobol")


def test_compilers_are_pinned():
    c = get_language("c").compile_argv()
    cpp = get_language("cpp").compile_argv()
    assert c[0] == "gcc" and "-O2" in c and "-std=gnu17" in c and "-lm" in c
    assert cpp[0] == "g++" and "-O2" in cpp and "-std=gnu++17" in cpp
    assert get_language("python").compile_argv() is None
    assert get_language("c").artifacts == ("main",) and get_language("c").run_argv() == ["./main"]


def test_python_uses_the_system_interpreter(monkeypatch):
    monkeypatch.delenv("CODEGYM_PYTHON", raising=False)
    assert python_path() == DEFAULT_PYTHON == "/usr/bin/python3"
    argv = get_language("python").run_argv()
    assert argv[0] == "/usr/bin/python3" and "-S" in argv and argv[-1] == "main.py"
    monkeypatch.setenv("CODEGYM_PYTHON", os.path.expanduser("~/.pyenv/shims/python3"))
    assert python_path() == DEFAULT_PYTHON  # a shim is refused
    monkeypatch.setenv("CODEGYM_PYTHON", "/opt/py/bin/python3")
    assert get_language("python").run_argv()[0] == "/opt/py/bin/python3"


def test_memory_placeholder():
    argv = get_language("javascript").run_argv(memory_mb=300)
    assert "--max-old-space-size=300" in argv


def test_availability_and_versions():
    py = get_language("python")
    assert py.available() and py.version().startswith("Python 3")
    if shutil.which("gcc"):
        assert get_language("c").available() and "gcc" in get_language("c").version().lower()
    jl = get_language("julia")
    if not shutil.which("julia"):
        assert not jl.available() and jl.version() is None
        msg = jl.missing_message()
        assert msg.startswith("language 'julia' is not installed") and "`julia`" in msg and "PATH" in msg


def test_language_for_file():
    assert language_for_file("src/x.py").name == "python"
    assert language_for_file("a.cc").name == "cpp"
    assert language_for_file("a.h").name == "c"
    assert language_for_file("README.md") is None


def test_fingerprint_changes_with_the_spec(tmp_path):
    a = tmp_path / "a.yaml"
    b = tmp_path / "b.yaml"
    a.write_text("x:\n  main: main.x\n  run: [xrun, main.x]\n")
    b.write_text("x:\n  main: main.x\n  run: [xrun, -O, main.x]\n")
    assert get_language("x", a).fingerprint() != get_language("x", b).fingerprint()


def test_adding_a_language_is_adding_an_entry(tmp_path):
    reg = tmp_path / "langs.yaml"
    reg.write_text(textwrap.dedent("""
        shell:
          aliases: [sh]
          main: main.sh
          extensions: [.sh]
          run: [sh, "{main}"]
          version: [sh, -c, "echo dash"]
    """))
    spec = get_language("sh", reg)
    assert spec.name == "shell" and spec.run_argv() == ["sh", "main.sh"] and spec.available()
    assert spec.required_tools() == ["sh"]


@pytest.mark.parametrize("body, field", [
    ("x:\n  run: [a]\n", "x.main"),
    ("x:\n  main: m\n  run: [a]\n  colour: red\n", "x.colour"),
    ("x:\n  main: m\n  run: not-a-list\n", "x.run"),
])
def test_registry_errors_name_the_field(tmp_path, body, field):
    reg = tmp_path / "bad.yaml"
    reg.write_text(body)
    with pytest.raises(ValueError) as e:
        get_language("x", reg)
    assert str(reg) in str(e.value) and field in str(e.value)


def test_every_available_language_runs_hello_world():
    from codegym.sandbox import make_sandbox
    sb = make_sandbox("local")
    programs = {"python": 'print("hello")', "c": '#include <stdio.h>\nint main(void){puts("hello");return 0;}',
                "cpp": '#include <iostream>\nint main(){std::cout << "hello" << std::endl;}',
                "javascript": 'console.log("hello")', "julia": 'println("hello")'}
    for spec in list_languages():
        if spec.name not in programs:
            continue
        r = sb.execute(spec.name, {spec.main_file: programs[spec.name]})
        if spec.available():
            assert r.status == "ok" and r.stdout == "hello\n", (spec.name, r)
        else:
            assert r.status == "sandbox_error" and "not installed" in r.message
