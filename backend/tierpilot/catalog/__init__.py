"""The catalog: buckets and every object's location, size, checksum, tier and restore state."""

from tierpilot.catalog import changes as _changes  # noqa: F401  (every session notes its changes to objects)
