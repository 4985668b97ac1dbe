"""A package's names that load on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import preflight_sdk


def test_a_lazy_name_is_imported_on_first_use_and_kept() -> None:
    code = (
        "import sys, preflight_sdk\n"
        "assert 'preflight_sdk.project' not in sys.modules\n"
        "project = preflight_sdk.Project\n"
        "assert 'preflight_sdk.project' in sys.modules\n"
        "assert vars(preflight_sdk)['Project'] is project\n"
        "import preflight_sdk.clarify as clarify\n"
        "assert 'preflight_sdk.clarify.llm.providers' not in sys.modules\n"
        "assert clarify.OpenAILLM.__module__ == 'preflight_sdk.clarify.llm.providers'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    with pytest.raises(AttributeError, match="module 'preflight_sdk' has no attribute 'Nope'"):
        _ = preflight_sdk.Nope
