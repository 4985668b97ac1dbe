"""The BuildKit-only lines of a Dockerfile, and which one the legacy builder's complaint is about."""

from __future__ import annotations

from pathlib import Path

from preflight_sdk.engine.buildkit import culprit, scan

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "buildkit"


def test_the_flask_samples_heredocs_and_directive_are_found_with_their_lines() -> None:
    found = scan((SAMPLES / "flask" / "app" / "Dockerfile").read_text())
    assert [(f.line, f.last_line, f.needs.split(",")[0]) for f in found] == [
        (1, None, "the BuildKit frontend docker/dockerfile:1.4"),
        (17, 20, "a heredoc"),
        (22, 25, "a heredoc"),
    ]
    # The daemon names the heredoc's first body line: the RUN that opens it is the one to change.
    assert culprit(found, "dockerfile parse error line 18: unknown instruction: APK")[0].line == 17


def test_a_mount_across_continued_lines_is_one_finding() -> None:
    found = scan((SAMPLES / "nginx-flask-mysql" / "backend" / "Dockerfile").read_text())
    mount = [f for f in found if f.needs == "RUN --mount"]
    assert [(f.line, f.last_line) for f in mount] == [(6, 7)]
    assert culprit(found, "the --mount option requires BuildKit. Refer to ...")[0] == mount[0]


def test_a_platform_only_buildkit_sets_comes_before_the_directive() -> None:
    found = scan((SAMPLES / "react-express-mysql" / "backend" / "Dockerfile").read_text())
    ordered = culprit(found, 'failed to parse platform : "" is an invalid component of ""')
    assert [f.line for f in ordered] == [4, 1]
    assert ordered[0].text == "FROM --platform=$BUILDPLATFORM"


def test_copy_flags_and_copy_heredocs_are_found_and_plain_lines_are_not() -> None:
    text = (
        "FROM busybox\n"
        "# syntax=docker/dockerfile:1  (not a directive once an instruction came)\n"
        "COPY --chown=1000 a /a\n"
        "COPY --chmod=755 run.sh /run.sh\n"
        'COPY <<"EOT" /etc/motd\n'
        "RUN --mount=type=cache,target=/x this is the document, not an instruction\n"
        "EOT\n"
        "RUN echo '<<not a heredoc' && cat <<< word\n"
    )
    found = scan(text)
    assert [(f.line, f.needs) for f in found] == [(4, "COPY --chmod"), (5, "a heredoc")]
    assert culprit(found, "something else went wrong") == found
