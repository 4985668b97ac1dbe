"""What `record=` and `upstream=` may say, checked against e2e.yaml before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_sdk.config import load_config
from preflight_sdk.core.errors import InputError, MockError
from preflight_sdk.lifecycle.mockhost.recording import record_request, with_upstream

CONFIG = """\
project: {name: rec}
mocks:
  payments: {port: 0, proxy: "https://api.payments.test/"}
  github: {port: 0}
  mail: {port: 0}
"""


@pytest.fixture
def loaded(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    return load_config(tmp_path)


def test_a_mock_records_from_its_proxy_unless_an_upstream_is_given(loaded) -> None:  # type: ignore[no-untyped-def]
    assert record_request(loaded, "payments").upstreams == {"payments": "https://api.payments.test"}  # type: ignore[union-attr]
    asked = record_request(loaded, "github=http://127.0.0.1:8080/")
    assert asked is not None and asked.upstreams == {"github": "http://127.0.0.1:8080"}


def test_several_mocks_take_one_upstream_each(loaded) -> None:  # type: ignore[no-untyped-def]
    asked = record_request(loaded, "payments, github=http://a.test,mail=https://b.test:8443/v2?x=1")
    assert asked is not None
    assert asked.upstreams == {
        "payments": "https://api.payments.test",
        "github": "http://a.test",
        "mail": "https://b.test:8443/v2?x=1",
    }


def test_the_command_lines_upstream_is_written_into_record() -> None:
    assert with_upstream("github", "http://a.test") == "github=http://a.test"
    assert with_upstream("payments,github", "github=http://a.test") == "payments,github=http://a.test"
    assert with_upstream("payments", None) == "payments"


def test_nothing_to_record_is_no_request(loaded) -> None:  # type: ignore[no-untyped-def]
    assert record_request(loaded, None) is None
    assert record_request(loaded, " , ") is None


def test_a_mock_with_no_upstream_is_invalid_input_with_the_two_ways_to_give_one(loaded) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as caught:
        record_request(loaded, "github")
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details == {"mock": "github"}
    assert (
        caught.value.hint is not None
        and "upstream" in caught.value.hint
        and "mocks.github.proxy" in caught.value.hint
    )


def test_an_unknown_mock_is_mock_not_found_listing_the_mocks(loaded) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MockError) as caught:
        record_request(loaded, "payment")
    assert caught.value.code == "MOCK_NOT_FOUND"
    assert caught.value.details == {"mock": "payment", "valid": ["payments", "github", "mail"]}


@pytest.mark.parametrize(
    "record",
    ["github=ftp://a.test", "github=http://", "github=http://a.test:port"],
    ids=["not-http", "no-host", "bad-port"],
)
def test_a_malformed_upstream_is_invalid_input(loaded, record: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as caught:
        record_request(loaded, record)
    assert caught.value.code == "INVALID_INPUT" and caught.value.hint


@pytest.mark.parametrize(
    ("record", "upstream"),
    [("github,mail", "http://a.test"), ("github", "mail=http://a.test"), (None, "http://a.test")],
    ids=["one-url-two-mocks", "pair-of-another-mock", "no-record"],
)
def test_a_command_line_upstream_that_fits_no_recorded_mock_is_invalid_input(
    record: str | None, upstream: str
) -> None:
    with pytest.raises(InputError) as caught:
        with_upstream(record, upstream)
    assert caught.value.code == "INVALID_INPUT" and caught.value.hint
