"""The manifest of an eval directory (``manifest.json``): what its results depend on.

`prepare_out_dir` creates or checks an output directory: the manifest holds the
config (secrets redacted), its file text, the codegym version, every task's content
hash, their fingerprint (a resumed run must match it) and, per session, the machine,
the sandbox and its calibration factor. docs/eval.md describes the fields.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codegym.core.version import __version__
from codegym.evaluation.config import EvalConfig, redact
from codegym.evaluation.store import CONFIG_COPY, MANIFEST_FILE, RESULTS_FILE, EvalError, write_json_atomic
from codegym.judge.calibrate import machine_facts
from codegym.sandbox import make_sandbox
from codegym.timing.calibration import calibration_factor

SCHEMA = "codegym.eval/1"


def new_session(cfg: EvalConfig, calibrate: bool) -> dict[str, Any]:
    """One run of the eval: when, on which machine and sandbox, and its calibration factor."""
    s: dict[str, Any] = {"started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                         "machine": machine_facts(),
                         "sandbox": cfg.sandbox or os.environ.get("CODEGYM_SANDBOX") or "local"}
    try:
        sb = make_sandbox(cfg.sandbox) if cfg.sandbox else make_sandbox()
        s["isolation"] = sb.isolation
        if calibrate:
            metric = (cfg.timing.metric if cfg.timing else None) or "cpu"
            s["calibration_factor"] = calibration_factor(sb, "cpu" if metric == "instructions" else metric)
            s["calibration_metric"] = metric
    except Exception as e:  # noqa: BLE001 -- recorded, not fatal: the episodes report sandbox errors
        s["calibration_error"] = f"{type(e).__name__}: {e}"
    return s


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
    new["sessions"].append(new_session(cfg, calibrate=True))
    write_json_atomic(mp, new)
    if config_text is not None and not (out_dir / CONFIG_COPY).exists():
        (out_dir / CONFIG_COPY).write_text(config_text, encoding="utf-8")
    return new
