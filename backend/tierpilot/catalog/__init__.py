"""The catalog: buckets and every object's location, size, checksum, tier and restore state."""
