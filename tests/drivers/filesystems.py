"""What the page-cache tests need to know of the file system under a path."""

from __future__ import annotations

from pathlib import Path


def fs_type(path: Path) -> str:
    """The type of the file system ``path`` is on (the longest mount point above it)."""
    best, kind = "", ""
    for line in Path("/proc/mounts").read_text().splitlines():
        fields = line.split()
        point = fields[1].replace("\\040", " ")
        if str(path).startswith(point.rstrip("/") + "/") and len(point) > len(best):
            best, kind = point, fields[2]
    return kind
