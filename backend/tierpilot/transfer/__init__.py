"""Client-side transfers through the gateway: `tierpilot cp`."""
