"""The environment lifecycle: init, build, setup (health), status, logs and clean.

Layer: an area. Owns the environment's life, one concern per folder: `session/` (the state file,
the lock between processes, the engine chosen, init), `images/` (build and its inputs), `setup/`
(the plan pipeline and the resets between runs), `health/` (probes and readiness) and
`mockhost/` (where the mocks are served and how containers reach them); `status`, `logs`,
`clean` and `watch` read or end what those started. May import `mocks`, `processes`, the
engine, config and the core; never a face or `project.py`.
"""
