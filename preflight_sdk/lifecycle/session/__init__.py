"""A project's session: `.preflight/state.json`, the lock between processes, the engine chosen, init."""
