"""tierpilot: web dashboard, S3 gateway and cost planner for tiered cold storage."""

__version__ = "0.1.0"
