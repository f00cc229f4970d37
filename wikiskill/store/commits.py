"""Writing a commit object: blobs, trees and the commit in one `git fast-import` run, without
moving any ref (publishing it is a separate compare-and-swap, see workspace.py)."""

from __future__ import annotations

import time

from ..core.errors import WorkspaceError
from ..core.redact import Scrubber
from .reads import WorkspaceReads
from .trailers import PREFIX as TRAILER_PREFIX

SCRATCH_REF = "refs/wikiskill/staging"  # named in fast-import's stream only; never left in the repository
HARNESS_IDENTITY = {
    "GIT_AUTHOR_NAME": "wikiskill",
    "GIT_AUTHOR_EMAIL": "wikiskill@localhost",
    "GIT_COMMITTER_NAME": "wikiskill",
    "GIT_COMMITTER_EMAIL": "wikiskill@localhost",
}


def build_commit(
    reads: WorkspaceReads,
    parent: str | None,
    changes: dict[str, str | None],
    message: str,
    scrub_text: Scrubber,
    base: str | None = None,
    extra_parents: tuple[str, ...] = (),
) -> str:
    """Store the blobs (scrubbed), trees and commit object in one `git fast-import` run and
    return the commit's id without moving any ref (its scratch branch is reset away before it
    ends). One process instead of a temporary index and five plumbing commands: most of a
    step's git time, and its cost follows the number of changed paths, not the history's size."""
    now = f"{int(time.time())} {_utc_offset()}"
    identity = f"{HARNESS_IDENTITY['GIT_AUTHOR_NAME']} <{HARNESS_IDENTITY['GIT_AUTHOR_EMAIL']}> {now}"
    text = message.encode("utf-8")
    stream = [
        b"commit %s\nmark :1\nauthor %s\ncommitter %s\ndata %d\n%s\n"
        % (SCRATCH_REF.encode(), identity.encode(), identity.encode(), len(text), text)
    ]
    if parent:
        stream.append(b"from %s\n" % parent.encode())
    stream += [b"merge %s\n" % extra.encode() for extra in extra_parents]
    if base not in (None, parent):
        tree = reads.object_id(f"{base}^{{tree}}")
        if tree is None:
            raise WorkspaceError(f"unknown git tree {base!r}")
        stream.append(b'M 040000 %s ""\n' % tree.encode())
    for path in sorted(changes):
        quoted = _quote_path(path)
        content = changes[path]
        if content is None:
            stream.append(b"D %s\n" % quoted)
        else:
            data = scrub_text(content).encode("utf-8")
            stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (quoted, len(data), data))
    stream.append(b"\nget-mark :1\nreset %s\n\ndone\n" % SCRATCH_REF.encode())
    # Kept as a small pack: unpacking it into loose objects would cost another git process a
    # commit; `pack_objects` folds the packs together between rounds.
    return reads.git_input(["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", "--done"], b"".join(stream))


def check_path(path: str, scrub_text: Scrubber) -> None:
    """Harness writes stay inside the workspace and out of .git, and carry no secret in the name."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\0" in path
        or any(p in ("", ".", "..") for p in parts)
        or any(p.lower() == ".git" for p in parts)
    ):
        raise WorkspaceError(f"refusing to write outside the workspace: {path[:200]!r}")
    if scrub_text(path) != path:
        raise WorkspaceError("refusing to write a file whose name contains a secret")


def parse_message(message: str) -> tuple[str, dict[str, str]] | None:
    """The subject and trailers of a message shaped by `format_message` (a subject line, and a
    last paragraph of Wikiskill trailers), as `log` reads them back from git; None for any other."""
    paragraphs = message.strip().split("\n\n")
    last = paragraphs[-1].splitlines()
    if len(paragraphs) < 2 or "\n" in paragraphs[0] or not all(line.startswith(TRAILER_PREFIX) for line in last):
        return None
    trailers = {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in last)}
    return paragraphs[0].strip(), trailers


def _quote_path(path: str) -> bytes:
    """A path as fast-import reads it: C-style quoted, so spaces, quotes and line breaks survive."""
    escaped = "".join(
        {"\\": "\\\\", '"': '\\"', "\n": "\\n"}.get(c, c) if c >= " " or c == "\n" else f"\\{ord(c):03o}" for c in path
    )
    return f'"{escaped}"'.encode("utf-8", "surrogateescape")


def _utc_offset() -> str:
    """This machine's offset from UTC as git writes it (+0100), like `git commit-tree` does."""
    minutes = round(time.localtime().tm_gmtoff / 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"
