"""The eval config: the YAML of ``codegym eval CONFIG.yaml``, its validation and its plan.

The pydantic models (`EvalConfig`, `AgentEntry`, `SuiteEntry`, `TimingConfig`,
`BootstrapConfig`), read with `codegym.core.yamldoc` so errors name file, line and
field like task files (``eval.yaml:12: suites[1].since: expected date (YYYY-MM-DD)``);
`load_config(path)` (validated, paths resolved against the config's folder, suites
loaded and filtered: an empty filter is an error at its line); `EvalConfig.plan()` (the
`EpisodeSpec` list: the same tasks, seeds and samples for every agent, agents
interleaved per task) and `EvalConfig.fingerprint()` (the hash of everything that
changes a result, checked when a run resumes). docs/eval.md has an example config.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from codegym.agents.llm_spec import parse_spec
from codegym.agents.scaffold import parse_scaffold_spec
from codegym.agents.scaffold_run import load_scaffold_config
from codegym.core.jsonl import DataError, read_regular
from codegym.core.keys import DEFAULT_KEY_ENV, KeyGrants
from codegym.core.paths import display_path
from codegym.core.settings import settings_path, user_settings
from codegym.core.yamlcompose import DEFAULT_CAPS
from codegym.core.yamldoc import Doc, DocValidationError, format_path, pydantic_message, suggest
from codegym.envs import ENV_IDS
from codegym.tasks.load import TaskError, TaskValidationError
from codegym.tasks.suite import load_suite
from codegym.wrappers.config import RewardConfigError, parse_reward_config

#: fields that never change a result (excluded from the fingerprint checked on resume)
RESULT_NEUTRAL_FIELDS = ("name", "out", "workers", "progress", "bootstrap", "ks", "keep_observations",
                         "report")
#: keys whose values are never stored nor hashed (see `redact`)
SECRET_KEYS = ("api_key", "headers", "token", "password", "secret")
#: agent spec names and their classes (options: keyword arguments of the class)
AGENT_KINDS = ("oracle", "baseline", "mutant", "replay", "llm", "scaffold")


class ConfigError(TaskValidationError):
    """Every problem of an eval config, one ``<file>:<line>: <field.path>: <problem>`` per line."""


class _Model(BaseModel):
    # extra="forbid": a misspelt key is an error, not a silently ignored setting
    model_config = ConfigDict(extra="forbid")


class AgentEntry(_Model):
    """One agent. ``spec``: a `codegym.agents.make_agent` spec (``oracle:unified_diff``,
    ``mutant:crash,output``, ``replay:FILE``, ``llm:ARG``); ``options``: keyword arguments
    of the agent's class instead (e.g. an LLM endpoint with its sampling parameters);
    ``name``: the label in results (default: the spec)."""

    name: str | None = None
    spec: str
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("spec")
    @classmethod
    def _known(cls, v: str) -> str:
        kind = v.partition(":")[0]
        if kind not in AGENT_KINDS:
            raise ValueError(f"unknown agent {kind!r}{suggest(kind, AGENT_KINDS)}")
        return v

    @model_validator(mode="after")
    def _scaffold(self) -> AgentEntry:
        if self.spec.startswith("scaffold:"):  # the scaffold's config is read (and checked) now
            name, opts = parse_scaffold_spec(self.spec.partition(":")[2])
            load_scaffold_config(name, **{**opts, **self.options})
        return self

    @property
    def label(self) -> str:
        return self.name or self.spec


class SuiteEntry(_Model):
    """One source of tasks: a suite (name or path) or an env id (its default suite), with
    filters (`codegym.tasks.suite.Suite.filter`) and env options shared by every agent."""

    suite: str | None = None
    env: str | None = None
    label: str | None = None
    ids: list[str] | None = None
    tags: list[str] | None = None
    difficulty: list[str] | None = None
    languages: list[str] | None = None
    kinds: list[str] | None = None
    since: date | None = None
    until: date | None = None
    language: str | None = None      # the language every agent writes in (env option)
    env_kwargs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("ids", "tags", "difficulty", "languages", "kinds", mode="before")
    @classmethod
    def _one_or_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


class TimingConfig(_Model):
    """Performance metrics (off by default: they cost many runs per correct episode).

    speedup      interleaved comparison with the task's baseline (speedup distribution)
    efficiency   relative improvement from the baseline toward the reference (PerfCodeBench)
    percentiles  strict top-X% events against the task's runtime distribution (DMC-Optim)
    head_to_head direct interleaved comparison of two agents' correct programs (ties on
                 correctness are broken by the timing module's significance result)
    """

    enabled: bool = True
    metric: Literal["cpu", "wall", "instructions"] | None = None
    repeats: int = Field(8, ge=2)   # as TimedReward: fewer pairs cannot exclude 1 at this alpha
    max_pairs: int = Field(16, ge=2)
    warmups: int = Field(1, ge=0)
    budget_s: float = Field(60.0, gt=0)
    alpha: float = Field(0.05, gt=0, lt=1)
    max_noise: float = Field(0.10, gt=0)
    retries: int = Field(1, ge=0)
    speedup: bool = True
    efficiency: bool = True
    percentiles: list[float] = Field(default_factory=lambda: [30.0, 50.0, 70.0])
    head_to_head: bool = True

    @field_validator("percentiles")
    @classmethod
    def _pct(cls, v: list[float]) -> list[float]:
        if any(not 0 < p <= 100 for p in v):
            raise ValueError("percentiles must be in (0, 100]")
        return v


class BootstrapConfig(_Model):
    samples: int = Field(1000, ge=100)
    seed: int = 0
    level: float = Field(0.95, gt=0, lt=1)


class EvalConfig(_Model):
    """A whole eval (see the module docstring for an example)."""

    name: str = "eval"
    agents: list[AgentEntry] = Field(min_length=1)
    suites: list[SuiteEntry] = Field(min_length=1)
    samples: int = Field(1, ge=1)
    seed: int = 0
    seeds: list[int] | None = None
    ks: list[int] | None = None
    max_turns: int = Field(3, ge=1)
    episode_time_s: float | None = Field(None, gt=0)
    feedback: Literal["public", "none", "full"] = "public"
    formats: list[str] | None = None
    auto_submit: bool = True
    early_exit: bool = False
    reward_mode: Literal["pass_fraction", "binary", "suite"] = "pass_fraction"  # suite: each suite's default
    reward: list[Any] | None = None
    sandbox: str | None = None
    timing: TimingConfig | None = None
    workers: int = Field(1, ge=1)
    keep_observations: bool = False
    bootstrap: BootstrapConfig = Field(default_factory=BootstrapConfig)
    out: str | None = None
    progress: bool = True
    report: bool = True

    # set by load_config (not YAML fields)
    source: str | None = Field(None, exclude=True)
    base_dir: str | None = Field(None, exclude=True)
    _tasks_cache: dict = PrivateAttr(default_factory=dict)
    _keys: KeyGrants = PrivateAttr(default_factory=KeyGrants)  # the user's key grants (load_config)
    _notices: list = PrivateAttr(default_factory=list)  # keys withheld from an endpoint, one line each
    _out_line: int = PrivateAttr(default=1)

    @field_validator("agents", mode="before")
    @classmethod
    def _agent_shorthand(cls, v: Any) -> Any:
        return [{"spec": a} if isinstance(a, str) else a for a in v] if isinstance(v, list) else v

    @field_validator("suites", mode="before")
    @classmethod
    def _suite_shorthand(cls, v: Any) -> Any:
        if isinstance(v, (str, dict)):
            v = [v]
        return [{"suite": s} if isinstance(s, str) else s for s in v] if isinstance(v, list) else v

    @field_validator("timing", mode="before")
    @classmethod
    def _timing_shorthand(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return {"enabled": True} if v else None
        return v

    # ------------------------------------------------------------------ derived

    @property
    def seed_list(self) -> list[int]:
        """One seed per sample: `seeds` when given, else seed, seed+1, ..."""
        return list(self.seeds) if self.seeds else [self.seed + i for i in range(self.samples)]

    @property
    def n(self) -> int:
        return len(self.seed_list)

    @property
    def k_list(self) -> list[int]:
        """pass@k values reported: `ks`, else 1 and the powers of two up to n, and n."""
        if self.ks:
            return sorted(set(self.ks))
        ks, k = {1, self.n}, 2
        while k < self.n:
            ks.add(k)
            k *= 2
        return sorted(ks)

    @property
    def timing_on(self) -> bool:
        return self.timing is not None and self.timing.enabled

    def suite_label(self, i: int) -> str:
        e = self.suites[i]
        if e.label:
            return e.label
        base = e.suite or e.env or f"suite{i}"
        same = [j for j, o in enumerate(self.suites) if (o.suite or o.env) == (e.suite or e.env) and not o.label]
        return base if len(same) == 1 else f"{base}#{same.index(i) + 1}"

    def resolve(self, rel: str) -> str:
        """A path named in the config, relative to the config's folder (kept if absolute)."""
        p = Path(rel).expanduser()
        if not p.is_absolute() and self.base_dir:
            cand = Path(self.base_dir) / p
            if cand.exists():
                return str(cand)
        return str(p)

    @property
    def keys(self) -> KeyGrants:
        """The user's key grants the agents' endpoints are checked against (`codegym.core.keys`)."""
        return self._keys

    @property
    def notices(self) -> list[str]:
        """One line per agent whose key is not sent to the endpoint the config names."""
        return list(self._notices)

    def agent_key_env(self, entry: AgentEntry) -> str | None:
        """The key variable `entry`'s agent may read (None: it runs without a key)."""
        var, url = endpoint_of(entry)
        return self._keys.key_env(var, url)

    def out_dir(self) -> Path:
        """`out:` resolved in the config's folder; raises ConfigError when it leaves it (a config
        from someone else decides where it writes only under its own folder; ``--out`` may go anywhere)."""
        if not self.out:
            raise ConfigError([TaskError(self.source or "<config>", 1, "out", "no output directory: set `out:` "
                                         "in the config or pass --out")])
        base = Path(self.base_dir or ".").resolve()
        out = (base / Path(self.out).expanduser()).resolve()
        if out != base and base not in out.parents:
            raise ConfigError([TaskError(self.source or "<config>", self._out_line, "out",
                                         f"{self.out} is outside the config's folder {base}: pass --out to "
                                         "write there")])
        return out

    def result_dict(self) -> dict[str, Any]:
        """The config as JSON, minus the fields that do not change results."""
        d = self.model_dump(mode="json")
        for k in RESULT_NEUTRAL_FIELDS:
            d.pop(k, None)
        return redact(d)

    def fingerprint(self, task_hashes: dict[str, str], version: str) -> str:
        blob = json.dumps({"config": self.result_dict(), "tasks": task_hashes, "codegym": version},
                          sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    # ------------------------------------------------------------------ tasks and plan

    def env_id(self, i: int) -> str:
        return self.suites[i].env or "codegym/Suite-v0"

    def tasks(self, i: int) -> list[Any]:
        """The tasks of suite entry `i`, filtered (cached)."""
        cache = self._tasks_cache
        if i not in cache:
            cache[i] = _load_entry_tasks(self, i)
        return cache[i]

    def task_hashes(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for i in range(len(self.suites)):
            for t in self.tasks(i):
                out[f"{self.suite_label(i)}:{t.id}"] = t.content_hash
        return out

    def plan(self) -> list[EpisodeSpec]:
        """Every episode of the eval, in run order: per suite entry, per task, per sample,
        every agent (so an interrupted run holds paired results)."""
        specs = []
        for i in range(len(self.suites)):
            label = self.suite_label(i)
            for task in self.tasks(i):
                for s, seed in enumerate(self.seed_list):
                    for a in self.agents:
                        specs.append(EpisodeSpec(agent=a.label, suite=label, suite_index=i,
                                                 env_id=self.env_id(i), task_id=task.id,
                                                 task_hash=task.content_hash, sample=s, seed=seed))
        return specs


@dataclass(frozen=True)
class EpisodeSpec:
    """One planned episode; `key` identifies its result (the resume key)."""

    agent: str
    suite: str
    suite_index: int
    env_id: str
    task_id: str
    task_hash: str
    sample: int
    seed: int

    @property
    def key(self) -> str:
        return f"{self.agent}|{self.suite}|{self.task_id}|{self.sample}"


def endpoint_of(entry: AgentEntry) -> tuple[str | None, str | None]:
    """(key variable, base URL) an LLM or scaffold agent entry names (None: the defaults;
    other agents: (None, None)). A scaffold's own config file counts as the entry's."""
    kind, _, arg = entry.spec.partition(":")
    if kind == "llm":
        kw = dict(entry.options) if entry.options else parse_spec(arg) if arg else {}
        return kw.get("api_key_env", DEFAULT_KEY_ENV), kw.get("base_url")
    if kind == "scaffold":
        name, opts = parse_scaffold_spec(arg)
        sc = load_scaffold_config(name, **{**opts, **entry.options})
        return sc.api_key_env, sc.base_url
    return None, None


def redact(obj: Any) -> Any:
    """`obj` with the values of secret-looking keys (api_key, headers, token ...) replaced:
    what is written to disk or hashed never holds a credential."""
    if isinstance(obj, dict):
        return {k: ("<redacted>" if v and any(s in str(k).lower() for s in SECRET_KEYS) else redact(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    return obj


_SECRET_LINE = re.compile(r"(?P<key>\b[\w-]*(?:" + "|".join(SECRET_KEYS) + r")[\w-]*\b\s*:\s*)(?P<value>[^,}\n#]+)",
                          re.IGNORECASE)


def redact_text(text: str) -> str:
    """YAML text with the values of secret-looking keys replaced (block and flow style)."""
    return _SECRET_LINE.sub(lambda m: m["key"] + "<redacted>", text)


def read_config_text(path: str | os.PathLike) -> str:
    """The redacted text of the config file `path`, to record beside results: a regular
    file only (a FIFO is refused, not waited on), at most the YAML loader's file cap."""
    try:
        data = read_regular(path, DEFAULT_CAPS.file_bytes)
    except DataError as e:
        raise ConfigError([TaskError(display_path(path), 1, "", str(e))]) from None
    return redact_text(data.decode("utf-8", errors="replace"))


def _load_entry_tasks(cfg: EvalConfig, i: int) -> list[Any]:
    e = cfg.suites[i]
    if e.suite is not None:
        suite = load_suite(cfg.resolve(e.suite))
    else:
        suite = load_suite(ENV_IDS[e.env]["suite"])
    suite = suite.filter(ids=e.ids, tags=e.tags, difficulty=e.difficulty, languages=e.languages,
                         since=e.since, until=e.until, kinds=e.kinds)
    return list(suite)


# --------------------------------------------------------------------------- loading


def parse_config(data: Any, source: str = "<config>", line_of=None, base_dir: str | None = None,
                 resolve_tasks: bool = True, keys: KeyGrants | None = None) -> EvalConfig:
    """Validate a config mapping; raises `ConfigError` with every problem found. `keys`: the
    user's key grants (default: their settings' `keys:`, `codegym.core.keys`)."""
    line_of = line_of or (lambda loc: 1)
    errors: list[TaskError] = []

    def err(loc: tuple, msg: str) -> None:
        errors.append(TaskError(source, line_of(loc), format_path(loc), msg))

    if not isinstance(data, dict):
        err((), "an eval config must be a mapping (agents:, suites:, ...)")
        raise ConfigError(errors)
    try:
        cfg = EvalConfig.model_validate({**data, "source": source, "base_dir": base_dir})
    except ValidationError as exc:
        for e in exc.errors(include_url=False):
            loc = tuple(x for x in e["loc"] if x not in ("function-after",))
            err(loc, pydantic_message(e, EvalConfig))
        raise ConfigError(errors) from None

    # relations pydantic cannot see
    cfg._keys = keys if keys is not None else _settings_keys(source)
    cfg._out_line = line_of(("out",))
    _check_agents(cfg, err)
    _check_samples(cfg, data, err)
    if cfg.reward:
        try:
            parse_reward_config(cfg.reward, source, line_of, ("reward",))
        except RewardConfigError as e:
            errors.extend(e.errors)
    _check_suites(cfg, err, resolve_tasks)
    if errors:
        raise ConfigError(errors)
    return cfg


def _check_agents(cfg: EvalConfig, err: Callable[[tuple, str], None]) -> None:
    labels = [a.label for a in cfg.agents]
    for j, lab in enumerate(labels):
        if lab in labels[:j]:
            err(("agents", j, "name"), f"duplicate agent name {lab!r}: give each agent a distinct name")
        if "|" in lab:
            err(("agents", j, "name"), "agent names may not contain '|'")
    for j, a in enumerate(cfg.agents):
        kind, _, arg = a.spec.partition(":")
        if kind == "replay":
            path = a.options.get("path") or arg
            if not path:
                err(("agents", j, "spec"), "replay needs a file: replay:FILE.jsonl")
            elif not Path(cfg.resolve(path)).is_file():
                err(("agents", j, "spec"), f"replay file not found: {path}")
        if kind == "llm" and arg and a.options:
            err(("agents", j, "options"), "give the LLM either as llm:ARG or as options, not both")
        _check_key(cfg, j, a, err)


def _check_key(cfg: EvalConfig, j: int, entry: AgentEntry, err: Callable[[tuple, str], None]) -> None:
    """The key variable an agent names is one the user allowed; a key the config's endpoint
    will not get is a notice (the agent runs without it)."""
    try:
        var, url = endpoint_of(entry)
    except ValueError:
        return  # a bad spec: reported by its own check
    if var is None:
        return
    problem = cfg.keys.problem(var)
    if problem is not None:
        where = "options" if "api_key_env" in entry.options else "spec"
        err(("agents", j, where, "api_key_env") if where == "options" else ("agents", j, "spec"),
            f"api_key_env: {problem}")
    elif cfg.keys.key_env(var, url) is None and os.environ.get(var):
        cfg._notices.append(f"{cfg.source}: agents[{j}] ({entry.label}): {var} is not sent to {url}, not a "
                            f"base URL you configured for it (--key {var}={url} sends it); the agent runs "
                            "without a key")


def _settings_keys(source: str) -> KeyGrants:
    """The grants of the user's settings file (a bad file is a config error naming it)."""
    try:
        return KeyGrants.from_user(settings=user_settings())
    except DocValidationError as e:
        raise ConfigError(list(e.errors)) from None
    except ValueError as e:
        raise ConfigError([TaskError(str(settings_path()), 1, "keys", str(e))]) from None


def _check_samples(cfg: EvalConfig, data: dict, err: Callable[[tuple, str], None]) -> None:
    if cfg.seeds is not None:
        if not cfg.seeds:
            err(("seeds",), "needs at least 1 seed")
        elif "samples" in data and data["samples"] != len(cfg.seeds):
            err(("samples",), f"samples ({data['samples']}) differs from the number of seeds "
                              f"({len(cfg.seeds)}); give one of them")
    for k in cfg.ks or ():
        if not 1 <= k <= cfg.n:
            err(("ks",), f"pass@{k} needs 1 <= k <= n = {cfg.n} samples per task")


def _check_suites(cfg: EvalConfig, err: Callable[[tuple, str], None], resolve_tasks: bool) -> None:
    for i, e in enumerate(cfg.suites):
        if (e.suite is None) == (e.env is None):
            err(("suites", i), "give exactly one of `suite` (a name or path) or `env` (an env id)")
            continue
        if e.env is not None and e.env not in ENV_IDS:
            err(("suites", i, "env"), f"unknown env id {e.env!r}{suggest(e.env, list(ENV_IDS))}")
            continue
        if e.env == "codegym/Suite-v0":
            err(("suites", i, "env"), "codegym/Suite-v0 has no default suite: use `suite:`")
            continue
        if e.since and e.until and e.since > e.until:
            err(("suites", i, "until"), f"until ({e.until}) is before since ({e.since})")
            continue
        if resolve_tasks:
            _check_entry_tasks(cfg, i, err)
    labels_s = [cfg.suite_label(i) for i in range(len(cfg.suites))]
    for i, lab in enumerate(labels_s):
        if lab in labels_s[:i]:
            err(("suites", i, "label"), f"duplicate suite label {lab!r}")


def _check_entry_tasks(cfg: EvalConfig, i: int, err: Callable[[tuple, str], None]) -> None:
    """Suite entry `i` loads, and its filters match tasks (every id pattern one at least)."""
    e = cfg.suites[i]
    try:
        tasks = cfg.tasks(i)
    except FileNotFoundError as ex:
        err(("suites", i, "suite" if e.suite else "env"), str(ex))
        return
    except TaskValidationError as ex:
        err(("suites", i), f"the suite has invalid tasks:\n{ex}")
        return
    if not tasks:
        err(("suites", i), "no task matches this entry's filters")
    elif e.ids:
        found = {t.id for t in tasks}
        for pat in e.ids:
            if not any(t == pat or re.fullmatch(fnmatch.translate(pat), t) for t in found):
                err(("suites", i, "ids"), f"no task matches {pat!r}")


def load_config(path: str | Path, resolve_tasks: bool = True, keys: KeyGrants | None = None) -> EvalConfig:
    """Read and validate an eval config file (see the module docstring); `keys`: `parse_config`'s."""
    p = Path(path)
    doc = Doc(p.resolve(), display_path(p))
    if not doc.load():
        raise ConfigError(doc.errors)
    if doc.errors:  # duplicate keys
        raise ConfigError(doc.errors)
    return parse_config(doc.data, doc.display, doc.line_of, str(p.resolve().parent), resolve_tasks, keys)
