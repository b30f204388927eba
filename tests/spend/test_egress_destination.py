"""Read bytes are priced as egress to the destination the tier's price_ref names, not always the internet."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from sqlalchemy.orm import Session

from tierpilot.auth import service as auth
from tierpilot.catalog import service as catalog
from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.pricing.schemas import Band, Destination
from tierpilot.spend import repository, service
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import TierCreate

GIB = 2**30
NOW = datetime(2026, 11, 16, tzinfo=UTC)
READ_GIB = 300  # past the internet's free first 100 GiB of the 2026 Tokyo list
DESTINATIONS: dict[str, Destination] = {"cloud": "internet", "sinet": "research-network", "nearby": "same-region"}


def _by_hand(bands: list[Band], gib: Decimal) -> Decimal:
    """The bands walked one by one: each prices the GiB between the band before it and its own bound."""
    cost, floor = Decimal(0), Decimal(0)
    for band in bands:
        top = gib if band.up_to_gib is None else min(gib, band.up_to_gib)
        if top > floor:
            cost += (top - floor) * band.price
        floor = top if band.up_to_gib is None else band.up_to_gib
    return cost


def test_the_same_metered_reads_cost_what_each_tiers_destination_bills(session: Session, tmp_path: Path) -> None:
    owner, _ = auth.create_user(session, "physicist", "physicist-pw")
    rows = []
    for name, dest in DESTINATIONS.items():
        ref = {"catalog": "aws-ap-northeast-1", "storage_class": "STANDARD"}
        # the default destination is the internet: the first tier does not name it
        tiers.create(session, TierCreate(name=name, driver="posix", config={"path": str(tmp_path / name)},
                                         price_ref=ref if dest == "internet" else {**ref, "egress": dest}))
        bucket = catalog.create_bucket(session, owner_id=owner.id, name=f"data-{name}", tier_name=name)
        catalog.record_object(session, bucket.id, "run", size=GIB, etag='"a"', tier_id=bucket.tier_id,
                              storage_class="STANDARD", locator=f"data-{name}/run",
                              now=datetime(2026, 10, 1, tzinfo=UTC))
        rows.append(("2026-11-12", owner.id, bucket.id, "read", 100, READ_GIB * GIB))
    repository.add_usage(session, rows)
    session.flush()

    out = service.spend(session, owner, "2026-11", "tier", now=NOW)
    lines = {g["key"]: g for g in out["groups"]}
    tokyo = shipped_catalogs()["aws-ap-northeast-1-2026"]
    expected = {name: _by_hand(tokyo.egress[dest], Decimal(READ_GIB)) for name, dest in DESTINATIONS.items()}
    assert expected == {"cloud": Decimal("22.800"), "sinet": Decimal("10.2600"), "nearby": Decimal(0)}
    for name in DESTINATIONS:
        assert lines[name]["egress"] == float(expected[name]), name
        assert lines[name]["catalogs"] == ["aws-ap-northeast-1-2026"]
    assert lines["cloud"]["egress_explained"] == "300.00 GiB read over the internet"
    assert lines["sinet"]["egress_explained"] == "300.00 GiB read over the research network"
    assert lines["nearby"]["egress_explained"] == "300.00 GiB read within the provider's region"
    assert not any("egress" in note for note in out["not_metered"])

    # a user's line gathers the three tiers' reads and says where each went
    mine = service.spend(session, owner, "2026-11", "user", now=NOW)["groups"][0]
    assert mine["egress"] == float(sum(expected.values(), Decimal(0)))
    assert mine["egress_explained"] == ("300.00 GiB read over the internet; 300.00 GiB read over the research "
                                        "network; 300.00 GiB read within the provider's region")

    rows_out = list(csv.reader(io.StringIO(service.spend_csv(out))))
    header = rows_out[1]
    sinet = next(r for r in rows_out if r and r[0] == "sinet")
    assert sinet[header.index("egress_explained")] == "300.00 GiB read over the research network"
    assert float(sinet[header.index("egress")]) == float(expected["sinet"])


def test_a_months_reads_climb_the_egress_bands_together_not_row_by_row(session: Session, tmp_path: Path) -> None:
    """Three days of 100 GiB read from two buckets: the free first 100 GiB is counted once in the month (billed
    per row, each day's read would have been free), and the pool's cost is shared out by the GiB read."""
    owner, _ = auth.create_user(session, "chemist", "chemist-pw")
    ref = {"catalog": "aws-ap-northeast-1", "storage_class": "STANDARD"}
    tiers.create(session, TierCreate(name="cloud", driver="posix", config={"path": str(tmp_path / "cloud")},
                                     price_ref=ref))
    ids = []
    for name in ("data-a", "data-b"):
        bucket = catalog.create_bucket(session, owner_id=owner.id, name=name, tier_name="cloud")
        catalog.record_object(session, bucket.id, "run", size=GIB, etag='"a"', tier_id=bucket.tier_id,
                              storage_class="STANDARD", locator=f"{name}/run", now=datetime(2026, 10, 1, tzinfo=UTC))
        ids.append(bucket.id)
    repository.add_usage(session, [("2026-11-10", owner.id, ids[0], "read", 10, 100 * GIB),
                                   ("2026-11-11", owner.id, ids[0], "read", 10, 100 * GIB),
                                   ("2026-11-12", owner.id, ids[1], "read", 10, 100 * GIB)])
    session.flush()

    lines = {g["key"]: g for g in service.spend(session, owner, "2026-11", "bucket", now=NOW)["groups"]}
    bands = shipped_catalogs()["aws-ap-northeast-1-2026"].egress["internet"]
    month = _by_hand(bands, Decimal(300))
    assert _by_hand(bands, Decimal(100)) == 0 < month  # row by row, every day's read fell in the free band
    assert lines["data-a"]["egress"] == float(month * 2 / 3)
    assert lines["data-b"]["egress"] == float(month / 3)
