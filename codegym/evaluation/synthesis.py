"""Verified synthesis and a teacher tournament (``codegym synthesize CONFIG.yaml``).

A synthesis config is an eval config (`codegym.evaluation.config`: the teachers are its
agents, usually LLM endpoints, playing the suites' tasks as multi-turn episodes with test
feedback) plus a ``synthesis:`` block (`SynthesisSettings`). `run_synthesis` plays the
episodes with `run_eval` (resumable the same way), then `build_synthesis` keeps only
what execution verified: accepted solutions, not copies of the task's own solutions
(`copied_from`), deduplicated (`code_key`), exported as SFT data (`codegym.rollout.export`:
chat and prompt-completion JSONL, verl parquet); and ranks the teachers by verified pass
rate per family, difficulty and language with bootstrap intervals, saturated tasks apart
(`codegym.evaluation.tournament`). docs/synthesis.md has the config and the outputs.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from codegym.agents.llm_settings import DEFAULT_SYSTEM_PROMPT
from codegym.core.keys import KeyGrants
from codegym.core.paths import display_path
from codegym.core.yamldoc import Doc, DocError, format_path, pydantic_message
from codegym.edits.similarity import line_similarity
from codegym.evaluation.config import ConfigError, EvalConfig, parse_config, read_config_text
from codegym.evaluation.runner import RunSummary, run_eval
from codegym.evaluation.store import RESULTS_FILE, ResultStore, write_json_atomic
from codegym.evaluation.tournament import tournament, tournament_markdown
from codegym.rollout.export import SFTExample, write_sft, write_sft_parquet
from codegym.tasks.schema import Task

SYNTHESIS_KEY = "synthesis"
EXPORTS = ("chat", "prompt_completion", "verl")


class SynthesisSettings(BaseModel):
    """The ``synthesis:`` block.

    copy_threshold  similarity (normalised lines) to one of the task's own solutions from
                    which a solution counts as a copy (1.0: identical after normalising)
    saturation      a task every teacher solves at this rate or more is saturated: shown
                    apart, left out of the ranking
    exports         SFT files to write: chat, prompt_completion (JSONL), verl (parquet)
    system_prompt   the system message of the exported conversations (default: the LLM
                    agent's own)
    eval_report     also write the eval's report (report.html, results.json, summary.md)
    """

    model_config = ConfigDict(extra="forbid")
    copy_threshold: float = Field(0.9, gt=0, le=1)
    saturation: float = Field(1.0, gt=0, le=1)
    exports: list[str] = Field(default_factory=lambda: list(EXPORTS))
    system_prompt: str | None = None
    eval_report: bool = False

    @field_validator("exports")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        bad = [e for e in v if e not in EXPORTS]
        if bad:
            raise ValueError(f"unknown export(s) {bad}; known: {', '.join(EXPORTS)}")
        return v


@dataclass
class SynthesisConfig:
    """An eval config and the synthesis settings of one file."""

    eval: EvalConfig
    settings: SynthesisSettings
    text: str | None = None


@dataclass
class SynthesisResult:
    """What a synthesis run produced (paths, counts, the tournament)."""

    out_dir: Path
    summary: RunSummary | None
    episodes: int = 0
    accepted: int = 0
    copied: int = 0
    duplicates: int = 0
    kept: int = 0
    files: list[Path] = field(default_factory=list)
    table: dict[str, Any] = field(default_factory=dict)


def load_synthesis_config(path: str | Path, keys: KeyGrants | None = None) -> SynthesisConfig:
    """Read a synthesis config: the eval keys validated by the eval's loader, the
    ``synthesis`` block here; every problem as ``file:line: field: message``. `keys`: the
    user's key grants (`codegym.evaluation.config.parse_config`)."""
    p = Path(path)
    doc = Doc(p.resolve(), display_path(p))
    if not doc.load() or doc.errors:
        raise ConfigError(doc.errors)
    if not isinstance(doc.data, Mapping):
        raise ConfigError([DocError(doc.display, 1, "", "a synthesis config is a mapping (agents:, suites:, ...)")])
    data = dict(doc.data)
    raw = data.pop(SYNTHESIS_KEY, None) or {}
    errors: list[DocError] = []
    settings = SynthesisSettings()
    try:
        settings = SynthesisSettings.model_validate(raw)
    except ValidationError as exc:
        for e in exc.errors(include_url=False):
            loc = (SYNTHESIS_KEY, *e["loc"])
            errors.append(DocError(doc.display, doc.line_of(loc), format_path(loc),
                                   pydantic_message(e, SynthesisSettings)))
    try:
        cfg = parse_config(data, doc.display, doc.line_of, str(p.resolve().parent), keys=keys)
    except ConfigError as e:
        raise ConfigError(errors + list(e.errors)) from None
    if errors:
        raise ConfigError(errors)
    cfg.keep_observations = True  # the conversations are the SFT data
    cfg.report = settings.eval_report
    return SynthesisConfig(cfg, settings, read_config_text(p))


# --------------------------------------------------------------------------- code identity

_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_HASH_COMMENT = re.compile(r"(?m)^\s*#(?!include|define|if|endif|else|pragma).*$")


def normalized_code(src: str, language: str) -> str:
    """`src` without comments and layout: Python's own unparse of its syntax tree (no
    comments, docstrings kept), else comments stripped and each line's spaces squeezed."""
    if language == "python":
        try:
            return ast.unparse(ast.parse(src))
        except (SyntaxError, ValueError, RecursionError):
            pass
    text = _C_COMMENT.sub("", src) if language in ("c", "cpp", "javascript") else _HASH_COMMENT.sub("", src)
    return "\n".join(" ".join(ln.split()) for ln in text.splitlines() if ln.strip())


def code_key(files: Mapping[str, str], language: str) -> str:
    """What two solutions share when they are the same program (normalised files' hash)."""
    blob = "\0".join(f"{k}\0{normalized_code(v, language) if isinstance(v, str) else v!r}"
                     for k, v in sorted(files.items()))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def copied_from(task: Task, files: Mapping[str, str], language: str, threshold: float) -> tuple[str | None, float]:
    """(name of the task's solution the program copies, similarity) -- (None, best) when
    no solution in that language is at least `threshold` alike (normalised lines)."""
    main = task.main_file_for(language) or ""
    mine = normalized_code(files.get(main, ""), language).splitlines()
    best, name = 0.0, None
    for sname, sol in task.solutions.items():
        if (sol.language or task.language) != language or main not in sol.files:
            continue
        sim = line_similarity(mine, normalized_code(sol.files[main], language).splitlines())
        if sim > best:
            best, name = sim, sname
    return (name if best >= threshold else None), best


# --------------------------------------------------------------------------- the run


def _conversation(ep: Mapping[str, Any], system: str) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": system}] if system else []
    for st in ep.get("steps") or ():
        if st.get("observation") is None or st.get("action") is None:
            break
        msgs.append({"role": "user", "content": st["observation"]})
        msgs.append({"role": "assistant", "content": st["action"]})
    return msgs


def _final_answer(files: Mapping[str, str], main: str, language: str) -> str:
    fence = {"python": "python", "c": "c", "cpp": "cpp", "javascript": "javascript", "julia": "julia"}.get(language, "")
    return f"```{fence} path={main}\n{files.get(main, '').rstrip()}\n```\n\nsubmit\n"


def _tasks_by_key(cfg: EvalConfig) -> dict[str, Any]:
    return {f"{cfg.suite_label(i)}:{t.id}": t for i in range(len(cfg.suites)) for t in cfg.tasks(i)}


def build_synthesis(cfg: EvalConfig, settings: SynthesisSettings, out_dir: str | Path) -> SynthesisResult:
    """Filter, deduplicate, check for copies and export the stored episodes; rank the
    teachers (writes ``synthesis.jsonl``, ``sft/*`` and ``tournament.{json,md}``)."""
    out = Path(out_dir)
    episodes = [r for r in ResultStore(out / RESULTS_FILE).load() if r.get("kind") == "episode"]
    order = {a.label: i for i, a in enumerate(cfg.agents)}
    episodes.sort(key=lambda e: (e["suite"], e["task_id"], order.get(e["agent"], 99), e["sample"]))
    tasks = _tasks_by_key(cfg)
    res = SynthesisResult(out, None, episodes=len(episodes))
    seen: dict[tuple[str, str], str] = {}
    examples: list[SFTExample] = []
    rows = []
    for ep in episodes:
        task = tasks.get(f"{ep['suite']}:{ep['task_id']}")
        lang = ep.get("language") or (task.language if task else "")
        row = {"key": ep["key"], "teacher": ep["agent"], "task": f"{ep['suite']}:{ep['task_id']}",
               "accepted": bool(ep.get("correct")), "copied_from": None, "similarity": None,
               "duplicate_of": None, "kept": False}
        rows.append(row)
        if not row["accepted"] or task is None:
            continue
        res.accepted += 1
        files = ep.get("final_files") or {}
        row["copied_from"], row["similarity"] = copied_from(task, files, lang, settings.copy_threshold)
        if row["copied_from"]:
            res.copied += 1
            continue
        k = (row["task"], code_key(files, lang))
        if k in seen:
            row["duplicate_of"] = seen[k]
            res.duplicates += 1
            continue
        seen[k] = ep["key"]
        row["kept"] = True
        main = task.main_file_for(lang) or ""
        examples.append(SFTExample(
            _conversation(ep, settings.system_prompt or DEFAULT_SYSTEM_PROMPT), _final_answer(files, main, lang),
            {"task_id": ep["task_id"], "suite": ep["suite"], "teacher": ep["agent"], "language": lang,
             "family": ep.get("family"), "difficulty": ep.get("difficulty"), "turns": ep.get("turns"),
             "episode": ep["key"], "final_files": files, "final_diff": ep.get("final_diff") or ""}))
    res.kept = len(examples)
    _write_jsonl(out / "synthesis.jsonl", rows)
    res.files.append(out / "synthesis.jsonl")
    res.files += _export(out / "sft", examples, settings.exports)
    res.table = tournament(episodes, [a.label for a in cfg.agents], settings.saturation, cfg.bootstrap.samples,
                           cfg.bootstrap.seed, cfg.bootstrap.level, rows)
    write_json_atomic(out / "tournament.json", res.table)
    (out / "tournament.md").write_text(tournament_markdown(res.table), encoding="utf-8")
    res.files += [out / "tournament.json", out / "tournament.md"]
    return res


def _export(sft: Path, examples: list[SFTExample], exports: list[str]) -> list[Path]:
    """The SFT files asked for (`SynthesisSettings.exports`); returns their paths."""
    sft.mkdir(exist_ok=True)
    written = []
    for form in ("chat", "prompt_completion"):
        if form in exports:
            write_sft(sft / f"{form}.jsonl", examples, form)
            written.append(sft / f"{form}.jsonl")
    if "verl" in exports:
        try:
            write_sft_parquet(sft / "verl.parquet", examples)
            written.append(sft / "verl.parquet")
        except ImportError as e:
            print(f"verl parquet not written: {e} (pip install 'codegym[verl]')")
    return written


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    os.replace(tmp, path)


def run_synthesis(config: SynthesisConfig | str | os.PathLike, out_dir: str | os.PathLike | None = None, *,
                  progress: bool | None = None, workers: int | None = None, limit: int | None = None,
                  console=None) -> SynthesisResult:
    """Play (or continue) the teachers' episodes, then build the synthesis outputs from
    every stored episode (an interrupted run is continued by running it again)."""
    sc = config if isinstance(config, SynthesisConfig) else load_synthesis_config(config)
    summary = run_eval(sc.eval, out_dir, progress=progress, workers=workers, limit=limit, console=console,
                       config_text=sc.text)
    res = build_synthesis(sc.eval, sc.settings, summary.out_dir)
    res.summary = summary
    return res
