"""`decide_mock_route`: how an engine's containers reach back to the mocks, or why they cannot."""

from __future__ import annotations

import pytest

from preflight_sdk import PreflightError
from preflight_sdk.core.addresses import route_address
from preflight_sdk.lifecycle.mockhost import address as mock_address
from preflight_sdk.lifecycle.mockhost.address import decide_mock_route


def test_an_engine_on_this_machine_uses_the_bridge_gateway() -> None:
    route = decide_mock_route(address="127.0.0.1", gateway="172.17.0.1", mock_host=None, engine="docker")
    assert route.address == "host-gateway" and route.binds == ("172.17.0.1",)
    bare = decide_mock_route(address="127.0.0.1", gateway=None, mock_host=None, engine="docker")
    assert bare.address == "host-gateway" and bare.binds == ()


def test_a_remote_engine_reaches_back_at_the_source_address_of_the_route_to_it() -> None:
    outward = route_address("203.0.113.1")
    assert outward is not None
    route = decide_mock_route(address="203.0.113.1", gateway="172.17.0.1", mock_host=None, engine="tcp://x")
    assert route.address == outward and route.binds == (outward,)


def test_mock_host_wins_and_is_listened_on_only_when_it_is_this_machines() -> None:
    tunnel = decide_mock_route(address="203.0.113.1", gateway=None, mock_host="10.9.8.7", engine="e")
    assert tunnel.address == "10.9.8.7" and tunnel.binds == ()
    own = decide_mock_route(address="127.0.0.1", gateway="172.17.0.1", mock_host="127.0.0.1", engine="e")
    assert own.address == "127.0.0.1" and own.binds == ("127.0.0.1",)
    with pytest.raises(PreflightError) as caught:
        decide_mock_route(address="203.0.113.1", gateway=None, mock_host="no-such-host.invalid", engine="e")
    assert caught.value.code == "CONFIG_INVALID"


def test_a_remote_engine_without_a_way_back_is_refused_with_a_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(PreflightError) as caught:
        decide_mock_route(address="no-such-host.invalid", gateway=None, mock_host=None, engine="ssh://ci@b")
    assert caught.value.code == "UNSUPPORTED_ON_ENGINE"
    assert "mockHost" in (caught.value.hint or "")
    assert caught.value.details and caught.value.details["engine"] == "ssh://ci@b"

    monkeypatch.setattr(mock_address, "route_address", lambda host: "127.0.0.1")
    with pytest.raises(PreflightError) as looped:
        decide_mock_route(address="203.0.113.1", gateway=None, mock_host=None, engine="tcp://h")
    assert looped.value.code == "UNSUPPORTED_ON_ENGINE" and "loopback" in looped.value.message

    monkeypatch.setattr(mock_address, "route_address", lambda host: "198.51.100.77")
    with pytest.raises(PreflightError) as unbound:
        decide_mock_route(address="203.0.113.1", gateway=None, mock_host=None, engine="tcp://h")
    assert unbound.value.code == "UNSUPPORTED_ON_ENGINE" and "cannot listen" in unbound.value.message
