"""Hosts become the project's services and mocks: asked, by name, by port, or the only service."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_sdk.config import load_config
from preflight_sdk.core.errors import InputError
from preflight_sdk.importers.hosts import Target, check_asked, place, targets_of

ORDERS = Target(kind="service", name="orders", aliases=["orders-api"], ports=[8080, 49153])
STOCK = Target(kind="service", name="stock", ports=[9000])
PAY = Target(kind="mock", name="payments", ports=[7070])
ALL = [ORDERS, STOCK, PAY]


@pytest.mark.parametrize(
    ("url", "asked", "expected"),
    [
        (
            "http://api.example.com/orders?x=1",
            {"api.example.com": "orders"},
            ("orders", "/orders?x=1", None, "asked"),
        ),
        ("https://API.example.com:8443/o", {"api.example.com:8443": "stock"}, ("stock", "/o", None, "asked")),
        ("http://orders:8080/o", {}, ("orders", "/o", None, "by name")),
        ("http://orders-api/o", {}, ("orders", "/o", None, "by name")),
        ("http://localhost:9000/s", {}, ("stock", "/s", None, "by port 9000")),
        ("http://127.0.0.1:7070/charges", {}, (None, None, "{{mocks.payments.url}}/charges", "by port 7070")),
        ("{{base}}/o", {"base": "orders"}, ("orders", "/o", None, "asked")),
        ("{{pay}}/refunds", {}, (None, None, "{{pay}}/refunds", "not matched: kept as a variable")),
        (
            "http://localhost:1234/x",
            {},
            (None, None, "http://localhost:1234/x", "not matched: kept as written"),
        ),
    ],
)
def test_each_rule_places_a_host(url: str, asked: dict[str, str], expected: tuple[object, ...]) -> None:
    placed = place(url, {}, ALL, asked)
    assert (placed.service, placed.path, placed.url, placed.how) == expected


def test_a_variable_holding_a_base_url_is_placed_by_its_value_and_keeps_its_path() -> None:
    placed = place("{{api}}/users", {"api": "http://localhost:8080/v2"}, ALL, {})
    assert (placed.service, placed.path, placed.found) == ("orders", "/v2/users", "{{api}}")
    assert placed.how == "by port 8080 (its value http://localhost:8080/v2)"
    asked = place("{{api}}/users", {"api": "https://prod.example.com/v2"}, ALL, {"api": "stock"})
    assert (asked.service, asked.path) == ("stock", "/v2/users")


def test_loopback_and_unvalued_variables_go_to_the_only_service() -> None:
    assert place("http://localhost:3000/a", {}, [ORDERS, PAY], {}).how == "the only service"
    assert place("{{APIURL}}/a", {}, [ORDERS], {}).service == "orders"
    assert place("/a", {}, [ORDERS], {}).path == "/a"


def test_a_hosts_entry_that_names_nothing_is_refused_with_the_names_there_are() -> None:
    with pytest.raises(InputError) as caught:
        check_asked({"localhost:8080": "ordrs"}, ALL)
    assert caught.value.message == (
        "hosts: `localhost:8080` is given to `ordrs`, which is neither a service nor a mock of this project"
    )
    assert caught.value.hint == "services and mocks: orders, payments, stock"


def test_targets_come_from_the_services_ports_and_the_mocks(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text(
        "project: {name: t}\n"
        "services:\n"
        "  api:\n"
        "    build: {image: preflight-base/python}\n"
        "    container: {name: shop-api, ports: ['0:8000', '127.0.0.1:8081:8080/tcp'], healthcheck: {path: /h, port: 8000}}\n"
        "mocks:\n"
        "  pay: {port: 7070, routes: []}\n"
    )
    assert targets_of(load_config(tmp_path)) == [
        Target(kind="service", name="api", aliases=["shop-api"], ports=[8000, 8080, 8081]),
        Target(kind="mock", name="pay", ports=[7070]),
    ]
