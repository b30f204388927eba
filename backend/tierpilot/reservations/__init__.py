"""Throughput reservations: booking, admission control, enforcement in the gateway, metering."""
