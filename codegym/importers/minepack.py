"""A mined suite's repositories stored compactly: one git bundle per repository.

`pack_suite` rewrites every task of a suite folder to take its base tree from
``repos/<owner>__<name>.bundle``: one commit per distinct base (its tree is the upstream
commit's tree, object for object; its message names the upstream commit), chained in
date order on the branch ``bases``, so the bundle holds only the trees the tasks need
(delta-compressed together) instead of the history or a copy per task: each base is
fetched alone (``--depth=1``), so an old commit's missing objects or a shallow mirror's
boundary do not matter, and each task's base tree is the upstream tree object (same id).
A base that cannot be read drops its tasks, each with one line saying why; the others
are packed.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from codegym.core.git import GIT_IDENTITY, GitError, git, git_text
from codegym.importers.yamlout import task_yaml
from codegym.tasks.patches import SWEError
from codegym.tasks.repo import check_commit, git_dir, source_of

#: where the bundles live, inside the suite folder
BUNDLE_DIR = "repos"


def _slug(repo: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", repo.replace("/", "__")) or "repo"


def pack_suite(suite_dir: str | os.PathLike, log: Callable[[str], None] | None = None) -> PackResult:
    """Store the repositories of the suite's repo tasks as bundles (see the module docstring)
    and rewrite the tasks; returns a `PackResult` (bundles, total size, tasks dropped with
    why: their YAML file and sibling folder are removed)."""
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
        by_repo.setdefault(str(_swe(doc).get("repo") or doc["repo"]["url"]), []).append(p)
    (root / BUNDLE_DIR).mkdir(exist_ok=True)
    lines, total = [], 0
    result = PackResult("")

    def drop(p: Path, why: str) -> None:
        result.dropped.append((p.stem, why))
        p.unlink(missing_ok=True)
        shutil.rmtree(p.with_suffix(""), ignore_errors=True)

    for repo, paths in sorted(by_repo.items()):
        rel = f"{BUNDLE_DIR}/{_slug(repo)}.bundle"
        bases = [(docs[p]["repo"]["url"], str(docs[p]["repo"]["commit"]), _upstream(docs[p])) for p in paths]
        new_commits, failed = _make_bundle(root, root / rel, bases)
        kept = []
        for p in paths:
            commit = str(docs[p]["repo"]["commit"])
            if commit in failed:
                drop(p, failed[commit])
            else:
                kept.append(p)
        if not kept:
            continue
        for p in kept:
            doc = docs[p]
            swe = _swe(doc)
            if swe and not swe.get("upstream"):  # an imported record: name the upstream base
                swe["upstream"] = {"base": str(doc["repo"]["commit"])}
            doc["repo"]["commit"] = new_commits[str(doc["repo"]["commit"])]
            doc["repo"]["url"] = rel
            p.write_text(task_yaml(doc), encoding="utf-8")
        size = (root / rel).stat().st_size
        total += size
        lines.append(f"{rel}: {len(kept)} task(s), {len({new_commits[c] for _, c, _ in bases if c in new_commits})} "
                     f"base(s), {size / 1024:.0f} KiB")
        say(lines[-1])
    lines.append(f"total {total / 1024:.0f} KiB in {len(lines)} bundle(s)")
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


def _swe(doc: dict) -> dict:
    extra = (doc.get("metadata") or {}).get("extra") or {}
    swe = extra.get("swe") if isinstance(extra, dict) else None
    return swe if isinstance(swe, dict) else {}


def _upstream(doc: dict) -> str:
    up = _swe(doc).get("upstream") or {}
    return str(up.get("parent") or up.get("base") or doc["repo"]["commit"])


def _unreadable(src: Path, commit: str, e: Exception) -> str:
    """One line saying why `commit` (in `src`) cannot be packed."""
    return f"the files of base commit {commit} cannot be read from {src} (an incomplete repository?): " \
           f"{str(e).rsplit('failed: ', 1)[-1][:200]}"


def _make_bundle(root: Path, bundle: Path, bases: list[tuple[str, str, str]]
                 ) -> tuple[dict[str, str], dict[str, str]]:
    """Write `bundle` with one commit per distinct base (url, commit, upstream sha) that can
    be read; returns ({old commit: new commit}, {old commit: why it cannot be read})."""
    failed: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="codegym-pack-") as tmp:
        git(["init", "-q", "--bare", "--template=", "-b", "bases"], tmp)
        seen: dict[str, tuple[str, str, str]] = {}
        wanted: dict[Path, list[tuple[str, str, str]]] = {}
        queued: set[str] = set()
        for url, commit, upstream in bases:
            if commit in queued:
                continue
            queued.add(commit)
            try:
                check_commit(commit, "base commit")
                src = git_dir(source_of(url, commit, root))
            except (SWEError, GitError, OSError) as e:
                failed[commit] = str(e)[:300]
                continue
            full = git(["rev-parse", "--verify", "-q", "--end-of-options", f"{commit}^{{commit}}"], src, check=False)
            if full.returncode != 0:
                failed[commit] = f"base commit {commit} is not in the repository {src}"
                continue
            wanted.setdefault(src, []).append((commit, full.stdout.decode().strip(), upstream))
        for src, commits in wanted.items():
            try:  # all of one repository's bases in one fetch, else one by one
                _fetch(tmp, src, [full for _, full, _ in commits])
                one_by_one = False
            except GitError:
                one_by_one = True
            for commit, full, upstream in commits:
                try:
                    if one_by_one:
                        _fetch(tmp, src, [full])
                    tree = git_text(["rev-parse", f"{full}^{{tree}}"], tmp).strip()
                    date = git_text(["log", "-1", "--format=%cI", full], tmp).strip()
                except GitError as e:
                    failed[commit] = _unreadable(src, commit, e)
                    continue
                seen[commit] = (date, tree, upstream)
        # the bases were fetched without their history: the repository is shallow, and a commit
        # made again here (re-packing a suite's own bundle makes the same commits, object for
        # object) would be a shallow one too, its parent cut off -- and the bundle incomplete.
        # Only the new chain is bundled, so the fetched commits' boundary is dropped.
        Path(tmp, "shallow").unlink(missing_ok=True)
        mapping, parent = {}, None
        for commit, (date, tree, upstream) in sorted(seen.items(), key=lambda kv: kv[1][0]):
            args = ["commit-tree", tree, "-m", f"codegym: base tree of upstream commit {upstream}"]
            if parent:
                args += ["-p", parent]
            new = git_text(args, tmp, env={**GIT_IDENTITY, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
            mapping[commit] = parent = new.strip()
        if parent is None:
            return mapping, failed
        git(["update-ref", "refs/heads/bases", parent], tmp)
        out = bundle.with_suffix(".bundle.tmp")
        git(["bundle", "create", "-q", str(out), "refs/heads/bases"], tmp)
        heads = git(["bundle", "verify", str(out)], tmp, check=False)
        if heads.returncode != 0 or b"complete history" not in heads.stdout + heads.stderr:
            out.unlink(missing_ok=True)
            raise GitError(f"the bundle of {bundle.name} would not be whole: {heads.stderr.decode()[:300]}")
        os.replace(out, bundle)
    return mapping, failed


def _fetch(tmp: str, src: Path, commits: list[str]) -> None:
    """Fetch `commits` from `src` into `tmp`, each without its history (a shallow mirror's
    boundary is fine)."""
    git(["fetch", "-q", "--no-tags", "--depth=1", "--end-of-options", str(src), *commits], tmp)
