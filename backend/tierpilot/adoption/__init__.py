"""Adopting a remote bucket in place: its listing imported into the catalog, rescanned on a schedule."""
