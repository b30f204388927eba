"""Where time goes: sampled gateway request traces (table ``request_traces``) and their API."""
