"""Institutional sign-in: OpenID Connect, LDAP, the group -> project mapping and temporary S3 keys (STS)."""
