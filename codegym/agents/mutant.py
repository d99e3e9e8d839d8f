"""`MutantAgent`: seeded, syntax-aware mutations of the reference solution.

Each mutation kind implies a verdict, so mutants test the judge and the staged
rewards on real executions: ``syntax`` (compile_error), ``crash`` (runtime_error),
``loop`` (timeout), ``output`` (wrong_answer), ``operator`` (one binary operator or
integer literal flipped by tree-sitter: not accepted, though an equivalent mutant may
pass). The kind is chosen per episode from `kinds` with the seeded generator;
`last_mutation` records the kind, its implied verdict and where it applied. The table
of what each kind changes is in docs/environments.md.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from codegym.agents.base import TaskAgent, task_language_files
from codegym.edits.render import render_action
from codegym.edits.trees import parser_for
from codegym.tasks.schema import Task

IMPLIED = {"syntax": "compile_error", "crash": "runtime_error", "loop": "timeout",
           "output": "wrong_answer", "operator": "not_accepted"}
KINDS = tuple(IMPLIED)

_FLIP = {"+": "-", "-": "+", "*": "+", "<": ">=", ">": "<=", "<=": ">", ">=": "<",
         "==": "!=", "!=": "==", "and": "or", "or": "and", "&&": "||", "||": "&&"}


def _line_offsets(src: str) -> list[int]:
    offs = [0]
    for i, ch in enumerate(src):
        if ch == "\n":
            offs.append(i + 1)
    return offs


def _python_body_start(src: str, entry: str | None) -> tuple[int, str]:
    """(char offset, indentation) where a statement can go first in `entry`'s body,
    or at module top (after __future__ imports and the docstring) when entry is None."""
    lines = src.splitlines(keepends=True)
    if entry:
        name = entry.split(".")[-1]
        pat = re.compile(rf"^(\s*)def\s+{re.escape(name)}\s*\(")
        for i, line in enumerate(lines):
            m = pat.match(line)
            if not m:
                continue
            # the body starts after the line that ends the signature (ends with ':')
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(":"):
                j += 1
            k = j + 1
            while k < len(lines) and not lines[k].strip():
                k += 1
            body_line = lines[k] if k < len(lines) else ""
            indent = body_line[: len(body_line) - len(body_line.lstrip())] or m.group(1) + "    "
            return sum(len(l) for l in lines[: j + 1]), indent
    pos = 0
    for line in lines:
        s = line.strip()
        if s.startswith("from __future__") or s.startswith("#!") or s.startswith("# -*-"):
            pos += len(line)
            continue
        break
    return pos, ""


def _c_main_body(src: str, language: str) -> int | None:
    """Offset just after the opening brace of main()'s body (tree-sitter; regex fallback)."""
    try:
        parser = parser_for(language)
        tree = parser.parse(src.encode())
        data = src.encode()
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "function_definition":
                decl = node.child_by_field_name("declarator")
                body = node.child_by_field_name("body")
                name = data[decl.start_byte:decl.end_byte].split(b"(")[0] if decl is not None else b""
                if body is not None and b"main" in name:
                    return len(data[: body.start_byte + 1].decode(errors="replace"))
            stack.extend(node.children)
    except Exception:
        pass
    m = re.search(r"\bmain\s*\([^)]*\)\s*\{", src)
    return m.end() if m else None


def _insert(src: str, offset: int, text: str) -> str:
    return src[:offset] + text + src[offset:]


class MutantAgent(TaskAgent):
    """Writes a mutated reference solution and submits it.

    Args:
        kinds: mutation kinds to choose from (see the module table).
        seed: seeds the choice of kind and site (reset(seed=...) reseeds per episode).
        format: edit format of the action.
    """

    name = "mutant"

    def __init__(self, kinds: Sequence[str] = KINDS, seed: int = 0, format: str = "code_block"):
        bad = set(kinds) - set(KINDS)
        if bad:
            raise ValueError(f"unknown mutation kinds {sorted(bad)}; known: {KINDS}")
        super().__init__(format)
        self.kinds = tuple(kinds)
        self.seed = seed
        self.rng = random.Random(seed)
        self.last_mutation: dict[str, Any] | None = None

    def reset(self, task: Task | None = None, seed: int | None = None) -> None:
        super().reset(task, seed)
        if seed is not None:
            self.rng = random.Random(hash((self.seed, seed)) & 0xFFFFFFFF)

    # ---------------------------------------------------------------- mutations

    def mutate(self, src: str, language: str, kind: str, stdio: bool, entry: str | None) -> str:
        """Apply one mutation of `kind` to `src`."""
        if kind == "operator":
            out = self._flip_operator(src, language)
            if out is not None:
                return out
            kind = "output"  # nothing to flip: fall back to a sure wrong answer
        if language == "python":
            where, indent = _python_body_start(src, None if stdio else entry)
            stmt = {
                "syntax": f"{indent}x = ((1\n",
                "crash": f"{indent}raise RuntimeError('mutant')\n",
                "loop": f"{indent}while True:\n{indent}    pass\n",
                "output": (f"{indent}print('mutant')\n" if stdio
                           else f"{indent}return '__codegym_mutant__'\n"),
            }[kind]
            if kind == "syntax":
                # after a random complete line so the error is in the middle of the code
                offs = _line_offsets(src)
                where = offs[self.rng.randrange(len(offs))]
                stmt = "x = ((1\n"
            return _insert(src, where, stmt)
        if language in ("c", "cpp"):
            body = _c_main_body(src, language)
            if body is None:
                return src + "\n#error mutant\n"
            stmt = {
                "syntax": " int mutant = ((1; ",
                "crash": " { volatile int *p = 0; *p = 1; __builtin_trap(); } ",
                "loop": " for (volatile int i = 0; ; i += 0) { } ",
                "output": (' fputs("mutant\\n", stdout); ' if language == "c"
                           else ' std::fputs("mutant\\n", stdout); '),
            }[kind]
            if kind == "output" and "<stdio.h>" not in src and "<cstdio>" not in src and "bits/stdc++" not in src:
                src = ("#include <stdio.h>\n" if language == "c" else "#include <cstdio>\n") + src
                body = _c_main_body(src, language)
            return _insert(src, body, stmt)
        if language == "javascript":
            stmt = {"syntax": "let x = ((1;\n", "crash": "throw new Error('mutant');\n",
                    "loop": "for (;;) {}\n", "output": "console.log('mutant');\n"}[kind]
            return stmt + src
        if language == "julia":
            stmt = {"syntax": "x = ((1\n", "crash": "error(\"mutant\")\n",
                    "loop": "while true end\n", "output": "println(\"mutant\")\n"}[kind]
            return stmt + src
        raise ValueError(f"no mutations for language {language!r}")

    def _flip_operator(self, src: str, language: str) -> str | None:
        try:
            tree = parser_for(language).parse(src.encode())
        except Exception:
            return None
        data = src.encode()
        sites: list[tuple[int, int, bytes]] = []
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.type in ("binary_operator", "comparison_operator", "boolean_operator",
                             "binary_expression"):
                for child in node.children:
                    tok = data[child.start_byte:child.end_byte].decode(errors="replace")
                    if not child.is_named and tok in _FLIP:
                        sites.append((child.start_byte, child.end_byte, _FLIP[tok].encode()))
            elif node.type in ("integer", "number_literal") and node.end_byte - node.start_byte < 8:
                tok = data[node.start_byte:node.end_byte]
                if tok.isdigit():
                    sites.append((node.start_byte, node.end_byte, str(int(tok) + 1).encode()))
            stack.extend(node.children)
        if not sites:
            return None
        sites.sort()
        a, b, rep = sites[self.rng.randrange(len(sites))]
        out = data[:a] + (b" " + rep + b" " if rep.isalpha() else rep) + data[b:]
        return out.decode(errors="replace")

    # ---------------------------------------------------------------- agent API

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self._next_turn() > 1:
            return "submit"
        language, files = task_language_files(self.task, info.get("language"))
        # a repository task has no main file: mutate the first file its fix changes
        main_file = info.get("main_file") or self.task.main_file_for(language) or min(files)
        kind = self.rng.choice(self.kinds)
        stdio = self.task.kind == "stdio"
        mutated = dict(files)
        mutated[main_file] = self.mutate(files[main_file], language, kind, stdio, self.task.entry_point)
        self.last_mutation = {"kind": kind, "implied_verdict": IMPLIED[kind], "file": main_file}
        current = info.get("files") or {}
        changes = {p: c for p, c in mutated.items() if current.get(p) != c}
        return render_action(changes, self.format, current, main_file, submit=True)
