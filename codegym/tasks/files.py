"""Sibling files of a task YAML, inlined at load time so that a `Task` is plain data.

Relative to the YAML file that names them (a task file or its ``suite.yaml``):
``{file: rel}`` for statement / starter / solution files, ``stdin_file`` /
``expected_file`` in stdio cases, ``file`` in generator and program-checker specs,
and a whole split as ``{glob: "data/*.in", expected_ext: ".out"}``. Each must
resolve inside the suite folder (symlinks followed) and stay under the caps
(`Doc.read_rel`; docs/tasks.md). Every file read becomes a dependency of the
document (`Doc.deps`: the cache key of the task).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from codegym.core.yamldoc import Doc, Loc


def _resolve_ref(doc: Doc, value: Any, loc: Loc) -> Any:
    """``{file: rel}`` -> the file's text; anything else unchanged."""
    if isinstance(value, dict) and "file" in value:
        if set(value) != {"file"}:
            extra = sorted(str(k) for k in value if k != "file")
            doc.err(loc, f"a file reference takes only the key 'file' (also got {', '.join(extra)})")
            return ""
        text = doc.read_rel(value["file"], loc + ("file",))
        # On failure the error is recorded; "" keeps the schema from adding another.
        return text if text is not None else ""
    return value


def _resolve_code_file(doc: Doc, spec: Any, loc: Loc) -> None:
    """In a generator / program-checker mapping, replace `file` by `code` (its text)."""
    if not isinstance(spec, dict) or "file" not in spec:
        return
    if "code" in spec:
        doc.err(loc + ("file",), "give either code or file, not both")
        return
    text = doc.read_rel(spec["file"], loc + ("file",))
    del spec["file"]
    spec["code"] = text if text is not None else ""  # a failure is already recorded
    doc.alias(loc + ("code",), loc + ("file",))


def inline_files(doc: Doc) -> None:
    """Inline every sibling file the document names (tolerant of a wrong structure:
    whatever does not have the expected shape is left for the schema to report)."""
    d = doc.data
    if not isinstance(d, dict):
        return
    if "statement" in d:
        d["statement"] = _resolve_ref(doc, d["statement"], ("statement",))
    if isinstance(d.get("starter"), dict):
        for k, v in d["starter"].items():
            d["starter"][k] = _resolve_ref(doc, v, ("starter", k))
    if isinstance(d.get("solutions"), dict):
        for name, sol in d["solutions"].items():
            if isinstance(sol, dict) and isinstance(sol.get("files"), dict):
                for k, v in sol["files"].items():
                    sol["files"][k] = _resolve_ref(doc, v, ("solutions", name, "files", k))
    if isinstance(d.get("checker"), dict):
        _resolve_code_file(doc, d["checker"], ("checker",))
    tests = d.get("tests")
    if isinstance(tests, dict):
        for split, cases in list(tests.items()):
            if isinstance(cases, dict) and "glob" in cases:
                tests[split] = _expand_glob(doc, cases, ("tests", split))
            elif isinstance(cases, list):
                for i, case in enumerate(cases):
                    if isinstance(case, dict):
                        _resolve_case(doc, case, ("tests", split, i))


def _resolve_case(doc: Doc, case: dict, loc: Loc) -> None:
    for src, dst in (("stdin_file", "stdin"), ("expected_file", "expected")):
        if src not in case:
            continue
        if dst in case:
            doc.err(loc + (src,), f"give either {dst} or {src}, not both")
            continue
        rel = case.pop(src)
        text = doc.read_rel(rel, loc + (src,))
        if text is not None:
            case[dst] = text
            doc.alias(loc + (dst,), loc + (src,))
            if src == "stdin_file" and "name" not in case and isinstance(rel, str):
                case["name"] = Path(rel).stem  # a readable default for reports
        else:
            # The missing file is already reported; a placeholder keeps the schema
            # and the other checks from reporting it again in other words.
            case[dst] = ""
            doc.alias(loc + (dst,), loc + (src,))
    if isinstance(case.get("generator"), dict):
        _resolve_code_file(doc, case["generator"], loc + ("generator",))
    if isinstance(case.get("checker"), dict):
        _resolve_code_file(doc, case["checker"], loc + ("checker",))


def _expand_glob(doc: Doc, spec: dict, loc: Loc) -> Any:
    """``{glob: "dir/*.in", expected_ext: ".out"}`` -> stdio cases, one per matched file."""
    extra = set(spec) - {"glob", "expected_ext"}
    if extra:
        doc.err(loc + (sorted(map(str, extra))[0],),
                "a glob split takes only the keys glob and expected_ext")
        return []
    pattern, ext = spec.get("glob"), spec.get("expected_ext", ".out")
    if not isinstance(pattern, str) or not pattern or os.path.isabs(pattern) or "\0" in pattern:
        doc.err(loc + ("glob",), "expected a glob pattern relative to the YAML file")
        return []
    if ".." in Path(pattern).parts:
        doc.err(loc + ("glob",), f"a glob pattern cannot go up a folder ('..'): {pattern}")
        return []
    if not isinstance(ext, str):
        doc.err(loc + ("expected_ext",), "expected string")
        return []
    # The directory's mtime changes when files are added or removed there.
    doc.deps.append((doc.base / pattern).parent)
    matches = sorted(p for p in doc.base.glob(pattern) if p.is_file())
    if not matches:
        doc.err(loc + ("glob",), f"no file matches {pattern}")
        return []
    cases = []
    for p in matches:
        rel = p.relative_to(doc.base).as_posix()
        case: dict[str, Any] = {"name": p.stem}
        text = doc.read_rel(rel, loc + ("glob",))
        if text is None:
            continue
        case["stdin"] = text
        exp = p.with_name(p.stem + ext)
        if ext and exp != p and exp.is_file():
            etext = doc.read_rel(exp.relative_to(doc.base).as_posix(), loc + ("glob",))
            if etext is not None:
                case["expected"] = etext
        cases.append(case)
    return cases
