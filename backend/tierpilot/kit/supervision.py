"""The status file of `tierpilot up`: the supervisor writes its children's states, /api/health reads them."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

# what health shows of a child: no pids, no broker address (health answers anyone)
PUBLIC_CHILD_FIELDS = ("state", "restarts", "last_exit", "last_exit_at", "since")


def write_status(path: Path, status: dict[str, Any]) -> None:
    """Replace the file atomically, so a reader never sees half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(status, indent=1))
    os.replace(tmp, path)


def read_status(path: Path) -> dict[str, Any] | None:
    with contextlib.suppress(OSError, ValueError):
        status = json.loads(path.read_text())
        if isinstance(status, dict):
            return status
    return None


def _pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def health_view(path: Path) -> tuple[bool, dict[str, Any]]:
    """(every child running and the supervisor alive, what /api/health shows of the supervisor)."""
    status = read_status(path)
    if status is None:
        return False, {"state": "unreadable"}
    if not _pid_alive(status.get("pid")):
        return False, {"state": "gone"}
    children = {name: {k: child.get(k) for k in PUBLIC_CHILD_FIELDS}
                for name, child in (status.get("children") or {}).items()}
    ok = all(c["state"] == "running" for c in children.values())
    return ok, {"state": "running", "children": children}
