"""Suites and their runners: YAML HTTP suites, pytest and shell suites, and what a failed case carries.

Layer: an area. Owns running suites (YAML HTTP, pytest, shell), assertions, diagnostics and a
run's artifacts, and returns whole results: reply budgets are the MCP face's. A run's suites get
its environment as a value (`environment.RunEnvironment`, built by `runs/`), so they never import
`lifecycle` (a contract in pyproject.toml). May import `mocks`, `processes`, the engine, config
and the core; never a face.
"""
