"""The suites that are commands: pytest and shell (`runners`), and pytest kept warm between runs
(`warm_pytest`, whose child is `warm_pytest_server`)."""
