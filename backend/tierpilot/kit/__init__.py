"""Shared pieces every domain uses: database, time, errors."""
