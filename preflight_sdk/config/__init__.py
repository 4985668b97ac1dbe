"""`e2e.yaml` and YAML test files: Structs, loading with precise errors, and their JSON Schemas.

Layer: below the areas. Owns the file formats and their validation. May import the core only.
"""

from __future__ import annotations

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
from .port_specs import PortSpec, parse_port
from .schema import json_schema
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
