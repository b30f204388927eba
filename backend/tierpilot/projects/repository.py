"""The only queries of ``projects`` and ``project_members``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from tierpilot.projects.models import Project, ProjectMember


def get_by_name(session: Session, name: str) -> Project | None:
    return session.scalar(select(Project).where(Project.name == name))


def get(session: Session, project_id: int) -> Project | None:
    return session.get(Project, project_id)


def personal_of(session: Session, user_id: int) -> Project | None:
    return session.scalar(select(Project).where(Project.personal_user_id == user_id))


def list_all(session: Session) -> list[Project]:
    return list(session.scalars(select(Project).order_by(Project.name)))


def list_of_user(session: Session, user_id: int) -> list[Project]:
    """The projects a user is a member of, by name."""
    return list(session.scalars(select(Project).join(ProjectMember, ProjectMember.project_id == Project.id)
                                .where(ProjectMember.user_id == user_id).order_by(Project.name)))


def project_ids_of_user(session: Session, user_id: int) -> list[int]:
    return list(session.scalars(select(ProjectMember.project_id).where(ProjectMember.user_id == user_id)))


def with_quota(session: Session) -> list[Project]:
    return list(session.scalars(select(Project).where(
        Project.quota_bytes.is_not(None) | Project.quota_objects.is_not(None)).order_by(Project.id)))


def names(session: Session, project_ids: Iterable[int]) -> dict[int, str]:
    ids = list(set(project_ids))
    if not ids:
        return {}
    return {pid: name for pid, name in session.execute(select(Project.id, Project.name).where(Project.id.in_(ids)))}


def members(session: Session, project_ids: Sequence[int]) -> list[ProjectMember]:
    if not project_ids:
        return []
    return list(session.scalars(select(ProjectMember).where(ProjectMember.project_id.in_(list(project_ids)))
                                .order_by(ProjectMember.project_id, ProjectMember.id)))


def membership(session: Session, project_id: int, user_id: int) -> ProjectMember | None:
    return session.scalar(select(ProjectMember).where(ProjectMember.project_id == project_id,
                                                      ProjectMember.user_id == user_id))


def role_of(session: Session, project_id: int, user_id: int) -> str | None:
    return session.scalar(select(ProjectMember.role).where(ProjectMember.project_id == project_id,
                                                           ProjectMember.user_id == user_id))


def default_project_id(session: Session, user_id: int) -> int | None:
    return session.scalar(select(ProjectMember.project_id).where(ProjectMember.user_id == user_id,
                                                                 ProjectMember.is_default.is_(True)).limit(1))


def clear_default(session: Session, user_id: int) -> None:
    session.execute(update(ProjectMember).where(ProjectMember.user_id == user_id, ProjectMember.is_default.is_(True))
                    .values(is_default=False).execution_options(synchronize_session=False))


def remove_member(session: Session, project_id: int, user_id: int) -> int:
    result = session.execute(delete(ProjectMember).where(ProjectMember.project_id == project_id,
                                                         ProjectMember.user_id == user_id))
    return int(result.rowcount)  # type: ignore[attr-defined]


def count_managers(session: Session, project_id: int) -> int:
    return len(list(session.scalars(select(ProjectMember.id).where(ProjectMember.project_id == project_id,
                                                                    ProjectMember.role == "manager"))))


def lower_alert(session: Session, project_id: int, percent: int) -> None:
    session.execute(update(Project).where(Project.id == project_id, Project.alerted_percent > percent)
                    .values(alerted_percent=percent).execution_options(synchronize_session=False))


def raise_alert(session: Session, project_id: int, percent: int) -> bool:
    """Move the project's alert level up to ``percent``; False when another process already did."""
    result = session.execute(update(Project).where(Project.id == project_id, Project.alerted_percent < percent)
                             .values(alerted_percent=percent).execution_options(synchronize_session=False))
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]
