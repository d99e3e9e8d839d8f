"""A mined suite's repositories stored compactly: one git bundle per repository.

`pack_suite` rewrites every task of a suite folder to take its base tree from
``repos/<owner>__<name>.bundle``: one commit per distinct base (its tree is the upstream
commit's tree, object for object; its message names the upstream commit), chained in
date order on the branch ``bases``, so the bundle holds only the trees the tasks need
(delta-compressed together) instead of the history or a copy per task. Every task's base
tree is checked to be unchanged (`codegym.tasks.repo.BaseTree.digest`).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from codegym.importers.yamlout import task_yaml
from codegym.tasks.repo import RepoSource, base_tree, git_dir

__all__ = ["pack_suite", "PackResult", "BUNDLE_DIR"]

#: where the bundles live, inside the suite folder
BUNDLE_DIR = "repos"
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C",
            "GIT_AUTHOR_NAME": "codegym", "GIT_AUTHOR_EMAIL": "codegym@localhost",
            "GIT_COMMITTER_NAME": "codegym", "GIT_COMMITTER_EMAIL": "codegym@localhost"}


def _git(cwd: str | os.PathLike, *args: str, env: dict | None = None) -> str:
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, env={**os.environ, **_GIT_ENV, **(env or {})})
    if p.returncode != 0:
        raise ValueError(f"git {' '.join(args[:3])}: {p.stderr.decode('utf-8', 'replace').strip()[:300]}")
    return p.stdout.decode("utf-8", "replace")


def _source(suite_dir: Path, url: str, commit: str | None) -> RepoSource:
    if re.match(r"^[A-Za-z][\w+.-]*://", url):
        return RepoSource("git", url, commit)
    path = Path(url) if Path(url).is_absolute() else (suite_dir / url)
    path = path.resolve()
    return RepoSource("bundle" if path.name.endswith(".bundle") else "dir", str(path), commit)


def _slug(repo: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", repo.replace("/", "__")) or "repo"


def pack_suite(suite_dir: str | os.PathLike, log: Callable[[str], None] | None = None) -> PackResult:
    """Store the repositories of the suite's repo tasks as bundles (see the module docstring)
    and rewrite the tasks; returns a `PackResult` (bundles, total size, tasks dropped)."""
    say = log or (lambda _m: None)
    root = Path(suite_dir).resolve()
    docs: dict[Path, dict] = {}
    for p in sorted(root.glob("*.yaml")):
        if p.name == "suite.yaml":
            continue
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and isinstance(doc.get("repo"), dict) and doc["repo"].get("commit"):
            docs[p] = doc
    by_repo: dict[str, list[Path]] = {}
    for p, doc in docs.items():
        repo = ((doc.get("metadata") or {}).get("extra", {}).get("swe", {}) or {}).get("repo") or doc["repo"]["url"]
        by_repo.setdefault(str(repo), []).append(p)
    (root / BUNDLE_DIR).mkdir(exist_ok=True)
    lines, total = [], 0
    result = PackResult("")
    for repo, paths in sorted(by_repo.items()):
        rel = f"{BUNDLE_DIR}/{_slug(repo)}.bundle"
        before = {}
        for p in list(paths):
            try:
                before[p] = base_tree(_source(root, docs[p]["repo"]["url"], docs[p]["repo"]["commit"])).digest
            except (ValueError, OSError) as e:  # (SWEError is a ValueError) a base that is not there
                paths.remove(p)
                result.dropped.append((p.stem, str(e)[:300]))
                p.unlink()
        if not paths:
            continue
        new_commits = _make_bundle(root, root / rel, [(docs[p]["repo"]["url"], docs[p]["repo"]["commit"],
                                                       _upstream(docs[p])) for p in paths])
        for p in paths:
            doc = docs[p]
            doc["repo"]["commit"] = new_commits[doc["repo"]["commit"]]
            doc["repo"]["url"] = rel
            p.write_text(task_yaml(doc), encoding="utf-8")
        for p in paths:
            after = base_tree(_source(root, rel, docs[p]["repo"]["commit"])).digest
            if after != before[p]:
                raise ValueError(f"{p.name}: the base tree changed when packed")
        size = (root / rel).stat().st_size
        total += size
        lines.append(f"{rel}: {len(paths)} task(s), {len(set(new_commits.values()))} base(s), {size / 1024:.0f} KiB")
        say(lines[-1])
    lines.append(f"total {total / 1024:.0f} KiB in {len(by_repo)} bundle(s)")
    result.summary = "\n".join(lines)
    return result


@dataclass
class PackResult:
    """`pack_suite`'s answer: a summary (bundles and sizes) and the tasks dropped because
    their base commit could not be read (name, why; their YAML files are removed)."""

    summary: str
    dropped: list[tuple[str, str]] = field(default_factory=list)

    def __str__(self) -> str:
        return self.summary


def _upstream(doc: dict) -> str:
    swe = (doc.get("metadata") or {}).get("extra", {}).get("swe", {}) or {}
    return str((swe.get("upstream") or {}).get("parent") or doc["repo"]["commit"])


def _make_bundle(root: Path, bundle: Path, bases: list[tuple[str, str, str]]) -> dict[str, str]:
    """Write `bundle` with one commit per distinct base (url, commit, upstream sha); returns
    {old commit: new commit}."""
    with tempfile.TemporaryDirectory(prefix="codegym-pack-") as tmp:
        _git(tmp, "init", "-q", "--bare", "-b", "bases")
        seen: dict[str, tuple[str, str, str]] = {}
        for url, commit, upstream in bases:
            if commit in seen:
                continue
            src = git_dir(_source(root, url, commit))
            _git(tmp, "fetch", "-q", "--no-tags", str(src), commit)
            tree = _git(tmp, "rev-parse", f"{commit}^{{tree}}").strip()
            date = _git(tmp, "log", "-1", "--format=%cI", commit).strip()
            seen[commit] = (date, tree, upstream)
        mapping, parent = {}, None
        for commit, (date, tree, upstream) in sorted(seen.items(), key=lambda kv: kv[1][0]):
            args = ["commit-tree", tree, "-m", f"codegym: base tree of upstream commit {upstream}"]
            if parent:
                args += ["-p", parent]
            new = _git(tmp, *args, env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}).strip()
            mapping[commit] = parent = new
        _git(tmp, "update-ref", "refs/heads/bases", parent)
        out = bundle.with_suffix(".bundle.tmp")
        _git(tmp, "bundle", "create", str(out), "refs/heads/bases")
        os.replace(out, bundle)
    return mapping
