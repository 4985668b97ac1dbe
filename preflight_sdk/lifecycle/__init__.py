"""The environment lifecycle: init, build, setup (health), status, logs and clean."""
