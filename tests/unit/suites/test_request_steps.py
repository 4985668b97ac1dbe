"""The steps that need no Docker, through `Project.run` against the real stub: request, port, waits, delay."""

from __future__ import annotations

import socket
import time

import pytest
from support.stub import MakeProject, Stub, case, one_suite, run

pytestmark = pytest.mark.anyio


async def test_request_bodies_queries_and_headers_reach_the_server_as_written(
    make_project: MakeProject,
) -> None:
    root = make_project(
        one_suite(r"""
        name: Requests
        cases:
          - name: a string body is sent as it is, not JSON-quoted
            request: {method: PUT, url: "{{env.STUB}}/echo", body: 'raw {"a": 1}'}
            expect:
              body: {method: PUT, body: 'raw {"a": 1}', contentType: {startsWith: text/plain}}
          - name: an object body is JSON
            request: {method: POST, url: "{{env.STUB}}/echo", body: {a: [1, 2], b: null}}
            expect: {body: {body: {a: [1, 2], b: null}, contentType: application/json}}
          - name: json is JSON and a content type given wins
            request:
              method: PATCH
              url: "{{env.STUB}}/echo"
              headers: {Content-Type: application/merge-patch+json}
              json: {x: 1}
            expect: {body: {method: PATCH, body: {x: 1}, contentType: application/merge-patch+json}}
          - name: a GET keeps its body
            request: {method: GET, url: "{{env.STUB}}/echo", json: {q: 1}}
            expect: {body: {method: GET, body: {q: 1}}}
          - name: a form is url-encoded
            request: {method: POST, url: "{{env.STUB}}/echo", form: {a: 1, b: [x, y], c: true}}
            expect:
              body:
                contentType: application/x-www-form-urlencoded
                body: {form: {a: "1", b: [x, y], c: "true"}}
          - name: query parameters join those in the url, headers turn into text
            request:
              url: "{{env.STUB}}/echo/q?z=0"
              query: {a: 1, b: [x, y], c: "sp ace&more"}
              headers: {X-Num: 5, X-Bool: true, X-List: [1, 2]}
            expect:
              body:
                path: /echo/q
                query: {z: "0", a: "1", b: [x, y], c: "sp ace&more"}
                headers: {x-num: "5", x-bool: "true", x-list: "[1, 2]"}
          - name: the method is case-insensitive
            request: {method: delete, url: "{{env.STUB}}/echo"}
            expect: {body: {method: DELETE}}
        """)
    )
    result = await run(root)
    failed = [(c.name, c.failure.error if c.failure else "") for c in result.failures()]
    assert failed == []
    assert result.totals.passed == 7


async def test_responses_are_parsed_as_json_when_they_are_json_else_kept_as_text(
    make_project: MakeProject,
) -> None:
    root = make_project(
        one_suite("""
        name: Responses
        cases:
          - name: text
            request: {url: "{{env.STUB}}/text"}
            expect: {body: {startsWith: hello, contains: second line}}
          - name: JSON served as text/plain is still JSON
            request: {url: "{{env.STUB}}/json-as-text"}
            expect: {body: {sniffed: true, n: 3}}
          - name: a form response stays text
            request: {url: "{{env.STUB}}/form-response"}
            expect: {body: "a=1&b=two", headers: {content-type: {startsWith: application/x-www-form-urlencoded}}}
        """)
    )
    result = await run(root)
    assert [c.status for s in result.suites for c in s.cases] == ["passed"] * 3


async def test_redirects_are_not_followed_unless_asked(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Redirects
        cases:
          - name: not followed
            request: {url: "{{env.STUB}}/redirect"}
            expect: {status: 302, headers: {Location: /echo/redirected}}
          - name: followed
            request: {url: "{{env.STUB}}/redirect", followRedirects: true}
            expect: {status: 200, body: {path: /echo/redirected}}
        """)
    )
    assert (await run(root)).totals.passed == 2


async def test_a_request_timeout_fails_the_case_quickly_and_says_so(make_project: MakeProject) -> None:
    root = make_project(
        one_suite("""
        name: Timeouts
        cases:
          - name: too slow
            request: {url: "{{env.STUB}}/slow?ms=1500", timeout: 150ms}
            expect: {status: 200}
          - name: fast enough
            request: {url: "{{env.STUB}}/slow?ms=20", timeout: 2s}
            expect: {status: 200, body: {slept: 20}}
        """)
    )
    began = time.perf_counter()
    result = await run(root)
    assert time.perf_counter() - began < 1.2
    slow = case(result, "too slow")
    assert slow.status == "failed" and slow.failure is not None
    assert "timed out after 0.15s" in slow.failure.error
    assert slow.failure.summary == "GET /slow timed out after 0.15s"
    assert slow.failure.response is None
    assert slow.failure.request is not None and slow.failure.request.url.endswith("/slow?ms=1500")
    assert 100 <= slow.duration < 1000
    assert case(result, "fast enough").status == "passed"


async def test_path_requests_go_to_base_url_from_dotenv(make_project: MakeProject, stub: Stub) -> None:
    root = make_project(
        one_suite("""
        name: Base URL
        cases:
          - name: path joins BASE_URL
            request: {path: /echo/joined}
            expect: {body: {path: /echo/joined}}
          - name: a path without a slash joins too
            request: {path: echo/noslash}
            expect: {body: {path: /echo/noslash}}
        """),
        env={"BASE_URL": stub.url + "/"},
    )
    assert (await run(root)).totals.passed == 2


async def test_path_requests_go_to_base_url_from_the_environment(
    make_project: MakeProject, stub: Stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BASE_URL", stub.url)
    root = make_project(
        one_suite("""
        name: Base URL
        cases:
          - name: path joins BASE_URL
            request: {method: POST, path: /echo/env, json: {a: 1}}
            expect: {status: 200, body: {path: /echo/env, body: {a: 1}}}
        """)
    )
    assert (await run(root)).ok


async def test_a_path_without_any_base_url_fails_with_a_clear_reason(
    make_project: MakeProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BASE_URL", raising=False)
    root = make_project(
        one_suite("""
        name: No base
        cases:
          - name: nowhere to go
            request: {path: /echo}
        """)
    )
    result = await run(root)
    failure = case(result, "nowhere to go").failure
    assert failure is not None
    assert "BASE_URL" in failure.error and "`url`" in failure.error


async def test_port_checks_and_wait_for_port_on_the_host(make_project: MakeProject, stub: Stub) -> None:
    port = int(stub.url.rsplit(":", 1)[1])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]  # bound, never listening: connections are refused
        root = make_project(
            one_suite(
                """
            name: Ports
            setup:
              - waitForPort: {port: @PORT@, host: 127.0.0.1, timeout: 2s}
            cases:
              - name: the stub listens
                port: {port: @PORT@, host: 127.0.0.1}
              - name: a closed port does not listen
                port: {port: @CLOSED@, host: 127.0.0.1, listening: false, timeout: 200ms}
              - name: expecting a closed port to listen fails
                port: {port: @CLOSED@, host: 127.0.0.1, timeout: 200ms}
            """.replace("@PORT@", str(port)).replace("@CLOSED@", str(closed))
            )
        )
        result = await run(root)
    statuses = {c.name: c.status for s in result.suites for c in s.cases}
    assert statuses == {
        "the stub listens": "passed",
        "a closed port does not listen": "passed",
        "expecting a closed port to listen fails": "failed",
    }
    failure = case(result, "expecting a closed port to listen fails").failure
    assert failure is not None
    [check] = failure.assertions
    assert (check.path, check.expected, check.actual, check.passed) == (
        f"port:{closed}.listening",
        True,
        False,
        False,
    )


async def test_wait_for_port_gives_up_at_its_timeout_and_blocks_the_cases(make_project: MakeProject) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
        root = make_project(
            one_suite(f"""
            name: Waits
            setup:
              - waitForPort: {{port: {closed}, host: 127.0.0.1, timeout: 300ms}}
            cases:
              - name: never runs
                request: {{url: "{{{{env.STUB}}}}/status/200"}}
            """)
        )
        began = time.perf_counter()
        result = await run(root)
        elapsed = time.perf_counter() - began
    assert 0.25 < elapsed < 2.0
    [suite] = result.suites
    assert suite.status == "failed"
    assert (
        suite.error is not None
        and f"127.0.0.1:{closed} did not accept connections within 300ms" in suite.error
    )
    assert case(result, "never runs").status == "skipped"


async def test_bare_delays_wait_before_the_next_step(make_project: MakeProject, stub: Stub) -> None:
    key = stub.key()
    root = make_project(
        one_suite(f"""
        name: Delays
        setup:
          - request: {{url: "{{{{env.STUB}}}}/flaky/{key}?fail=0"}}
          - delay: 300ms
        cases:
          - name: after the delay
            request: {{url: "{{{{env.STUB}}}}/flaky/{key}?fail=0"}}
          - name: a case may wait first
            delay: 200ms
            request: {{url: "{{{{env.STUB}}}}/flaky/{key}?fail=0"}}
        """)
    )
    result = await run(root)
    assert result.ok
    first, second = stub.gaps(key)
    assert 0.28 <= first < 0.9
    assert 0.18 <= second < 0.8
