"""Test-wide setup: the tests mirror the package's folders; shared helpers live here in tests/.

pytest puts this folder on sys.path (rootdir conftest, prepend import mode), so a test in any
subfolder imports the helpers as ``from _fake_openai import ...`` / ``from _tools import ...``.
"""

import os

from codegym.sandbox.isolation import UNSAFE_ENV, bwrap_available

# One Ray authentication mode for every cluster the tests start in a process: a process that
# started a cluster with Ray's default (token) mode cannot then create actors on a cluster
# started with auth disabled (`LocalCluster`'s default), as test_ray_split does after
# test_ray_backend on the same xdist worker. Local test clusters only.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

# The programs the tests run are the tests' own. Where bubblewrap is missing (outside CI, which
# installs it) they run without isolation, by the same opt-in a user gives; the tests of what
# only bubblewrap provides skip (`_tools.need_bwrap`), and the header says which mode ran.
UNCONFINED = not bwrap_available() and os.environ.get("CI", "").lower() != "true"
if UNCONFINED:
    os.environ.setdefault(UNSAFE_ENV, "1")


def pytest_report_header(config):
    if UNCONFINED:
        return (f"codegym sandbox: bubblewrap is not installed: the tests' programs run without isolation "
                f"({UNSAFE_ENV}=1); the tests that need bubblewrap skip")
    if os.environ.get(UNSAFE_ENV, "") not in ("", "0"):
        return f"codegym sandbox: without isolation ({UNSAFE_ENV} is set)"
    return "codegym sandbox: bubblewrap"
