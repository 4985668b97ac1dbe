"""`e2e.yaml` and YAML test files: Structs, loading with precise errors, and their JSON Schemas."""

from __future__ import annotations

from typing import Any, Literal

from ..jsonschema_util import schema_of
from .loader import CONFIG_NAMES, LoadedConfig, find_config, load_config, load_test_file, read_dotenv
from .model import (
    BuildConfig,
    ContainerConfig,
    HealthcheckConfig,
    McpConfig,
    MockConfig,
    MockResponse,
    MockRoute,
    MockWhen,
    ProjectConfig,
    RetryPolicy,
    ServiceConfig,
    SuiteConfig,
    TestsConfig,
)
from .ports import PortSpec, parse_port
from .testfile import Expect, MockExpect, TestFile, TestStep

__all__ = [
    "CONFIG_NAMES",
    "BuildConfig",
    "ContainerConfig",
    "Expect",
    "HealthcheckConfig",
    "LoadedConfig",
    "McpConfig",
    "MockConfig",
    "MockExpect",
    "MockResponse",
    "MockRoute",
    "MockWhen",
    "PortSpec",
    "ProjectConfig",
    "RetryPolicy",
    "ServiceConfig",
    "SuiteConfig",
    "TestFile",
    "TestStep",
    "TestsConfig",
    "find_config",
    "json_schema",
    "load_config",
    "load_test_file",
    "parse_port",
    "read_dotenv",
]

SCHEMA_IDS = {
    "e2e": "https://preflight.dev/schema/e2e.schema.json",
    "test": "https://preflight.dev/schema/test.schema.json",
}


def json_schema(kind: Literal["e2e", "test"] = "e2e") -> dict[str, Any]:
    """Return the JSON Schema (2020-12) of `e2e.yaml` (`kind="e2e"`) or of a YAML test file (`"test"`).

    The committed copies live in `docs/schema/`; point an editor's YAML extension at them.
    """
    typ = ProjectConfig if kind == "e2e" else TestFile
    body = schema_of(typ)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_IDS[kind],
        **body,
    }
