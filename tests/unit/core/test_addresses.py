"""This machine's addresses: loopback, URLs, the route to a host, what it can bind."""

from __future__ import annotations

from preflight_sdk.core.addresses import can_bind, http_url, is_loopback, route_address


def test_urls_bracket_ipv6_and_loopback_is_recognised() -> None:
    assert http_url("192.0.2.2", 8080) == "http://192.0.2.2:8080"
    assert http_url("2001:db8::5", 80) == "http://[2001:db8::5]:80"
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("192.0.2.2") and not is_loopback("builder")


def test_the_route_address_is_the_kernels_source_address_without_sending() -> None:
    assert route_address("127.0.0.1") == "127.0.0.1"
    assert route_address("no-such-host.invalid") is None
    outward = route_address("203.0.113.1")  # TEST-NET-3: leaves through the default route
    assert outward is not None and not is_loopback(outward)
    assert can_bind(outward)
    assert can_bind("127.0.0.1")
    assert not can_bind("198.51.100.77")  # TEST-NET-2: no interface of this machine has it
