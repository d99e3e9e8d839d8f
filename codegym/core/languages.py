"""The one language table: how each language is compiled and run, and how it is named.

Owns `LanguageSpec` (one runnable language: main file, compile/run argv, version
probe, whether its toolchain is installed), `LanguageName` (any language codegym
knows: names, fence tags, file extensions, tree-sitter grammar), the loading of
``languages.yaml`` (validated with pydantic at that boundary only), and the
choice of the Python interpreter programs run with (`python_path`).

    >>> from codegym.core.languages import get_language
    >>> get_language("py").main_file
    'main.py'
    >>> get_language("c++").name
    'cpp'

Adding a language is adding an entry to ``languages.yaml``; nothing here
names a language except the ``{python}`` placeholder.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

log = logging.getLogger("codegym.sandbox")

REGISTRY_PATH = Path(__file__).with_name("languages.yaml")
#: programs run with the system interpreter, never a pyenv/virtualenv shim
DEFAULT_PYTHON = "/usr/bin/python3"


class UnknownLanguageError(KeyError, ValueError):
    """A language name that is neither registered nor an alias."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "unknown language"


def python_path() -> str:
    """The interpreter Python programs (and the fork server) run with.

    ``CODEGYM_PYTHON`` overrides ``/usr/bin/python3``. Shims (pyenv, asdf) are
    refused: they are shell scripts that need the user's home directory, which
    the sandbox does not contain.
    """
    return _checked_python(os.environ.get("CODEGYM_PYTHON") or DEFAULT_PYTHON)


@functools.lru_cache(maxsize=8)
def _checked_python(p: str) -> str:
    if "/shims/" in p or "/shims/" in os.path.realpath(p):
        log.warning("CODEGYM_PYTHON=%s is a shim; using %s", p, DEFAULT_PYTHON)
        p = DEFAULT_PYTHON
    return p


class _LanguageModel(BaseModel):
    """Schema of one languages.yaml entry (the YAML boundary)."""

    model_config = ConfigDict(extra="forbid")

    aliases: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    main: str | None = None
    extensions: list[str] = Field(default_factory=list)
    grammar: str | None = None
    compile: list[str] | None = None
    artifacts: list[str] = Field(default_factory=list)
    run: list[str] | None = None
    inprocess: str | None = None
    version: list[str] | None = None
    tools: list[str] | None = None
    install: str = ""
    as_overhead_mb: int = 0
    limit_address_space: bool = True
    extra_processes: int = 0
    env: dict[str, str] = Field(default_factory=dict)


@dataclass(frozen=True)
class LanguageSpec:
    """One language of the registry (see languages.yaml for the meaning of each field)."""

    name: str
    main_file: str
    run: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    compile: tuple[str, ...] | None = None
    artifacts: tuple[str, ...] = ()
    inprocess: str | None = None
    version_cmd: tuple[str, ...] | None = None
    tools: tuple[str, ...] = ()
    install_hint: str = ""
    as_overhead_mb: int = 0
    limit_address_space: bool = True
    extra_processes: int = 0
    env: Mapping[str, str] = field(default_factory=dict)

    # ----- argv

    def expand(self, argv: tuple[str, ...] | list[str], memory_mb: int = 512) -> list[str]:
        """Fill the placeholders of one argv template."""
        subs = {"python": python_path(), "main": self.main_file, "memory_mb": str(int(memory_mb))}
        out = []
        for a in argv:
            for k, v in subs.items():
                a = a.replace("{" + k + "}", v)
            out.append(a)
        return out

    def compile_argv(self, memory_mb: int = 512) -> list[str] | None:
        return None if self.compile is None else self.expand(self.compile, memory_mb)

    def run_argv(self, memory_mb: int = 512) -> list[str]:
        return self.expand(self.run, memory_mb)

    @property
    def compiled(self) -> bool:
        return self.compile is not None

    # ----- toolchain

    def required_tools(self) -> list[str]:
        """Executables (after placeholder expansion) that must exist."""
        if self.tools:
            return self.expand(self.tools)
        firsts = [self.expand(a)[0] for a in (self.compile, self.run) if a]
        # ./main is the build's own output, not a tool
        return [t for t in firsts if not t.startswith("./")]

    def tool_paths(self) -> dict[str, str | None]:
        """Each required tool -> its absolute path on this machine, or None."""
        return {t: _which(t) for t in self.required_tools()}

    def available(self) -> bool:
        """True when every tool of the language is installed."""
        return all(p is not None for p in self.tool_paths().values())

    def missing_message(self) -> str:
        missing = [t for t, p in self.tool_paths().items() if p is None]
        what = ", ".join(f"`{t}`" for t in missing) or "its toolchain"
        hint = self.install_hint or f"install it and put {what} on PATH"
        return f"language {self.name!r} is not installed ({what} not found): {hint}"

    def version(self) -> str | None:
        """First line of the version probe's output, or None when unavailable."""
        if not self.version_cmd or not self.available():
            return None
        return _probe(tuple(self.expand(self.version_cmd)))

    def fingerprint(self) -> str:
        """Hash of everything that changes what a build of this language produces."""
        d = {"name": self.name, "main": self.main_file, "compile": self.compile,
             "artifacts": self.artifacts, "run": self.run, "inprocess": self.inprocess,
             "env": dict(self.env), "python": python_path() if "{python}" in json.dumps(self.run) else None}
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


#: PATH inside the sandbox (and for resolving tools on the host)
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"


def _which(tool: str) -> str | None:
    if "/" in tool:
        return tool if os.path.isfile(tool) and os.access(tool, os.X_OK) else None
    # system directories first (what the sandbox sees), then the user's PATH for
    # toolchains installed elsewhere (bound into the sandbox by the local backend)
    p = shutil.which(tool, path=SANDBOX_PATH) or shutil.which(tool)
    if p and "/shims/" in p:
        return None
    return p


@functools.cache
def _probe(argv: tuple[str, ...]) -> str | None:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                           env={"PATH": SANDBOX_PATH + ":" + os.environ.get("PATH", ""),
                                "LANG": "C.UTF-8", "HOME": "/tmp"})
    except (OSError, subprocess.SubprocessError):
        return None
    text = (r.stdout or r.stderr).strip()
    return text.splitlines()[0] if text else None


@dataclass(frozen=True)
class LanguageName:
    """A language as codegym names it (runnable or not): what code blocks and files mean."""

    name: str
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    grammar: str | None = None
    runnable: bool = False


@functools.cache
def _entries(path: str) -> dict[str, _LanguageModel]:
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: {e}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a mapping of language name -> entry")
    out: dict[str, _LanguageModel] = {}
    for name, entry in raw.items():
        try:
            m = _LanguageModel.model_validate(entry)
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            raise ValueError(f"{path}: {name}.{loc}: {err['msg']}") from None
        for have, need in (("run", "main"), ("main", "run"), ("compile", "run")):
            if getattr(m, have) and getattr(m, need) is None:
                raise ValueError(f"{path}: {name}.{need}: a language with `{have}` needs `{need}`")
        out[str(name)] = m
    return out


@functools.cache
def _registry(path: str) -> dict[str, LanguageSpec]:
    out: dict[str, LanguageSpec] = {}
    for name, m in _entries(path).items():
        if m.run is None:
            continue
        out[name] = LanguageSpec(
            name=name, main_file=str(m.main), run=tuple(m.run), aliases=tuple(m.aliases),
            extensions=tuple(m.extensions), compile=tuple(m.compile) if m.compile else None,
            artifacts=tuple(m.artifacts), inprocess=m.inprocess,
            version_cmd=tuple(m.version) if m.version else None,
            tools=tuple(m.tools) if m.tools else (), install_hint=m.install,
            as_overhead_mb=m.as_overhead_mb, limit_address_space=m.limit_address_space,
            extra_processes=m.extra_processes, env=dict(m.env))
    return out


@functools.cache
def _index(path: str) -> dict[str, str]:
    idx: dict[str, str] = {}
    for spec in _registry(path).values():
        for n in (spec.name, *spec.aliases):
            idx[n.lower()] = spec.name
    return idx


def list_languages(path: str | os.PathLike | None = None) -> list[LanguageSpec]:
    """Every registered language, in registry order."""
    return list(_registry(str(path or REGISTRY_PATH)).values())


def get_language(name: str, path: str | os.PathLike | None = None) -> LanguageSpec:
    """The language called `name` (or one of its aliases, case-insensitive)."""
    reg = str(path or REGISTRY_PATH)
    key = _index(reg).get(str(name).lower())
    if key is None:
        known = ", ".join(s.name for s in _registry(reg).values())
        raise UnknownLanguageError(f"unknown language {name!r} (known: {known})")
    return _registry(reg)[key]


def language_for_file(filename: str) -> LanguageSpec | None:
    """The runnable language whose extensions match `filename`, if any."""
    for spec in list_languages():
        if any(filename.endswith(ext) for ext in spec.extensions):
            return spec
    return None


# ----- names: every entry, runnable or not


@functools.cache
def language_names() -> tuple[LanguageName, ...]:
    """Every language of the table (runnable ones first), in table order."""
    return tuple(LanguageName(name=n, aliases=tuple(m.aliases), tags=tuple(m.tags),
                              extensions=tuple(m.extensions), grammar=m.grammar,
                              runnable=m.run is not None)
                 for n, m in _entries(str(REGISTRY_PATH)).items())


@functools.cache
def _name_index() -> dict[str, LanguageName]:
    idx: dict[str, LanguageName] = {}
    for lang in language_names():
        for n in (lang.name, *lang.aliases, *lang.tags):
            idx.setdefault(n.lower(), lang)
    return idx


def language_name(name: str) -> LanguageName | None:
    """The language a name, alias or code-block tag means (case-insensitive), or None."""
    return _name_index().get(str(name).lower())


def extensions_of(name: str) -> tuple[str, ...] | None:
    """File extensions of the language a name or tag means; None for an unknown name."""
    lang = language_name(name)
    return lang.extensions if lang else None


@functools.cache
def all_extensions() -> frozenset[str]:
    """Every extension of every language of the table."""
    return frozenset(e for lang in language_names() for e in lang.extensions)


@functools.lru_cache(maxsize=4096)
def language_of_path(path: str, *, with_grammar: bool = False) -> str | None:
    """The first language of the table whose extensions hold `path`'s (exact case first,
    then lower case); with `with_grammar`, only languages with a tree-sitter grammar."""
    ext = os.path.splitext(path)[1]
    if not ext:
        return None
    langs = [x for x in language_names() if x.grammar or not with_grammar]
    for e in dict.fromkeys((ext, ext.lower())):
        for lang in langs:
            if e in lang.extensions:
                return lang.name
    return None


def grammar_of(name: str) -> str | None:
    """The tree-sitter grammar module of a language (name, alias or tag), or None."""
    lang = language_name(name)
    return lang.grammar if lang else None


