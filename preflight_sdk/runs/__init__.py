"""Durable runs: every run, build and setup as an addressable object in the project's store.

Owns the run contract: wait budgets (past them the work goes on in the owning process and the
caller gets a runId), polling, cancelling across processes, resuming what did not pass, diffs,
artifacts, history inside failures, idempotency and retention. It drives `suites/` and
`lifecycle/` and records through `store/`; it writes no SQL.

May import: `suites/`, `lifecycle/`, `store/`, `config/`, and the core.
"""
