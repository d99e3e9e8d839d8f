"""The docs say what the code does, where a test can tell: the table of `CODEGYM_*` variables
(docs/settings.md) against the code that reads them, the paths the pages name, no pointer at
files a reader of the repository does not have, and the CLI's docstring against its groups."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import codegym
import codegym.cli.main as cli_main

REPO = Path(codegym.__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SETTINGS = REPO / "docs" / "settings.md"
NAME = re.compile(r"\bCODEGYM_[A-Z0-9]+(?:_[A-Z0-9]+)*")
#: names that look like variables and are not: a heredoc delimiter, a forged marker of the
#: hostile corpus, the prefix of ``CODEGYM_LLM_*``
NOT_VARIABLES = {"CODEGYM_EOF", "CODEGYM_PASS", "CODEGYM_LLM"}


def sources() -> list[Path]:
    """Every file of the checkout that may name a variable: code, scripts, tests, benchmarks."""
    found = [*REPO.glob("codegym/**/*.py"), *REPO.glob("codegym/_scripts/*.sh"), *REPO.glob("scripts/*"),
             REPO / ".ci" / "run", REPO / "Makefile", *REPO.glob("tests/**/*.py"), *REPO.glob("benchmarks/*.py")]
    return [p for p in found if p.is_file()]


def rows() -> dict[str, list[set[str]]]:
    """variable -> the file sets of its rows (the last column of each table row naming it first)."""
    out: dict[str, list[set[str]]] = {}
    for line in SETTINGS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or not cells[0].startswith("`CODEGYM_"):
            continue
        files = set(re.findall(r"`((?:codegym|tests|benchmarks|scripts)/[\w/.*-]+)`", cells[-1]))
        for name in NAME.findall(cells[0]):
            out.setdefault(name, []).append(files)
    return out


def reads(path: Path, name: str, line: str) -> bool:
    """Whether `line` of `path` reads the variable (not merely names it in prose)."""
    if path.suffix == ".py":
        return bool(re.search(r"environ|getenv", line) or re.match(r"\s*[A-Z_]+\s*=\s*[\"']" + name, line))
    return bool(re.search(r"\$\{?" + name + r"\b", line))


def test_every_variable_the_code_names_has_a_row_and_every_row_is_true():
    table = rows()
    named: dict[str, set[str]] = {}
    readers: dict[str, set[str]] = {}
    for p in sources():
        rel = str(p.relative_to(REPO))
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            for name in set(NAME.findall(line)) - NOT_VARIABLES:
                named.setdefault(name, set()).add(rel)
                if rel.startswith("codegym/") and reads(p, name, line):
                    readers.setdefault(name, set()).add(rel)
    missing = sorted(set(named) - set(table))
    assert not missing, f"docs/settings.md has no row for {missing} (named in {[sorted(named[n]) for n in missing]})"
    stale = sorted(set(table) - set(named))
    assert not stale, f"docs/settings.md lists {stale}, which nothing names any more"
    for name, file_sets in table.items():
        listed = set().union(*file_sets)
        assert listed, f"docs/settings.md: {name}'s row names no file"
        for f in listed:
            assert f in named[name], f"docs/settings.md says {f} reads or sets {name}; it does not name it"
        unlisted = readers.get(name, set()) - listed
        assert not unlisted, f"docs/settings.md: {name} is read by {sorted(unlisted)} too"


def test_pages_and_docstrings_point_at_nothing_a_reader_does_not_have():
    """`shared/` (the papers, the machine's scripts) is not part of the repository."""
    for p in [*PAGES, *REPO.glob("codegym/**/*.py")]:
        text = p.read_text(encoding="utf-8")
        assert "shared/seeds" not in text and "shared/scripts" not in text, p.relative_to(REPO)


def test_the_files_the_pages_name_exist():
    for p in PAGES:
        for m in re.finditer(r"`((?:codegym|benchmarks|scripts)/[\w/.-]+\.(?:py|sh|yaml|md|txt|json))`",
                             p.read_text(encoding="utf-8")):
            assert (REPO / m[1]).exists(), f"{p.relative_to(REPO)} names {m[1]}, which does not exist"


def test_the_cli_docstring_names_every_command_group():
    tree = ast.parse(Path(cli_main.__file__).read_text(encoding="utf-8"))
    groups = {a.asname or a.name for node in tree.body if isinstance(node, ast.ImportFrom)
              and node.module == "codegym.cli" for a in node.names}
    assert len(groups) >= 12
    doc = cli_main.__doc__ or ""
    modules = {getattr(cli_main, g).__name__ for g in groups}
    absent = sorted(m for m in modules if f"`{m}`" not in doc)
    assert not absent, f"codegym/cli/main.py's docstring does not name {absent}"
    for p in REPO.glob("codegym/cli/*.py"):
        if p.name != "main.py":
            assert "COMMAND_MODULES" not in p.read_text(encoding="utf-8"), \
                f"{p.name} describes a registration through COMMAND_MODULES that the built-in groups do not use"
