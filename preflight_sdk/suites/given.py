"""`GivenSuites`: suites a run is given beside e2e.yaml's (saved tests and suites), with their test files."""

from __future__ import annotations

import msgspec

from preflight_sdk.config import SuiteConfig, TestFile

__all__ = ["NO_SUITES", "GivenSuites"]


class GivenSuites(msgspec.Struct, frozen=True, kw_only=True):
    """Suites that e2e.yaml does not list, each with its test file.

    Attributes:
        suites: the suites and their test files, addressable by the suites' ids.
        environment_optional: they may run without a running environment (no case names a
            service or a mock, and none of e2e.yaml's suites runs with them).
    """

    suites: tuple[tuple[SuiteConfig, TestFile], ...] = ()
    environment_optional: bool = False

    def by_id(self) -> dict[str, SuiteConfig]:
        """The suites by their ids."""
        return {suite.id: suite for suite, _ in self.suites}

    def digest(self) -> bytes:
        """What the suites are, encoded: part of what makes two requests the same request."""
        return msgspec.json.encode(self.suites)


NO_SUITES = GivenSuites()
