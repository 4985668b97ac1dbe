"""A container's output in a few lines: repeats folded, the start kept, the cause quoted."""

from __future__ import annotations

from preflight_sdk.core.log_text import cause, excerpt, fold_repeats, plain

PROBE = '172.17.0.1 - - [01/Dec/2026 22:50:{:02d}] "GET /health HTTP/1.1" 404 -'


def test_thirty_probe_lines_fold_into_the_first_a_count_and_the_last() -> None:
    lines = ["starting orders on 0.0.0.0:8000", "connected to db", *(PROBE.format(s) for s in range(30))]
    assert fold_repeats(lines) == [
        "starting orders on 0.0.0.0:8000",
        "connected to db",
        PROBE.format(0),
        "… 28 more lines like these …",
        PROBE.format(29),
    ]


def test_two_similar_lines_are_left_as_they_are() -> None:
    assert fold_repeats(["a 1", "a 2", "b"]) == ["a 1", "a 2", "b"]


def test_a_long_output_keeps_its_first_lines_and_its_last() -> None:
    lines = [f"line {chr(65 + i % 26)}{'x' * (i % 7)}" for i in range(100)]
    shown = excerpt(lines, limit=30, head=8)
    assert len(shown) == 30
    assert shown[:8] == lines[:8], "the start-up lines are kept"
    assert shown[8] == "… 71 lines between …"
    assert shown[9:] == lines[-21:]


def test_colour_codes_are_dropped() -> None:
    assert plain("\x1b[31mERROR\x1b[0m: boom\x1b[K  ") == "ERROR: boom"
    assert excerpt(["\x1b[1;32mready\x1b[0m"]) == ["ready"]


def test_the_cause_is_the_tracebacks_last_line_first_and_never_a_blank_line() -> None:
    lines = [
        "starting the orders service",
        "stderr: Traceback (most recent call last):",
        'stderr:   File "/app/app.py", line 2, in <module>',
        "stderr:     import psycopg",
        "stderr: ModuleNotFoundError: No module named 'psycopg'",
        "stderr: ",
        "stderr: Error: could not import the app",
        "stderr: ",
    ]
    assert cause(lines) == "ModuleNotFoundError: No module named 'psycopg' … Error: could not import the app"


def test_a_chained_traceback_quotes_the_last_exception() -> None:
    lines = [
        "Traceback (most recent call last):",
        "  File 'a.py', line 1",
        "KeyError: 'DATABASE_URL'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        "  File 'a.py', line 3",
        "RuntimeError: DATABASE_URL is not set",
    ]
    assert cause(lines) == "RuntimeError: DATABASE_URL is not set"


def test_without_a_traceback_the_last_meaningful_line_is_quoted() -> None:
    assert (
        cause(["listening", "fatal: bad config", "", "----", "… 3 more lines like these …"])
        == "fatal: bad config"
    )
    assert cause(["", "stderr: ", "   "]) is None
    assert cause([]) is None


def test_a_server_writing_two_lines_a_request_folds_by_pairs() -> None:
    pair = ["code 404, message File not found {}", '"GET /health HTTP/1.1" 404 - {}']
    lines = ["listening on 8000", *(line.format(i) for i in range(20) for line in pair), "bye"]
    assert fold_repeats(lines) == [
        "listening on 8000",
        pair[0].format(0),
        pair[1].format(0),
        "… 36 more lines like these …",
        pair[0].format(19),
        pair[1].format(19),
        "bye",
    ]
