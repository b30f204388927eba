"""Restore batches of archived objects: submit, poll on a schedule, notify, expire."""
