"""The directory tree of a bucket (or a prefix of it), built once from a catalog snapshot and held in memory.

Keys become paths under the prefix; ``/`` separates directories. Keys a POSIX tree cannot show are left out
and counted: empty segments (``a//b``), ``.`` and ``..`` segments, a file whose name is also a directory (the
directory wins), and folder markers (keys ending in ``/``), which only make their directory exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class FileEntry:
    key: str
    size: int
    mtime: float
    etag: str
    storage_class: str
    archived: bool  # on an offline tier: readable only once restored
    restore_state: str | None  # None | "ongoing" | "restored" | "failed"

    @property
    def readable(self) -> bool:
        return not self.archived or self.restore_state == "restored"


@dataclass
class DirEntry:
    mtime: float = 0.0
    children: dict[str, DirEntry | FileEntry] = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    key: str
    size: int
    last_modified: datetime
    etag: str
    storage_class: str
    archived: bool
    restore_state: str | None


class Tree:
    """Path ("/a/b") → entry; built by ``Tree.build``, replaced whole on refresh."""

    def __init__(self) -> None:
        self.root = DirEntry()
        self.skipped = 0
        self.files = 0

    @classmethod
    def build(cls, rows: list[Row], prefix: str = "") -> Tree:
        tree = cls()
        for row in rows:
            if not row.key.startswith(prefix):
                continue
            rel = row.key[len(prefix):]
            marker = rel.endswith("/")
            parts = rel.split("/")
            if marker:
                parts = parts[:-1]
            if rel in ("", "/"):  # the prefix itself, or its folder marker
                continue
            if any(p in ("", ".", "..") for p in parts):
                tree.skipped += 1
                continue
            mtime = row.last_modified.timestamp()
            entry = None if marker else FileEntry(row.key, row.size, mtime, row.etag, row.storage_class,
                                                  row.archived, row.restore_state)
            if not tree._add(parts, entry, mtime):
                tree.skipped += 1
        return tree

    def _add(self, parts: list[str], entry: FileEntry | None, mtime: float) -> bool:
        node = self.root
        node.mtime = max(node.mtime, mtime)
        dirs = parts if entry is None else parts[:-1]
        for name in dirs:
            child = node.children.get(name)
            if isinstance(child, FileEntry):  # a directory wins over a file of its name
                self.files -= 1
                self.skipped += 1
                child = None
            if child is None:
                child = node.children[name] = DirEntry()
            child.mtime = max(child.mtime, mtime)
            node = child
        if entry is None:
            return True
        name = parts[-1]
        if isinstance(node.children.get(name), DirEntry):
            return False
        node.children[name] = entry
        self.files += 1
        return True

    def lookup(self, path: str) -> DirEntry | FileEntry | None:
        node: DirEntry | FileEntry = self.root
        for name in path.strip("/").split("/") if path.strip("/") else []:
            if not isinstance(node, DirEntry):
                return None
            child = node.children.get(name)
            if child is None:
                return None
            node = child
        return node
