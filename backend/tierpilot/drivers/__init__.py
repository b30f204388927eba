"""Storage drivers: where bytes live (posix, offline posix, s3). They know no domain and no HTTP."""
