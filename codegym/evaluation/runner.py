"""Running an eval: the episodes of a config, stored resumably, then the timing phase.

This module owns ``codegym eval``'s execution:

- `run_eval(config, out_dir)`: plays every planned episode (`EvalConfig.plan`) that the
  output directory does not hold yet, with a live rich progress display, appending each
  result to ``results.jsonl`` as one atomic line write (``O_APPEND``, one ``write``,
  ``fsync``); an interrupted run (Ctrl-C, a kill, a crash) continues where it stopped
  when started again: stored episodes are never recomputed, and a torn last line (a
  kill in the middle of a write) is cut off before appending. Then, with timing on,
  the head-to-head speed comparisons (stored the same way), then the report.
- `ResultStore`: that JSONL file (load, repair, atomic append).
- the run's manifest (``manifest.json``): the config (secrets redacted), its file
  text, the codegym version, every task's content hash, the fingerprint of all that
  (a resumed run must match it), and per session the machine, the sandbox and its
  calibration factor (`codegym.timing.measurement.calibration_factor`).
- `make_eval_agent(entry, config)`: an agent from a config entry.

Fairness: every agent plays the same tasks with the same seeds (sample i of every task
uses seed ``seeds[i]`` for every agent), the same env settings (turn budget, feedback
mode, edit formats, reward wrappers, sandbox) and the same time budget; each episode
starts from a freshly reset agent, so results do not depend on the order in which
episodes ran (which is what makes resuming exact).

Episode records (``kind: "episode"``) hold the agent, suite label, task id and hash,
sample and seed, language, family (the task id's suite), difficulty, verdict, reward,
turns, per-step actions/diffs/edit formats/errors, the final diff and files, usage
(LLM tokens), and with timing a ``perf`` block: correct on the perf split, speedup over
the baseline with its CI and significance (`codegym.wrappers.TimedReward` in speedup
mode), relative efficiency from baseline toward reference (`StagedReward.times`,
`codegym.wrappers.staged.improvement`) and the strict top-X% events (`TimedReward` in
percentile mode over the task's recorded runtime distribution, `codegym.tasks.runtimes`).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import threading
import time
import traceback
from collections import defaultdict
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from codegym.judge.calibrate import machine_facts
from codegym.evaluation.config import AgentEntry, EpisodeSpec, EvalConfig, load_config, redact, redact_text

__all__ = ["run_eval", "RunSummary", "ResultStore", "EvalError", "make_eval_agent", "read_manifest",
           "RESULTS_FILE", "MANIFEST_FILE", "ERRORS_FILE", "SCHEMA"]

RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "manifest.json"
ERRORS_FILE = "errors.jsonl"
CONFIG_COPY = "config.yaml"
SCHEMA = "codegym.eval/1"


class EvalError(RuntimeError):
    """The eval cannot run (e.g. the output directory holds a different eval)."""


# --------------------------------------------------------------------------- result store


class ResultStore:
    """A JSONL file of results, appended one atomic line at a time (thread-safe)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._lock = threading.Lock()

    def load(self, repair: bool = True) -> list[dict[str, Any]]:
        """Every complete record. A last line without its newline (a write cut by a kill)
        is dropped, and with `repair` cut from the file so appends start on a clean line."""
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data) and repair:
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
        out = []
        for lineno, line in enumerate(data[:end].splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise EvalError(f"{self.path}:{lineno}: not a JSON record ({e}); the file was edited "
                                f"by hand? remove that line to continue") from None
        return out

    def append(self, record: Mapping[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                # one write of the whole line: a concurrent reader or a kill never sees half of
                # it followed by more data (a torn tail is repaired by `load`)
                n = os.write(fd, line)
                while n < len(line):  # only on exotic file systems
                    n += os.write(fd, line[n:])
                os.fsync(fd)
            finally:
                os.close(fd)


def _write_json_atomic(path: Path, obj: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# --------------------------------------------------------------------------- agents


def make_eval_agent(entry: AgentEntry, cfg: EvalConfig):
    """The agent of a config entry (a `make_agent` spec, or the class with `options`)."""
    from codegym.agents import make_agent
    kind, _, arg = entry.spec.partition(":")
    opts = dict(entry.options)
    if kind == "replay":
        from codegym.agents import ReplayAgent
        return ReplayAgent(cfg.resolve(opts.pop("path", None) or arg))
    if not opts:
        return make_agent(entry.spec, seed=cfg.seed)
    if kind == "oracle":
        from codegym.agents import OracleAgent
        return OracleAgent(**({"format": arg} if arg else {}), **opts)
    if kind == "baseline":
        from codegym.agents import BaselineAgent
        return BaselineAgent(**opts)
    if kind == "mutant":
        from codegym.agents import MutantAgent
        opts.setdefault("seed", cfg.seed)
        if arg:
            opts["kinds"] = arg.split(",")
        return MutantAgent(**opts)
    from codegym.agents.llm import LLMAgent  # kind == "llm" (checked by the config)
    return LLMAgent(**opts)


class _Budgeted:
    """Wraps an agent for one episode: enforces the episode's wall-clock budget (when it
    is spent, the next action is ``submit``), times the agent, and keeps each turn's
    usage / finish reason (`last_turn` of LLM agents)."""

    def __init__(self, agent: Any, time_s: float | None):
        self.agent = agent
        self.time_s = time_s
        self.name = getattr(agent, "name", type(agent).__name__)
        self.turns: list[dict[str, Any] | None] = []
        self.exceeded = False
        self.agent_s = 0.0
        self._t0 = time.monotonic()

    @property
    def last_mutation(self):
        return getattr(self.agent, "last_mutation", None)

    def reset(self, task: Any = None, seed: int | None = None) -> None:
        self.agent.reset(task=task, seed=seed)
        self._t0 = time.monotonic()

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self.time_s is not None and time.monotonic() - self._t0 >= self.time_s:
            self.exceeded = True
            self.turns.append(None)
            return "submit"
        t = time.monotonic()
        action = self.agent.act(observation, info)
        self.agent_s += time.monotonic() - t
        lt = getattr(self.agent, "last_turn", None)
        self.turns.append({"usage": lt.get("usage"), "finish_reason": lt.get("finish_reason")}
                          if isinstance(lt, Mapping) else None)
        return action


# --------------------------------------------------------------------------- episodes


class _Worker:
    """Per-thread state: one env per suite entry and one agent per agent entry."""

    def __init__(self, cfg: EvalConfig):
        self.cfg = cfg
        self.envs: dict[int, Any] = {}
        self.agents: dict[str, Any] = {}
        self.entries = {a.label: a for a in cfg.agents}
        self.task_by_id: dict[int, dict[str, Any]] = {}

    def task(self, i: int, task_id: str):
        if i not in self.task_by_id:
            self.task_by_id[i] = {t.id: t for t in self.cfg.tasks(i)}
        return self.task_by_id[i][task_id]

    def env(self, i: int):
        if i not in self.envs:
            import gymnasium as gym

            import codegym  # noqa: F401  (registers the ids)
            cfg, e = self.cfg, self.cfg.suites[i]
            kw: dict[str, Any] = dict(tasks=cfg.tasks(i), max_turns=cfg.max_turns, feedback=cfg.feedback,
                                      auto_submit=cfg.auto_submit, reward=cfg.reward_mode,
                                      early_exit=cfg.early_exit)
            if cfg.formats:
                kw["formats"] = cfg.formats
            if cfg.sandbox:
                kw["sandbox"] = cfg.sandbox
            if e.language:
                kw["language"] = e.language
            kw.update(e.env_kwargs)
            env = gym.make(cfg.env_id(i), **kw)
            if cfg.reward:
                from codegym.wrappers.config import apply_reward_wrappers
                env = apply_reward_wrappers(env, cfg.reward, cfg.source or "<config>")
            self.envs[i] = env
        return self.envs[i]

    def agent(self, spec: EpisodeSpec, task: Any):
        entry = self.entries[spec.agent]
        if entry.spec.startswith("replay"):
            # a replay agent hands out a task's recorded episodes in order: sample s plays the
            # s-th one, whatever ran before (fresh agent, the first s episodes skipped)
            agent = make_eval_agent(entry, self.cfg)
            for _ in range(spec.sample):
                agent.reset(task=task, seed=None)
            return agent
        if spec.agent not in self.agents:
            self.agents[spec.agent] = make_eval_agent(entry, self.cfg)
        return self.agents[spec.agent]

    def close(self) -> None:
        for env in self.envs.values():
            try:
                env.close()
            except Exception:  # noqa: BLE001 -- closing is best effort
                pass


def _error_kind(error: str | None) -> str | None:
    if not error:
        return None
    return "apply" if error.startswith("the edit was not applied") else "parse"


def _sum_usage(turns: Iterable[dict[str, Any] | None]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for t in turns:
        for k, v in ((t or {}).get("usage") or {}).items():
            if isinstance(v, (int, float)):
                out[k] += int(v)
    return dict(out)


def play_episode(cfg: EvalConfig, spec: EpisodeSpec, worker: _Worker) -> dict[str, Any]:
    """Play one planned episode; returns its record (see the module docstring)."""
    from codegym.rollout.runner import run_episode

    env = worker.env(spec.suite_index)
    base = env.unwrapped
    task = worker.task(spec.suite_index, spec.task_id)
    agent = _Budgeted(worker.agent(spec, task), cfg.episode_time_s)
    t0 = time.perf_counter()
    rec = run_episode(env, agent, seed=spec.seed, options={"task_id": spec.task_id},
                      keep_observations=cfg.keep_observations)
    submitted = any(st.get("submitted") for st in rec["steps"])
    verdict = rec["verdict"] if submitted else "no_submission"
    steps = []
    for st, turn in zip(rec["steps"], agent.turns + [None] * len(rec["steps"])):
        s = {"action": st["action"], "reward": st["reward"], "diff": st.get("diff") or "",
             "formats": list((st.get("edits") or {}).get("formats") or []), "error": st.get("error"),
             "error_kind": _error_kind(st.get("error")), "submitted": bool(st.get("submitted")),
             "reward_components": st.get("reward_components")}
        if turn:
            s.update(turn)
        if cfg.keep_observations:
            s["observation"] = st.get("observation")
        steps.append(s)
    out: dict[str, Any] = {
        "kind": "episode", "key": spec.key, "agent": spec.agent,
        "agent_spec": worker.entries[spec.agent].spec, "suite": spec.suite, "env_id": spec.env_id,
        "task_id": spec.task_id, "task_hash": rec.get("task_hash") or spec.task_hash,
        "family": spec.task_id.split("/", 1)[0], "difficulty": task.metadata.difficulty,
        "task_kind": task.kind, "sample": spec.sample, "seed": spec.seed, "language": rec.get("language"),
        "verdict": verdict, "correct": verdict == "accepted", "passed": rec.get("passed"),
        "total": rec.get("total"), "return": rec["return"], "final_reward": rec["final_reward"],
        "turns": rec["turns"], "max_turns": cfg.max_turns, "submitted": submitted,
        "truncated": rec["truncated"], "budget_exceeded": agent.exceeded,
        "final_diff": rec.get("cumulative_diff") or "",
        "final_files": dict(base.workspace.files) if base.workspace is not None else {},
        "mutation": rec.get("mutation"), "usage": _sum_usage(agent.turns), "steps": steps,
        "perf": None,
    }
    if cfg.keep_observations:
        out["final_observation"] = rec.get("final_observation")
    if cfg.timing_on and out["correct"] and task.kind in ("stdio", "function"):
        out["perf"] = score_perf(env, task, cfg, spec.seed)
    out["agent_s"] = agent.agent_s
    out["episode_s"] = time.perf_counter() - t0
    out["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return out


def _timed_kwargs(cfg: EvalConfig, seed: int) -> dict[str, Any]:
    t = cfg.timing
    assert t is not None
    return dict(metric=t.metric, repeats=t.repeats, max_pairs=t.max_pairs, warmups=t.warmups,
                budget_s=t.budget_s, alpha=t.alpha, max_noise=t.max_noise, retries=t.retries, seed=seed)


def score_perf(env, task, cfg: EvalConfig, seed: int) -> dict[str, Any]:
    """The perf block of a correct episode (the env still holds its final workspace)."""
    from codegym.wrappers.staged import StagedReward, improvement
    from codegym.wrappers.timed import TimedReward, Unscorable

    t = cfg.timing
    assert t is not None
    base = env.unwrapped
    report = base.last_report or {}
    info = {"judge": report, "language": base.language, "submitted": True}
    out: dict[str, Any] = {"correct_runnable": True, "speedup": None, "speedup_ci": None,
                           "speedup_significant": None, "efficiency": None, "top": {}, "notes": []}
    kw = _timed_kwargs(cfg, seed)
    if t.speedup:
        _, ti = TimedReward(base, mode="speedup", against="baseline", **kw).score(info)
        out["metric"] = ti.get("metric")
        if not ti.get("correct"):
            # wrong on the perf split (or the judge failed): not correct and runnable
            out["correct_runnable"] = False
            out["notes"].append(ti.get("reason") or "not correct on the perf split")
            return out
        if ti.get("scorable"):
            cmp = (ti.get("comparisons") or [{}])[-1]
            out.update(speedup=ti.get("speedup", cmp.get("speedup")), speedup_ci=cmp.get("ci"),
                       speedup_significant=bool(cmp.get("significant")), against=ti.get("against"))
        else:
            out["notes"].append(f"speedup: {ti.get('reason')}")
    if t.efficiency:
        staged = StagedReward(base, metric=t.metric, repeats=t.repeats, warmups=t.warmups, budget_s=t.budget_s)
        try:
            times = staged.times(task, report, base.workspace.files, base.language)
            imp, _ = improvement(times)
            out["efficiency"] = imp
            out["times"] = times.to_dict()
        except Unscorable as e:
            out["notes"].append(f"efficiency: {e}")
    if t.percentiles:
        _, ti = TimedReward(base, mode="percentile", percentiles=tuple(t.percentiles),
                            distribution="auto", **kw).score(info)
        keys = [f"{float(p):g}" for p in t.percentiles]
        if not ti.get("correct"):
            out["correct_runnable"] = False
        if ti.get("scorable"):
            out["top"] = {f"{float(e['percentile']):g}": bool(e["beats"]) for e in ti.get("percentiles") or ()}
        elif ti.get("comparisons"):
            out["top"] = {k: False for k in keys}  # measured, but too noisy to call it faster
            out["notes"].append(f"top-X%: {ti.get('reason')}")
        else:
            out["top"] = {k: None for k in keys}  # no runtime distribution for this task
            out["notes"].append(f"top-X%: {ti.get('reason')}")
    return out


# --------------------------------------------------------------------------- head-to-head speed


def _speed_jobs(cfg: EvalConfig, episodes: list[dict[str, Any]]) -> list[tuple[str, str, str, dict, dict]]:
    """(task key, a, b, episode of a, episode of b) for the pairs whose correctness ties
    above 0 on a task: the only ones speed can decide."""
    from codegym.evaluation.metrics import correct_runnable, task_key
    by: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for ep in episodes:
        by[(task_key(ep), ep["agent"])].append(ep)
    labels = [a.label for a in cfg.agents]
    jobs = []
    for tk in dict.fromkeys(task_key(ep) for ep in episodes):
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                ea, eb = by.get((tk, a)), by.get((tk, b))
                if not ea or not eb:
                    continue
                ra = sum(e["correct"] for e in ea) / len(ea)
                rb = sum(e["correct"] for e in eb) / len(eb)
                if ra != rb or ra == 0:
                    continue
                pa = sorted((e for e in ea if correct_runnable(e)), key=lambda e: e["sample"])
                pb = sorted((e for e in eb if correct_runnable(e)), key=lambda e: e["sample"])
                if pa and pb and pa[0].get("task_kind") in ("stdio", "function"):
                    jobs.append((tk, a, b, pa[0], pb[0]))
    return jobs


def compare_programs(cfg: EvalConfig, task, ep_a: dict, ep_b: dict, a: str, b: str, seed: int) -> dict[str, Any]:
    """Interleaved comparison of two episodes' final programs: speedup = t(a)/t(b)."""
    from codegym.sandbox import make_sandbox
    from codegym.wrappers.timed import (TimedRunFailed, TimingSettings, Unscorable, calibrated_compare,
                                        perf_workload)

    t = cfg.timing
    assert t is not None
    sb = make_sandbox(cfg.sandbox) if cfg.sandbox else make_sandbox()
    settings = TimingSettings(metric=t.metric, repeats=t.repeats, max_pairs=t.max_pairs, warmups=t.warmups,
                              budget_s=t.budget_s, alpha=t.alpha)
    out: dict[str, Any] = {"speedup": None, "ci": None, "significant": False, "identical": False, "reason": ""}
    try:
        wa = perf_workload(task, ep_a["final_files"], ep_a["language"], sb)
        wb = perf_workload(task, ep_b["final_files"], ep_b["language"], sb)
        rec = calibrated_compare(sb, wa, wb, against=a, metric=settings.metric_for(task), settings=settings,
                                 max_noise=t.max_noise, retries=t.retries, seed=seed)
        out.update(speedup=rec.speedup, ci=list(rec.ci) if rec.ci else None, significant=rec.significant,
                   identical=rec.identical, n_pairs=rec.n_pairs)
    except TimedRunFailed as e:  # b's run failed (a's failure is reported as Unscorable)
        out["reason"] = f"{b}: {e}"
        out["failed"] = {"agent": b, "status": e.status}
    except Unscorable as e:
        out["reason"] = str(e)
    return out


# --------------------------------------------------------------------------- manifest


def _session(cfg: EvalConfig, calibrate: bool) -> dict[str, Any]:
    s: dict[str, Any] = {"started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                         "machine": machine_facts(), "sandbox": cfg.sandbox or os.environ.get("CODEGYM_SANDBOX") or "local"}
    try:
        from codegym.sandbox import make_sandbox
        sb = make_sandbox(cfg.sandbox) if cfg.sandbox else make_sandbox()
        s["isolation"] = getattr(sb, "isolation", None)
        if calibrate:
            from codegym.timing import measurement as timing
            metric = (cfg.timing.metric if cfg.timing else None) or "cpu"
            s["calibration_factor"] = timing.calibration_factor(sb, "cpu" if metric == "instructions" else metric)
            s["calibration_metric"] = metric
    except Exception as e:  # noqa: BLE001 -- recorded, not fatal: the episodes report sandbox errors
        s["calibration_error"] = f"{type(e).__name__}: {e}"
    return s


def read_manifest(out_dir: str | os.PathLike) -> dict[str, Any]:
    p = Path(out_dir) / MANIFEST_FILE
    if not p.is_file():
        raise EvalError(f"{out_dir} holds no eval ({MANIFEST_FILE} missing)")
    return json.loads(p.read_text(encoding="utf-8"))


def _diff_manifest(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    lines = []
    if old.get("codegym_version") != new.get("codegym_version"):
        lines.append(f"codegym version {old.get('codegym_version')} -> {new.get('codegym_version')}")
    ot, nt = old.get("task_hashes") or {}, new.get("task_hashes") or {}
    changed = sorted(k for k in set(ot) | set(nt) if ot.get(k) != nt.get(k))
    if changed:
        lines.append(f"tasks added, removed or changed: {', '.join(changed[:8])}"
                     + (" ..." if len(changed) > 8 else ""))
    oc, nc = old.get("result_config") or {}, new.get("result_config") or {}
    keys = sorted(k for k in set(oc) | set(nc) if oc.get(k) != nc.get(k))
    if keys:
        lines.append(f"config fields changed: {', '.join(keys)}")
    return "; ".join(lines) or "fingerprints differ"


def prepare_out_dir(cfg: EvalConfig, out_dir: Path, config_text: str | None) -> dict[str, Any]:
    """Create or check the output directory; returns the manifest (a new session added)."""
    from codegym import __version__
    out_dir.mkdir(parents=True, exist_ok=True)
    hashes = cfg.task_hashes()
    new = {"schema": SCHEMA, "name": cfg.name, "codegym_version": __version__,
           "fingerprint": cfg.fingerprint(hashes, __version__),
           "config_source": cfg.source, "config": redact(cfg.model_dump(mode="json")),
           "result_config": redact(cfg.result_dict()), "config_text": config_text,
           "agents": [a.label for a in cfg.agents], "seeds": cfg.seed_list, "ks": cfg.k_list,
           "task_hashes": hashes, "planned_episodes": len(cfg.plan()), "sessions": []}
    mp = out_dir / MANIFEST_FILE
    if mp.is_file():
        old = json.loads(mp.read_text(encoding="utf-8"))
        if old.get("fingerprint") != new["fingerprint"]:
            raise EvalError(f"{out_dir} holds results of a different eval ({_diff_manifest(old, new)}); "
                            f"use another output directory, or remove this one to start over")
        new["sessions"] = list(old.get("sessions") or [])
        new["config"] = old.get("config", new["config"])  # display-only fields of the first run
    elif (out_dir / RESULTS_FILE).exists():
        raise EvalError(f"{out_dir} holds {RESULTS_FILE} but no {MANIFEST_FILE}: not an eval directory")
    new["sessions"].append(_session(cfg, calibrate=True))
    _write_json_atomic(mp, new)
    if config_text is not None and not (out_dir / CONFIG_COPY).exists():
        (out_dir / CONFIG_COPY).write_text(config_text, encoding="utf-8")
    return new


# --------------------------------------------------------------------------- the run


@dataclass
class RunSummary:
    """What `run_eval` did."""

    out_dir: Path
    planned: int
    stored_before: int
    ran: int
    failed: int = 0
    interrupted: bool = False
    speed_comparisons: int = 0
    report_files: list[Path] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.interrupted and not self.failed and self.stored_before + self.ran >= self.planned


def _progress(enabled: bool, console=None):
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[extra]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                    disable=not enabled, console=console, transient=False)


def run_eval(config: EvalConfig | str | os.PathLike, out_dir: str | os.PathLike | None = None, *,
             progress: bool | None = None, workers: int | None = None, limit: int | None = None,
             report: bool | None = None, console=None, config_text: str | None = None,
             on_record: Callable[[dict[str, Any]], None] | None = None) -> RunSummary:
    """Run (or continue) an eval; see the module docstring.

    `limit`: play at most this many new episodes (then stop as if interrupted).
    `on_record`: called with each stored record (tests, custom displays).
    `config_text`: the config file's text to record (read from the file when `config` is a path)."""
    if not isinstance(config, EvalConfig):
        config_text = redact_text(Path(config).read_text(encoding="utf-8"))
        config = load_config(config)
    cfg = config
    if out_dir is None:
        if not cfg.out:
            raise EvalError("no output directory: set `out:` in the config or pass --out")
        out_dir = cfg.resolve(cfg.out) if Path(cfg.out).is_absolute() else \
            str(Path(cfg.base_dir or ".") / cfg.out)
    out = Path(out_dir)
    if config_text is None and cfg.source and Path(cfg.base_dir or ".", Path(cfg.source).name).is_file():
        config_text = redact_text(Path(cfg.base_dir or ".", Path(cfg.source).name).read_text(encoding="utf-8"))
    prepare_out_dir(cfg, out, config_text)
    store = ResultStore(out / RESULTS_FILE)
    stored = {r["key"]: r for r in store.load()}
    plan = cfg.plan()
    todo = [s for s in plan if s.key not in stored]
    summary = RunSummary(out_dir=out, planned=len(plan), stored_before=sum(s.key in stored for s in plan), ran=0)
    errors = ResultStore(out / ERRORS_FILE)
    n_workers = max(1, workers or cfg.workers)
    enabled = cfg.progress if progress is None else progress
    if limit is not None:
        todo = todo[:max(0, limit)]

    tallies = {a.label: [0, 0] for a in cfg.agents}  # done, correct (this plan, stored included)
    for s in plan:
        r = stored.get(s.key)
        if r is not None:
            tallies[s.agent][0] += 1
            tallies[s.agent][1] += bool(r.get("correct"))
    per_agent_total = defaultdict(int)
    for s in plan:
        per_agent_total[s.agent] += 1

    local = threading.local()
    workers_made: list[_Worker] = []
    wlock = threading.Lock()

    def worker() -> _Worker:
        w = getattr(local, "w", None)
        if w is None:
            w = local.w = _Worker(cfg)
            with wlock:
                workers_made.append(w)
        return w

    def job(spec: EpisodeSpec) -> dict[str, Any]:
        return play_episode(cfg, spec, worker())

    bar = _progress(enabled, console)
    try:
        with bar:
            overall = bar.add_task(f"[bold]{cfg.name}", total=len(plan), completed=summary.stored_before, extra="")
            rows = {a: bar.add_task(f"  {a}", total=per_agent_total[a], completed=tallies[a][0],
                                    extra=f"correct {tallies[a][1]}") for a in tallies}

            def done(spec: EpisodeSpec, rec: dict[str, Any] | None, exc: BaseException | None) -> None:
                if exc is not None:
                    summary.failed += 1
                    errors.append({"key": spec.key, "error": f"{type(exc).__name__}: {exc}",
                                   "traceback": "".join(traceback.format_exception(exc))[-4000:],
                                   "at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")})
                    bar.console.print(f"[red]episode {spec.key} failed: {type(exc).__name__}: {exc}")
                    return
                assert rec is not None
                store.append(rec)
                summary.ran += 1
                tallies[spec.agent][0] += 1
                tallies[spec.agent][1] += bool(rec.get("correct"))
                bar.advance(overall)
                bar.update(rows[spec.agent], advance=1, extra=f"correct {tallies[spec.agent][1]}")
                if on_record:
                    on_record(rec)

            if n_workers == 1:
                for spec in todo:
                    try:
                        rec = job(spec)
                    except KeyboardInterrupt:
                        raise
                    except Exception as e:  # noqa: BLE001 -- recorded; the rerun retries it
                        done(spec, None, e)
                    else:
                        done(spec, rec, None)
            else:
                with ThreadPoolExecutor(n_workers, thread_name_prefix="codegym-eval") as pool:
                    pending = {}
                    it = iter(todo)
                    for spec in it:
                        pending[pool.submit(job, spec)] = spec
                        if len(pending) >= 2 * n_workers:
                            break
                    try:
                        while pending:
                            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                            for f in finished:
                                spec = pending.pop(f)
                                exc = f.exception()
                                done(spec, None if exc else f.result(), exc)
                                nxt = next(it, None)
                                if nxt is not None:
                                    pending[pool.submit(job, nxt)] = nxt
                    except KeyboardInterrupt:
                        for f in pending:
                            f.cancel()
                        raise
            if cfg.timing_on and cfg.timing.head_to_head and limit is None:
                summary.speed_comparisons = _speed_phase(cfg, store, bar)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        for w in workers_made:
            w.close()
    if limit is not None and summary.stored_before + summary.ran < summary.planned:
        summary.interrupted = True
    if (cfg.report if report is None else report) and not summary.interrupted:
        from codegym.evaluation.report import write_report
        summary.report_files = write_report(out)
    return summary


def _speed_phase(cfg: EvalConfig, store: ResultStore, bar) -> int:
    """Head-to-head speed comparisons for correctness ties; stored like episodes."""
    records = store.load()
    episodes = [r for r in records if r.get("kind") == "episode"]
    have = {r["key"] for r in records if r.get("kind") == "speed"}
    jobs = _speed_jobs(cfg, episodes)
    todo = [j for j in jobs if f"speed|{j[0]}|{j[1]}|{j[2]}" not in have]
    if not todo:
        return 0
    tasks = {f"{cfg.suite_label(i)}:{t.id}": t for i in range(len(cfg.suites)) for t in cfg.tasks(i)}
    prog = bar.add_task("  head-to-head speed", total=len(todo), extra="")
    for n, (tk, a, b, ea, eb) in enumerate(todo):
        res = compare_programs(cfg, tasks[tk], ea, eb, a, b, seed=cfg.seed + n)
        store.append({"kind": "speed", "key": f"speed|{tk}|{a}|{b}", "task": tk, "a": a, "b": b,
                      "sample_a": ea["sample"], "sample_b": eb["sample"], **res})
        bar.advance(prog)
    return len(todo)
