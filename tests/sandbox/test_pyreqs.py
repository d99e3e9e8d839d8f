"""Requirements an environment may install (codegym.sandbox.pyreqs): PEP 508 specifiers only;
pip options, URLs and paths refused (URLs and paths allowed from the command line); requirement
files of a repository read line by line, includes inside the repository only."""

from __future__ import annotations

import pytest

from codegym.sandbox.pyreqs import RequirementError, check_requirement, check_requirements, requirements_file
from codegym.sandbox.repoenv import PythonEnvSpec


@pytest.mark.parametrize("req, want", [
    ("pytest", "pytest"), ("pytest >= 7", "pytest>=7"), ("numpy==1.25.2", "numpy==1.25.2"),
    ("requests[socks]<3", "requests[socks]<3"), ('tomli; python_version < "3.11"', 'tomli; python_version < "3.11"'),
    ("types-pkg_resources", "types-setuptools"),
])
def test_pep508_specifiers_are_accepted_and_normalised(req, want):
    assert check_requirement(req) == want


@pytest.mark.parametrize("req", [
    "-r/etc/shadow", "-r /etc/shadow", "--requirement=/etc/shadow", "-e .", "--index-url=http://evil/simple",
    "-c constraints.txt", "--extra-index-url http://x", "--pre", "-f /root",
])
def test_pip_options_are_refused(req):
    with pytest.raises(RequirementError, match="pip option"):
        check_requirement(req)


@pytest.mark.parametrize("req", [
    "x @ file:///tmp/pkg", "x @ https://example.com/x-1.0.tar.gz", "x@git+https://github.com/a/b",
])
def test_urls_and_paths_only_from_the_command_line(req):
    with pytest.raises(RequirementError, match="URL or local path"):
        check_requirement(req)
    assert check_requirement(req, trusted=True).startswith("x")
    assert check_requirements([req, "pytest"], trusted=[req])[1] == "pytest"


@pytest.mark.parametrize("req", ["./pkg", "/tmp/pkg", "git+https://github.com/a/b", "http://x/y.whl", "pkg ==",
                                 "", "a" * 2000, "pkg; rm -rf /"])
def test_what_is_not_a_requirement(req):
    with pytest.raises(RequirementError):
        check_requirement(req)


def test_an_environment_spec_refuses_them_when_made():
    with pytest.raises(RequirementError, match="pip option"):
        PythonEnvSpec(repo="a/b", packages=("pytest", "-r/etc/shadow"))
    with pytest.raises(RequirementError, match="URL or local path"):
        PythonEnvSpec(repo="a/b", pip_packages=("x @ file:///tmp/x",))
    spec = PythonEnvSpec(repo="a/b", packages=("x @ file:///tmp/x", "pytest >= 7"), trusted=("x @ file:///tmp/x",))
    assert spec.packages == ("x @ file:///tmp/x", "pytest>=7")


def test_requirement_files_read_from_a_repository():
    files = {
        "requirements/test.txt": "# tests\n-r base.txt\npytest>=7 \\\n  # continued\nhypothesis  # inline\n"
                                 "-e .\n.[test]\n-r /etc/shadow\n--requirement ../../etc/passwd\n-r ../../../x.txt\n"
                                 "-c constraints.txt\n--index-url http://evil/simple\n"
                                 "x @ file:///tmp/evil\nattrs==23.1 --hash=sha256:abc\n-r base.txt\n",
        "requirements/base.txt": "numpy==1.25.2\n-rtest.txt\n",
    }
    reqs, notes = requirements_file("requirements/test.txt", files.get)
    assert reqs == ["numpy==1.25.2", "pytest>=7", "hypothesis", "attrs==23.1"]
    joined = "\n".join(notes)
    assert "repository itself" in joined and "/etc/shadow" in joined and "../../etc/passwd" in joined
    assert sum("outside the repository" in n for n in notes) == 3
    assert "constraints.txt" in joined and "--index-url" in joined and "URL or local path" in joined
    assert all(n.startswith("requirements/") for n in notes)             # each names its file and line
    reqs, notes = requirements_file("missing.txt", files.get)
    assert reqs == [] and "not in the repository" in notes[0]
