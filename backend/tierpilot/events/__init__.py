"""Bucket event notifications: S3 notification configurations, admin-configured targets, the outbox of events
written in the transaction of each change, its delivery by the worker, dead letters."""
