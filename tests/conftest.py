"""Test-wide setup: the tests mirror the package's folders; shared helpers live here in tests/.

pytest puts this folder on sys.path (rootdir conftest, prepend import mode), so a test in any
subfolder imports the helpers as ``from _fake_openai import ...`` / ``from _tokenizer import ...``.
"""
