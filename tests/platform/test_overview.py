"""The Overview page's data: usage per tier for everyone, buckets with owner and tier names per caller."""

from __future__ import annotations

import json
import uuid

from sqlalchemy.orm import Session

from tierpilot.auth.models import User
from tierpilot.catalog import repository, service
from tierpilot.catalog.models import Bucket
from tierpilot.overview.service import overview
from tierpilot.sharing import service as sharing_service
from tierpilot.tiers.models import Tier


def test_overview_names_owners_and_tiers_and_shows_members_only_their_buckets(session: Session) -> None:
    tag = uuid.uuid4().hex[:6]
    tier = Tier(name=f"ov-{tag}", driver="posix", config={"path": "/nonexistent"}, storage_classes=["STANDARD"])
    admin = User(username=f"ov-admin-{tag}", password_hash="x", is_admin=True)
    member = User(username=f"ov-member-{tag}", password_hash="x")
    session.add_all([tier, admin, member])
    session.flush()
    mine = Bucket(name=f"ov-a-{tag}", owner_id=member.id, tier_id=tier.id)
    theirs = Bucket(name=f"ov-b-{tag}", owner_id=admin.id, tier_id=tier.id)
    repository.add_buckets(session, [mine, theirs])
    for key, size in (("x", 10), ("y", 32)):
        service.record_object(session, mine.id, key, size=size, etag=f"{size:032x}", tier_id=tier.id,
                              storage_class="STANDARD", locator=f"{mine.name}/{key}~x")

    everyone = overview(session, admin)
    rows = {b.name: b for b in everyone.buckets}
    assert rows[mine.name].model_dump() == {"name": mine.name, "owner": member.username, "tier": tier.name,
                                            "object_count": 2, "used_bytes": 42}
    assert rows[theirs.name].owner == admin.username and rows[theirs.name].object_count == 0
    [usage] = [t for t in everyone.tiers if t.id == tier.id]
    assert (usage.used_bytes, usage.object_count) == (42, 2)

    own = overview(session, member)
    assert [b.name for b in own.buckets] == [mine.name]
    assert (own.totals.buckets, own.totals.objects, own.totals.bytes) == (1, 2, 42)


def test_overview_shows_a_member_the_buckets_shared_with_them_beside_their_own(session: Session) -> None:
    tag = uuid.uuid4().hex[:6]
    tier = Tier(name=f"ov-{tag}", driver="posix", config={"path": "/nonexistent"}, storage_classes=["STANDARD"])
    owner = User(username=f"ov-owner-{tag}", password_hash="x")
    colleague = User(username=f"ov-colleague-{tag}", password_hash="x")
    session.add_all([tier, owner, colleague])
    session.flush()
    shared = Bucket(name=f"ov-shared-{tag}", owner_id=owner.id, tier_id=tier.id)
    private = Bucket(name=f"ov-private-{tag}", owner_id=owner.id, tier_id=tier.id)
    repository.add_buckets(session, [shared, private])
    service.record_object(session, shared.id, "x", size=7, etag=f"{7:032x}", tier_id=tier.id,
                          storage_class="STANDARD", locator=f"{shared.name}/x~x")
    sharing_service.put_policy(session, shared, json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": str(colleague.id)}, "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{shared.name}/*"}]}))

    seen = overview(session, colleague)
    assert [(b.name, b.owner, b.used_bytes) for b in seen.buckets] == [(shared.name, owner.username, 7)]
    assert (seen.totals.buckets, seen.totals.bytes) == (1, 7)
