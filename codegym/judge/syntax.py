"""Syntax checks without a toolchain: compile-stage feedback from tree-sitter.

`syntax_check(language, files)` parses every source file of a language with its
tree-sitter grammar (Python with ``compile()``, which is exact) and returns `SyntaxIssue`
records (file, 1-based line and column, message). `precheck(language, files, main_file)`
is what the judge calls before running a program: when the language's toolchain is not
installed and the sources do not parse, it returns the compile-stage message (with the
toolchain present the real compiler is the authority: None). A clean check proves
nothing; a reported error is almost always a real one (docs/judge.md: how locations are
found, known gaps).

    >>> from codegym.judge.syntax import syntax_check
    >>> [str(e) for e in syntax_check("julia", {"main.jl": "function f(x)\\n    (x + 1\\nend\\n"})]
    ['main.jl:2:5: `(` is never closed']
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from codegym.core.languages import (
    UnknownLanguageError,
    extensions_of,
    get_language,
    language_name,
    language_names,
)

#: runnable languages with a tree-sitter grammar (Python is checked with compile())
_GRAMMARS = {lang.name: lang.grammar for lang in language_names()
             if lang.runnable and lang.grammar and lang.name != "python"}
SUPPORTED_LANGUAGES = ("python", *_GRAMMARS)

#: block keywords closed by ``end`` (Julia)
_END_BLOCKS = {"julia": {"function", "if", "for", "while", "begin", "let", "module", "baremodule", "struct",
                         "macro", "try", "quote", "do", "abstract", "primitive"}}
_BRACKETS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _BRACKETS.items()}
@dataclass(frozen=True)
class SyntaxIssue:
    """One syntax error: where (1-based line and column) and what."""

    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


_local = threading.local()  # tree_sitter.Parser objects are not thread-safe


@functools.cache
def _language(name: str):
    import importlib  # noqa: PLC0415

    from tree_sitter import Language  # noqa: PLC0415
    mod = importlib.import_module(_GRAMMARS[name])
    return Language(mod.language())


def _parser(name: str):
    cache = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    p = cache.get(name)
    if p is None:
        from tree_sitter import Parser  # noqa: PLC0415
        p = cache[name] = Parser(_language(name))
    return p


def _extensions(language: str) -> tuple[str, ...]:
    return extensions_of(language) or ()


def _canonical(language: str) -> str:
    lang = language_name(language)
    return lang.name if lang and lang.runnable else language


def toolchain_missing(language: str) -> bool:
    """True when the language is registered but its toolchain is not installed here."""
    try:
        return not get_language(language).available()
    except UnknownLanguageError:  # unknown language: nothing is "missing"
        return False


# --------------------------------------------------------------------------- tree-sitter


def _col(src: bytes, row: int, byte_col: int) -> int:
    """1-based character column of a (row, byte column) point."""
    lines = src.split(b"\n")
    line = lines[row] if row < len(lines) else b""
    return len(line[:byte_col].decode("utf-8", "replace")) + 1


def _text(src: bytes, node, limit: int = 30) -> str:
    t = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    t = t.split("\n", 1)[0]
    return t if len(t) <= limit else t[: limit - 3] + "..."


def _is_missing(node) -> bool:
    # py-tree-sitter does not always flag MISSING leaves; they are zero-width leaves
    # inside an erroneous subtree
    return node.is_missing or (node.child_count == 0 and node.start_byte == node.end_byte and node.has_error)


def _issue_for_error(name: str, src: bytes, node) -> tuple[tuple[int, int], str]:
    """Location and message of one ERROR node, from its direct children: the innermost
    opener left unclosed, else an unexpected closer, else the node itself."""
    blocks = _END_BLOCKS.get(name, set())
    stack: list = []
    unexpected = None
    for ch in node.children:
        t = ch.type
        if t in _BRACKETS or t in blocks:
            stack.append(ch)
        elif t in _CLOSERS or (t == "end" and blocks):
            want = _CLOSERS.get(t)
            if stack and (stack[-1].type == want or (t == "end" and stack[-1].type in blocks)):
                stack.pop()
            elif unexpected is None:
                unexpected = ch
    if stack:
        op = stack[-1]
        what = f"`{op.type}` is never closed" + (" (missing `end`)" if op.type in blocks else "")
        return (op.start_point[0], op.start_point[1]), what
    if unexpected is not None:
        return (unexpected.start_point[0], unexpected.start_point[1]), f"unexpected `{unexpected.type}`"
    if node.child_count == 0 or node.end_byte - node.start_byte <= 40:
        t = _text(src, node)
        if t.startswith(('"', "'", "`")) and len(set(t)) == 1:
            return ((node.start_point[0], node.start_point[1]),
                    f"string or character literal opened with `{t}` is never closed")
        return (node.start_point[0], node.start_point[1]), f"unexpected `{t}`"
    first = node.children[0] if node.children else node
    return ((first.start_point[0], first.start_point[1]),
            f"syntax error in the code starting with `{_text(src, first)}`")


def _tree_sitter_issues(name: str, filename: str, src: bytes, limit: int) -> list[SyntaxIssue]:
    tree = _parser(name).parse(src)
    root = tree.root_node
    if not root.has_error:
        return []
    found: list[tuple[tuple[int, int], str]] = []

    def innermost_errors(node) -> None:
        if len(found) >= limit:
            return
        if _is_missing(node):
            prev = node.prev_sibling
            after = f" after `{_text(src, prev)}`" if prev is not None else ""
            kind = node.type if not node.type.isidentifier() or node.type == "end" else node.type.replace("_", " ")
            found.append(((node.start_point[0], node.start_point[1]), f"missing {kind}{after}"))
            return
        if node.is_error:
            if not any(c.has_error or c.is_error for c in node.children):
                found.append(_issue_for_error(name, src, node))
                return
            n_before = len(found)
            for c in node.children:
                if c.has_error or c.is_error or _is_missing(c):
                    innermost_errors(c)
            if len(found) == n_before:  # the children said nothing: describe this node
                found.append(_issue_for_error(name, src, node))
            return
        for c in node.children:
            if c.has_error or c.is_error or _is_missing(c):
                innermost_errors(c)

    innermost_errors(root)
    if not found:  # has_error but no node says where: report the first line
        found.append(((0, 0), "syntax error"))
    out = []
    seen = set()
    for (row, bcol), msg in sorted(found):
        key = (row, bcol, msg)
        if key in seen:
            continue
        seen.add(key)
        out.append(SyntaxIssue(filename, row + 1, _col(src, row, bcol), msg))
    return out[:limit]


def _python_issues(filename: str, text: str) -> list[SyntaxIssue]:
    try:
        compile(text, filename, "exec", dont_inherit=True)
    except SyntaxError as e:
        return [SyntaxIssue(filename, e.lineno or 1, e.offset or 1, f"{type(e).__name__}: {e.msg}")]
    except (ValueError, RecursionError, MemoryError) as e:
        return [SyntaxIssue(filename, 1, 1, f"{type(e).__name__}: {e}")]
    return []


def syntax_check(language: str, files: Mapping[str, str | bytes], limit: int = 10) -> list[SyntaxIssue]:
    """Syntax errors of the `language` sources among `files` ({path: text}); [] when
    they parse, or when no checker exists for the language (see SUPPORTED_LANGUAGES).
    Files of other languages (by extension) are ignored. Nothing is run."""
    lang = _canonical(language)
    if lang not in SUPPORTED_LANGUAGES:
        return []
    exts = _extensions(lang)
    issues: list[SyntaxIssue] = []
    for path in sorted(files):
        if exts and not path.endswith(exts):
            continue
        content = files[path]
        if lang == "python":
            text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
            issues.extend(_python_issues(path, text))
        else:
            src = content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass")
            try:
                issues.extend(_tree_sitter_issues(lang, path, src, limit))
            except ImportError:
                return []  # grammar not installed: no check
        if len(issues) >= limit:
            break
    return issues[:limit]


def format_issues(issues: list[SyntaxIssue], language: str | None = None, note: str = "") -> str:
    """Compiler-like text of some issues (one per line), with an optional closing note."""
    head = f"syntax errors ({language}, checked with tree-sitter):" if language else "syntax errors:"
    lines = [head] + [str(i) for i in issues]
    if note:
        lines.append(note)
    return "\n".join(lines)


def precheck(language: str, files: Mapping[str, str | bytes], main_file: str | None = None) -> str | None:
    """The judge's compile-stage hook for languages whose toolchain is missing here.

    Returns None when the toolchain is installed (the real compiler decides), when the
    language has no checker, or when the sources parse; otherwise a compile_error
    message naming each error as ``file:line:column: message`` and what to install to
    run the program. `main_file` limits the check to that file (plus other files of
    the language) -- it is only used to order the report."""
    lang = _canonical(language)
    if lang == "python" or lang not in SUPPORTED_LANGUAGES or not toolchain_missing(lang):
        return None
    issues = syntax_check(lang, files)
    if not issues:
        return None
    if main_file:
        issues.sort(key=lambda i: (i.file != main_file, i.file, i.line, i.column))
    try:
        note = f"({get_language(lang).missing_message()}; the program was not run)"
    except Exception:  # noqa: BLE001
        note = f"(the {lang} toolchain is not installed; the program was not run)"
    return format_issues(issues, lang, note)
