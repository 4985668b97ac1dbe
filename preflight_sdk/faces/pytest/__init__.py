"""The pytest plugin: `--preflight` and the `preflight_env` fixture."""
