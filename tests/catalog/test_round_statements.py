"""A round of PutObject rows (``service.record_objects``) costs the round's statements, not each row's: per
bucket one read of its settings, one read of the current rows and one totals update; one insert, one overwrite. The
same key several times, versioned buckets, a gone bucket and refused preconditions in one round each end as they
would one by one; rounds of other processes racing for the same keys leave exact rows, totals and blobs."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event

from tierpilot.catalog import repository, service, store, versions
from tierpilot.catalog.errors import NoSuchBucket, NoSuchKey, PreconditionFailed
from tierpilot.catalog.models import Bucket
from tierpilot.catalog.service import Blob
from tierpilot.kit.db import get_engine, transaction
from tierpilot.tiers.models import Tier
from tierpilot.tiers.repository import spec_of

_TABLE_STATEMENT = re.compile(r"^\s*(SELECT\b.*?\bFROM|INSERT INTO|UPDATE|DELETE FROM)\s+(\w+)", re.S | re.I)


def _bucket(name: str, versioning: str | None = None) -> Bucket:
    from tests.conftest import make_user

    user = make_user(f"{name}-owner", "rounds-password-1")
    with transaction(write=True) as s:
        b = service.create_bucket(s, owner_id=int(user["id"]), name=name, tier_name="hot-disk")
        s.flush()
        if versioning is not None:
            versions.set_versioning(s, b.id, versioning)
        s.expunge(b)
    return b


@contextmanager
def _statements() -> Iterator[list[str]]:
    """The statements on catalog tables sent while inside, as "VERB table" (an executemany counts once)."""
    seen: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        m = _TABLE_STATEMENT.match(statement)
        if m is not None:
            seen.append(f"{m.group(1).split()[0].upper()} {m.group(2)}")

    engine = get_engine()
    event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", note)


def _row(bucket: Bucket, tier: Tier, key: str, etag: str, size: int = 1, if_match: str | None = None,
         if_none_match: str | None = None) -> store._Row:
    spec = store.NewObject(tier=spec_of(tier), storage_class="STANDARD")
    return store._Row(bucket, key, spec, f"{bucket.name}/{key}~{etag}", size=size, etag=etag, checksum_value=None,
                      checksum_algorithm=None, if_match=if_match, if_none_match=if_none_match)


def _ok(outcomes: Sequence[object]) -> list[service.Recorded]:
    assert not any(isinstance(o, BaseException) for o in outcomes), outcomes
    return list(outcomes)  # type: ignore[arg-type]


def test_a_round_of_new_keys_or_of_overwrites_costs_four_statements_whatever_its_size(
        tiers: dict[str, Tier]) -> None:
    hot = tiers["hot-disk"]
    bucket = _bucket("rounds-size")
    counts: dict[tuple[str, int], list[str]] = {}
    for n in (1, 16):
        with _statements() as seen:
            _ok(store._record_round([_row(bucket, hot, f"n{n}-{i}", "a") for i in range(n)]))
        counts[("new", n)] = seen
        with _statements() as seen:
            _ok(store._record_round([_row(bucket, hot, f"n{n}-{i}", "b", size=2) for i in range(n)]))
        counts[("over", n)] = seen
    assert counts[("new", 1)] == counts[("new", 16)] == [
        "SELECT buckets", "SELECT objects", "INSERT objects", "UPDATE buckets"]
    assert counts[("over", 1)] == counts[("over", 16)] == [
        "SELECT buckets", "SELECT objects", "UPDATE objects", "UPDATE buckets"]
    with transaction() as s:
        assert repository.usage(s, bucket.id) == (17, 34)


def test_a_round_over_two_buckets_reads_each_buckets_settings_and_moves_its_totals_once(
        tiers: dict[str, Tier]) -> None:
    hot = tiers["hot-disk"]
    one, two = _bucket("rounds-one"), _bucket("rounds-two")
    with _statements() as seen:
        _ok(store._record_round([_row(b, hot, f"k{i}", "a") for i in range(8) for b in (one, two)]))
    assert seen == ["SELECT buckets", "SELECT buckets", "SELECT objects", "SELECT objects", "INSERT objects",
                    "UPDATE buckets", "UPDATE buckets"]
    with transaction() as s:
        assert repository.usage(s, one.id) == repository.usage(s, two.id) == (8, 8)


def test_a_mixed_round_ends_as_its_rows_would_one_by_one(tiers: dict[str, Tier]) -> None:
    """The same key three times, a versioned bucket's key twice, a gone bucket, refused conditions: each row gets
    its own answer, the replaced blobs are each named once, the totals are exact."""
    hot = tiers["hot-disk"]
    plain, kept = _bucket("rounds-plain"), _bucket("rounds-kept", versioning="Enabled")
    gone = Bucket(id=2**31 - 7, name="rounds-gone", owner_id=plain.owner_id, tier_id=plain.tier_id)
    _ok(store._record_round([_row(plain, hot, "there", "t0", size=5)]))
    outcomes = store._record_round([
        _row(plain, hot, "a", "a1", size=1),
        _row(kept, hot, "v", "v1", size=10),
        _row(plain, hot, "a", "a2", size=2),
        _row(gone, hot, "g", "g1"),
        _row(plain, hot, "there", "t1", if_none_match="*"),
        _row(plain, hot, "missing", "m1", if_match='"x"'),
        _row(kept, hot, "v", "v2", size=20),
        _row(plain, hot, "a", "a3", size=3),
        _row(plain, hot, "there", "t2", size=6, if_match='"t0"'),
    ])
    a1, v1, a2, g1, t1, m1, v2, a3, t2 = outcomes
    assert isinstance(g1, NoSuchBucket) and isinstance(t1, PreconditionFailed) and isinstance(m1, NoSuchKey)
    a1, v1, a2, v2, a3, t2 = _ok([a1, v1, a2, v2, a3, t2])
    assert [o[0].etag for o in (a1, a2, a3, v1, v2, t2)] == ["a1", "a2", "a3", "v1", "v2", "t2"]
    assert a1[1] is None and a2[1] == Blob(hot.id, "rounds-plain/a~a1") and a3[1] == Blob(hot.id, "rounds-plain/a~a2")
    assert t2[1] == Blob(hot.id, "rounds-plain/there~t0")
    assert v1[1] is None and v2[1] is None and v1[0].version_id != v2[0].version_id != "null"
    with transaction() as s:
        current = {k: repository.get_object(s, b.id, k) for b, k in ((plain, "a"), (plain, "there"), (kept, "v"))}
        assert {k: o.etag for k, o in current.items() if o is not None} == {"a": "a3", "there": "t2", "v": "v2"}
        assert [v.etag for v in repository.versions_of_key(s, kept.id, "v")] == ["v1"]
        assert repository.usage(s, plain.id) == (2, 3 + 6) and repository.usage(s, kept.id) == (2, 30)


@pytest.mark.parametrize("versioning", [None, "Enabled"])
def test_rounds_of_other_processes_racing_for_the_same_keys_leave_exact_rows_and_totals(
        tiers: dict[str, Tier], versioning: str | None, caplog: pytest.LogCaptureFixture) -> None:
    """Each thread writes rounds of its own transactions (as gateway processes do), the same keys in another
    order each time: on PostgreSQL their inserts really collide (the loser overwrites the winner's row), and
    rounds that locked their rows in the order they came deadlocked (then each was written again row by row)."""
    hot = tiers["hot-disk"]
    bucket = _bucket(f"rounds-race-{(versioning or 'off').lower()}", versioning=versioning)
    keys = [f"k{i}" for i in range(6)]
    writers, rounds = 4, 3
    start = threading.Barrier(writers)
    results: list[service.Recorded] = []
    errors: list[object] = []

    def writer(w: int) -> None:
        rng = random.Random(w)
        start.wait()
        for r in range(rounds):
            order = keys[:]
            rng.shuffle(order)
            outcomes = store._record_round([_row(bucket, hot, k, f"w{w}r{r}", size=1 + w) for k in order])
            errors.extend(o for o in outcomes if isinstance(o, BaseException))
            results.extend(o for o in outcomes if not isinstance(o, BaseException))  # type: ignore[misc]

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(results) == writers * rounds * len(keys)
    assert not [r for r in caplog.records if "failed as a whole" in r.getMessage()]
    with transaction() as s:
        current = {k: repository.get_object(s, bucket.id, k) for k in keys}
        assert all(o is not None for o in current.values())
        older = [v for k in keys for v in repository.versions_of_key(s, bucket.id, k)]
        count, used = repository.usage(s, bucket.id)
    live = {o.locator for o in current.values() if o is not None} | {v.locator for v in older}
    written = {o[0].locator for o in results}
    replaced = [o[1].locator for o in results if o[1] is not None]
    assert len(replaced) == len(set(replaced))  # each blob replaced once: deleted once
    assert set(replaced) | live == written and not set(replaced) & live
    if versioning is None:
        assert older == [] and count == len(keys)
    else:
        assert replaced == [] and count == len(written)
    assert used == sum(o.size for o in current.values() if o is not None) + sum(v.size for v in older)
