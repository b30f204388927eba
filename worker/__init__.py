"""The Celery app of tierpilot: configuration, beat schedule, the tasks of every domain."""
