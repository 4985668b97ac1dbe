"""Suites and their runners: YAML HTTP suites, pytest and shell suites, and what a failed case carries.

Layer: an area. Owns running suites (YAML HTTP, pytest, shell), assertions, diagnostics and a
run's artifacts, and returns whole results: reply budgets are the MCP face's. May import
`lifecycle` (the project context), `mocks`, the engine, config and the core; never a face.
"""
