"""Storage tiers: where object bytes live, and their drivers (posix, offline posix, s3)."""
