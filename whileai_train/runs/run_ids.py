"""A run's id and its owner: the id a client makes (and the store keeps), and the process writing the run.

A run opened by `wai.run` gets its id here before anything is written, so the id printed when the run opens is
its id in the spool, the local store and the platform. The owner, `host:pid`, lets a reader tell a run whose
process is gone (SIGKILL, OOM) from one still training.
"""

from __future__ import annotations

import os
import re
import socket
import uuid

__all__ = ["adopted_id", "new_run_id", "process_is_gone", "this_process"]


def new_run_id() -> str:
    return "run-" + uuid.uuid4().hex[:12]


_RUN_ID = re.compile(r"run-[0-9a-f]{12}")


def adopted_id(client_id: str | None) -> str | None:
    """The client's own id when it has the shape of a run id (what wai.run makes, see new_run_id): the store
    keeps it as the run's id, so the id printed when a run opens is its id everywhere, also when the run was
    first spooled and reached the store later through `whileai-train sync`."""
    return client_id if client_id is not None and _RUN_ID.fullmatch(client_id) else None


def this_process() -> str:
    """`host:pid` of the writing process, so a reader can tell a run whose process is gone (SIGKILL, OOM)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def process_is_gone(owner: str | None) -> bool:
    """True only when `owner` names a process on this host that no longer exists (never guesses elsewhere)."""
    if not owner or ":" not in owner:
        return False
    host, _, pid_text = owner.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists but not ours to signal
        return False
    return False
