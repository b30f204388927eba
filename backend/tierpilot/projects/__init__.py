"""Projects: a research group's members with roles, its buckets and the quota they share."""
