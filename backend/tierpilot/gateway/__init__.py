"""The S3-compatible gateway: SigV4 auth, S3 REST operations, streaming to and from tiers."""
