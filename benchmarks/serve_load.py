"""Load test of `codegym serve` on loopback: concurrent sessions, step latency, lost/crossed sessions, memory.

Starts ``codegym serve`` in a subprocess (the server measured is a real process), then
runs ROUNDS rounds of SESSIONS concurrent OpenEnv sessions (openenv's async
``EnvClient``: `CodegymEnvClient`) of STEPS steps each on ``examples/bracket-depth``.
Every session writes a marker of its own into ``notes.py`` and reads it back, so a step
answered from another session's env is caught (crossed); a session that does not end
with its STEPS answers and a judged submit is lost. The step mix (one turn each):

    write_file notes.py (public tests run)   view_file notes.py (checks the marker)
    act: a code block for main.py (tests)    view_file main.py        ... last: submit

Prints p50/p99 step latency per kind and overall, with two baselines measured in the same
run: sessions played one at a time on the same server (the protocol's cost without
queueing) and the same actions stepped in-process (``gym.make``, no server); and the
server's resident memory after each round once its sessions are closed (it should stay
flat). ``--protocol ors`` drives ``ors.client`` sessions instead.

    python benchmarks/serve_load.py                         # 64 sessions x 20 steps, 5 rounds
    python benchmarks/serve_load.py --sessions 16 --steps 5 --rounds 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict

os.environ.setdefault("ORS_LOG_LEVEL", "WARNING")

import gymnasium as gym

import codegym  # noqa: F401
from codegym.integrations.openenv import CodegymAction, CodegymEnvClient
from codegym.integrations.sessions import tool_action
from codegym.tasks.suite import load_suite

ENV_ID, SUITE, TASK = "codegym/Suite-v0", "examples", "examples/bracket-depth"


def plan(session: int, steps: int) -> list[tuple[str, str, dict]]:
    """(kind, tool, arguments) of each step; the last one submits."""
    task = load_suite(SUITE).get(TASK)
    ref = task.solution("reference").files[task.main_file]
    out = []
    for i in range(steps - 1):
        k = i % 4
        if k == 0:
            out.append(("edit+tests", "write_file", {"path": "notes.py", "content": f"# s{session} step {i}\n"}))
        elif k == 1:
            out.append(("view", "view_file", {"path": "notes.py"}))
        elif k == 2:
            body = ref if (i // 4) % 2 else ref + f"\n# s{session} revision {i}\n"
            out.append(("edit+tests", "act", {"text": f"```python path={task.main_file}\n{body}```\n"}))
        else:
            out.append(("view", "view_file", {"path": task.main_file}))
    out.append(("submit", "submit", {}))
    return out


def expected_note(steps: list[tuple[str, str, dict]], upto: int) -> str | None:
    for _kind, tool, args in reversed(steps[:upto]):
        if tool == "write_file":
            return args["content"]
    return None


async def openenv_session(url: str, token: str | None, i: int, steps: int, lat: dict, problems: list) -> None:
    p = plan(i, steps)
    client = CodegymEnvClient(url, token=token, message_timeout_s=900)
    async with client:
        r = await client.reset(env_id=ENV_ID, suite=SUITE, task_id=TASK, max_turns=steps)
        sid = r.observation.session_id
        for n, (kind, tool, args) in enumerate(p):
            t0 = time.perf_counter()
            r = await client.step(CodegymAction(type="call_tool", tool_name=tool, arguments=args))
            lat[kind].append(time.perf_counter() - t0)
            obs = r.observation
            if obs.session_id != sid:
                problems.append(f"session {i} step {n}: answered by session {obs.session_id}")
            note = (obs.info.get("files") or {}).get("notes.py")
            if note != expected_note(p, n + 1):
                problems.append(f"session {i} step {n}: notes.py is {note!r}")
        if not (r.done and obs.judge and obs.judge.get("verdict") == "accepted"):
            problems.append(f"session {i}: ended without an accepted submit ({r.done}, {obs.judge})")


def ors_session_sync(url: str, token: str | None, i: int, steps: int, lat: dict, problems: list) -> None:
    from ors.client import ORS

    p = plan(i, steps)
    with ORS(url, api_key=token) as c:
        env = c.environment("codegym-suite-examples")
        task = type(env.list_tasks("test")[0])(env.name, {"task_id": TASK, "options": {"max_turns": steps}})
        with env.session(task=task) as s:
            s.get_prompt()
            for n, (kind, tool, args) in enumerate(p):
                t0 = time.perf_counter()
                out = s.call_tool(tool, args)
                lat[kind].append(time.perf_counter() - t0)
                note = (out.metadata["info"].get("files") or {}).get("notes.py")
                if note != expected_note(p, n + 1):
                    problems.append(f"session {i} step {n}: notes.py is {note!r}")
            if not (out.finished and (out.metadata.get("judge") or {}).get("verdict") == "accepted"):
                problems.append(f"session {i}: ended without an accepted submit")


def in_process_baseline(steps: int, reps: int) -> dict[str, list[float]]:
    lat: dict[str, list[float]] = defaultdict(list)
    env = gym.make(ENV_ID, suite=SUITE, max_turns=steps)
    for rep in range(reps):
        env.reset(seed=0, options={"task_id": TASK})
        for kind, tool, args in plan(rep, steps):
            action = tool_action(tool, args)
            t0 = time.perf_counter()
            env.step(action)
            lat[kind].append(time.perf_counter() - t0)
    env.close()
    return lat


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def stats(url: str, token: str | None) -> dict:
    req = urllib.request.Request(url + "/codegym/sessions", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())


def wait_idle(url: str, token: str | None, timeout: float = 300) -> dict:
    end = time.monotonic() + timeout
    while True:
        s = stats(url, token)
        if s["active"] == 0 or time.monotonic() > end:
            return s
        time.sleep(0.2)


def start_server(port: int, sessions: int, token: str) -> subprocess.Popen:
    env = {**os.environ, "CODEGYM_SERVE_TOKEN": token}
    proc = subprocess.Popen([sys.executable, "-m", "codegym", "serve", "--port", str(port), "--max-sessions",
                             str(max(sessions, 1)), "--log-level", "warning"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("codegym serve exited:\n" + proc.stdout.read()) from None
            time.sleep(0.2)
    raise RuntimeError("codegym serve did not start")


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))] * 1000 if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=64)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--protocol", choices=("openenv", "ors"), default="openenv")
    ap.add_argument("--port", type=int, default=0, help="0: a free port")
    ap.add_argument("--settle", type=float, default=None,
                    help="seconds to wait after a round before reading the server's memory (default: 0 for "
                         "openenv, 65 for ors, whose server keeps each tool call's result 60 s for reconnects)")
    args = ap.parse_args()
    if args.port == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.port = s.getsockname()[1]
    if args.settle is None:
        args.settle = 65.0 if args.protocol == "ors" else 0.0
    token = "bench-token"
    base = f"http://127.0.0.1:{args.port}"
    baseline = in_process_baseline(args.steps, reps=max(3, args.sessions // 8))
    proc = start_server(args.port, args.sessions, token)
    rounds = []
    try:
        wait_idle(base, token)
        rss0 = rss_mb(proc.pid)
        # one session alone first: the protocol's own cost, without 64 sessions queueing on the cores
        solo: dict[str, list[float]] = defaultdict(list)
        solo_problems: list[str] = []
        for i in range(max(3, args.sessions // 8)):
            if args.protocol == "openenv":
                asyncio.run(openenv_session(base + "/openenv", token, 10_000 + i, args.steps, solo, solo_problems))
            else:
                ors_session_sync(base, token, 10_000 + i, args.steps, solo, solo_problems)
        if solo_problems:
            print("solo session problems:", solo_problems[:3])
        for rnd in range(args.rounds):
            lat: dict[str, list[float]] = defaultdict(list)
            problems: list[str] = []
            t0 = time.perf_counter()
            if args.protocol == "openenv":
                async def run_all(lat=lat, problems=problems) -> list:
                    coros = [openenv_session(base + "/openenv", token, i, args.steps, lat, problems)
                             for i in range(args.sessions)]
                    return await asyncio.gather(*coros, return_exceptions=True)
                errors = [r for r in asyncio.run(run_all()) if isinstance(r, BaseException)]
            else:
                from concurrent.futures import ThreadPoolExecutor
                with ThreadPoolExecutor(args.sessions) as pool:
                    futs = [pool.submit(ors_session_sync, base, token, i, args.steps, lat, problems)
                            for i in range(args.sessions)]
                errors = [f.exception() for f in futs if f.exception() is not None]
            wall = time.perf_counter() - t0
            s = wait_idle(base, token)
            time.sleep(args.settle)
            rounds.append({"round": rnd + 1, "wall_s": wall, "lat": lat, "lost": len(errors),
                           "crossed_or_wrong": len(problems), "errors": [repr(e) for e in errors[:3]],
                           "problems": problems[:3], "rss_mb": rss_mb(proc.pid), "active_after": s["active"],
                           "live_envs_after": s["live_envs"]})
            print(f"round {rnd + 1}: {wall:.1f} s, lost {len(errors)}, crossed/wrong {len(problems)}, "
                  f"server RSS {rounds[-1]['rss_mb']:.0f} MB, sessions left {s['active']}", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    report(args, rounds, baseline, solo, rss0)
    bad = any(r["lost"] or r["crossed_or_wrong"] or r["active_after"] for r in rounds)
    return 1 if bad else 0


def report(args, rounds: list[dict], baseline: dict, solo: dict, rss0: float) -> None:
    print(f"\n{args.protocol}: {args.sessions} concurrent sessions x {args.steps} steps, {len(rounds)} rounds, "
          f"loopback, {os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f}), memory read "
          f"{args.settle:g} s after each round")
    kinds = ["view", "edit+tests", "submit", "all"]
    print(f"{'step kind':<12} {'n/round':>8} {'p50 ms':>9} {'p99 ms':>9} {'1 session p50':>14} "
          f"{'in-proc p50':>12} {'1 session / in-proc':>20}")

    def of(lat: dict, kind: str) -> list[float]:
        return [x for v in lat.values() for x in v] if kind == "all" else lat.get(kind, [])

    for kind in kinds:
        p50s = [pct(of(r["lat"], kind), 0.5) for r in rounds]
        p99s = [pct(of(r["lat"], kind), 0.99) for r in rounds]
        b50, s50 = pct(of(baseline, kind), 0.5), pct(of(solo, kind), 0.5)
        print(f"{kind:<12} {len(of(rounds[0]['lat'], kind)):>8} {statistics.median(p50s):>9.1f} "
              f"{statistics.median(p99s):>9.1f} {s50:>14.1f} {b50:>12.1f} {s50 / b50:>20.1f}")
    print(f"\n{'round':<6} {'wall s':>7} {'lost':>5} {'crossed':>8} {'RSS MB after close':>19} {'live envs':>10}")
    print(f"{'start':<6} {'':>7} {'':>5} {'':>8} {rss0:>19.0f} {'':>10}")
    for r in rounds:
        print(f"{r['round']:<6} {r['wall_s']:>7.1f} {r['lost']:>5} {r['crossed_or_wrong']:>8} {r['rss_mb']:>19.0f} "
              f"{r['live_envs_after']:>10}")
    for r in rounds:
        for line in r["errors"] + r["problems"]:
            print("  ", line)
    print("(p50/p99: median over rounds of each round's percentile, the sessions all at once; 1 session: "
          "sessions played one at a time on the same server; in-proc: the same actions on gym.make in this "
          "process, no server)")


if __name__ == "__main__":
    sys.exit(main())
