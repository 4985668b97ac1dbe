"""Docker behind a small protocol (`base.Engine`): `DockerEngine` for real work.

`DockerEngine` is one façade whose operations are written once against a lane chosen when it is
made: the Engine API on this machine's socket (`api.py`), python-on-whales and the docker CLI
(`whales.py`), or Podman's (`podman.py`); a swarm (`swarm.py`) owns its manager's engine. Unit
tests use an in-memory engine of the same protocol (`tests/support/fake_engine.py`).

Layer: below the areas. Owns every Docker call (readiness probes are the lifecycle's: `lifecycle/health/probe.py`).
May import config and the core; never an area or a face.
"""
