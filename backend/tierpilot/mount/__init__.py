"""`tierpilot mount`: a bucket as a read-only file system (FUSE), tree from the catalog, data through the gateway."""
