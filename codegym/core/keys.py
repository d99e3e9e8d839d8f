"""API keys in the environment and where they may go: the rule for configs written by others.

An eval or synthesis config (and a scaffold config it names) may come from a stranger. It
may name an environment variable that holds an API key (``api_key_env``) and the endpoint
the agent talks to (``base_url``). `KeyGrants` holds what the *user* allowed -- on the
command line (``--key VAR`` or ``--key VAR=URL``) or in their settings (``keys:`` of
`codegym.core.settings`) -- and decides:

- `problem(var)`: a config may name only a variable that looks like a key (``*_API_KEY``,
  ``*_TOKEN``) and that the user allowed (`DEFAULT_KEY_ENV`, what agents read when a
  config names none, is always nameable);
- `key_env(var, base_url)`: the key is sent only to a base URL the user configured for it:
  the URL of a grant, or -- for `DEFAULT_KEY_ENV` and a grant without a URL -- the user's
  own endpoint (``CODEGYM_LLM_BASE_URL``, ``OPENAI_BASE_URL``, else `DEFAULT_BASE_URL`).
  Anywhere else the agent runs without a key (None).

docs/eval.md ("Keys and endpoints").
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

#: what an environment variable holding an API key is called
KEY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*_(API_KEY|TOKEN)$")
#: the variable an agent reads when nothing names one
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
#: the endpoint of an agent when neither its config nor the environment names one
DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"


def looks_like_key(name: str) -> bool:
    return bool(KEY_NAME.match(name))


def user_base_url(environ: Mapping[str, str] | None = None) -> str:
    """The endpoint the user's environment names (what agents use when a config names none)."""
    env = os.environ if environ is None else environ
    return env.get("CODEGYM_LLM_BASE_URL") or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL


def _norm(url: str) -> str:
    return url.strip().rstrip("/")


class KeyGrants:
    """The key variables the user allowed and the base URLs each may be sent to.

    Args:
        grants: variable -> base URLs (None in the list: the user's own endpoint).
        environ: the environment (default ``os.environ``): the user's endpoint.
    """

    def __init__(self, grants: Mapping[str, Iterable[str | None]] | None = None,
                 environ: Mapping[str, str] | None = None):
        own = _norm(user_base_url(environ))
        self.own_url = own
        self.grants: dict[str, set[str]] = {DEFAULT_KEY_ENV: {own}}
        for var, urls in (grants or {}).items():
            self.grants.setdefault(var, set()).update(_norm(u) if u else own for u in urls)

    @classmethod
    def from_user(cls, cli: Iterable[str] = (), settings: Mapping[str, Any] | None = None,
                  environ: Mapping[str, str] | None = None) -> KeyGrants:
        """The grants of the command line (``VAR`` or ``VAR=URL`` items) and of the user's
        settings (``keys: {VAR: URL | [URL, ...] | null}``); raises ValueError naming a bad one."""
        grants: dict[str, list[str | None]] = {}
        keys = (settings or {}).get("keys") or {}
        if not isinstance(keys, Mapping):
            raise ValueError("settings: keys: expected a mapping VAR: URL (or a list of URLs, or null)")
        for var, urls in keys.items():
            urls = [urls] if urls is None or isinstance(urls, str) else urls
            if not isinstance(urls, list) or not all(u is None or isinstance(u, str) for u in urls):
                raise ValueError(f"settings: keys: {var}: expected a base URL or a list of them")
            grants.setdefault(str(var), []).extend(urls)
        for item in cli:
            var, eq, url = item.partition("=")
            if eq and not url.startswith(("http://", "https://")):
                raise ValueError(f"--key {item}: expected VAR or VAR=URL (an http(s) base URL)")
            grants.setdefault(var.strip(), []).append(url.strip() or None)
        for var in grants:
            if not looks_like_key(var):
                raise ValueError(f"key {var!r}: an API key variable is named *_API_KEY or *_TOKEN")
        return cls(grants, environ)

    def problem(self, var: str) -> str | None:
        """Why a config may not name `var` as its key variable (None: it may)."""
        if not looks_like_key(var):
            return f"{var!r} does not look like an API key variable (*_API_KEY, *_TOKEN): not read"
        if var not in self.grants:
            return (f"{var} is not a key you allowed: give --key {var}=BASE_URL on the command line "
                    "(or list it under keys: in your settings)")
        return None

    def key_env(self, var: str | None, base_url: str | None) -> str | None:
        """`var` if its key may be sent to `base_url` (None: the user's own endpoint), else None."""
        if not var or self.problem(var) is not None:
            return None
        return var if _norm(base_url or self.own_url) in self.grants[var] else None
