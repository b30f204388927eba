"""Benchmark runs users start (sweeps through the gateway), their CLI, and the reference figures of bench/."""
