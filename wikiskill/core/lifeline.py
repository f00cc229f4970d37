"""Child processes that end when the process that started them dies, even by `kill -9`.

The parent keeps the writing end of a pipe and hands the reading end to each child; it never
writes. When the parent dies for any reason the kernel closes its end, the child's read returns
end-of-file, and a thread in the child sends the child SIGTERM: a child that handles it unwinds
(removing what it had half written), any other ends at once. Portable wherever pipes are.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext

ORPHANED_EXIT_CODE = 70
"""The exit status of a child that ended because its parent was gone and SIGTERM did not end it."""

UNWIND_GRACE_S = 5.0
"""How long a child that handles SIGTERM may take to unwind before it is ended outright."""


class Lifeline:
    """Held by the parent while its children run; `end` goes to each child (see `watch_parent`)."""

    def __init__(self, context: BaseContext):
        self.end, self._held = context.Pipe(duplex=False)

    def close(self) -> None:
        """Let go on purpose: children still watching end now."""
        self._held.close()
        self.end.close()


def watch_parent(end: Connection) -> None:
    """In a child: end this process as soon as the parent holding `end`'s other side is gone."""
    threading.Thread(target=_exit_when_closed, args=(end,), name="wikiskill-lifeline", daemon=True).start()


def _exit_when_closed(end: Connection) -> None:
    try:
        end.recv_bytes()
    except (EOFError, OSError):
        pass
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(UNWIND_GRACE_S)
    os._exit(ORPHANED_EXIT_CODE)
