"""The user's own settings: one YAML file that only the user writes (trusted, unlike configs).

`settings_path()` is ``$CODEGYM_SETTINGS``, else ``$XDG_CONFIG_HOME/codegym/settings.yaml``
(``~/.config/codegym/settings.yaml``); `user_settings()` reads it (an empty mapping when
there is none). Today it holds the API key variables configs may name and where each may
be sent (``keys:``, `codegym.core.keys`):

    keys:
      B_API_KEY: http://10.0.0.6:8000/v1
      OPENAI_API_KEY: [https://api.openai.com/v1]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from codegym.core.yamldoc import Doc, DocError, DocValidationError

SETTINGS_ENV = "CODEGYM_SETTINGS"


def settings_path() -> Path:
    if os.environ.get(SETTINGS_ENV):
        return Path(os.environ[SETTINGS_ENV]).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "codegym" / "settings.yaml"


def user_settings(path: str | Path | None = None) -> dict[str, Any]:
    """The settings mapping ({} without a file); raises DocValidationError for a bad file."""
    p = Path(path) if path is not None else settings_path()
    if not p.is_file():
        return {}
    doc = Doc(p.resolve(), str(p))
    if not doc.load() or doc.errors:
        raise DocValidationError(doc.errors)
    if doc.data is None:
        return {}
    if not isinstance(doc.data, dict):
        raise DocValidationError([DocError(str(p), 1, "", "the settings are a mapping (keys: ...)")])
    return dict(doc.data)
