"""Scopes and statements per language, from tree-sitter trees.

`Outline` labels each line of one file version with its scope path (the named
functions, classes, structs, namespaces, modules around it, outermost first)
and, at statement granularity, the index of the top-level statement of that
scope's body it belongs to. The per-language rules (`SPECS`: Python, C, C++,
JavaScript, Julia) say which nodes are scopes and where their bodies are.
Blank and comment lines take their neighbours' labels (`resolve_labels`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from codegym.edits.textdiff import line_text


def _text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _named(node) -> list:
    return [c for c in node.named_children if "comment" not in c.type]


def _first_named(node):
    for c in node.named_children:
        if "comment" not in c.type:
            return c
    return None


_C_NAME_TYPES = {"identifier", "field_identifier", "qualified_identifier", "destructor_name",
                 "operator_name", "type_identifier", "template_function", "operator_cast",
                 "namespace_identifier"}


def _c_declarator_name(node) -> str | None:
    d = node.child_by_field_name("declarator")
    for _ in range(16):
        if d is None:
            return None
        if d.type in _C_NAME_TYPES:
            return _text(d)
        nxt = d.child_by_field_name("declarator")
        if nxt is None:  # e.g. reference_declarator has no field name
            named = d.named_children
            nxt = named[-1] if named else None
        d = nxt
    return None


def _julia_call_name(node) -> str | None:
    """Callee of the first call_expression at the head of a Julia signature."""
    n = node
    for _ in range(8):
        if n is None:
            return None
        if n.type == "call_expression":
            return _text(_first_named(n))
        if n.type in ("identifier", "field_expression"):
            return _text(n)
        n = _first_named(n)
    return None


def _python_scope(node):
    t = node.type
    if t in ("function_definition", "class_definition"):
        if node.parent is not None and node.parent.type == "decorated_definition":
            return None
        return ("function" if t == "function_definition" else "class",
                _text(node.child_by_field_name("name")))
    if t == "decorated_definition":
        d = node.child_by_field_name("definition")
        if d is None:
            return None
        return ("function" if d.type == "function_definition" else "class",
                _text(d.child_by_field_name("name")))
    return None


def _python_body(node):
    if node.type == "decorated_definition":
        node = node.child_by_field_name("definition") or node
    return node.child_by_field_name("body")


_C_AGGREGATES = {"struct_specifier": "struct", "union_specifier": "union",
                 "enum_specifier": "enum", "class_specifier": "class"}


def _c_scope(node):
    t = node.type
    if t == "function_definition":
        return ("function", _c_declarator_name(node) or "<anonymous>")
    if t in _C_AGGREGATES:
        if node.child_by_field_name("body") is None:
            return None
        name = node.child_by_field_name("name")
        if name is None and node.parent is not None and node.parent.type == "type_definition":
            name = node.parent.child_by_field_name("declarator")
        return (_C_AGGREGATES[t], _text(name) if name is not None else "<anonymous>")
    if t == "namespace_definition":
        name = node.child_by_field_name("name")
        return ("namespace", _text(name) if name is not None else "<anonymous>")
    if t == "lambda_expression":
        p = node.parent
        if p is not None and p.type == "init_declarator":
            return ("function", _text(p.child_by_field_name("declarator")))
    return None


def _js_function_name(node) -> str | None:
    name = node.child_by_field_name("name")
    if name is not None:
        return _text(name)
    p = node.parent
    if p is None:
        return None
    if p.type == "variable_declarator":
        return _text(p.child_by_field_name("name"))
    if p.type == "pair":
        return _text(p.child_by_field_name("key"))
    if p.type == "assignment_expression":
        return _text(p.child_by_field_name("left"))
    if p.type in ("public_field_definition", "field_definition"):
        return _text(p.child_by_field_name("property") or p.child_by_field_name("name"))
    return None


def _js_scope(node):
    t = node.type
    if t in ("function_declaration", "generator_function_declaration", "method_definition"):
        return ("function", _text(node.child_by_field_name("name")))
    if t in ("class_declaration", "class"):
        name = _js_function_name(node)
        return ("class", name) if name else None
    if t in ("arrow_function", "function_expression", "function", "generator_function"):
        name = _js_function_name(node)
        return ("function", name) if name else None
    return None


def _js_body(node):
    body = node.child_by_field_name("body")
    if body is not None and body.type not in ("statement_block", "class_body"):
        return None  # arrow function with an expression body: a single statement
    return body


_JULIA_SCOPES = {"function_definition": "function", "macro_definition": "macro",
                 "struct_definition": "struct", "module_definition": "module",
                 "baremodule_definition": "module"}


def _julia_scope(node):
    t = node.type
    if t in ("function_definition", "macro_definition"):
        sig = _first_named(node)
        return (_JULIA_SCOPES[t], (_julia_call_name(sig) if sig is not None else None) or "<anonymous>")
    if t == "struct_definition":
        head = _first_named(node)
        ident = head
        for _ in range(8):
            if ident is None or ident.type == "identifier":
                break
            ident = _first_named(ident)
        return ("struct", _text(ident) if ident is not None else "<anonymous>")
    if t in ("module_definition", "baremodule_definition"):
        name = node.child_by_field_name("name") or _first_named(node)
        return ("module", _text(name))
    if t == "assignment":
        lhs = _first_named(node)
        while lhs is not None and lhs.type in ("where_expression", "typed_expression"):
            lhs = _first_named(lhs)
        if lhs is not None and lhs.type == "call_expression":
            return ("function", _text(_first_named(lhs)))
    return None


def _julia_statements(node) -> list:
    if node.type in ("source_file",):
        return _named(node)
    if node.type == "assignment":
        return []
    return _named(node)[1:]  # the first named child is the signature / name


class _LangSpec:
    def __init__(self, scope: Callable, body: Callable | None, statements: Callable | None = None):
        self.scope = scope
        self.body = body
        self.statements = statements


SPECS = {
    "python": _LangSpec(_python_scope, _python_body),
    "c": _LangSpec(_c_scope, lambda n: n.child_by_field_name("body")),
    "cpp": _LangSpec(_c_scope, lambda n: n.child_by_field_name("body")),
    "javascript": _LangSpec(_js_scope, _js_body),
    "julia": _LangSpec(_julia_scope, None, _julia_statements),
}

# A label is (scope path, statement index or None); a scope path is a tuple of
# (kind, name) from the outermost scope inwards.
_BLANK = object()
_COMMENT = object()
Label = tuple[tuple[tuple[str, str], ...], Hashable]
MODULE: Label = ((), None)


class Outline:
    """Scope/statement labels of the lines of one file version."""

    def __init__(self, lines: list[str], language: str | None, statements: bool, tree=None):
        self.lines = lines
        self.statements = statements
        self.spec = SPECS.get(language) if language else None
        self.tree = tree if self.spec is not None else None
        self._body_cache: dict[int, list | None] = {}
        self._path_cache: dict[int, tuple] = {}

    def raw_label(self, row: int, force: bool = False):
        """Label of line `row`, or _BLANK/_COMMENT (unless `force`)."""
        line = line_text(self.lines[row])
        stripped = line.lstrip()
        if not stripped and not force:
            return _BLANK
        if self.tree is None:
            return MODULE
        col = len(line[: len(line) - len(stripped)].encode("utf-8", "surrogateescape"))
        root = self.tree.root_node
        node = root.descendant_for_point_range((row, col), (row, col))
        if node is None:
            return MODULE
        if not force and "comment" in node.type:
            return _COMMENT
        path, inner = self._scope_path(node)
        stmt = None
        if self.statements:
            stmt = self._statement_index(inner if inner is not None else root, row)
        return (path, stmt)

    def _scope_path(self, node):
        """(scope path from the root down to `node`, innermost scope node or None).

        Memoised per node: the lines of one block share most of their ancestors, so
        the walk up stops at the first ancestor already seen."""
        cache = self._path_cache
        chain = []
        hit = None
        n = node
        while n is not None:
            hit = cache.get(n.id)
            if hit is not None:
                break
            chain.append(n)
            n = n.parent
        path, inner = hit if hit is not None else ((), None)
        for m in reversed(chain):
            s = self.spec.scope(m)
            if s is not None:
                path = (*path, s)
                inner = m
            cache[m.id] = (path, inner)
        return path, inner

    def _statement_index(self, scope_node, row: int) -> int:
        key = scope_node.id
        if key not in self._body_cache:
            spec = self.spec
            assert spec is not None  # (only a language with a spec has a tree, so statements)
            if spec.statements is not None:
                stmts = spec.statements(scope_node)
            elif scope_node.parent is None:  # module level
                stmts = _named(scope_node)
            else:
                body = spec.body(scope_node) if spec.body is not None else None
                stmts = _named(body) if body is not None else None
            self._body_cache[key] = stmts
        stmts = self._body_cache[key]
        if not stmts:
            return -1 if stmts is None or row < scope_node.start_point.row else 0
        best = -1  # header lines, before the first statement
        for i, st in enumerate(stmts):
            if st.start_point.row > row:
                break
            best = i  # a line after the last statement (closing brace, "end") joins it
            if row <= st.end_point.row:
                break
        return best


def resolve_labels(raw: list, outline: Outline, rows: range) -> list[Label]:
    """Give blank and comment lines the label of their neighbours."""
    out = list(raw)
    nxt = None
    for k in range(len(out) - 1, -1, -1):
        if out[k] is _COMMENT:
            out[k] = nxt if nxt is not None else _BLANK
        elif out[k] is not _BLANK:
            nxt = out[k]
    prev = None
    for k, x in enumerate(out):
        if x is _BLANK:
            out[k] = prev
        else:
            prev = x
    first = next((x for x in out if x is not None), None)
    if first is None:  # only blank lines: label them where they are
        first = outline.raw_label(rows[0], force=True) if len(rows) else MODULE
    return [first if x is None else x for x in out]


def common_label(labels: Iterable[Label]) -> Label:
    labels = list(labels)
    if not labels:
        return MODULE
    paths = [lab[0] for lab in labels]
    prefix = paths[0]
    for p in paths[1:]:
        n = 0
        while n < min(len(prefix), len(p)) and prefix[n] == p[n]:
            n += 1
        prefix = prefix[:n]
    stmts = {lab[1] for lab in labels}
    same_path = all(p == prefix for p in paths)
    return (prefix, stmts.pop() if same_path and len(stmts) == 1 else None)


def scope_name(path: tuple[tuple[str, str], ...]) -> str:
    if not path:
        return "module"
    return f"{path[0][0]}:" + ".".join(name for _, name in path)
