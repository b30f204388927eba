"""Benchmark runs and sweeps go through the same real gateway processes, API and reservation as the traces' tests."""

from tests.traces.conftest import api, gateway, read_reservation

__all__ = ["api", "gateway", "read_reservation"]
