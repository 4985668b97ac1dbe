"""`live_sink`: the live view an operation shows while it runs, driven by progress events."""

from __future__ import annotations

import subprocess
import sys
import threading

from preflight_sdk.core.progress import ProgressEvent
from preflight_sdk.faces.notebook import LOG_LINES, LiveView, live_sink


def ev(kind: str, message: str = "", **fields: object) -> ProgressEvent:
    return ProgressEvent(kind=kind, message=message, **fields)  # type: ignore[arg-type]


def bars(view: LiveView) -> dict[str, tuple[int, int, str]]:
    return {scope: (bar.value, bar.max, bar.bar_style) for scope, bar in view.bars.items()}


def log_text(view: LiveView) -> str:
    return "".join(o["text"] for o in view.log.outputs)


def test_outside_a_kernel_it_displays_nothing_and_raises_nothing() -> None:
    view = live_sink("build")
    assert view.summary() == ""
    view(ev("step", "building api", scope="api", done=0, total=1, status="started"))
    view(ev("done", "done", status="ok"))
    assert view.status == "ok"


def test_a_build_fills_one_bar_per_service_and_collapses_the_log_at_the_end() -> None:
    view = live_sink("build")
    assert view.widget.layout.display == "none"  # nothing to show before the first event
    view(ev("step", "building inventory", scope="inventory", done=0, total=2, status="started"))
    view(ev("step", "building orders", scope="orders", done=0, total=2, status="started"))
    assert view.widget.layout.display is None
    assert bars(view) == {"inventory": (0, 1, "info"), "orders": (0, 1, "info")}
    assert (view.overall.value, view.overall.max) == (0, 2)
    assert view.accordion.layout.display == "none"  # no log line yet
    view(ev("log", "Step 1/2 : FROM base", scope="inventory"))
    view(ev("log", "Step 2/2 : COPY app.py", scope="inventory"))
    view.flush()
    assert log_text(view) == "[inventory] Step 1/2 : FROM base\n[inventory] Step 2/2 : COPY app.py\n"
    assert view.accordion.layout.display is None and view.accordion.selected_index == 0
    view(ev("step", "orders: success (88 ms)", scope="orders", done=1, total=2, status="ok"))
    assert bars(view)["orders"] == (1, 1, "success") and bars(view)["inventory"] == (0, 1, "info")
    assert view.step.value == "✓ orders: success (88 ms)"
    assert view.overall.description == "build 1/2"
    view(ev("step", "inventory: success", scope="inventory", done=2, total=2, status="ok"))
    view(ev("done", "done", status="ok"))
    assert bars(view) == {"inventory": (1, 1, "success"), "orders": (1, 1, "success")}
    assert (view.overall.value, view.overall.max, view.overall.bar_style) == (2, 2, "success")
    assert view.accordion.selected_index is None and view.accordion.titles == ("log (2 lines)",)
    assert "✓ done" in view.header.value and view.status == "ok"


def test_a_failed_service_turns_red_and_the_unfinished_ones_show_they_were_cut_short() -> None:
    view = live_sink("build")
    view(ev("step", "building a", scope="a", done=0, total=2, status="started"))
    view(ev("step", "building b", scope="b", done=0, total=2, status="started"))
    view(ev("step", "a: failed", scope="a", done=1, total=2, status="failed"))
    view(ev("done", "build failed: BUILD_FAILED", status="failed"))
    assert bars(view) == {"a": (1, 1, "danger"), "b": (1, 1, "warning")}
    assert view.overall.bar_style == "danger" and "✗ failed" in view.header.value
    assert view.status == "failed"


def test_setup_steps_without_counts_only_update_the_step_label() -> None:
    view = live_sink("setup")
    view(ev("step", "creating network pf-x", scope="network", status="started"))
    view(ev("step", "starting 1 mock(s)", scope="mocks", status="started"))
    assert bars(view) == {} and view.step.value == "… starting 1 mock(s)"
    view(ev("step", "starting api", scope="api", done=0, total=1, status="started"))
    view(ev("step", "api healthy in 12 ms", scope="api", done=1, total=1, status="ok"))
    view(ev("done", "environment ready in 40 ms"))  # setup's own done carries no status
    assert bars(view) == {"api": (1, 1, "success")} and view.status == "ok"
    assert view.step.value == "environment ready in 40 ms"


def test_a_run_counts_cases_per_suite_and_closes_a_suite_when_the_next_begins() -> None:
    view = live_sink("run")
    view(ev("step", "suite orders", scope="orders", status="started"))
    view(ev("case", "passed: orders / a", scope="orders", done=1, total=4, status="ok"))
    assert bars(view) == {"orders": (1, 4, "info")}  # at most every remaining case is this suite's
    view(ev("case", "failed: orders / b", scope="orders", done=2, total=4, status="failed"))
    assert bars(view) == {"orders": (2, 4, "danger")}
    view(ev("step", "suite smoke", scope="smoke", status="started"))
    assert bars(view) == {"orders": (2, 2, "danger")}
    view(ev("case", "passed: smoke / c", scope="smoke", done=3, total=4, status="ok"))
    view(ev("case", "passed: smoke / d", scope="smoke", done=4, total=4, status="ok"))
    assert bars(view)["smoke"] == (2, 2, "info")
    view(ev("done", "failed: 2 suite(s), 4 case(s): 3 passed, 1 failed"))
    assert bars(view) == {"orders": (2, 2, "danger"), "smoke": (2, 2, "success")}
    assert view.bars["orders"].description == "orders 2"
    assert view.overall.bar_style == "danger" and view.status == "failed"
    assert view.summary().splitlines() == [
        "run: failed · failed: 2 suite(s), 4 case(s): 3 passed, 1 failed",
        "  ✗ orders (2)",
        "  ✓ smoke (2)",
    ]


def test_more_cases_than_announced_still_end_full() -> None:
    view = live_sink("run")
    view(ev("case", "passed: s / a", scope="s", done=1, total=1, status="ok"))
    view(ev("case", "passed: s / b", scope="s", done=2, total=1, status="ok"))
    view(ev("done", "passed", status="ok"))
    assert bars(view) == {"s": (2, 2, "success")}
    assert (view.overall.value, view.overall.max) == (2, 2)


def test_the_log_keeps_only_the_last_lines() -> None:
    view = live_sink("build")
    for i in range(LOG_LINES + 50):
        view(ev("log", f"line {i}"))
    view.flush()
    text = log_text(view)
    assert text.startswith(f"… {50} earlier lines not shown\nline 50\n")
    assert text.endswith(f"line {LOG_LINES + 49}\n")
    assert view.accordion.titles == (f"log ({LOG_LINES + 50} lines)",)


def test_log_lines_reach_the_widget_without_another_event() -> None:
    view = live_sink("logs")
    view(ev("log", "first"))  # the first line is sent at once
    view(ev("log", "second"))  # later ones are batched, then sent by a timer
    assert log_text(view) == "first\n"
    for _ in range(200):
        if "second" in log_text(view):
            break
        threading.Event().wait(0.01)
    assert log_text(view) == "first\nsecond\n"


def test_events_from_several_threads_are_all_logged() -> None:
    view = live_sink("build")

    def write(n: int) -> None:
        for i in range(50):
            view(ev("log", f"{n}-{i}"))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    view(ev("done", "done", status="ok"))
    assert sorted(log_text(view).split()) == sorted(f"{n}-{i}" for n in range(4) for i in range(50))
    assert view.lines == 200


def test_a_plain_script_can_call_it() -> None:
    script = (
        "from preflight_sdk.faces.notebook import live_sink\n"
        "from preflight_sdk import ProgressEvent\n"
        "live_sink('build')(ProgressEvent(kind='done', message='x'))\n"
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"  # nothing displayed on stdout
