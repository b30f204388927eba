"""Lifecycle: per-bucket rules (S3's lifecycle configuration) and the worker that moves and expires data."""
