"""Dockerfiles from strangers, read before anything is built: instructions and the images they name.

A build makes the engine fetch every image the Dockerfile names that it lacks -- not only
``FROM`` but ``COPY --from=<image>`` / ``ADD --from=`` and ``RUN --mount=...,from=<image>``
-- and the daemon itself downloads ``ADD <url>``, whatever the build's network mode. So
each of those is found here first (`image_refs`, `remote_sources`) and checked by the
caller against the local engine (`missing_images`).

`parse` reads the instruction stream as Docker's parser does: parser directives
(``# escape=`` ...), comment lines, line continuations with the escape character
(also inside comments and blank lines of a continued instruction), heredocs
(``RUN <<EOF``), case-insensitive keywords. Global ``ARG`` defaults (those before
the first ``FROM``) are substituted in ``FROM``; a stage's own ``ARG`` defaults too in
``--from``. Stage names and indices, and ``scratch``, are not images. `substitute`
rewrites chosen image references (a local stand-in for a base image) and keeps the
line numbers. Errors are `DockerfileError`, one line naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: the largest Dockerfile read
MAX_BYTES = 1 << 20
MAX_INSTRUCTIONS = 10_000

_DIRECTIVE = re.compile(r"^#\s*([a-zA-Z][a-zA-Z0-9_-]*)\s*=\s*(.*?)\s*$")
_HEREDOC = re.compile(r"<<(-?)\s*([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
_VAR = re.compile(r"\$(?:\{(\w+)(?::([-+])([^}]*))?\}|(\w+))")


class DockerfileError(ValueError):
    """A Dockerfile that cannot be read or names something not allowed (names the file and line)."""


@dataclass
class Instruction:
    """One instruction: its keyword (upper case), its arguments with continuations joined,
    its first and last physical line (1-based) and any heredoc bodies."""

    keyword: str
    args: str
    line: int
    end: int
    heredocs: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ImageRef:
    """An image a build needs: `image` as resolved, `raw` as written, `how` it is used
    (``FROM``, ``COPY --from``, ``RUN --mount``), the line and the instruction's index."""

    image: str
    raw: str
    how: str
    line: int
    index: int


def _split_physical(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def parse(text: str, where: str = "Dockerfile") -> list[Instruction]:
    """The instructions of Dockerfile `text` (see the module docstring)."""
    if len(text) > MAX_BYTES:
        raise DockerfileError(f"{where}: larger than {MAX_BYTES} bytes")
    lines = _split_physical(text)
    escape = "\\"
    i = 0
    # parser directives: leading '# key=value' lines (no blank line, no other comment before)
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i].strip())
        if not m:
            break
        if m.group(1).lower() == "escape":
            if m.group(2) not in ("\\", "`"):
                raise DockerfileError(f"{where}:{i + 1}: escape directive must be \\ or `, not {m.group(2)!r}")
            escape = m.group(2)
        i += 1
    cont = re.compile(re.escape(escape) + r"[ \t]*$")
    out: list[Instruction] = []
    while i < len(lines):
        raw = lines[i]
        s = raw.strip()
        if not s or s.startswith("#"):
            i += 1
            continue
        start = i
        parts: list[str] = []
        line = raw
        while True:
            m = cont.search(line)
            if m is None:
                parts.append(line)
                break
            parts.append(line[:m.start()])
            i += 1
            # continued: comment lines and blank lines inside an instruction are skipped
            while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
                i += 1
            if i >= len(lines):
                break
            line = lines[i]
        joined = "".join(parts).strip()
        keyword, _, args = joined.partition(" ")
        if not re.fullmatch(r"[A-Za-z]+", keyword.split("\t")[0]):
            raise DockerfileError(f"{where}:{start + 1}: not an instruction: {joined[:60]!r}")
        if "\t" in keyword:
            keyword, _, rest = keyword.partition("\t")
            args = rest + " " + args
        ins = Instruction(keyword.upper(), args.strip(), start + 1, i + 1)
        if ins.keyword in ("RUN", "COPY", "ADD"):
            for m in _HEREDOC.finditer(ins.args):
                strip_tabs, word = m.group(1) == "-", m.group(3)
                body = []
                while True:
                    i += 1
                    if i >= len(lines):
                        raise DockerfileError(f"{where}:{ins.line}: heredoc <<{word} is never closed")
                    cur = lines[i].lstrip("\t") if strip_tabs else lines[i]
                    if cur == word:
                        break
                    body.append(lines[i])
                ins.heredocs.append("\n".join(body))
                ins.end = i + 1
        out.append(ins)
        if len(out) > MAX_INSTRUCTIONS:
            raise DockerfileError(f"{where}: more than {MAX_INSTRUCTIONS} instructions")
        i += 1
    return out


def _expand(value: str, env: dict[str, str], where: str, line: int) -> str:
    def one(m: re.Match) -> str:
        name = m.group(1) or m.group(4)
        if name not in env:
            raise DockerfileError(f"{where}:{line}: ${name}: a build argument with no default (codegym passes "
                                  "no build arguments)")
        val = env[name]
        if m.group(2) == "-":
            return val or m.group(3)
        if m.group(2) == "+":
            return m.group(3) if val else ""
        return val
    return _VAR.sub(one, value)


def _args_defaults(args: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for tok in args.split():
        name, eq, val = tok.partition("=")
        if re.fullmatch(r"\w+", name):
            out[name] = val.strip("\"'") if eq else out.get(name, "")
    return out


def _flags(args: str) -> tuple[list[tuple[str, str]], str]:
    """(--flag=value pairs, the rest) of an instruction's arguments."""
    flags: list[tuple[str, str]] = []
    rest = args
    while True:
        m = re.match(r"--([a-zA-Z-]+)(?:=(\S*))?\s*", rest)
        if not m:
            return flags, rest
        flags.append((m.group(1).lower(), m.group(2) or ""))
        rest = rest[m.end():]


def image_refs(text: str, where: str = "Dockerfile") -> list[ImageRef]:
    """Every external image the Dockerfile's build needs, in order, each once per use
    (stage names and indices and ``scratch`` left out)."""
    instrs = parse(text, where)
    global_args: dict[str, str] = {}
    stage_args: dict[str, str] = {}
    stages: list[str] = []       # lower-cased stage names ('' for unnamed)
    seen_from = False
    refs: list[ImageRef] = []

    def external(name: str) -> bool:
        low = name.lower()
        return low != "scratch" and low not in stages and not (name.isdigit() and int(name) < len(stages))

    for idx, ins in enumerate(instrs):
        if ins.keyword == "ARG":
            (stage_args if seen_from else global_args).update(_args_defaults(ins.args))
        elif ins.keyword == "FROM":
            seen_from = True
            flags, rest = _flags(ins.args)
            toks = rest.split()
            if not toks:
                raise DockerfileError(f"{where}:{ins.line}: FROM names no image")
            raw = toks[0]
            image = _expand(raw, global_args, where, ins.line)
            if not image or "$" in image:
                raise DockerfileError(f"{where}:{ins.line}: FROM {raw}: resolves to no image name ({image!r})")
            if external(image):
                refs.append(ImageRef(image, raw, "FROM", ins.line, idx))
            name = toks[2].lower() if len(toks) >= 3 and toks[1].lower() == "as" else ""
            stages.append(name)
            stage_args = {}
        elif ins.keyword in ("COPY", "ADD", "RUN"):
            flags, _ = _flags(ins.args)
            env = {**global_args, **stage_args}
            for key, val in flags:
                if key == "from" and ins.keyword in ("COPY", "ADD"):
                    image = _expand(val, env, where, ins.line)
                    if external(image):
                        refs.append(ImageRef(image, val, f"{ins.keyword} --from", ins.line, idx))
                elif key == "mount" and ins.keyword == "RUN":
                    for item in val.split(","):
                        k, _, v = item.partition("=")
                        if k.strip().lower() == "from" and v:
                            image = _expand(v.strip(), env, where, ins.line)
                            if external(image):
                                refs.append(ImageRef(image, v.strip(), "RUN --mount", ins.line, idx))
        elif ins.keyword == "ONBUILD":
            continue
    if not seen_from:
        raise DockerfileError(f"{where}: no FROM line")
    return refs


def remote_sources(text: str, where: str = "Dockerfile") -> list[tuple[int, str]]:
    """(line, source) of every ``ADD`` source the daemon would download (a URL or a git
    repository): those fetch from the network whatever the build's network mode."""
    out = []
    for ins in parse(text, where):
        if ins.keyword != "ADD":
            continue
        _, rest = _flags(ins.args)
        rest = rest.strip()
        if rest.startswith("["):
            srcs = re.findall(r'"((?:[^"\\]|\\.)*)"', rest)[:-1]
        else:
            srcs = rest.split()[:-1]
        out += [(ins.line, s) for s in srcs if re.match(r"(?i)(https?|git|ssh)://|git@", s)]
    return out


def substitute(text: str, replace: dict[str, str], where: str = "Dockerfile") -> str:
    """`text` with each reference to an image in `replace` (resolved name -> new name)
    rewritten, line numbers kept."""
    lines = _split_physical(text)
    instrs = parse(text, where)
    for ref in image_refs(text, where):
        if ref.image not in replace:
            continue
        ins = instrs[ref.index]
        new = replace[ref.image].replace("\\", "\\\\")
        pat = re.compile(r"(?<![^\s=,])" + re.escape(ref.raw) + r"(?![^\s,])")
        done = False
        for n in range(ins.line - 1, ins.end):
            if pat.search(lines[n]):
                lines[n] = pat.sub(new, lines[n], count=1)
                done = True
                break
        if not done:   # split across continuation lines: the instruction on one line
            args = pat.sub(new, ins.args, count=1)
            lines[ins.line - 1] = f"{ins.keyword} {args}"
            for n in range(ins.line, ins.end):
                lines[n] = ""
    return "\n".join(lines)


def missing_images(client, refs: list[ImageRef]) -> list[ImageRef]:
    """The references whose image the engine does not have (each image once)."""
    import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
    out, seen = [], set()
    for ref in refs:
        if ref.image in seen:
            continue
        seen.add(ref.image)
        try:
            client.images.get(ref.image)
        except docker.errors.ImageNotFound:
            out.append(ref)
        except docker.errors.APIError as e:   # e.g. an invalid reference format
            raise DockerfileError(f"line {ref.line}: {ref.how} {ref.raw}: {e.explanation or e}") from None
    return out
