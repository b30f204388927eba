"""The Overview page: tiers with their usage, buckets, totals."""
