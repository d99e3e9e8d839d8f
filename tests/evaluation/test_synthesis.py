"""Verified synthesis and the teacher tournament (`codegym synthesize`) with scripted teachers.

Four local OpenAI-compatible servers play teachers of different quality on four tasks
(two families, three difficulties, Python and C), two samples each, with public-test
feedback between turns: `strong` solves everything at once, `fixer` writes a wrong
first version and corrects it from the feedback (but cannot do C), `weak` solves only
the easiest task, `copier` answers the task's own reference. Only accepted solutions
are kept, copies of the reference and duplicates are not, the SFT files hold the
conversations, the tournament ranks the teachers with bootstrap intervals, the task
everyone solves is shown apart as saturated, and an interrupted run resumes without
asking any teacher twice for the same episode.
"""

from __future__ import annotations

import json
import re
import textwrap

import pytest
from _fake_openai import FakeOpenAIServer

from codegym.cli.main import main as cli_main
from codegym.evaluation.synthesis import code_key, load_synthesis_config, run_synthesis

TASKS = {
    "alpha/add": dict(difficulty="easy", language="python", statement="Read two integers a and b; print a + b.",
                      public=("2 3\n", "5\n"), hidden=[("10 -4\n", "6\n"), ("0 0\n", "0\n")],
                      ref="a, b = map(int, input().split())\nprint(a + b)\n"),
    "alpha/max": dict(difficulty="medium", language="python", statement="Read n and n integers; print the largest.",
                      public=("3\n1 9 4\n", "9\n"), hidden=[("4\n-5 -2 -9 -3\n", "-2\n"), ("1\n7\n", "7\n")],
                      ref="input()\nprint(max(map(int, input().split())))\n"),
    "beta/reverse": dict(difficulty="medium", language="python", statement="Read a line; print its words reversed.",
                         public=("a b c\n", "c b a\n"), hidden=[("hello world\n", "world hello\n"), ("x\n", "x\n")],
                         ref="print(' '.join(reversed(input().split())))\n"),
    "beta/digits": dict(difficulty="hard", language="c", statement="Read a non-negative integer; print its digit sum.",
                        public=("123\n", "6\n"), hidden=[("0\n", "0\n"), ("99999\n", "45\n")],
                        ref="#include <stdio.h>\nint main(void){long n,s=0;scanf(\"%ld\",&n);"
                            "while(n){s+=n%10;n/=10;}printf(\"%ld\\n\",s);return 0;}\n"),
}

STRONG = {"alpha/add": "x, y = map(int, input().split())\nprint(x + y)\n",
          "alpha/max": "input()\nvals = [int(v) for v in input().split()]\nprint(max(vals))\n",
          "beta/reverse": "words = input().split()\nprint(' '.join(words[::-1]))\n",
          "beta/digits": "#include <stdio.h>\nint main(void){char c;int s=0;while((c=getchar())!=EOF)"
                         "if(c>='0'&&c<='9')s+=c-'0';printf(\"%d\\n\",s);return 0;}\n"}
FIXER_FIRST = {"alpha/add": "p, q = map(int, input().split())\nprint(p - q)\n",
               "alpha/max": "input()\nprint(min(map(int, input().split())))\n",
               "beta/reverse": "print(input())\n",
               "beta/digits": "int main(void){return 1;}\n"}
FIXER_FIXED = {"alpha/add": "p, q = map(int, input().split())\nprint(p + q)\n",
               "alpha/max": "input()\nbest = None\nfor v in map(int, input().split()):\n"
                            "    best = v if best is None or v > best else best\nprint(best)\n",
               "beta/reverse": "parts = input().split()\nparts.reverse()\nprint(' '.join(parts))\n",
               "beta/digits": "int main(void){return 2;}\n"}
WEAK = {"alpha/add": "print(sum(map(int, input().split())))\n", "alpha/max": "print(0)\n",
        "beta/reverse": "print('')\n", "beta/digits": "int main(void){return 0;}\n"}


def _task_of(request) -> str:
    first = next(m["content"] for m in request["messages"] if m["role"] == "user")
    return next(t for t, d in TASKS.items() if d["statement"] in first)


def _block(task: str, code: str, submit: bool) -> str:
    lang = TASKS[task]["language"]
    return f"Here it is.\n\n```{lang}\n{code}```\n" + ("\nsubmit\n" if submit else "")


def teacher(kind: str):
    def respond(request) -> str:
        task = _task_of(request)
        turn = sum(m["role"] == "assistant" for m in request["messages"])
        if kind == "strong":
            return _block(task, STRONG[task], True)
        if kind == "copier":
            return _block(task, TASKS[task]["ref"], True)
        if kind == "weak":
            return _block(task, WEAK[task], True)
        return _block(task, FIXER_FIRST[task] if turn == 0 else FIXER_FIXED[task], turn > 0)
    return respond


def _write_suites(root):
    for tid, d in TASKS.items():
        family, name = tid.split("/")
        folder = root / "tasks" / family
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "suite.yaml").write_text(f"suite: {{description: {family}}}\nkind: stdio\n"
                                           "limits: {time_s: 5, memory_mb: 256}\n")
        main = "main.py" if d["language"] == "python" else "main.c"
        starter = "" if d["language"] == "python" else "int main(void){return 0;}\n"
        task = {"title": name, "statement": d["statement"], "language": d["language"],
                "starter": {main: starter or "pass\n"},
                "tests": {"public": [{"stdin": d["public"][0], "expected": d["public"][1]}],
                          "hidden": [{"stdin": i, "expected": o} for i, o in d["hidden"]]},
                "solutions": {"reference": {"files": {main: d["ref"]}}},
                "metadata": {"difficulty": d["difficulty"]}}
        (folder / f"{name}.yaml").write_text(json.dumps(task))


CONFIG = """\
name: teachers
agents:
{agents}
suites: [tasks/alpha, tasks/beta]
samples: 2
max_turns: 3
feedback: public
progress: false
bootstrap: {{samples: 200, seed: 1}}
synthesis:
  copy_threshold: 0.9
  saturation: 1.0
"""


def _config(tmp, servers) -> str:
    agents = "\n".join(f"  - name: {k}\n    spec: llm\n    options: {{model: {k}, base_url: '{s.base_url}', "
                       f"max_retries: 0, temperature: 0.0}}" for k, s in servers.items())
    p = tmp / "synth.yaml"
    p.write_text(CONFIG.format(agents=agents))
    return str(p)


@pytest.fixture()
def servers():
    kinds = ("strong", "fixer", "weak", "copier")
    srv = {k: FakeOpenAIServer(responder=teacher(k), model=k) for k in kinds}
    for s in srv.values():
        s.__enter__()
    yield srv
    for s in srv.values():
        s.__exit__(None, None, None)


def test_synthesis_keeps_verified_and_ranks_teachers(tmp_path, servers):
    _write_suites(tmp_path)
    cfg = _config(tmp_path, servers)
    out = tmp_path / "out"
    first = run_synthesis(cfg, out, progress=False, limit=9)          # interrupted after 9 episodes
    assert first.summary.interrupted and first.episodes == 9
    asked = {k: len(s.requests) for k, s in servers.items()}
    res = run_synthesis(cfg, out, progress=False)                      # continued
    assert res.summary.complete and res.episodes == 4 * 4 * 2
    episodes = [json.loads(ln) for ln in (out / "results.jsonl").read_text().splitlines()]
    episodes = [e for e in episodes if e["kind"] == "episode"]
    assert len({e["key"] for e in episodes}) == len(episodes) == 32
    # every stored turn was asked once: the resumed run asked only for the missing episodes
    for k, s in servers.items():
        turns = sum(e["turns"] for e in episodes if e["agent"] == k)
        assert len(s.requests) == turns, (k, asked[k], len(s.requests), turns)

    rows = [json.loads(ln) for ln in (out / "synthesis.jsonl").read_text().splitlines()]
    by = {(r["teacher"], r["task"].split(":")[1], r["key"].rsplit("|", 1)[1]): r for r in rows}
    assert all(by[("copier", t, s)]["copied_from"] == "reference" for t in TASKS for s in "01")
    assert by[("strong", "alpha/add", "1")]["duplicate_of"] == by[("strong", "alpha/add", "0")]["key"]
    # kept: strong 4 tasks, fixer 3 (not C), weak 1 (add): the second samples are duplicates
    assert res.kept == 8 and res.copied == 8 and res.duplicates == 8 and res.accepted == 24
    assert sorted(r["teacher"] for r in rows if r["kept"]) == ["fixer"] * 3 + ["strong"] * 4 + ["weak"]

    chat = [json.loads(ln) for ln in (out / "sft" / "chat.jsonl").read_text().splitlines()]
    assert len(chat) == 8 and all(c["teacher"] != "copier" for c in chat)
    fixed = next(c for c in chat if c["teacher"] == "fixer" and c["task_id"] == "alpha/max")
    roles = [m["role"] for m in fixed["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    assert "min(map(int" in fixed["messages"][2]["content"]          # the wrong first version
    assert re.search(r"(?i)public|fail|wrong", fixed["messages"][3]["content"])   # the test feedback
    assert "best = v if best is None" in fixed["messages"][4]["content"]
    assert code_key(fixed["final_files"], "python") != code_key({"main.py": STRONG["alpha/max"]}, "python")
    pc = [json.loads(ln) for ln in (out / "sft" / "prompt_completion.jsonl").read_text().splitlines()]
    assert [m["role"] for m in pc[0]["prompt"]] == ["system", "user"] and pc[0]["completion"][0]["role"] == "assistant"
    assert all("```" in p["completion"][0]["content"] for p in pc)
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(out / "sft" / "verl.parquet")
    assert table.num_rows == 8 and {"prompt", "response", "messages", "extra_info"} <= set(table.column_names)

    t = json.loads((out / "tournament.json").read_text())
    assert [s["task"] for s in t["saturated"]] == ["tasks/alpha:alpha/add"]
    ranking = [r["teacher"] for r in t["ranking"]]
    assert set(ranking[:2]) == {"strong", "copier"} and ranking[2:] == ["fixer", "weak"]
    fixer = next(r for r in t["ranking"] if r["teacher"] == "fixer")
    assert fixer["rate"] == pytest.approx(2 / 3) and fixer["lo"] <= fixer["rate"] <= fixer["hi"]
    assert fixer["accepted_after_revising"] == fixer["accepted"] == 6   # 3 tasks x 2 samples, each after a fix
    assert t["ranking"][-1]["rate"] == 0.0 and t["ranking"][-1]["ahead_of_next"] is False
    assert set(t["by"]["language"]) == {"python", "c"} and set(t["by"]["difficulty"]) == {"medium", "hard"}
    assert set(t["by"]["family"]) == {"alpha", "beta"}
    assert t["by"]["language"]["c"]["fixer"]["rate"] == 0.0 and t["by"]["language"]["c"]["strong"]["rate"] == 1.0
    md = (out / "tournament.md").read_text()
    assert "Saturated tasks (1)" in md and "## By language" in md


def test_synthesis_config_errors_name_the_line(tmp_path, capsys):
    _write_suites(tmp_path)
    p = tmp_path / "bad.yaml"
    p.write_text(textwrap.dedent("""\
        agents: [oracle]
        suites: [tasks/alpha]
        synthesis:
          copy_threshold: 2
          exports: [chat, nope]
        """))
    with pytest.raises(Exception) as ei:
        load_synthesis_config(p)
    text = str(ei.value)
    assert "bad.yaml:4: synthesis.copy_threshold" in text and "bad.yaml:5: synthesis.exports" in text
    assert cli_main(["synthesize", str(p)]) == 2
