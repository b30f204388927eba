"""Users, sessions, API tokens and S3 access keys."""
