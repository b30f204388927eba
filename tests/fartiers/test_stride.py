"""The stride detector over generated access patterns (drivers/stride.py)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tierpilot.drivers.stride import StrideDetector

MiB = 1 << 20
offsets = st.integers(0, 1 << 40)
lengths = st.integers(1, 16 * MiB)


def _feed(requests: list[tuple[int, int]]) -> StrideDetector:
    detector = StrideDetector()
    for offset, length in requests:
        detector.observe(offset, length)
    return detector


def _stride(start: int, length: int, gap: int, n: int) -> list[tuple[int, int]]:
    return [(start + i * (length + gap), length) for i in range(n)]


def _two_level(start: int, length: int, inner: int, per_row: int, row: int, n: int) -> list[tuple[int, int]]:
    return [(start + (i // per_row) * row + (i % per_row) * inner, length) for i in range(n)]


@given(start=offsets, length=lengths, gap=st.integers(0, 64 * MiB), extra=st.integers(0, 20))
def test_constant_gap_is_predicted_from_the_third_request(start: int, length: int, gap: int, extra: int) -> None:
    seen = 3 + extra
    pattern = _stride(start, length, gap, seen + 8)
    detector = _feed(pattern[:seen])
    assert detector.predict(8) == pattern[seen:]


@given(start=offsets, length=lengths, gap=st.integers(0, 64 * MiB))
def test_two_requests_are_not_a_pattern(start: int, length: int, gap: int) -> None:
    assert _feed(_stride(start, length, gap, 2)).predict(4) == []


@given(start=offsets, length=st.integers(1, MiB), per_row=st.integers(2, 6), inner_gap=st.integers(0, 4 * MiB),
       row_gap=st.integers(1, 256 * MiB), extra=st.integers(0, 12))
def test_two_level_stride_is_predicted_after_two_rows(start: int, length: int, per_row: int, inner_gap: int,
                                                       row_gap: int, extra: int) -> None:
    inner = length + inner_gap
    row = per_row * inner + row_gap  # the jump to the next row differs from the step along it
    seen = 2 * per_row + 1 + extra
    pattern = _two_level(start, length, inner, per_row, row, seen + 2 * per_row)
    detector = _feed(pattern[:seen])
    assert detector.predict(2 * per_row) == pattern[seen:]


@settings(max_examples=200)
@given(rng=st.randoms(use_true_random=False), n=st.integers(3, 200), length=st.integers(1, 4 * MiB))
def test_random_reads_are_almost_never_predicted(rng: random.Random, n: int, length: int) -> None:
    """Each prediction would be fetched ahead: over random offsets the bytes predicted and not read next stay
    under 10 % of the bytes read (in practice none)."""
    detector = StrideDetector()
    requests = [(rng.randrange(0, 1 << 36), length) for _ in range(n)]
    wasted = 0
    for i, (offset, size) in enumerate(requests):
        detector.observe(offset, size)
        for predicted in detector.predict(4):
            if predicted not in requests[i + 1:i + 5]:
                wasted += predicted[1]
    assert wasted <= 0.1 * n * length


@given(start=offsets, length=lengths, gap=st.integers(0, 64 * MiB), rng=st.randoms(use_true_random=False))
def test_a_broken_pattern_stops_predicting_at_once(start: int, length: int, gap: int, rng: random.Random) -> None:
    pattern = _stride(start, length, gap, 6)
    detector = _feed(pattern)
    assert detector.predict(1) == [(start + 6 * (length + gap), length)]
    jump = rng.randrange(0, 1 << 40)
    if jump == start + 6 * (length + gap):
        jump += 1
    detector.observe(jump, length)
    assert detector.predict(4) == []


@given(start=offsets, length=lengths, gap=st.integers(0, 64 * MiB), per_row=st.integers(2, 4),
       row_gap=st.integers(1, 64 * MiB))
def test_a_new_pattern_is_picked_up_within_three_requests(start: int, length: int, gap: int, per_row: int,
                                                         row_gap: int) -> None:
    inner = length + gap
    detector = _feed(_two_level(start, length, inner, per_row, per_row * inner + row_gap, 3 * per_row))
    sequential = _stride(1 << 41, length, 0, 10)
    for request in sequential[:3]:
        detector.observe(*request)
    assert detector.predict(7) == sequential[3:]
