"""The entry points: the API app, the CLI, the supervisor, start-up data and the wiring of the layers."""
