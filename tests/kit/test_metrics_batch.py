"""kit/metrics.py's request observer: what the requests of one turn of the event loop add is written once at the
turn's end, with the sums and buckets prometheus_client's own ``observe`` and ``inc`` would have written."""

from __future__ import annotations

import asyncio
import threading
import uuid

from tierpilot.kit import metrics


def test_a_turns_requests_are_written_once_at_its_end_as_observe_would_write_them() -> None:
    op = f"TEST {uuid.uuid4().hex[:8]}"
    observer = metrics.RequestObserver()
    requests = metrics.GATEWAY_REQUESTS.labels(op, "200")
    duration = metrics.GATEWAY_DURATION.labels(op)
    sent = metrics.GATEWAY_BYTES_OUT.labels(op)
    auth = metrics.GATEWAY_PHASE.labels(op, "auth")
    wait = metrics.LIMITER_WAIT.labels(op)
    # the library's own observe, for comparison
    reference = metrics.GATEWAY_DURATION.labels(f"{op} reference")
    auth_reference = metrics.GATEWAY_PHASE.labels(f"{op} reference", "auth")
    wait_reference = metrics.LIMITER_WAIT.labels(f"{op} reference")
    in_flight = metrics.GATEWAY_IN_FLIGHT._value.get()
    times_ns = [400_000, 1_000_000, 3_000_000, 7_000_000_000]  # 0.4 ms, a bound exactly (1 ms), 3 ms, 7 s

    async def turn() -> None:
        for total in times_ns:
            metrics.count(metrics.GATEWAY_IN_FLIGHT)
            observer.observe(op, 200, total, [("auth", 0, total // 2)], 0, 1024, total // 3)
            metrics.count(metrics.GATEWAY_IN_FLIGHT, -1)
            reference.observe(total / 1e9)
            auth_reference.observe(total // 2 / 1e9)
            wait_reference.observe(total // 3 / 1e9)
        assert requests._value.get() == 0  # gathered, not yet written
        await asyncio.sleep(0)  # the loop turns: one write per value that moved
        assert requests._value.get() == len(times_ns)

    asyncio.run(turn())
    assert [b.get() for b in duration._buckets] == [b.get() for b in reference._buckets]
    assert duration._sum.get() == reference._sum.get()
    for ours, theirs in ((auth, auth_reference), (wait, wait_reference)):
        assert [b.get() for b in ours._buckets] == [b.get() for b in theirs._buckets]
        assert ours._sum.get() == theirs._sum.get()
    assert sent._value.get() == 1024 * len(times_ns)
    assert metrics.GATEWAY_IN_FLIGHT._value.get() == in_flight


def test_the_statuses_of_an_operation_count_apart_and_share_its_histograms() -> None:
    op = f"TEST {uuid.uuid4().hex[:8]}"
    observer = metrics.RequestObserver()

    async def turn() -> None:
        observer.observe(op, 200, 1_000, [("auth", 0, 500)], 0, 0, None)
        observer.observe(op, 404, 2_000, [("auth", 0, 500), ("lookup", 500, 700)], 10, 0, None)
        await asyncio.sleep(0)

    asyncio.run(turn())
    assert metrics.GATEWAY_REQUESTS.labels(op, "200")._value.get() == 1
    assert metrics.GATEWAY_REQUESTS.labels(op, "404")._value.get() == 1
    assert sum(b.get() for b in metrics.GATEWAY_DURATION.labels(op)._buckets) == 2
    assert sum(b.get() for b in metrics.GATEWAY_PHASE.labels(op, "auth")._buckets) == 2
    assert sum(b.get() for b in metrics.GATEWAY_PHASE.labels(op, "lookup")._buckets) == 1
    assert metrics.GATEWAY_BYTES_IN.labels(op)._value.get() == 10


def test_outside_an_event_loop_a_count_is_written_at_once() -> None:
    before = metrics.GATEWAY_SLOWDOWNS._value.get()
    metrics.count(metrics.GATEWAY_SLOWDOWNS)
    assert metrics.GATEWAY_SLOWDOWNS._value.get() == before + 1


def test_counts_of_a_loop_closed_before_its_turn_ended_are_written_when_the_next_loop_gathers() -> None:
    before = metrics.GATEWAY_SLOWDOWNS._value.get()
    loop = asyncio.new_event_loop()

    def count_and_stop() -> None:
        metrics.count(metrics.GATEWAY_SLOWDOWNS)
        loop.stop()  # the loop ends with this turn: the flush it scheduled never runs

    loop.call_soon(count_and_stop)
    loop.run_forever()
    loop.close()
    assert metrics.GATEWAY_SLOWDOWNS._value.get() == before

    async def count_and_turn() -> None:
        metrics.count(metrics.GATEWAY_SLOWDOWNS)
        assert metrics.GATEWAY_SLOWDOWNS._value.get() == before + 1  # the closed loop's count, written now
        await asyncio.sleep(0)

    asyncio.run(count_and_turn())
    assert metrics.GATEWAY_SLOWDOWNS._value.get() == before + 2


def test_a_count_from_a_thread_while_the_loop_gathers_is_written_at_once() -> None:
    before = metrics.GATEWAY_SLOWDOWNS._value.get()

    async def gather_and_count_in_a_thread() -> None:
        metrics.count(metrics.GATEWAY_IN_FLIGHT, 0.0)  # the loop's turn is gathering
        thread = threading.Thread(target=metrics.count, args=(metrics.GATEWAY_SLOWDOWNS,))
        thread.start()
        thread.join()  # the loop does not turn meanwhile
        assert metrics.GATEWAY_SLOWDOWNS._value.get() == before + 1

    asyncio.run(gather_and_count_in_a_thread())
