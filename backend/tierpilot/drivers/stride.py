"""Which byte ranges a reader will ask for next, from the ranges it asked for so far.

A reader's requests are (offset, length) pairs. The detector looks at the steps between successive
requests (offset difference, length) over a short window and looks for the shortest period ``p``
(1..``max_period``) that explains the longest recent run of them:

- ``p = 1``: sequential reads (step = length) or a constant stride (read 1 MiB, skip 3 MiB, ...);
- ``p > 1``: a two-level stride, e.g. ``p - 1`` small steps along a row, then a jump to the next row.

A period counts only once the window shows it ``confirm`` times over (two equal steps for ``p = 1``:
three requests), so a random reader is not predicted at all, and one request that breaks the pattern
stops the predictions at once. Pure arithmetic, no I/O: the prefetcher (``drivers.readahead``) decides
how far ahead to fetch.
"""

from __future__ import annotations

from collections import deque

Step = tuple[int, int]  # (offset minus the previous request's offset, this request's length)


class StrideDetector:
    """Observes one reader's requests; ``predict(n)`` gives the next ``n`` ranges while a pattern holds."""

    def __init__(self, max_period: int = 8, confirm: int = 2) -> None:
        self.max_period = max_period
        self.confirm = confirm
        self._steps: deque[Step] = deque(maxlen=max_period * (confirm + 1))
        self._last: tuple[int, int] | None = None  # (offset, length) of the latest request

    def observe(self, offset: int, length: int) -> None:
        """Record a request for ``length`` bytes at ``offset``."""
        if self._last is not None:
            self._steps.append((offset - self._last[0], length))
        self._last = (offset, length)

    def reset(self) -> None:
        self._steps.clear()
        self._last = None

    def period(self) -> int | None:
        """The period that explains the longest recent run of steps (seen ``confirm`` times over), or None.

        The longest explanation wins, not the shortest period: inside a two-level stride's row the last
        steps also repeat with period 1, but only the row period explains the jumps before them.
        """
        steps = list(self._steps)
        best, best_len = None, 0
        for p in range(1, self.max_period + 1):
            run = 0
            i = len(steps) - 1
            while i - p >= 0 and steps[i] == steps[i - p]:
                run += 1
                i -= 1
            if run < p * (self.confirm - 1) or all(s[0] == 0 for s in steps[-p:]):
                continue
            if run + p > best_len:
                best, best_len = p, run + p
        return best

    def predict(self, n: int) -> list[tuple[int, int]]:
        """The next ``n`` requests (offset, length) if a pattern holds, else []."""
        p = self.period()
        if p is None or self._last is None or n <= 0:
            return []
        cycle = list(self._steps)[-p:]
        offset = self._last[0]
        out = []
        for i in range(n):
            step, length = cycle[i % p]
            offset += step
            if offset < 0:
                break
            out.append((offset, length))
        return out
