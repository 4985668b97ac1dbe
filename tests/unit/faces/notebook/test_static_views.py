"""Static renderings (`render_text`, `render_html`, `_repr_mimebundle_`) of every result type."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from unit.faces.notebook import samples
from unit.faces.notebook.samples import EVIL, RUN_ID, SUMMARY

from preflight_sdk.faces.notebook.static import render_html, render_text


class _Tree(HTMLParser):
    """Collects tags (with id and class) and checks that every opened tag is closed."""

    VOID = frozenset({"br", "img", "hr", "input", "meta", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> _Tree:
    tree = _Tree()
    tree.feed(html)
    tree.close()
    assert tree.stack == [], f"unclosed tags: {tree.stack}"
    return tree


def with_class(tree: _Tree, cls: str) -> list[dict[str, str]]:
    return [attrs for _, attrs in tree.tags if cls in attrs.get("class", "").split()]


ALL = {
    "failed run": samples.failed_run,
    "passed run": samples.passed_run,
    "build": samples.build,
    "failed build": lambda: samples.build(failed=True),
    "setup": samples.setup,
    "status": samples.status,
    "broken status": lambda: samples.status(broken=True),
    "logs": samples.logs,
    "clean": samples.clean,
    "empty clean": lambda: samples.clean(nothing=True),
    "init": samples.init,
    "mock requests": samples.mock_requests,
    "verify": samples.verify,
    "passed verify": lambda: samples.verify(errors=False),
}


@pytest.mark.parametrize("name", list(ALL))
def test_every_result_renders_well_formed_self_contained_html_with_everything_escaped(name: str) -> None:
    result: Any = ALL[name]()
    bundle = result._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    html = bundle["text/html"]
    tree = parse(html)
    assert EVIL not in html and "<script" not in html  # the markup in names and bodies is escaped
    assert not re.search(r"<(style|script|link)\b", html)  # inline styles only, nothing to load
    assert tree.tags[0][1]["class"].startswith("pf-result")
    assert bundle["text/plain"] == render_text(result) and "Struct" not in bundle["text/plain"]
    assert not bundle["text/plain"].startswith(type(result).__name__ + " {")  # not the JSON fallback


def test_a_failed_run_is_a_table_of_suites_with_the_failure_expanded() -> None:
    html = render_html(samples.failed_run())
    tree = parse(html)
    table = [attrs for tag, attrs in tree.tags if tag == "table" and attrs.get("id") == f"pf-run-{RUN_ID}"]
    assert table and "pf-run" in table[0]["class"].split()
    suites = with_class(tree, "pf-suite")
    assert [s["class"] for s in suites] == ["pf-suite pf-failed", "pf-suite pf-passed"]
    failed_cases = [a for a in with_class(tree, "pf-case") if "pf-failed" in a["class"]]
    assert len(failed_cases) == 1
    assert len(with_class(tree, "pf-badge-failed")) >= 3 and with_class(tree, "pf-badge-passed")
    assert any(
        tag == "details" and "open" in attrs
        for tag, attrs in tree.tags
        if "pf-failure" in attrs.get("class", "")
    )
    text = "".join(tree.text)
    assert SUMMARY in text
    assert "Suggested fix:" in text and "KeyError: 'price'" in text
    assert "cases/orders.an-order-without-a-price.json" in text
    # Expected and actual side by side, in one row per assertion, failed ones first.
    rows = with_class(tree, "pf-assertion")
    assert [r["class"] for r in rows] == [
        "pf-assertion pf-failed",
        "pf-assertion pf-failed",
        "pf-assertion pf-passed",
    ]
    assert "400" in text and "500" in text
    assert with_class(tree, "pf-request") and with_class(tree, "pf-response")
    assert with_class(tree, "pf-mock-request") and "/refunds" in text
    assert "fault: reset" in text, "a request answered by a fault shows it, not status 0"
    assert "seed exited (0)" in text


def test_a_passed_run_lists_its_cases_collapsed_and_no_failure() -> None:
    html = render_html(samples.passed_run())
    tree = parse(html)
    assert not with_class(tree, "pf-failed") and not with_class(tree, "pf-failure")
    assert len([a for a in with_class(tree, "pf-case") if "pf-passed" in a["class"]]) == 2
    assert not any(tag == "details" and "open" in attrs for tag, attrs in tree.tags)
    assert "PASSED" in "".join(tree.text)


def test_the_run_text_is_a_terminal_summary_with_each_failure_its_fix_and_artifact() -> None:
    text = render_text(samples.failed_run())
    lines = text.splitlines()
    assert lines[0] == f"✗ FAILED · 2 suites, 4 cases: 2 passed, 1 failed, 1 skipped · 2.3 s · run {RUN_ID}"
    assert any(
        re.match(r"\s+✗\s+orders\s+Orders API .*yaml\s+1 passed, 1 failed, 1 skipped\s+340 ms$", line)
        for line in lines
    )
    assert any(
        re.match(r"\s+✓\s+smoke\s+Smoke \(shell\)\s+shell\s+1 passed, 0 failed\s+120 ms$", line)
        for line in lines
    )
    assert "      ! a warning about the suite" in lines
    at = lines.index("1 failure:")
    assert lines[at + 2] == "✗ orders.an-order-without-a-price  (26 ms)"
    assert lines[at + 3] == f"  {SUMMARY}"
    assert "    ✗ status: expected to equal 400, got 500" in lines
    assert "    ✗ ok" not in lines  # passed assertions are not listed
    assert lines[at + 6].startswith("  fix: `orders` failed")
    assert (
        lines[at + 7] == f"  artifact: /p/.preflight/runs/{RUN_ID}/cases/orders.an-order-without-a-price.json"
    )
    assert lines[-1] == f"report: /p/.preflight/runs/{RUN_ID}/report.json"
    assert "failure" not in render_text(samples.passed_run())


def test_a_failed_shell_case_shows_the_end_of_its_output_in_text() -> None:
    import msgspec

    run = samples.failed_run()
    case = run.suites[0].cases[0]
    assert case.failure is not None
    bare = msgspec.structs.replace(
        case.failure, assertions=[], output="\n".join(f"line {i}" for i in range(20))
    )
    suite = msgspec.structs.replace(run.suites[0], cases=[msgspec.structs.replace(case, failure=bare)])
    text = render_text(msgspec.structs.replace(run, suites=[suite]))
    assert "    | line 19" in text and "    | line 12" in text and "line 11" not in text


def test_build_shows_each_image_with_its_duration_and_the_failed_ones_with_their_last_lines() -> None:
    text = render_text(samples.build(failed=True))
    assert text.splitlines()[0] == "build failed: 1 of 3 images in 1.4 s"
    assert re.search(r"✗\s+orders\s+shop/orders:latest\s+failed\s+built\s+685 ms", text)
    assert "    | ERROR: no matching distribution" in text
    html = render_html(samples.build(failed=True))
    tree = parse(html)
    assert [a["class"] for a in with_class(tree, "pf-build")] == [
        "pf-build pf-success",
        "pf-build pf-success",
        "pf-build pf-failed",
    ]
    assert "width:120px" in html  # the longest build has the longest bar
    assert render_text(samples.build()).splitlines()[0] == "built 2 images in 1.4 s"


def test_setup_and_status_list_services_with_clickable_urls_and_mocks() -> None:
    text = render_text(samples.setup())
    assert text.splitlines()[0] == "environment ready in 2.6 s on network pf-shop-7adee9"
    ready = r"ready in 52 ms\s+http://127.0.0.1:32893/health \(5 tries\)"
    assert re.search(r"orders\s+healthy\s+http://127.0.0.1:32893\s+32893→8000\s+" + ready, text)
    assert re.search(r"payments\s+mock running\s+http://127.0.0.1:32845", text)
    tree = parse(render_html(samples.status()))
    links = [a for tag, a in tree.tags if tag == "a"]
    assert links[0]["href"] == "http://127.0.0.1:32893/?a=1&b=<2>" and links[0]["target"] == "_blank"
    assert with_class(tree, "pf-badge-healthy") and with_class(tree, "pf-badge-running")
    broken = render_html(samples.status(broken=True))
    assert "pf-badge-exited" in broken and "pf-badge-unhealthy" in broken and "(closed)" in broken
    assert "exit 1" in render_text(samples.status(broken=True))


def test_logs_keep_the_lines_as_they_are_in_text_and_colour_them_in_html() -> None:
    result = samples.logs()
    assert render_text(result).splitlines() == [
        "orders (running): 4 lines",
        *(line.text for line in result.lines),
    ]
    tree = parse(render_html(result))
    classes = [a["class"] for _, a in tree.tags if a.get("class", "").startswith("pf-log-")]
    assert classes == ["pf-log-plain", "pf-log-info", "pf-log-warning", "pf-log-error"]
    assert "".join(tree.text).count("stderr ") == 2


def test_clean_says_what_happened_to_each_resource() -> None:
    text = render_text(samples.clean())
    assert text.splitlines()[0] == (
        "removed 1 container, stopped 1 mock, removed 1 network; session file removed; 1 failed"
    )
    assert re.search(r"container\s+pf-shop-seed\s+failed\s+conflict", text)
    assert render_text(samples.clean(nothing=True)) == "nothing left to clean"
    assert "pf-badge-failed" in render_html(samples.clean())


def test_init_lists_services_mocks_and_suites() -> None:
    text = render_text(samples.init())
    assert text.splitlines()[0] == "shop: 2 services, 1 mock, 1 suite · session 7adee9 (initialized)"
    assert "services:" in text and "mocks:" in text and "suites:" in text
    assert re.search(r"seed\s+job\s+shop/inventory\s+-\s+after inventory", text)


def test_mock_requests_show_the_journal_in_order_with_status_and_route() -> None:
    result = samples.mock_requests()
    text = render_text(result)
    lines = text.splitlines()
    assert lines[0] == "payments (port 32845): 3 requests (2 older dropped)"
    assert [line.split()[3] for line in lines[1:]] == ["503", "201", "404"]
    assert "(no route)" in lines[3]
    tree = parse(render_html(result))
    assert len(with_class(tree, "pf-mock-request")) == 3
    assert "(no route: 404)" in "".join(tree.text)


def test_verify_keeps_its_own_rendering() -> None:
    text = render_text(samples.verify(errors=False))
    assert "✓ search" in text and text.startswith("verify books 0.1.0")


def test_each_result_type_is_rendered_by_the_view_module_its_results_module_names() -> None:
    from preflight_sdk.faces.notebook import static
    from preflight_sdk.faces.notebook.static import views  # noqa: F401  (registers every renderer)

    wrong = {
        kind.__qualname__: (module, static.VIEWS.get(kind.__module__))
        for kind, module in static.REGISTERED_BY.items()
        if f"{static.__name__}.{static.VIEWS.get(kind.__module__)}" != module
    }
    assert static.REGISTERED_BY and not wrong


def test_a_status_text_loads_its_own_view_and_not_the_run_page() -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from preflight_sdk.core.results.lifecycle import StatusResult\n"
        "from preflight_sdk.faces.notebook.static import render_text\n"
        "text = render_text(StatusResult(state='stopped', services=[], mocks=[], network=None, warnings=['shop']))\n"
        "loaded = [m for m in ('run_view', 'report_view', 'clarify_view', 'verify_view') "
        "if 'preflight_sdk.faces.notebook.static.' + m in sys.modules]\n"
        "print(repr(text[:40]), loaded, 'preflight_sdk.runs.report_html' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip().endswith("[] False"), out.stdout + out.stderr
    assert "shop" in out.stdout
