"""Running an eval: the episodes of a config, stored resumably, then the timing phase.

`run_eval(config, out_dir)` plays every planned episode (`EvalConfig.plan`) that the
output directory does not hold yet, on one or more threads, with a live rich progress
display, appending each record to ``results.jsonl`` (`codegym.evaluation.store`); an
interrupted run continues where it stopped when started again. Then, with timing on,
the head-to-head speed comparisons (`codegym.evaluation.speed`), then the report.
Fairness and the record fields: docs/eval.md.
"""

from __future__ import annotations

import datetime as _dt
import os
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from codegym.evaluation.config import ConfigError, EpisodeSpec, EvalConfig, load_config, read_config_text
from codegym.evaluation.episodes import EpisodeWorker, play_episode
from codegym.evaluation.manifest import prepare_out_dir
from codegym.evaluation.report import write_report
from codegym.evaluation.speed import speed_phase
from codegym.evaluation.store import ERRORS_FILE, RESULTS_FILE, EvalError, ResultStore


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


class _Display:
    """The live progress: one bar for the eval and one per agent (with its correct count)."""

    def __init__(self, cfg: EvalConfig, plan: list[EpisodeSpec], stored: dict[str, dict], enabled: bool, console):
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[extra]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                            disable=not enabled, console=console, transient=False)
        self.cfg, self.plan, self.stored = cfg, plan, stored
        self.tallies = {a.label: [0, 0] for a in cfg.agents}  # done, correct (this plan, stored included)
        for s in plan:
            r = stored.get(s.key)
            if r is not None:
                self.tallies[s.agent][0] += 1
                self.tallies[s.agent][1] += bool(r.get("correct"))

    def start(self, stored_before: int) -> None:
        """Add the bars (inside ``with self.bar``)."""
        per_agent_total = Counter(s.agent for s in self.plan)
        self.overall = self.bar.add_task(f"[bold]{self.cfg.name}", total=len(self.plan), completed=stored_before,
                                         extra="")
        self.rows = {a: self.bar.add_task(f"  {a}", total=per_agent_total[a], completed=t[0],
                                          extra=f"correct {t[1]}") for a, t in self.tallies.items()}

    def stored_one(self, agent: str, correct: bool) -> None:
        self.tallies[agent][0] += 1
        self.tallies[agent][1] += correct
        self.bar.advance(self.overall)
        self.bar.update(self.rows[agent], advance=1, extra=f"correct {self.tallies[agent][1]}")


class _Recorder:
    """Takes each finished episode: stores its record, or logs its failure to errors.jsonl."""

    def __init__(self, store: ResultStore, errors: ResultStore, summary: RunSummary, display: _Display,
                 on_record: Callable[[dict[str, Any]], None] | None):
        self.store, self.errors = store, errors
        self.summary, self.display, self.on_record = summary, display, on_record

    def __call__(self, spec: EpisodeSpec, rec: dict[str, Any] | None, exc: BaseException | None) -> None:
        if exc is not None:
            self.summary.failed += 1
            self.errors.append({"key": spec.key, "error": f"{type(exc).__name__}: {exc}",
                                "traceback": "".join(traceback.format_exception(exc))[-4000:],
                                "at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")})
            self.display.bar.console.print(f"[red]episode {spec.key} failed: {type(exc).__name__}: {exc}")
            return
        assert rec is not None
        self.store.append(rec)
        self.summary.ran += 1
        self.display.stored_one(spec.agent, bool(rec.get("correct")))
        if self.on_record:
            self.on_record(rec)


class _Workers:
    """One `EpisodeWorker` per thread (its envs and agents), all closed at the end."""

    def __init__(self, cfg: EvalConfig):
        self.cfg = cfg
        self.local = threading.local()
        self.made: list[EpisodeWorker] = []
        self.lock = threading.Lock()

    def play(self, spec: EpisodeSpec) -> dict[str, Any]:
        w = getattr(self.local, "w", None)
        if w is None:
            w = self.local.w = EpisodeWorker(self.cfg)
            with self.lock:
                self.made.append(w)
        return play_episode(self.cfg, spec, w)

    def close(self) -> None:
        for w in self.made:
            w.close()


def _run_serial(todo: Iterable[EpisodeSpec], job, done) -> None:
    for spec in todo:
        try:
            rec = job(spec)
        except KeyboardInterrupt:
            raise
        except Exception as e:  # noqa: BLE001 -- recorded; the rerun retries it
            done(spec, None, e)
        else:
            done(spec, rec, None)


def _run_parallel(todo: Iterable[EpisodeSpec], job, done, n_workers: int) -> None:
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


def _resolve(config: EvalConfig | str | os.PathLike, out_dir: str | os.PathLike | None,
             config_text: str | None) -> tuple[EvalConfig, Path, str | None]:
    """The config, the output directory and the config text to record."""
    if not isinstance(config, EvalConfig):
        path = config
        config = load_config(path)   # (a FIFO or a device is refused here, not read)
        config_text = read_config_text(path)
    cfg = config
    if out_dir is None:
        if not cfg.out:
            raise EvalError("no output directory: set `out:` in the config or pass --out")
        try:
            out_dir = cfg.out_dir()  # under the config's folder
        except ConfigError as e:
            raise EvalError(str(e)) from None
    if config_text is None and cfg.source and Path(cfg.base_dir or ".", Path(cfg.source).name).is_file():
        config_text = read_config_text(Path(cfg.base_dir or ".", Path(cfg.source).name))
    return cfg, Path(out_dir), config_text


def run_eval(config: EvalConfig | str | os.PathLike, out_dir: str | os.PathLike | None = None, *,
             progress: bool | None = None, workers: int | None = None, limit: int | None = None,
             report: bool | None = None, console=None, config_text: str | None = None,
             on_record: Callable[[dict[str, Any]], None] | None = None) -> RunSummary:
    """Run (or continue) an eval; see the module docstring.

    `limit`: play at most this many new episodes (then stop as if interrupted).
    `on_record`: called with each stored record (tests, custom displays).
    `config_text`: the config file's text to record (read from the file when `config` is a path)."""
    cfg, out, config_text = _resolve(config, out_dir, config_text)
    prepare_out_dir(cfg, out, config_text)
    store = ResultStore(out / RESULTS_FILE)
    stored = {r["key"]: r for r in store.load()}
    plan = cfg.plan()
    todo = [s for s in plan if s.key not in stored]
    summary = RunSummary(out_dir=out, planned=len(plan), stored_before=sum(s.key in stored for s in plan), ran=0)
    n_workers = max(1, workers or cfg.workers)
    if limit is not None:
        todo = todo[:max(0, limit)]
    display = _Display(cfg, plan, stored, cfg.progress if progress is None else progress, console)
    done = _Recorder(store, ResultStore(out / ERRORS_FILE), summary, display, on_record)
    pool = _Workers(cfg)
    try:
        with display.bar:
            display.start(summary.stored_before)
            if n_workers == 1:
                _run_serial(todo, pool.play, done)
            else:
                _run_parallel(todo, pool.play, done, n_workers)
            if cfg.timing_on and cfg.timing.head_to_head and limit is None:
                summary.speed_comparisons = speed_phase(cfg, store, display.bar)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        pool.close()
    if limit is not None and summary.stored_before + summary.ran < summary.planned:
        summary.interrupted = True
    if (cfg.report if report is None else report) and not summary.interrupted:
        summary.report_files = write_report(out)
    return summary
