"""The only queries of ``bucket_sharing`` and ``object_acls``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from tierpilot.kit.db import utcnow
from tierpilot.sharing.models import BucketSharing, ObjectAcl


def get(session: Session, bucket_id: int) -> BucketSharing | None:
    return session.scalars(select(BucketSharing).where(BucketSharing.bucket_id == bucket_id)).one_or_none()


def get_or_create(session: Session, bucket_id: int) -> BucketSharing:
    row = get(session, bucket_id)
    if row is None:
        row = BucketSharing(bucket_id=bucket_id)
        session.add(row)
    row.updated_at = utcnow()
    return row


def sharing_rows(session: Session) -> Sequence[BucketSharing]:
    """Every bucket's row that has a policy or grants (the few buckets that share anything)."""
    return session.scalars(select(BucketSharing).where(
        (BucketSharing.policy.is_not(None)) | (BucketSharing.acl.is_not(None)))).all()


def get_object_acl(session: Session, bucket_id: int, key: str, version_id: str) -> ObjectAcl | None:
    return session.scalars(select(ObjectAcl).where(ObjectAcl.bucket_id == bucket_id, ObjectAcl.key == key,
                                                   ObjectAcl.version_id == version_id)).one_or_none()


def put_object_acl(session: Session, bucket_id: int, key: str, version_id: str, owner_id: int,
                   grants: list[Any]) -> None:
    row = get_object_acl(session, bucket_id, key, version_id)
    if row is None:
        session.add(ObjectAcl(bucket_id=bucket_id, key=key, version_id=version_id, owner_id=owner_id, grants=grants))
    else:
        row.owner_id, row.grants = owner_id, grants


def delete_object_acl(session: Session, bucket_id: int, key: str, version_id: str) -> None:
    session.execute(delete(ObjectAcl).where(ObjectAcl.bucket_id == bucket_id, ObjectAcl.key == key,
                                            ObjectAcl.version_id == version_id))


def move_object_acl(session: Session, bucket_id: int, key: str, from_version: str, to_version: str) -> None:
    """An upload's pending ACL becomes the ACL of the version it completed as (replacing an older row)."""
    delete_object_acl(session, bucket_id, key, to_version)
    session.execute(update(ObjectAcl).where(ObjectAcl.bucket_id == bucket_id, ObjectAcl.key == key,
                                            ObjectAcl.version_id == from_version).values(version_id=to_version))
