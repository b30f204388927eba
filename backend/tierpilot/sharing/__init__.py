"""Sharing: bucket and object ACLs, bucket policies, public access block, object ownership."""
