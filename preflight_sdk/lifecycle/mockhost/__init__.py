"""The lifecycle's side of the mocks: the host that serves them (`host`), how containers reach it
(`address`), what they received (`traffic`), recording them in a run or setup (`recording`), and
checking them against their real services (`check`)."""
