"""One catalog snapshot of a bucket for the mount: the caller proven by its S3 key pair, the bucket its own
(or any, for an admin), every object under the prefix in one query."""

from __future__ import annotations

import hmac

from tierpilot.auth import service as auth_service
from tierpilot.catalog import repository as catalog_repository
from tierpilot.drivers import registry
from tierpilot.kit.db import transaction
from tierpilot.mount.tree import Row, Tree


class SnapshotError(Exception):
    pass


def snapshot(bucket: str, prefix: str, access_key_id: str, secret: str) -> Tree:
    """The tree of ``bucket`` under ``prefix`` as the key's user may see it (SnapshotError if not at all)."""
    with transaction() as session:
        caller = auth_service.credential_for(session, access_key_id)
        if caller is None or caller.disabled or not hmac.compare_digest(caller.secret_access_key, secret):
            raise SnapshotError("the access key is unknown, inactive or its secret does not match")
        found = catalog_repository.get_bucket_by_name(session, bucket)
        if found is None or (found.owner_id != caller.user_id and not caller.is_admin):
            raise SnapshotError(f"no bucket {bucket!r} of yours")
        rows = catalog_repository.tree_rows(session, found.id, prefix)
    offline = {spec.id for spec in registry.tiers.all() if spec.offline}
    return Tree.build([Row(key, size, modified, etag, storage_class, tier_id in offline, restore_state)
                       for key, size, modified, etag, storage_class, tier_id, restore_state in rows], prefix)
