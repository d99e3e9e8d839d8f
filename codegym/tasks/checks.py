"""What the task schema cannot express: defaults that depend on the kind and the
language (`fill_defaults`), and the checks across fields (`semantic_errors`: known
languages, an entry point for function tasks, test cases in their kind's form,
main files, the solutions perf names). Both work on the plain YAML mapping, tolerant
of wrong types (those are the schema's to report), so the loader can give each
problem its own path and line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from codegym.core.yamldoc import Loc
from codegym.tasks.fields import KINDS, canonical_language, known_languages, language_main_file

#: (path, message, path whose line to report or None for `path`)
Problem = tuple[Loc, str, "Loc | None"]

#: test-case keys that belong to one kind's input form
_FORM_FIELDS = {
    "stdio": ("stdin", "stdin_file", "generator", "expected", "expected_file"),
    "function": ("args", "kwargs", "expected"),
    "script": ("code",),
    "repo": ("command", "tests"),
}
_FORM_HINT = {"stdio": "stdin/stdin_file/generator and expected", "function": "args/kwargs and expected",
              "script": "code", "repo": "command and tests"}


def fill_defaults(data: dict) -> dict:
    """Kind- and language-dependent defaults (a copy; the input is not modified)."""
    d = dict(data)
    kind = d.get("kind") or "stdio"
    lang = d.get("language") or "python"
    if d.get("checker") is None:
        d["checker"] = {"type": "exact" if kind == "function" else "tokens"}
    if not d.get("main_file") and kind != "repo" and isinstance(lang, str):
        main = language_main_file(lang)
        if main:
            d["main_file"] = main
    if not d.get("title") and isinstance(d.get("id"), str):
        d["title"] = d["id"]
    sols = d.get("solutions")
    if isinstance(sols, dict):
        d["solutions"] = {k: ({**v, "language": lang} if isinstance(v, dict) and not v.get("language")
                              else v) for k, v in sols.items()}
    return d


def _mapping(v: Any) -> dict:
    """`v` when it is a mapping of the document, else an empty one (the schema reports its type)."""
    return v if isinstance(v, dict) else {}


def semantic_errors(d: dict) -> list[Problem]:
    """Checks the schema cannot express, on the merged YAML mapping, in file order."""
    out: list[Problem] = []
    kind = d.get("kind", "stdio")
    kind = kind if kind in KINDS else None
    lang = d.get("language", "python")

    def check_lang(value: Any, loc: Loc) -> str | None:
        if not isinstance(value, str):
            return None
        canon = canonical_language(value)
        if canon is None:
            out.append((loc, f"unknown language {value!r}; known: {', '.join(known_languages())}", None))
        return canon

    canon_lang = check_lang(lang, ("language",))
    canon_langs = _languages_errors(d, canon_lang, check_lang, out)
    entry = d.get("entry_point")
    if kind == "function" and not entry:
        out.append((("entry_point",), "required for function tasks (the name of the callable)",
                    ("kind",)))
    if kind in ("stdio", "repo") and entry:
        out.append((("entry_point",), f"only function and script tasks have an entry point "
                                      f"(this task is {kind})", None))

    if d.get("preamble") is not None and (kind == "repo" or canon_lang not in (None, "python")):
        out.append((("preamble",), "only Python stdio, function and script tasks run a preamble", None))

    sols, perf, tests = _mapping(d.get("solutions")), _mapping(d.get("perf")), _mapping(d.get("tests"))
    ref_name = perf.get("reference", "reference")
    has_ref = isinstance(ref_name, str) and ref_name in sols
    if kind is not None:
        out.extend(_tests_errors(tests, kind, has_ref, ref_name))
    _solutions_errors(d, sols, kind, lang, canon_lang, canon_langs, check_lang, out)
    out.extend(_perf_errors(d, sols, perf, tests, has_ref, ref_name))
    chk = d.get("checker")
    if isinstance(chk, dict):
        out.extend(_checker_errors(chk, ("checker",), check_lang))
    return out


def _languages_errors(d: dict, canon_lang: str | None, check_lang: Callable,
                      out: list[Problem]) -> list[str]:
    """Check `languages` (unknown names go to `out` through `check_lang`); its canonical names."""
    langs = d.get("languages")
    canon_langs: list[str] = []
    if isinstance(langs, list):
        for i, x in enumerate(langs):
            c = check_lang(x, ("languages", i))
            if c:
                canon_langs.append(c)
        if canon_lang and canon_langs and canon_lang not in canon_langs:
            out.append((("languages",), f"does not include the task's language {canon_lang!r}", None))
    return canon_langs


def _tests_errors(tests: dict, kind: str, has_ref: bool, ref_name: Any) -> list[Problem]:
    out: list[Problem] = []
    for split, cases in tests.items():
        if not isinstance(cases, list):
            continue
        names: dict[str, int] = {}
        for i, case in enumerate(cases):
            if not isinstance(case, dict):
                continue
            out.extend(_case_errors(case, ("tests", split, i), kind, has_ref, ref_name))
            nm = case.get("name")
            if isinstance(nm, str):
                if nm in names:
                    out.append((("tests", split, i, "name"),
                                f"duplicate case name {nm!r} (also case {names[nm]})", None))
                else:
                    names[nm] = i
    return out


def _solutions_errors(d: dict, sols: dict, kind: str | None, lang: Any, canon_lang: str | None,
                      canon_langs: list[str], check_lang: Callable, out: list[Problem]) -> None:
    """Solutions and starter: known language, a main file to start from (problems go to
    `out`, in order with those `check_lang` adds there)."""
    main_file = d.get("main_file")
    for name, sol in sols.items():
        if not isinstance(sol, dict):
            continue
        sl = sol.get("language") or lang
        c = check_lang(sol.get("language"), ("solutions", name, "language")) if sol.get("language") \
            else canon_lang
        files = sol.get("files")
        if c and isinstance(files, dict) and files and kind != "repo":
            want = main_file if (c == canon_lang and main_file) else language_main_file(c)
            if want and want not in files:
                out.append((("solutions", name, "files"),
                            f"has no {want} (the main file of {sl})", None))
        if c and canon_langs and c not in canon_langs:
            out.append((("solutions", name, "language"),
                        f"{c!r} is not one of the task's languages", None))
    starter = d.get("starter")
    if isinstance(starter, dict) and starter and kind != "repo" and canon_lang:
        want = main_file or language_main_file(canon_lang)
        if want and want not in starter:
            out.append((("starter",), f"has no {want} (the main file)", None))


def _perf_errors(d: dict, sols: dict, perf: dict, tests: dict, has_ref: bool,
                 ref_name: Any) -> list[Problem]:
    """The solutions `perf` names must exist; perf tests need a reference and a baseline."""
    out: list[Problem] = []
    perf_given = isinstance(d.get("perf"), dict)
    perf_cases = tests.get("perf") if isinstance(tests.get("perf"), list) else []
    if perf_given and "reference" in perf and isinstance(ref_name, str) and not has_ref:
        out.append((("perf", "reference"), f"names a missing solution {ref_name!r} "
                                           f"(solutions: {', '.join(map(str, sols)) or 'none'})", None))
    elif perf_cases and not has_ref:
        out.append((("tests", "perf"), f"perf tests need a reference solution; there is no "
                                       f"solution named {ref_name!r}", None))
    base = perf.get("baseline")
    if isinstance(base, str) and base != "starter" and base not in sols:
        out.append((("perf", "baseline"), f"names a missing solution {base!r} "
                                          f"(solutions: {', '.join(map(str, sols)) or 'none'})", None))
    starter = d.get("starter")
    if perf_cases and base in (None, "starter") and not (isinstance(starter, dict) and starter):
        out.append((("perf", "baseline"), "perf tests need a baseline: name a solution here "
                                          "or give starter files", ("tests", "perf")))
    return out


def _checker_errors(chk: dict, loc: Loc, check_lang: Callable) -> list[Problem]:
    out: list[Problem] = []
    if chk.get("type") == "program":
        if chk.get("code") is None and "file" not in chk:
            out.append((loc, "a program checker needs code or file", None))
        if "language" in chk:
            check_lang(chk["language"], loc + ("language",))
    return out


def _case_errors(case: dict, loc: Loc, kind: str, has_ref: bool, ref_name: Any) -> list[Problem]:
    out: list[Problem] = []
    own = _FORM_FIELDS[kind]
    for key in case:
        for other, fields in _FORM_FIELDS.items():
            if other != kind and key in fields and key not in own:
                out.append((loc + (key,), f"not a field of {kind} test cases "
                                          f"(those use {_FORM_HINT[kind]})", None))
                break
    computable = (f"no expected output and no reference solution to compute it "
                  f"(no solution named {ref_name!r})")
    if kind == "stdio":
        has_in = "stdin" in case or "stdin_file" in case
        if "generator" in case and has_in:
            out.append((loc + ("generator",), "give either stdin or generator, not both", None))
        elif not has_in and "generator" not in case:
            out.append((loc, "needs stdin, stdin_file or generator", None))
        if "expected" in case and not isinstance(case["expected"], str):
            out.append((loc + ("expected",), "expected string (quote numbers in YAML so that "
                                             "they keep their exact text)", None))
        elif "expected" not in case and "expected_file" not in case and not has_ref:
            out.append((loc, computable, None))
    elif kind == "function":
        if "expected" not in case and not has_ref:
            out.append((loc, computable, None))
    elif kind == "script":
        if "code" not in case:
            out.append((loc, "needs code (the test code run after the candidate's)", None))
    elif kind == "repo":
        if "command" not in case:
            out.append((loc, "needs command (argv of the test command)", None))
    if isinstance(case.get("generator"), dict) and "language" in case["generator"]:
        lang = case["generator"]["language"]
        if isinstance(lang, str) and canonical_language(lang) is None:
            out.append((loc + ("generator", "language"), f"unknown language {lang!r}", None))
    if isinstance(case.get("checker"), dict):
        def check_lang(value: Any, at: Loc) -> None:
            if isinstance(value, str) and canonical_language(value) is None:
                out.append((at, f"unknown language {value!r}", None))
        out.extend(_checker_errors(case["checker"], loc + ("checker",), check_lang))
    return out
