"""Child processes a run starts: a command that cancelling kills with its process group (`commands`),
and the groups recorded where any later process finds and stops them (`groups`).

Layer: below the areas that start commands (suites, lifecycle, verify, runs); imports only the core.
"""
