"""/api/projects: projects the caller sees, their members and quotas."""

from __future__ import annotations

from fastapi import APIRouter, status

from tierpilot.auth.deps import AdminUser, CurrentUser, SessionDep
from tierpilot.projects import service
from tierpilot.projects.models import Project
from tierpilot.projects.schemas import (
    BucketMove,
    MemberAdd,
    MemberChange,
    MemberOut,
    ProjectCreate,
    ProjectOut,
    QuotaSet,
)

router = APIRouter(prefix="/projects", tags=["projects"])


def _out(view: service.ProjectView) -> ProjectOut:
    p = view.project
    return ProjectOut(name=p.name, personal=view.personal, quota_bytes=p.quota_bytes, quota_objects=p.quota_objects,
                      used_bytes=view.used_bytes, used_objects=view.used_objects,
                      members=[MemberOut(username=m.username, role=m.role, is_default=m.is_default)
                               for m in view.members],
                      buckets=view.buckets, created_at=p.created_at)


def _one(session: SessionDep, project: Project) -> ProjectOut:
    return _out(service.views(session, [project])[0])


@router.get("", response_model=list[ProjectOut])
def list_projects(session: SessionDep, user: CurrentUser) -> list[ProjectOut]:
    """The projects the caller is a member of (admins: all), with use against quota, members and buckets."""
    return [_out(v) for v in service.views(session, service.visible(session, user))]


@router.post("", response_model=ProjectOut, status_code=status.HTTP_201_CREATED)
def create_project(body: ProjectCreate, session: SessionDep, user: AdminUser) -> ProjectOut:
    return _one(session, service.create_project(session, body.name, body.quota_bytes, body.quota_objects))


@router.get("/{project_name}", response_model=ProjectOut)
def get_project(project_name: str, session: SessionDep, user: CurrentUser) -> ProjectOut:
    return _one(session, service.project_for(session, project_name, user))


@router.post("/{project_name}/members", response_model=ProjectOut, status_code=status.HTTP_201_CREATED)
def add_member(project_name: str, body: MemberAdd, session: SessionDep, user: CurrentUser) -> ProjectOut:
    project = service.project_for(session, project_name, user)
    service.require_manager(session, project, user, "adding members")
    service.add_member(session, project, body.username, body.role, body.default)
    return _one(session, project)


@router.patch("/{project_name}/members/{username}", response_model=ProjectOut)
def change_member(project_name: str, username: str, body: MemberChange, session: SessionDep,
                  user: CurrentUser) -> ProjectOut:
    """A member's role (managers and admins) or whether it is the member's default project (themselves too)."""
    project = service.project_for(session, project_name, user)
    if body.role is not None or username != user.username:
        service.require_manager(session, project, user, "changing a member's role")
    service.set_role(session, project, username, body.role, body.default)
    return _one(session, project)


@router.delete("/{project_name}/members/{username}", response_model=ProjectOut)
def remove_member(project_name: str, username: str, session: SessionDep, user: CurrentUser) -> ProjectOut:
    project = service.project_for(session, project_name, user)
    service.require_manager(session, project, user, "removing members")
    service.remove_member(session, project, username)
    return _one(session, project)


@router.put("/{project_name}/quota", response_model=ProjectOut)
def set_quota(project_name: str, body: QuotaSet, session: SessionDep, user: CurrentUser) -> ProjectOut:
    """Set or lift (null) the hard quotas."""
    project = service.project_for(session, project_name, user)
    service.require_manager(session, project, user, "setting the quota")
    return _one(session, service.set_quota(session, project, body.quota_bytes, body.quota_objects))


@router.post("/{project_name}/buckets", response_model=ProjectOut)
def move_bucket(project_name: str, body: BucketMove, session: SessionDep, user: CurrentUser) -> ProjectOut:
    """Move a bucket the caller owns into the project (refused when its use would pass the project's quota)."""
    project = service.project_for(session, project_name, user)
    service.move_bucket(session, project, body.bucket, user)
    return _one(session, project)
