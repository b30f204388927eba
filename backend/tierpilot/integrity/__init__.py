"""Integrity: what tierpilot can prove about the bytes it keeps (fixity checks, their log and schedule)."""
