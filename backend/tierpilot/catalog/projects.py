"""What the catalog asks of the projects domain, which it may not import (filled by ``wiring.install``).

- ``placement(session, owner_id)``: the project a new bucket of that user lands in (their default project);
- ``on_usage(session, project_id, objects, nbytes)``: every change of a bucket's totals (every stored version
  written or deleted), in the transaction that makes it, so the project's quota counter follows each commit;
- ``visible(session, user_id)``: the projects whose buckets a user sees beside their own;
- ``names(session, project_ids)``: project names, for the bucket listing.
Not installed (a tool that runs without wiring): buckets get no project and nothing is counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from sqlalchemy.orm import Session


class Projects(Protocol):
    def placement(self, session: Session, owner_id: int) -> int | None: ...

    def on_usage(self, session: Session, project_id: int, objects: int, nbytes: int) -> None: ...

    def visible(self, session: Session, user_id: int) -> list[int]: ...

    def names(self, session: Session, project_ids: Iterable[int]) -> dict[int, str]: ...


directory: Projects | None = None


def install(projects: Projects) -> None:
    global directory
    directory = projects


def usage_moved(session: Session, project_id: int | None, objects: int, nbytes: int) -> None:
    """A bucket's totals moved in ``session``: its project's counter follows (nothing for a bucket without one)."""
    if project_id is not None and directory is not None and (objects or nbytes):
        directory.on_usage(session, project_id, objects, nbytes)
