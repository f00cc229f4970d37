"""Dockerfile heredocs (`RUN <<EOF`, `COPY <<EOF /path`, BuildKit's Dockerfile 1.4 syntax)
rewritten for a builder that has none, with the meaning BuildKit gives them:

- `RUN <<EOF` with nothing else: the body is the script, run by the stage's shell (`SHELL`,
  else `/bin/sh -c`); a body starting with `#!` is written to a file and executed instead.
- `RUN command <<EOF ...`: the instruction and its heredocs are handed to the shell whole, which
  reads the heredocs itself (`<<-` and quoted delimiters as the shell has them).
- `COPY`/`ADD` `<<NAME dest`: the body becomes a file named NAME in the build context, copied
  like any other source. Unlike BuildKit, an unquoted body's `$VAR` is not expanded.

Every rewritten RUN is the exec form (`RUN ["/bin/sh", "-c", "..."]`), which the classic
builder reads as JSON, so a script of many lines stays one instruction."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

MARKER = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_.-]*)\2")
INSTRUCTION = re.compile(r"^\s*(RUN|COPY|ADD|SHELL|FROM)\s+(.*)$", re.IGNORECASE | re.DOTALL)
FILES_DIR = ".wikiskill-heredoc"
DEFAULT_SHELL = ["/bin/sh", "-c"]
RUN_FILE = 'f=$(mktemp) && printf "%s\\n" "$1" > "$f" && chmod +x "$f" && "$f"; s=$?; rm -f "$f"; exit $s'
"""Runs a body that starts with `#!` as an executable file, as BuildKit does."""


@dataclass(frozen=True)
class Heredoc:
    marker: re.Match[str]
    body: list[str]
    """Its lines, leading tabs stripped for `<<-`."""
    raw: list[str]
    """Its lines as written, the closing delimiter included."""

    @property
    def name(self) -> str:
        return self.marker.group(3)


@dataclass
class Lowered:
    dockerfile: str
    files: dict[str, str] = field(default_factory=dict)
    """Paths relative to the build context, and their content."""


def uses_heredocs(dockerfile: str) -> bool:
    return any(
        (match := INSTRUCTION.match(line)) and match.group(1).upper() in ("RUN", "COPY", "ADD") and MARKER.search(line)
        for line in dockerfile.splitlines()
    )


def lower(dockerfile: str) -> Lowered:
    """The Dockerfile without heredocs, and the files its COPY heredocs became."""
    lines = dockerfile.split("\n")
    out: list[str] = []
    files: dict[str, str] = {}
    shell = DEFAULT_SHELL
    index = 0
    while index < len(lines):
        first = index
        while lines[index].rstrip().endswith("\\") and index + 1 < len(lines):
            index += 1
        instruction = "\n".join(lines[first : index + 1])
        index += 1
        match = INSTRUCTION.match(instruction)
        keyword = match.group(1).upper() if match else ""
        if keyword == "FROM":
            shell = DEFAULT_SHELL
        elif keyword == "SHELL":
            shell = json.loads(match.group(2)) if match else shell
        markers = list(MARKER.finditer(instruction)) if keyword in ("RUN", "COPY", "ADD") else []
        if not match or not markers:
            out.append(instruction)
            continue
        heredocs = []
        for marker in markers:
            strip = marker.group(1) == "-"
            start = index
            while index < len(lines) and (lines[index].lstrip("\t") if strip else lines[index]) != marker.group(3):
                index += 1
            body = [line.lstrip("\t") if strip else line for line in lines[start:index]]
            heredocs.append(Heredoc(marker, body, lines[start : index + 1]))
            index += 1
        if keyword == "RUN":
            out.append(_run(match.group(2), heredocs, shell))
        else:
            out.append(_copy(keyword, match.group(2), heredocs, files))
    return Lowered("\n".join(out), files)


def _flags(arguments: str) -> tuple[str, str]:
    """The leading `--flag` words of an instruction's arguments, and the rest."""
    words = arguments.split(" ")
    flags = []
    while words and words[0].startswith("--"):
        flags.append(words.pop(0))
    return " ".join(flags), " ".join(words)


def _run(arguments: str, heredocs: list[Heredoc], shell: list[str]) -> str:
    flags, command = _flags(arguments)
    if len(heredocs) == 1 and command.strip() == heredocs[0].marker.group(0):
        script = "\n".join(heredocs[0].body)
        argv = ["/bin/sh", "-c", RUN_FILE, "sh", script] if script.startswith("#!") else [*shell, script]
    else:
        argv = [*shell, "\n".join([command, *(line for heredoc in heredocs for line in heredoc.raw)])]
    return " ".join(part for part in ("RUN", flags, json.dumps(argv)) if part)


def _copy(keyword: str, arguments: str, heredocs: list[Heredoc], files: dict[str, str]) -> str:
    for heredoc in heredocs:
        path = f"{FILES_DIR}/{len(files)}/{heredoc.name}"
        files[path] = "\n".join(heredoc.body) + "\n"
        arguments = arguments.replace(heredoc.marker.group(0), path, 1)
    return f"{keyword} {arguments}"


def write_files(lowered: Lowered, context: Path) -> None:
    """Write the lowered Dockerfile's heredoc files into `context` (a copy), where a
    .dockerignore cannot hide them."""
    for relative, content in lowered.files.items():
        path = context / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    ignore = context / ".dockerignore"
    if lowered.files and ignore.is_file():
        ignore.write_text(ignore.read_text(encoding="utf-8").rstrip("\n") + f"\n!{FILES_DIR}\n", encoding="utf-8")
