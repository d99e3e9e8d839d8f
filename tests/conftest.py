"""Test-wide setup: the tests mirror the package's folders; shared helpers live here in tests/.

pytest puts this folder on sys.path (rootdir conftest, prepend import mode), so a test in any
subfolder imports the helpers as ``from _fake_openai import ...`` / ``from _tokenizer import ...``.
"""

import os

# One Ray authentication mode for every cluster the tests start in a process: a process that
# started a cluster with Ray's default (token) mode cannot then create actors on a cluster
# started with auth disabled (`LocalCluster`'s default), as test_ray_split does after
# test_ray_backend on the same xdist worker. Local test clusters only.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
