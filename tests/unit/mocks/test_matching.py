"""Route matching over real HTTP: method, path patterns, `when` conditions, first match wins."""

from __future__ import annotations

import httpx
import msgspec
import pytest

pytestmark = pytest.mark.anyio


def route(path: str, method: str = "GET", name: str | None = None, **extra: object) -> dict[str, object]:
    spec: dict[str, object] = {"method": method, "path": path, "response": {"body": {"route": name or path}}}
    if name:
        spec["name"] = name
    spec.update(extra)
    return spec


async def test_method_must_match_and_any_matches_every_method(serve, client: httpx.AsyncClient) -> None:
    routes = [route("/a", "POST", "post-a"), route("/a", "ANY", "any-a")]
    async with serve(m=routes) as host:
        url = host.url("m")
        assert (await client.post(f"{url}/a")).json() == {"route": "post-a"}
        assert (await client.get(f"{url}/a")).json() == {"route": "any-a"}
        assert (await client.delete(f"{url}/a")).json() == {"route": "any-a"}


async def test_methods_are_case_insensitive_in_config_and_head_is_served_by_get_routes(
    serve, client: httpx.AsyncClient
) -> None:
    async with serve(m=[route("/thing", "get", "get-thing")]) as host:
        head = await client.head(f"{host.url('m')}/thing")
        assert head.status_code == 200
        assert head.content == b""
        assert (await client.post(f"{host.url('m')}/thing")).status_code == 404


async def test_path_params_are_captured_and_literal_segments_must_be_equal(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [
        {
            "path": "/orders/:id/items/:item",
            "response": {"body": {"id": "{{request.params.id}}", "item": "{{request.params.item}}"}},
        }
    ]
    async with serve(m=routes) as host:
        url = host.url("m")
        assert (await client.get(f"{url}/orders/42/items/7")).json() == {"id": "42", "item": "7"}
        assert (await client.get(f"{url}/orders/42/things/7")).status_code == 404
        assert (await client.get(f"{url}/orders/42/items")).status_code == 404
        entry = host.entries("m")[0]
        assert entry.params == {"id": "42", "item": "7"}


async def test_percent_encoded_segments_are_decoded_before_matching(serve, client: httpx.AsyncClient) -> None:
    routes = [{"path": "/files/:name", "response": {"body": "{{request.params.name}}"}}]
    async with serve(m=routes) as host:
        response = await client.get(f"{host.url('m')}/files/a%20b.txt")
        assert response.text == "a b.txt"


async def test_star_matches_one_segment_in_the_middle_and_the_rest_at_the_end(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [
        route("/a/*/c", name="middle"),
        {"path": "/files/*", "response": {"body": "{{request.params.*}}"}},
    ]
    async with serve(m=routes) as host:
        url = host.url("m")
        assert (await client.get(f"{url}/a/anything/c")).json() == {"route": "middle"}
        assert (await client.get(f"{url}/a/x/y/c")).status_code == 404
        assert (await client.get(f"{url}/files/x/y/z.txt")).text == "x/y/z.txt"
        assert (await client.get(f"{url}/files")).text == ""


async def test_a_trailing_slash_makes_no_difference(serve, client: httpx.AsyncClient) -> None:
    async with serve(m=[route("/users/", name="users")]) as host:
        assert (await client.get(f"{host.url('m')}/users")).json() == {"route": "users"}
        assert (await client.get(f"{host.url('m')}/users/")).json() == {"route": "users"}


async def test_first_matching_route_in_file_order_wins(serve, client: httpx.AsyncClient) -> None:
    routes = [route("/x/:id", name="param-first"), route("/x/special", name="literal-second")]
    async with serve(m=routes) as host:
        assert (await client.get(f"{host.url('m')}/x/special")).json() == {"route": "param-first"}


async def test_conditional_route_without_a_match_falls_through_to_the_next_route(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [
        route("/api/action", "POST", "create", when={"body": {"type": "create"}}),
        route("/api/action", "POST", "fallback"),
    ]
    async with serve(m=routes) as host:
        url = host.url("m")
        assert (await client.post(f"{url}/api/action", json={"type": "create"})).json() == {"route": "create"}
        assert (await client.post(f"{url}/api/action", json={"type": "update"})).json() == {
            "route": "fallback"
        }


async def test_conditional_routes_without_fallback_answer_404_never_the_first_conditional_one(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [
        route("/api/action", "POST", "create", when={"body": {"type": "create"}}),
        route("/api/action", "POST", "delete", when={"body": {"type": "delete"}}),
    ]
    async with serve(m=routes) as host:
        response = await client.post(f"{host.url('m')}/api/action", json={"type": "update"})
        assert response.status_code == 404


async def test_body_condition_is_a_deep_partial_match_on_nested_json(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [
        route(
            "/pay", "POST", "eur", when={"body": {"payment": {"currency": "EUR", "card": {"brand": "visa"}}}}
        )
    ]
    async with serve(m=routes) as host:
        url = f"{host.url('m')}/pay"
        hit = {
            "payment": {"currency": "EUR", "amount": 5, "card": {"brand": "visa", "last4": "4242"}},
            "x": 1,
        }
        assert (await client.post(url, json=hit)).status_code == 200
        miss = {"payment": {"currency": "EUR", "card": {"brand": "amex"}}}
        assert (await client.post(url, json=miss)).status_code == 404


async def test_body_conditions_accept_assertion_operators(serve, client: httpx.AsyncClient) -> None:
    when = {"body": {"id": {"matches": "^ord_[0-9]+$"}, "amount": {"gt": 100}, "coupon": {"exists": False}}}
    async with serve(m=[route("/orders", "POST", "big", when=when)]) as host:
        url = f"{host.url('m')}/orders"
        assert (await client.post(url, json={"id": "ord_1", "amount": 150})).status_code == 200
        assert (await client.post(url, json={"id": "ord_1", "amount": 50})).status_code == 404
        assert (await client.post(url, json={"id": "x_1", "amount": 150})).status_code == 404
        assert (await client.post(url, json={"id": "ord_1", "amount": 150, "coupon": "A"})).status_code == 404


async def test_body_conditions_see_form_fields_and_plain_text(serve, client: httpx.AsyncClient) -> None:
    routes = [
        route("/form", "POST", "form", when={"body": {"user": "ann", "tags": ["a", "b"]}}),
        route("/text", "POST", "text", when={"body": {"contains": "hello"}}),
    ]
    async with serve(m=routes) as host:
        url = host.url("m")
        form = await client.post(
            f"{url}/form",
            content=b"user=ann&tags=a&tags=b",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert form.json() == {"route": "form"}
        text = await client.post(
            f"{url}/text", content=b"well hello there", headers={"content-type": "text/plain"}
        )
        assert text.json() == {"route": "text"}
        assert (await client.post(f"{url}/text", content=b"bye")).status_code == 404


async def test_query_conditions_compare_numbers_as_text_and_support_operators(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [
        route("/items", name="page-2", when={"query": {"page": 2, "debug": True}}),
        route("/items", name="big-limit", when={"query": {"limit": {"gte": 50}}}),
        route("/items", name="multi", when={"query": {"tag": ["a", "b"]}}),
    ]
    async with serve(m=routes) as host:
        url = f"{host.url('m')}/items"
        assert (await client.get(url, params={"page": "2", "debug": "true"})).json() == {"route": "page-2"}
        assert (await client.get(url, params={"page": "3", "debug": "true"})).status_code == 404
        assert (await client.get(url, params={"limit": "100"})).json() == {"route": "big-limit"}
        assert (await client.get(url, params={"limit": "10"})).status_code == 404
        assert (await client.get(f"{url}?tag=a&tag=b")).json() == {"route": "multi"}


async def test_header_conditions_ignore_the_case_of_names(serve, client: httpx.AsyncClient) -> None:
    when = {"headers": {"X-Api-Key": "secret", "authorization": {"startsWith": "Bearer "}}}
    async with serve(m=[route("/me", name="me", when=when)]) as host:
        url = f"{host.url('m')}/me"
        ok = await client.get(url, headers={"x-api-key": "secret", "Authorization": "Bearer abc"})
        assert ok.json() == {"route": "me"}
        assert (
            await client.get(url, headers={"X-API-KEY": "wrong", "Authorization": "Bearer a"})
        ).status_code == 404
        assert (await client.get(url, headers={"X-API-KEY": "secret"})).status_code == 404


async def test_no_match_returns_404_that_explains_the_closest_routes(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [
        route("/api/orders/:id", "GET", "get-order"),
        route("/api/action", "POST", "create", when={"body": {"type": "create"}}),
        route("/health", "GET"),
        route("/api/action", "PUT", "put-action"),
    ]
    async with serve(m=routes) as host:
        response = await client.post(f"{host.url('m')}/api/action", json={"type": "update"})
        assert response.status_code == 404
        data = response.json()
        assert data["error"] == "no route matched"
        assert data["request"] == {"method": "POST", "path": "/api/action"}
        closest = data["closestRoutes"]
        assert len(closest) == 3
        assert closest[0] == {
            "route": "POST /api/action",
            "index": 1,
            "name": "create",
            "why": ['body.type: expected "create", got "update"'],
        }
        assert closest[1] == {
            "route": "PUT /api/action",
            "index": 3,
            "name": "put-action",
            "why": ["method POST != PUT"],
        }
        assert closest[2]["index"] == 0
        assert "method POST != GET" in closest[2]["why"]
        assert "path segment 2 'action' != 'orders'" in closest[2]["why"]


async def test_no_match_explains_missing_fields_headers_and_query(serve, client: httpx.AsyncClient) -> None:
    when = {"query": {"v": "2"}, "headers": {"x-tenant": "acme"}, "body": {"user": {"id": {"exists": True}}}}
    async with serve(m=[route("/r", "POST", "cond", when=when)]) as host:
        response = await client.post(f"{host.url('m')}/r?v=1", json={"user": {}})
        why = response.json()["closestRoutes"][0]["why"]
        assert why[0] == 'query.v: expected "2", got "1"'
        assert why[1] == 'headers.x-tenant: expected "acme", got nothing'
        assert why[2].startswith("body.user.id: does not exist")


async def test_unmatched_requests_are_journaled_with_status_404_and_no_route(
    serve, client: httpx.AsyncClient
) -> None:
    async with serve(m=[route("/known")]) as host:
        await client.post(f"{host.url('m')}/unknown?q=1", json={"a": 1})
        [entry] = host.entries("m")
        assert (entry.method, entry.path, entry.status) == ("POST", "/unknown", 404)
        assert entry.matched_route is None
        assert entry.route_index is None
        assert entry.body == {"a": 1}


async def test_the_journal_keeps_why_no_route_matched_as_the_404_body_says(
    serve, client: httpx.AsyncClient
) -> None:
    routes = [
        route("/charges", "POST", "charge", when={"body": {"amount": {"gt": 0}}}),
        route("/charges/:id", "GET"),
    ]
    async with serve(m=routes) as host:
        url = host.url("m")
        missed = await client.post(f"{url}/refunds", json={"amount": 5})
        wrong_body = await client.post(f"{url}/charges", json={"amount": 0})
        matched = await client.post(f"{url}/charges", json={"amount": 5})
        assert (missed.status_code, wrong_body.status_code, matched.status_code) == (404, 404, 200)
        first, second, third = host.entries("m")
        assert first.closest_routes is not None
        assert [msgspec.to_builtins(r) for r in first.closest_routes] == missed.json()["closestRoutes"]
        assert first.closest_routes[0].name == "charge"
        assert first.closest_routes[0].why == ["path segment 1 'refunds' != 'charges'"]
        assert second.closest_routes is not None
        assert second.closest_routes[0].route == "POST /charges"
        assert second.closest_routes[0].why == ["body.amount: expected to be > 0, got 0"]
        # A matched request carries no explanation (and pays nothing for one).
        assert third.matched_route == "charge" and third.closest_routes is None


async def test_a_mock_without_routes_records_an_empty_list_of_closest_routes(
    serve, client: httpx.AsyncClient
) -> None:
    async with serve(m=[]) as host:
        response = await client.get(f"{host.url('m')}/anything")
        assert response.status_code == 404
        assert response.json()["closestRoutes"] == []
        [entry] = host.entries("m")
        assert entry.closest_routes == []
        assert msgspec.to_builtins(entry)["closestRoutes"] == []
