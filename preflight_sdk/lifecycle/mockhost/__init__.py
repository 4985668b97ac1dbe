"""The lifecycle's side of the mocks: the host that serves them (`host`), how containers reach it
(`address`), and what they received (`traffic`)."""
