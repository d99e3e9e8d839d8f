"""Where the real SWE-bench records of issue 27 come from, and their repositories.

Nothing fetched from the source repositories is committed to codegym: ``manifest.json``
(beside this file) names each record (instance id, the public file it is published in,
pinned to a commit and blob, and the sha256 of its SWE-bench fields), and the records are
read at run time from, in this order: a JSON-lines file given by the caller or by
``$CODEGYM_SWE_RECORDS_FILE``; ``/work/shared/benchmarks/swebench_real/records.jsonl``; the
mirrors of the publishing repositories (``$CODEGYM_MIRRORS``, default ``/work/.mirror``,
``<owner>+<name>/repo``). Every record is checked against its sha256. The repositories under
test are read from the same mirrors. README.md says more.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"
SHARED = Path("/work/shared/benchmarks/swebench_real/records.jsonl")
#: SWE-bench's fields, in the order its datasets list them (the only ones a record keeps)
FIELDS = ("repo", "instance_id", "base_commit", "patch", "test_patch", "problem_statement", "hints_text",
          "created_at", "version", "FAIL_TO_PASS", "PASS_TO_PASS", "environment_setup_commit")


class RecordsUnavailable(RuntimeError):
    """The records cannot be read on this machine (no records file, no mirror of their source)."""


def manifest() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def mirrors_root() -> Path:
    return Path(os.environ.get("CODEGYM_MIRRORS", "/work/.mirror"))


def mirror(repo: str) -> Path:
    """The local mirror of ``owner/name`` (a git directory; it may be absent)."""
    return mirrors_root() / repo.replace("/", "+") / "repo"


def repo_url_template() -> str:
    """``--repo-url`` for `codegym.importers.swebench.import_swebench`: the mirrors."""
    return f"{mirrors_root()}/{{repo_plus}}/repo"


def digest(rec: dict) -> str:
    """sha256 of a record's SWE-bench fields (canonical JSON: sorted keys, UTF-8, no spaces)."""
    text = json.dumps({k: rec[k] for k in FIELDS}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def test_ids(rec: dict) -> list[str]:
    """FAIL_TO_PASS + PASS_TO_PASS (JSON text or lists, as published)."""
    out = []
    for k in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        v = rec[k]
        out += json.loads(v) if isinstance(v, str) else list(v)
    return out


def _git(repo_dir: Path, *args: str, data: bytes | None = None) -> bytes:
    p = subprocess.run(["git", "-C", str(repo_dir), *args], input=data, capture_output=True)
    if p.returncode != 0:
        raise RecordsUnavailable(f"git {' '.join(args[:2])} in {repo_dir}: {p.stderr.decode(errors='replace')[:200]}")
    return p.stdout


def _from_sources(man: dict) -> list[dict]:
    wanted: dict[str, set[str]] = {}
    for e in man["records"]:
        wanted.setdefault(e["source"], set()).add(e["instance_id"])
    found: dict[str, dict] = {}
    for key, ids in wanted.items():
        src = man["sources"][key]
        g = mirror(src["github"])
        if not g.is_dir():
            raise RecordsUnavailable(f"no mirror of {src['github']} (where the records are published) at {g}")
        data = json.loads(_git(g, "cat-file", "blob", src["blob"]))
        for r in data:
            if r.get("instance_id") in ids and r["instance_id"] not in found:
                found[r["instance_id"]] = {k: r[k] for k in FIELDS}
    return [found[e["instance_id"]] for e in man["records"] if e["instance_id"] in found]


def _from_file(path: Path) -> list[dict]:
    recs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{k: r[k] for k in FIELDS} for r in recs]


def load_records(path: str | os.PathLike | None = None) -> list[dict]:
    """The manifest's records, in its order, each checked against its sha256 (a record that
    differs raises ValueError: the published data changed). Raises RecordsUnavailable when
    neither a records file nor the source mirrors are on this machine."""
    man = manifest()
    path = path or os.environ.get("CODEGYM_SWE_RECORDS_FILE") or (SHARED if SHARED.is_file() else None)
    recs = _from_file(Path(path)) if path else _from_sources(man)
    by_id = {r["instance_id"]: r for r in recs}
    out = []
    for e in man["records"]:
        r = by_id.get(e["instance_id"])
        if r is None:
            raise RecordsUnavailable(f"{e['instance_id']} is not in {path or 'its source file'}")
        if digest(r) != e["sha256"]:
            raise ValueError(f"{e['instance_id']}: the record differs from the one the manifest names")
        out.append(r)
    return out


def write_records(path: str | os.PathLike, records: list[dict] | None = None) -> Path:
    """Write the records as JSON lines (what ``codegym import swebench`` reads)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in records if records is not None else load_records():
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def commit_problem(repo: str, sha: str) -> str | None:
    """Why the mirror of `repo` cannot give commit `sha`'s tree (None: it can, every blob present)."""
    g = mirror(repo)
    if not g.is_dir():
        return f"no mirror at {g}"
    try:
        if _git(g, "cat-file", "-t", sha).strip() != b"commit":
            return f"{sha} is not a commit"
        listing = _git(g, "ls-tree", "-r", "-z", sha).split(b"\0")
    except RecordsUnavailable as e:
        return str(e)
    blobs = {}
    for item in listing:
        meta, _, name = item.partition(b"\t")
        if meta.split()[1:2] == [b"blob"]:
            blobs[meta.split()[2]] = name.decode(errors="replace")
    check = _git(g, "cat-file", "--batch-check", data=b"".join(b + b"\n" for b in blobs))
    missing = [blobs[line.split()[0]] for line in check.splitlines() if line.endswith(b" missing")]
    if missing:
        return f"{len(missing)} file(s) of {sha[:12]} missing from the mirror: {', '.join(missing[:3])}"
    return None


#: the records that cannot grade FULL here, by cause (tests/importers/test_swebench_records.py
#: and benchmarks/swe_records.py name them so): ``mirror`` -- the mirror cannot give the record
#: whole (the import skips it); ``record`` -- a fault of the record itself, SWE-bench's harness
#: would not grade its gold patch FULL either; ``network`` -- its listed tests talk to a live
#: service on the internet, which SWE-bench's harness ran with and codegym's test runs lack.
KNOWN = {
    "pydicom__pydicom-901": ("mirror", "its base and environment trees hold DICOM test files of 4 MiB and more, "
                                       "which the snapshot the mirror comes from lacks"),
    "pydicom__pydicom-1458": ("record", "44 PASS_TO_PASS ids hold the paths of SWE-bench's build machine "
                                        "(test_...[/n/fs/p-swe-bench/temp/.../SC_rgb.dcm-data0]): no other "
                                        "checkout collects tests of those names; its tests also download "
                                        "pydicom's test data files from the internet (21 s of retries each here)"),
    "pydicom__pydicom-1139": ("record", "2 PASS_TO_PASS tests (TestBadValueRead) use nose-style setup(), which "
                                        "pytest 8 dropped; SWE-bench's spec for pydicom 2.0 pins no pytest "
                                        "(`pip install pytest`: 8.x today), so the harness fails them too"),
    # http://httpbin.org: the default of requests' test suite before it used pytest-httpbin (FAIL_TO_PASS /
    # PASS_TO_PASS tests that call httpbin(...), read from the test file at the base commit with the test patch)
    "psf__requests-863": ("network", "2 of 5 FAIL_TO_PASS and 18 of 42 PASS_TO_PASS tests request http://httpbin.org"),
    "psf__requests-1963": ("network", "8 of 8 FAIL_TO_PASS and 43 of 108 PASS_TO_PASS tests request "
                                      "http://httpbin.org"),
    "psf__requests-2148": ("network", "10 of 11 FAIL_TO_PASS and 41 of 112 PASS_TO_PASS tests request "
                                      "http://httpbin.org"),
    "psf__requests-2317": ("network", "8 of 8 FAIL_TO_PASS and 47 of 121 PASS_TO_PASS tests request "
                                      "http://httpbin.org"),
    "psf__requests-2674": ("network", "13 of 13 FAIL_TO_PASS and 53 of 138 PASS_TO_PASS tests request "
                                      "http://httpbin.org"),
    "psf__requests-3362": ("network", "2 of 75 PASS_TO_PASS tests (TestTimeout::test_connect_timeout, "
                                      "::test_total_timeout_connect) expect a connect timeout from "
                                      "http://10.255.255.1, an address with a route and no answer; with no "
                                      "network the connection fails at once (ConnectionError)"),
}


def by_cause(cause: str) -> dict[str, str]:
    """{instance id: reason} of the `KNOWN` records of one cause."""
    return {k: why for k, (c, why) in KNOWN.items() if c == cause}
