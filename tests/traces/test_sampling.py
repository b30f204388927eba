"""The phase recorder's arithmetic and which requests the sampler keeps (injected clocks, no servers)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from tests.clocks import Ticks
from tierpilot.kit.tracing import Recorder
from tierpilot.traces.service import Finished, Sampler


def _recorder(**stamps: int) -> Recorder:
    rec = Recorder()
    rec.t0 = 0
    for name, value in stamps.items():
        setattr(rec, name, value)
    return rec


def _done(rec: Recorder, request_id: str = "A1") -> Finished:
    return Finished(request_id=request_id, at=datetime.now(UTC), user_id=1, bucket="b", operation="GET object",
                    status=200, nbytes=10, recorder=rec)


def test_a_get_splits_into_contiguous_phases_with_the_limiter_wait_taken_from_the_transfer() -> None:
    rec = _recorder(parsed=10, authed=30, admit_start=50, admit_end=60, resp_start=100, end=200, waited=40)
    assert rec.phases() == [("headers", 0, 10), ("auth", 10, 20), ("lookup", 30, 20), ("admission", 50, 10),
                            ("tier_open", 60, 40), ("limiter_wait", 100, 40), ("transfer", 140, 60)]
    assert sum(d for _, _, d in rec.phases()) == rec.total_ns() == 200


def test_a_put_has_transfer_then_commit_then_response() -> None:
    rec = _recorder(parsed=5, authed=10, admit_start=20, admit_end=25, body_end=80, resp_start=95, end=100)
    assert [(n, d) for n, _, d in rec.phases()] == [("headers", 5), ("auth", 5), ("lookup", 10), ("admission", 5),
                                                    ("transfer", 55), ("commit", 15), ("response", 5)]


def test_a_request_refused_at_authentication_ends_with_its_response() -> None:
    rec = _recorder(parsed=5, resp_start=40, end=50)
    assert [(n, d) for n, _, d in rec.phases()] == [("headers", 5), ("auth", 45)]
    assert sum(d for _, _, d in rec.phases()) == 50


def test_a_wait_for_an_admission_slot_is_the_queue_phase_and_no_wait_shows_none() -> None:
    rec = _recorder(queued=300_000, parsed=300_010, authed=300_030, resp_start=300_040, end=300_050)
    assert [(n, d) for n, _, d in rec.phases()] == [("queue", 300_000), ("headers", 10), ("auth", 20),
                                                    ("lookup", 10), ("response", 10)]
    straight_in = _recorder(parsed=2_010, authed=2_030, resp_start=2_040, end=2_050)
    assert [n for n, _, _ in straight_in.phases()] == ["headers", "auth", "lookup", "response"]


def _stepwise(rec: Recorder) -> list[tuple[str, int, int]]:
    """The phases by their definition, a stamp at a time: each phase runs from the cursor to its stamp clamped
    to [cursor, end], and is shown when it took time."""
    end = rec.end
    out: list[tuple[str, int, int]] = []
    cursor = rec.t0

    def add(name: str, until: int) -> None:
        nonlocal cursor
        until = max(cursor, min(until, end))
        if until > cursor:
            out.append((name, cursor - rec.t0, until - cursor))
        cursor = until

    def transfer(until: int) -> None:
        wait = min(rec.waited, max(0, until - cursor))
        if wait:
            add("limiter_wait", cursor + wait)
        add("transfer", until)

    if rec.queued:
        add("queue", rec.queued)
    add("headers", rec.parsed or end)
    add("auth", rec.authed or end)
    resp = rec.resp_start or end
    writing = bool(rec.body_end) and rec.body_end >= (rec.admit_end or rec.authed)
    if rec.admit_start:
        add("lookup", rec.admit_start)
        add("admission", rec.admit_end or end)
        if writing:
            transfer(rec.body_end)
            add("commit", resp)
            add("response", end)
        else:
            add("tier_open", resp)
            transfer(end)
    else:
        if writing:
            add("transfer", rec.body_end)
        add("lookup", resp)
        add("response", end)
    return out


def test_the_phases_of_any_stamps_are_their_stepwise_definition() -> None:
    rng = random.Random(18)
    stamps = ("queued", "parsed", "authed", "admit_start", "admit_end", "body_end", "resp_start")
    for _ in range(20_000):
        rec = _recorder(**{name: rng.choice((0, rng.randrange(1_000, 200_000))) for name in stamps},
                        end=rng.randrange(1_000, 200_000), waited=rng.choice((0, rng.randrange(0, 100_000))))
        rec.t0 = rng.choice((0, 500))
        assert rec.phases() == _stepwise(rec), {name: getattr(rec, name) for name in Recorder.__slots__}


def _offer(sampler: Sampler, done: Finished, forced: bool) -> None:
    """What the gateway's ``_finish`` does with a finished request: ``decide``, then ``admit`` what it keeps."""
    reason = sampler.decide(done.recorder.total_ns(), forced)
    if reason is not None:
        sampler.admit(done, reason)


def test_asked_and_drawn_requests_are_kept_at_once() -> None:
    draws = iter([0.5, 0.001])
    sampler = Sampler(rate=0.01, slowest_per_minute=0, rng=lambda: next(draws))
    _offer(sampler, _done(_recorder(end=10), "ASKED"), forced=True)
    _offer(sampler, _done(_recorder(end=10), "NOTDRAWN"), forced=False)
    _offer(sampler, _done(_recorder(end=10), "DRAWN"), forced=False)
    assert [(r["request_id"], r["reason"]) for r in sampler.take()] == [("ASKED", "asked"), ("DRAWN", "random")]


def test_the_slowest_of_a_minute_are_kept_when_the_minute_is_over() -> None:
    clock = Ticks()
    sampler = Sampler(rate=0, slowest_per_minute=2, rng=lambda: 1.0, clock=clock)
    for i, took in enumerate([5, 50, 7, 30, 1]):
        _offer(sampler, _done(_recorder(end=took * 1_000_000), f"R{i}"), forced=False)
    assert sampler.take() == []  # the minute is not over: a slower one may still come
    clock.now += 60
    rows = sampler.take()
    assert sorted((r["request_id"], r["total_ms"]) for r in rows) == [("R1", 50.0), ("R3", 30.0)]
    assert {r["reason"] for r in rows} == {"slowest"}


def test_tracing_off_keeps_nothing() -> None:
    sampler = Sampler(rate=1.0, slowest_per_minute=5, enabled=False)
    _offer(sampler, _done(_recorder(end=10)), forced=True)
    assert sampler.take() == []


def test_the_sampler_decides_from_the_duration_before_a_record_is_made() -> None:
    # the gateway builds a request's Finished only when decide keeps or considers it: a request faster than the
    # slowest of its minute so far (the heap full) gets None and costs no record
    clock = Ticks()
    sampler = Sampler(rate=0, slowest_per_minute=2, rng=lambda: 1.0, clock=clock)
    decided = []
    for i, took in enumerate([5, 50, 7, 30, 1]):
        reason = sampler.decide(took * 1_000_000, forced=False)
        decided.append(reason)
        if reason is not None:
            sampler.admit(_done(_recorder(end=took * 1_000_000), f"R{i}"), reason)
    assert decided == ["slowest", "slowest", "slowest", "slowest", None]
    assert sampler.decide(1, forced=True) == "asked"
    clock.now += 60
    assert sorted(r["request_id"] for r in sampler.take()) == ["R1", "R3"]


def test_a_new_minute_starts_an_empty_slowest_list_at_the_first_decision() -> None:
    clock = Ticks()
    sampler = Sampler(rate=0, slowest_per_minute=2, rng=lambda: 1.0, clock=clock)
    for i, took in enumerate([50, 30]):
        sampler.admit(_done(_recorder(end=took), f"R{i}"), sampler.decide(took, forced=False) or "")
    assert sampler.decide(10, forced=False) is None  # faster than both of this minute's
    clock.now += 60
    assert sampler.decide(10, forced=False) == "slowest"  # the first of its minute
    assert sorted(r["request_id"] for r in sampler.pending) == ["R0", "R1"]  # the last minute's, queued
