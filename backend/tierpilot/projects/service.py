"""Projects, their members and quotas: the rules (routers, the CLI and the gateway hook call these)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from tierpilot.auth import repository as auth_repository
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.catalog.models import Bucket
from tierpilot.catalog.service import Viewer
from tierpilot.kit import generations
from tierpilot.kit.db import after_commit
from tierpilot.kit.errors import Conflict, Forbidden, Invalid, NotFound
from tierpilot.notifications import service as notifications
from tierpilot.projects import quota, repository
from tierpilot.projects.models import Project, ProjectMember
from tierpilot.projects.roles import ROLES, manages

MEMBERS_GENERATION = "projects:members"
PERSONAL_PREFIX = "~"  # personal projects are "~username": no name an admin gives a project can take it
MAX_QUOTA_BYTES = 1 << 60  # 1 EiB: beyond it a quota is a typo, not a plan
MAX_QUOTA_OBJECTS = 10**12
SOFT_THRESHOLDS = (80, 95)  # percent of a hard quota at which the managers are told
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")


@dataclass(frozen=True)
class MemberView:
    username: str
    role: str
    is_default: bool


@dataclass(frozen=True)
class ProjectView:
    project: Project
    used_bytes: int
    used_objects: int
    members: list[MemberView]
    buckets: list[str]

    @property
    def personal(self) -> bool:
        return self.project.personal_user_id is not None


def validate_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise Invalid("name: 1-63 lower-case letters, digits, '.', '_' or '-', beginning with a letter or digit",
                      field="name")


def validate_quota(quota_bytes: int | None, quota_objects: int | None) -> None:
    """Negative or absurd quotas are refused naming the field."""
    for fld, value, cap in (("quota_bytes", quota_bytes, MAX_QUOTA_BYTES),
                            ("quota_objects", quota_objects, MAX_QUOTA_OBJECTS)):
        if value is None:
            continue
        if value < 0:
            raise Invalid(f"{fld} must not be negative (got {value})", field=fld)
        if value > cap:
            raise Invalid(f"{fld} of {value} is beyond the largest this installation takes ({cap})", field=fld)


def validate_role(role: str) -> None:
    if role not in ROLES:
        raise Invalid(f"role: unknown role {role!r}; one of {', '.join(ROLES)}", field="role")


def _user_id(session: Session, username: str) -> int:
    user = auth_repository.get_user_by_name(session, username)
    if user is None:
        raise NotFound(f"user: there is no user named {username!r}", field="user")
    return user.id


def _members_changed(session: Session, takes_away: bool) -> None:
    if takes_away:
        generations.changing(session, MEMBERS_GENERATION)
    else:
        generations.changed(session, MEMBERS_GENERATION)


def create_project(session: Session, name: str, quota_bytes: int | None = None,
                   quota_objects: int | None = None) -> Project:
    """A new project without members (admins add them)."""
    validate_name(name)
    validate_quota(quota_bytes, quota_objects)
    if repository.get_by_name(session, name) is not None:
        raise Conflict(f"name: a project named {name!r} exists", field="name")
    project = Project(name=name, quota_bytes=quota_bytes, quota_objects=quota_objects)
    session.add(project)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise Conflict(f"name: a project named {name!r} exists", field="name") from None
    return project


def personal_project(session: Session, user_id: int) -> Project:
    """The user's personal project (made on first need: users created after the migration get theirs then)."""
    project = repository.personal_of(session, user_id)
    if project is not None:
        return project
    names = auth_repository.usernames(session, [user_id])
    if user_id not in names:
        raise NotFound("user: no such user", field="user")
    project = Project(name=f"{PERSONAL_PREFIX}{names[user_id]}"[:64], personal_user_id=user_id)
    try:
        with session.begin_nested():
            session.add(project)
            session.flush()
            session.add(ProjectMember(project_id=project.id, user_id=user_id, role="manager"))
            session.flush()
    except IntegrityError:  # made concurrently
        found = repository.personal_of(session, user_id)
        assert found is not None
        return found
    return project


def placement(session: Session, owner_id: int) -> int:
    """Where a new bucket of ``owner_id`` lands: their default project, else their personal one."""
    default = repository.default_project_id(session, owner_id)
    return default if default is not None else personal_project(session, owner_id).id


def add_member(session: Session, project: Project, username: str, role: str = "member",
               default: bool = False) -> ProjectMember:
    validate_role(role)
    user_id = _user_id(session, username)
    if repository.membership(session, project.id, user_id) is not None:
        raise Conflict(f"user: {username!r} is a member of {project.name!r} already", field="user")
    if default:
        repository.clear_default(session, user_id)
    member = ProjectMember(project_id=project.id, user_id=user_id, role=role, is_default=default)
    session.add(member)
    session.flush()
    _members_changed(session, takes_away=False)
    return member


def _member(session: Session, project: Project, username: str) -> ProjectMember:
    member = repository.membership(session, project.id, _user_id(session, username))
    if member is None:
        raise NotFound(f"user: {username!r} is not a member of {project.name!r}", field="user")
    return member


def set_role(session: Session, project: Project, username: str, role: str | None = None,
             default: bool | None = None) -> ProjectMember:
    member = _member(session, project, username)
    if role is not None:
        validate_role(role)
        if member.role == "manager" and role != "manager" and project.personal_user_id == member.user_id:
            raise Invalid("role: the owner of a personal project stays its manager", field="role")
        takes_away = ROLES.index(role) < ROLES.index(member.role)  # type: ignore[arg-type]
        member.role = role
        _members_changed(session, takes_away)
    if default is not None:
        if default:
            repository.clear_default(session, member.user_id)
        member.is_default = default
    session.flush()
    return member


def remove_member(session: Session, project: Project, username: str) -> None:
    member = _member(session, project, username)
    if project.personal_user_id == member.user_id:
        raise Invalid("user: the owner of a personal project cannot be removed from it", field="user")
    repository.remove_member(session, project.id, member.user_id)
    _members_changed(session, takes_away=True)


def set_quota(session: Session, project: Project, quota_bytes: int | None, quota_objects: int | None) -> Project:
    """Set (None: lift) the hard quotas; the shared counter is set from the catalog once committed."""
    validate_quota(quota_bytes, quota_objects)
    project.quota_bytes, project.quota_objects = quota_bytes, quota_objects
    session.flush()
    project_id = project.id
    after_commit(session, lambda: quota.reconcile_one(project_id))
    return project


def visible(session: Session, viewer: Viewer) -> list[Project]:
    """Admins see every project; anyone else those they are a member of (their personal one included)."""
    if viewer.is_admin:
        personal_project(session, viewer.id)
        return repository.list_all(session)
    personal_project(session, viewer.id)
    return repository.list_of_user(session, viewer.id)


def project_for(session: Session, name: str, viewer: Viewer) -> Project:
    """A project the viewer may see; one they may not is answered as one that does not exist."""
    project = repository.get_by_name(session, name)
    if project is None or not (viewer.is_admin or repository.role_of(session, project.id, viewer.id) is not None):
        raise NotFound(f"project: there is no project named {name!r}", field="project")
    return project


def require_manager(session: Session, project: Project, viewer: Viewer, doing: str) -> None:
    if viewer.is_admin or manages(repository.role_of(session, project.id, viewer.id)):
        return
    raise Forbidden(f"{doing} needs a manager of {project.name!r} or an admin", needs="manager")


def views(session: Session, projects: Sequence[Project]) -> list[ProjectView]:
    """Use, members and buckets of each project (a fixed number of statements however many)."""
    ids = [p.id for p in projects]
    usage = catalog_repository.project_usage(session, ids)
    members = repository.members(session, ids)
    names = auth_repository.usernames(session, {m.user_id for m in members})
    buckets = catalog_repository.buckets_of_projects(session, ids)
    out = []
    for p in projects:
        nbytes, objects = usage.get(p.id, (0, 0))
        out.append(ProjectView(
            p, nbytes, objects,
            [MemberView(names.get(m.user_id, str(m.user_id)), m.role, m.is_default)
             for m in members if m.project_id == p.id],
            [b.name for b in buckets if b.project_id == p.id]))
    return out


def move_bucket(session: Session, project: Project, bucket_name: str, viewer: Viewer) -> Bucket:
    """Move a bucket the viewer owns (or any, for an admin) into a project they manage, unless its use would
    take the project past a hard quota."""
    bucket, owns = catalog_service.visible_bucket(session, bucket_name, viewer)
    if not owns:
        raise Forbidden(f"bucket: moving {bucket_name!r} needs its owner or an admin", field="bucket")
    require_manager(session, project, viewer, "moving a bucket into the project")
    if bucket.project_id == project.id:
        return bucket
    nbytes, objects = catalog_repository.project_usage(session, [project.id])[project.id]
    extra_bytes, extra_objects = bucket.used_bytes, bucket.object_count
    if project.quota_bytes is not None and nbytes + extra_bytes > project.quota_bytes:
        raise Invalid(f"bucket: {bucket_name!r} holds {extra_bytes} bytes; {project.name!r} uses {nbytes} of its "
                      f"quota of {project.quota_bytes} bytes", field="bucket")
    if project.quota_objects is not None and objects + extra_objects > project.quota_objects:
        raise Invalid(f"bucket: {bucket_name!r} holds {extra_objects} objects; {project.name!r} uses {objects} of "
                      f"its quota of {project.quota_objects} objects", field="bucket")
    old = bucket.project_id
    catalog_repository.set_bucket_project(session, bucket.id, project.id)
    bucket.project_id = project.id
    for pid in (old, project.id):
        if pid is not None:
            after_commit(session, functools.partial(quota.reconcile_one, pid))
    return bucket


# soft thresholds ------------------------------------------------------------------------------------------


def level(used: int, quota_value: int | None) -> int:
    """The highest soft threshold ``used`` reached of ``quota_value`` (0: none)."""
    if not quota_value:
        return 0
    return max((t for t in SOFT_THRESHOLDS if used * 100 >= t * quota_value), default=0)


def check_thresholds(session: Session, project: Project, used_bytes: int, used_objects: int,
                     now: datetime | None = None) -> int:
    """Tell the managers (in-app, and their webhook) when use first reaches a soft threshold; returns the level.
    A level is told once until use drops below it again (the row's conditional update: one process tells)."""
    reached = max(level(used_bytes, project.quota_bytes), level(used_objects, project.quota_objects))
    if reached < project.alerted_percent:
        repository.lower_alert(session, project.id, reached)
        return reached
    if reached == 0 or not repository.raise_alert(session, project.id, reached):
        return reached
    managers = [m.user_id for m in repository.members(session, [project.id]) if m.role == "manager"]
    for user_id in managers:
        notifications.notify(
            session, user_id, "project_quota", f"Project {project.name} reached {reached} % of its quota",
            f"{used_bytes} of {project.quota_bytes if project.quota_bytes is not None else '∞'} bytes, "
            f"{used_objects} of {project.quota_objects if project.quota_objects is not None else '∞'} objects",
            link=f"/projects/{project.name}",
            payload={"project": project.name, "percent": reached, "used_bytes": used_bytes,
                     "used_objects": used_objects, "quota_bytes": project.quota_bytes,
                     "quota_objects": project.quota_objects}, now=now)
    return reached


def sweep(session: Session) -> list[int]:
    """The projects with a quota: soft thresholds checked against the catalog's use; their ids."""
    projects = repository.with_quota(session)
    usage = catalog_repository.project_usage(session, [p.id for p in projects])
    for p in projects:
        check_thresholds(session, p, *usage[p.id])
    return [p.id for p in projects]


class Directory:
    """What the catalog asks of projects (``catalog.projects``)."""

    def placement(self, session: Session, owner_id: int) -> int | None:
        return placement(session, owner_id)

    def on_usage(self, session: Session, project_id: int, objects: int, nbytes: int) -> None:
        quota.on_usage(session, project_id, objects, nbytes)

    def visible(self, session: Session, user_id: int) -> list[int]:
        return repository.project_ids_of_user(session, user_id)

    def names(self, session: Session, project_ids: Iterable[int]) -> dict[int, str]:
        return repository.names(session, project_ids)
