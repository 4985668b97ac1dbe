"""The environment lifecycle: init, build, setup (health), status, logs and clean.

Layer: an area. Owns the environment's life (state file, locks, containers, the mocks' host,
health probing plans). May import `mocks`, the engine, config and the core; never a face or
`project.py`.
"""
