"""External accounts: the user an identity provider or directory vouches for, their projects from the group ->
project mapping, and temporary S3 keys bought with an ID token. Services flush; the caller commits."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from tierpilot.audit import service as audit
from tierpilot.auth import repository as auth_repository
from tierpilot.auth import service as auth
from tierpilot.auth.models import User
from tierpilot.identity import oidc
from tierpilot.kit.errors import Forbidden, Invalid, Unauthorized
from tierpilot.kit.groups import desired_roles, parse_group_mapping
from tierpilot.kit.settings import get_settings
from tierpilot.projects import repository as projects_repository
from tierpilot.projects import service as projects

log = logging.getLogger("tierpilot.identity")
MAX_STS_SECONDS = 43200  # AWS's ceiling for AssumeRoleWithWebIdentity


@dataclass(frozen=True)
class MappedGroup:
    """One group of a user as the mapping sees it (the dry run's rows)."""

    group: str
    project: str | None
    role: str | None
    status: str  # "mapped" | "unmapped" (no entry) | "no-project" (the entry names a project that does not exist)


def external_user(session: Session, source: str, subject: str, username: str) -> User:
    """The account ``source`` knows as ``subject``, made on first sign-in under ``username``."""
    user = auth_repository.get_user_by_external(session, source, subject)
    if user is None:
        if not username:
            raise Unauthorized("the identity provider sent no user name")
        try:
            auth.validate_username(username)
        except Invalid:
            raise Unauthorized(f"the user name {username[:64]!r} is not one this installation takes") from None
        try:
            with session.begin_nested():
                user = auth.create_external_user(session, username, source, subject)
        except IntegrityError:  # the same person signing in twice at once
            user = auth_repository.get_user_by_external(session, source, subject)
            if user is None:
                raise
    if user.disabled:
        raise Forbidden("this account is disabled; ask an administrator")
    return user


def map_groups(session: Session, groups: list[str]) -> list[MappedGroup]:
    """What the mapping makes of these groups, without changing anything (the dry run)."""
    mapping = parse_group_mapping(get_settings().group_mapping)
    out = []
    for group in groups:
        grant = mapping.get(group)
        if grant is None:
            out.append(MappedGroup(group, None, None, "unmapped"))
            continue
        found = projects_repository.get_by_name(session, grant.project) is not None
        out.append(MappedGroup(group, grant.project, grant.role, "mapped" if found else "no-project"))
    return out


def sync_projects(session: Session, user: User, groups: list[str], client: str = "") -> dict[str, str | None]:
    """Make the user's membership of every project the mapping names what their groups give (none: removed);
    projects the mapping does not name are left as admins set them. Returns the changes, project -> new role."""
    mapping = parse_group_mapping(get_settings().group_mapping)
    wanted = desired_roles(mapping, groups)
    changes: dict[str, str | None] = {}
    for name in sorted({grant.project for grant in mapping.values()}):
        project = projects_repository.get_by_name(session, name)
        if project is None:
            if name in wanted:
                log.warning("group mapping names project %r, which does not exist: %s's groups give it nothing "
                            "(create it or fix TIERPILOT_GROUP_MAPPING)", name, user.username)
            continue
        if project.personal_user_id is not None:
            continue  # a personal project is its owner's alone
        role = wanted.get(name)
        held = projects_repository.role_of(session, project.id, user.id)
        if role == held:
            continue
        if role is None:
            projects.remove_member(session, project, user.username)
        elif held is None:
            projects.add_member(session, project, user.username, role)
        else:
            projects.set_role(session, project, user.username, role)
        changes[name] = role
    unmapped = [g for g in groups if g not in mapping]
    if unmapped:
        log.info("%s's groups %s name no project in the group mapping: ignored", user.username, unmapped[:20])
    if changes:
        audit.record(session, "identity.projects_synced", audit.Actor(user.id, user.username, client),
                     f"user:{user.username}", changes=changes)
    return changes


def oidc_sign_in(session: Session, claims: dict[str, Any], client: str = "") -> User:
    """The user behind checked ID token claims, their projects brought up to date with their groups."""
    settings = get_settings()
    user = external_user(session, "oidc", f"{claims['iss']}|{claims['sub']}"[:512],
                         oidc.username_of(claims, settings))
    sync_projects(session, user, oidc.groups_of(claims, settings), client)
    return user


@dataclass(frozen=True)
class TemporaryKeys:
    key: auth.NewAccessKey
    user: User
    claims: dict[str, Any]


def assume_role_with_web_identity(session: Session, token: str, duration_s: int, client: str = "") -> TemporaryKeys:
    """Temporary S3 keys for the holder of a valid ID token of the configured provider, once per token; their
    projects are brought up to date with the token's groups first (a renewal drops a project a group gave)."""
    settings = get_settings()
    if not settings.sts_min_duration_s <= duration_s <= MAX_STS_SECONDS:
        raise Invalid(f"DurationSeconds must be {settings.sts_min_duration_s}-{MAX_STS_SECONDS}")
    if not oidc.configured(settings):
        raise oidc.BadToken("no identity provider is configured here")
    claims = oidc.validate_id_token(token, None, settings)
    token_hash = auth.hash_token(token)
    if auth_repository.web_identity_used(session, token_hash):
        raise oidc.BadToken("this web identity token was used already: sign in again for a new one")
    user = oidc_sign_in(session, claims, client)
    try:
        with session.begin_nested():
            key = auth.create_access_key(session, user, timedelta(seconds=duration_s), web_identity_hash=token_hash)
    except IntegrityError:  # the same token presented twice at once: one wins
        raise oidc.BadToken("this web identity token was used already: sign in again for a new one") from None
    audit.record(session, "identity.sts_keys", audit.Actor(user.id, user.username, client), f"user:{user.username}",
                 access_key_id=key.access_key_id, expires_at=key.created.expires_at.isoformat()
                 if key.created.expires_at else None)
    return TemporaryKeys(key, user, claims)
