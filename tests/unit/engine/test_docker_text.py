"""What the docker CLI prints, read back: error texts, `docker rm` outcomes, log timestamps.

The stderr samples are verbatim from docker 20.10 (client and daemon) and docker 28 (client, and
the daemon's newer port-mapper wording); only container ids are shortened.
"""

from __future__ import annotations

import stat
import sys
import textwrap
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.results.lifecycle import LogLine
from preflight_sdk.engine.base import BuildSpec, RemoveOutcome
from preflight_sdk.engine.docker import DockerEngine
from preflight_sdk.engine.errors import DAEMON_HINT, translate
from preflight_sdk.engine.inspect import (
    docker_time,
    normalise_timestamp,
    parse_log_line,
    parse_time,
)
from preflight_sdk.engine.inspect import (
    merge_log_streams as merge,
)
from preflight_sdk.engine.output import removal_outcomes

# -- daemon down ---------------------------------------------------------------------------------

DAEMON_DOWN_20 = (
    "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n"
)
DAEMON_DOWN_RUN_20 = (
    "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
    "Is the docker daemon running?.\nSee 'docker run --help'.\n"
)
DAEMON_DOWN_RUN_28 = (
    "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
    "Is the docker daemon running?\n\nRun 'docker run --help' for more information\n"
)
DAEMON_DOWN_TCP_24 = (
    'error during connect: Get "http://127.0.0.1:2375/v1.43/containers/json": '
    "dial tcp 127.0.0.1:2375: connect: connection refused\n"
)
PERMISSION_DENIED_20 = (
    "Got permission denied while trying to connect to the Docker daemon socket at "
    'unix:///var/run/docker.sock: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.24/version": '
    "dial unix /var/run/docker.sock: connect: permission denied\n"
)


@pytest.mark.parametrize(
    "stderr", [DAEMON_DOWN_20, DAEMON_DOWN_RUN_20, DAEMON_DOWN_RUN_28, DAEMON_DOWN_TCP_24]
)
def test_a_daemon_that_does_not_answer_is_docker_error_with_how_to_start_it(stderr: str) -> None:
    error = translate(stderr, action="start container api", subject="api")
    assert error.code == "DOCKER_ERROR"
    assert error.retryable, "starting the daemon and calling again can succeed"
    assert error.hint == DAEMON_HINT
    assert "systemctl start docker" in error.hint and "scripts/ensure-docker" in error.hint
    assert error.message.startswith("the Docker daemon is not reachable: ")
    assert "docker: " not in error.message and "\n" not in error.message
    # Not mistaken for a port conflict, even with `127.0.0.1:2375` in the text.
    assert error.details is not None and error.details["stderr"] == stderr.strip()


def test_permission_denied_on_the_socket_says_how_to_get_access_not_how_to_start() -> None:
    error = translate(PERMISSION_DENIED_20, action="list containers")
    assert error.code == "DOCKER_ERROR"
    assert error.hint is not None
    assert "docker group" in error.hint and "usermod" in error.hint
    assert "systemctl start" not in error.hint


# -- missing image -------------------------------------------------------------------------------

NO_IMAGE_RUN_20 = (
    "docker: Error response from daemon: No such image: shop-api:e2e.\nSee 'docker run --help'.\n"
)
NO_IMAGE_RUN_28 = (
    "docker: Error response from daemon: No such image: shop-api:e2e\n\n"
    "Run 'docker run --help' for more information\n"
)
NO_IMAGE_INSPECT_28 = "Error response from daemon: no such image: shop-api:e2e: No such image: shop-api:e2e\n"


@pytest.mark.parametrize("stderr", [NO_IMAGE_RUN_20, NO_IMAGE_RUN_28, NO_IMAGE_INSPECT_28])
def test_no_such_image_is_not_built_naming_the_image(stderr: str) -> None:
    error = translate(stderr, action="start container pf-shop-1a2b3c-api", subject="pf-shop-1a2b3c-api")
    assert error.code == "NOT_BUILT"
    assert error.details is not None
    assert error.details["image"] == "shop-api:e2e", "the sentence's closing period is not part of the name"
    assert "image shop-api:e2e is not built" in error.message
    assert error.hint is not None and "build" in error.hint


# -- port conflicts ------------------------------------------------------------------------------

PORT_ALLOCATED_20 = (
    "docker: Error response from daemon: driver failed programming external connectivity on endpoint "
    "pf-shop-1a2b3c-api (3f9c0e1d77aa): Bind for 0.0.0.0:8080 failed: port is already allocated.\n"
    "See 'docker run --help'.\n"
)
PORT_ALLOCATED_28 = (
    "docker: Error response from daemon: driver failed programming external connectivity on endpoint "
    "pf-probe-9298d8 (845f75adfe2d): Bind for 0.0.0.0:32813 failed: port is already allocated\n\n"
    "Run 'docker run --help' for more information\n"
)
ADDRESS_IN_USE_20 = (
    "docker: Error response from daemon: driver failed programming external connectivity on endpoint "
    "pf-probe-635c80 (ad85df05a31b): Error starting userland proxy: listen tcp4 127.0.0.1:57225: "
    "bind: address already in use\n\nRun 'docker run --help' for more information\n"
)
ADDRESS_IN_USE_DAEMON_28 = (
    "docker: Error response from daemon: failed to set up container networking: driver failed programming "
    "external connectivity on endpoint web (9b2c41aa0f3e): failed to bind host port for "
    "0.0.0.0:5432:172.18.0.2:5432/tcp: address already in use\n\nRun 'docker run --help' for more information\n"
)
PORT_ALLOCATED_IPV6 = (
    "docker: Error response from daemon: driver failed programming external connectivity on endpoint "
    "api (77c1d2e3f4a5): Bind for [::]:8443 failed: port is already allocated.\nSee 'docker run --help'.\n"
)


@pytest.mark.parametrize(
    ("stderr", "port"),
    [
        (PORT_ALLOCATED_20, 8080),
        (PORT_ALLOCATED_28, 32813),
        (ADDRESS_IN_USE_20, 57225),
        (ADDRESS_IN_USE_DAEMON_28, 5432),
        (PORT_ALLOCATED_IPV6, 8443),
    ],
)
def test_a_taken_host_port_is_port_conflict_with_the_port_number(stderr: str, port: int) -> None:
    error = translate(stderr, action="start container api", subject="api")
    assert error.code == "PORT_CONFLICT"
    assert error.details is not None and error.details["port"] == port
    assert f"host port {port} is already in use" in error.message
    assert error.hint is not None and "0:<container port>" in error.hint


def test_a_container_name_in_use_is_not_a_port_conflict() -> None:
    stderr = (
        'docker: Error response from daemon: Conflict. The container name "/pf-x-1a2b3c-api" is already in '
        'use by container "e3b0c44298fc". You have to remove (or rename) that container to be able to reuse '
        "that name.\nSee 'docker run --help'.\n"
    )
    error = translate(stderr, action="start container pf-x-1a2b3c-api", subject="pf-x-1a2b3c-api")
    assert error.code == "DOCKER_ERROR"
    assert not error.retryable
    assert error.message.startswith("cannot start container pf-x-1a2b3c-api: Conflict. The container name")
    assert error.details is not None and "already in use" in error.details["stderr"]


def test_an_empty_stderr_still_gives_a_message() -> None:
    error = translate("\n", action="create network pf-x")
    assert error.code == "DOCKER_ERROR"
    assert error.message == "cannot create network pf-x: docker failed without a message"


# -- docker rm / docker network rm ---------------------------------------------------------------

RUNNING_ID = "1212f3b21c9b58184fe1ef569059d68c71912d1c81c86deab4379ebabaa65c2f"
OTHER_ID = "845f75adfe2db5c2c2671c9d4a7fdee4ae0d1c9a6c16d2125415ca4a71d01f4a"


def _done(returncode: int, stdout: str = "", stderr: str = "") -> tuple[str, str, int]:
    return stdout, stderr, returncode


def _removal_outcomes(refs: list[str], done: tuple[str, str, int]) -> list[RemoveOutcome]:
    return removal_outcomes(refs, *done, action="remove containers")


def merge_log_streams(stdout: str, stderr: str) -> list[LogLine]:
    """Merge as python-on-whales hands the lines over: each stream's lines in order, the
    streams one after the other (two reader threads: their relative order is arbitrary)."""
    pieces = [
        (stream, part.encode() + b"\n")
        for stream, text in (("stdout", stdout), ("stderr", stderr))
        for part in text.split("\n")[:-1]
    ]
    lines, _ = merge(pieces)
    return lines


def test_rm_reports_each_container_removed_running_or_missing() -> None:
    # `docker rm -v <running> <exited> nosuch-x` (no -f), as docker 20.10 answers it.
    done = _done(
        1,
        stdout=f"{OTHER_ID}\n",
        stderr=(
            f"Error response from daemon: You cannot remove a running container {RUNNING_ID}. Stop the "
            "container before attempting removal or force remove\n"
            "Error response from daemon: No such container: nosuch-x\n"
        ),
    )
    outcomes = _removal_outcomes([RUNNING_ID, OTHER_ID, "nosuch-x"], done)
    assert outcomes == [
        RemoveOutcome(
            ref=RUNNING_ID,
            action="failed",
            error=f"You cannot remove a running container {RUNNING_ID}. Stop the container before "
            "attempting removal or force remove",
        ),
        RemoveOutcome(ref=OTHER_ID, action="removed"),
        RemoveOutcome(ref="nosuch-x", action="not_found"),
    ]


def test_rm_f_of_a_missing_container_is_not_found_even_with_exit_status_0() -> None:
    # The docker 28 client exits 0 for `rm -f` of a missing container; 20.10 exits 1.
    for code in (0, 1):
        done = _done(code, stderr="Error response from daemon: No such container: pf-x-1a2b3c-api\n")
        assert _removal_outcomes(["pf-x-1a2b3c-api"], done) == [
            RemoveOutcome(ref="pf-x-1a2b3c-api", action="not_found")
        ]


def test_network_rm_outcomes_missing_in_use_and_removed() -> None:
    done = _done(
        1,
        stdout="pf-x-aaaaaa\n",
        stderr=(
            "Error response from daemon: network pf-x-bbbbbb not found\n"
            "Error: No such network: pf-x-cccccc\n"
            "Error response from daemon: error while removing network: network pf-x-dddddd id 5f1e2a has "
            "active endpoints\nexit status 1\n"
        ),
    )
    names = ["pf-x-aaaaaa", "pf-x-bbbbbb", "pf-x-cccccc", "pf-x-dddddd"]
    outcomes = _removal_outcomes(names, done)
    assert [(o.ref, o.action) for o in outcomes] == [
        ("pf-x-aaaaaa", "removed"),
        ("pf-x-bbbbbb", "not_found"),
        ("pf-x-cccccc", "not_found"),
        ("pf-x-dddddd", "failed"),
    ]
    assert (
        outcomes[3].error
        == "error while removing network: network pf-x-dddddd id 5f1e2a has active endpoints"
    )


def test_a_failure_that_names_no_ref_is_reported_as_failed_not_removed() -> None:
    done = _done(1, stderr="Error response from daemon: removal of container is already in progress\n")
    assert _removal_outcomes(["abc"], done) == [
        RemoveOutcome(
            ref="abc",
            action="failed",
            error="Error response from daemon: removal of container is already in progress",
        )
    ]
    assert _removal_outcomes(["abc"], _done(1)) == [
        RemoveOutcome(ref="abc", action="failed", error="docker rm failed")
    ]


def test_rm_while_the_daemon_is_down_raises_docker_error() -> None:
    with pytest.raises(PreflightError) as caught:
        _removal_outcomes(["abc"], _done(1, stderr=DAEMON_DOWN_20))
    assert caught.value.code == "DOCKER_ERROR"
    assert caught.value.hint == DAEMON_HINT


# -- timestamps and log streams ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("2026-05-01T10:20:30.123456789Z", "2026-05-01T10:20:30.123456789Z"),
        ("2026-05-01T10:20:30.1Z", "2026-05-01T10:20:30.100000000Z"),
        ("2026-05-01T10:20:30Z", "2026-05-01T10:20:30.000000000Z"),
        ("2026-05-01T01:20:30.5+02:00", "2026-04-30T23:20:30.500000000Z"),
        ("2026-05-01T10:20:30.25-03:30", "2026-05-01T13:50:30.250000000Z"),
        ("2026-05-01 10:20:30Z", None),
        ("10:20:30", None),
        ("", None),
    ],
)
def test_normalise_timestamp(raw: str, normal: str | None) -> None:
    assert normalise_timestamp(raw) == normal


def test_normalised_timestamps_sort_as_the_times_do() -> None:
    # Docker trims trailing zeros (RFC 3339 nano): as raw strings these sort wrongly.
    raw = [
        "2026-05-01T10:20:30.5Z",
        "2026-05-01T10:20:30Z",
        "2026-05-01T10:20:30.05Z",
        "2026-05-01T10:20:30.1Z",
    ]
    assert sorted(raw) != sorted(raw, key=lambda r: parse_time(r) or datetime.min.replace(tzinfo=UTC))
    normal = [normalise_timestamp(r) or "" for r in raw]
    assert [raw[normal.index(n)] for n in sorted(normal)] == [
        "2026-05-01T10:20:30Z",
        "2026-05-01T10:20:30.05Z",
        "2026-05-01T10:20:30.1Z",
        "2026-05-01T10:20:30.5Z",
    ]


def test_parse_time_and_docker_time() -> None:
    assert parse_time("0001-01-01T00:00:00Z") is None, "docker's zero time means never"
    assert parse_time(None) is None and parse_time("yesterday") is None
    assert parse_time("2026-05-01T10:20:30.123456789Z") == datetime(
        2026, 5, 1, 10, 20, 30, 123456, tzinfo=UTC
    )
    assert parse_time("2026-05-01T12:20:30+02:00") == datetime(2026, 5, 1, 10, 20, 30, tzinfo=UTC)
    assert docker_time(datetime(2026, 5, 1, 10, 20, 30, 5)) == "2026-05-01T10:20:30.000005Z", "naive is UTC"
    plus_two = timezone(timedelta(hours=2))
    assert docker_time(datetime(2026, 5, 1, 12, 0, tzinfo=plus_two)) == "2026-05-01T10:00:00.000000Z"


def test_parse_log_line_keeps_the_text_after_the_first_space() -> None:
    line = parse_log_line("2026-05-01T10:20:30.1Z GET /health 200  (3 ms)", "stderr")
    assert line is not None
    assert (line.timestamp, line.stream, line.text) == (
        "2026-05-01T10:20:30.100000000Z",
        "stderr",
        "GET /health 200  (3 ms)",
    )
    assert parse_log_line("", "stdout") is None
    untimed = parse_log_line("no timestamp here", "stdout")
    assert untimed is not None and untimed.timestamp == "" and untimed.text == "no timestamp here"


def test_merge_interleaves_stdout_and_stderr_by_time() -> None:
    stdout = "2026-05-01T10:00:00.1Z starting\n2026-05-01T10:00:00.3Z listening on :8080\n"
    stderr = "2026-05-01T10:00:00.25Z WARN no config file\n2026-05-01T10:00:01Z ERROR db down\n"
    merged = merge_log_streams(stdout, stderr)
    assert [(line.stream, line.text) for line in merged] == [
        ("stdout", "starting"),
        ("stderr", "WARN no config file"),
        ("stdout", "listening on :8080"),
        ("stderr", "ERROR db down"),
    ]


def test_merge_keeps_equal_times_in_stream_order() -> None:
    stamp = "2026-05-01T10:00:00.000000001Z"
    merged = merge_log_streams(f"{stamp} out 1\n{stamp} out 2\n", f"{stamp} err 1\n")
    assert [line.text for line in merged] == ["out 1", "out 2", "err 1"]


def test_merge_keeps_a_carriage_return_inside_its_line() -> None:
    # A progress bar (`\r` without `\n`) is one docker log line; a CR LF ends one line.
    stdout = "2026-05-01T10:00:01Z pulling 50%\rpulling 100%\n2026-05-01T10:00:03Z done\r\n"
    stderr = "2026-05-01T10:00:00Z early\n2026-05-01T10:00:02Z middle\n"
    merged = merge_log_streams(stdout, stderr)
    assert [line.text for line in merged] == ["early", "pulling 50%\rpulling 100%", "middle", "done"]


def test_merge_splits_on_newlines_only() -> None:
    # U+2028 and form feed are line breaks to str.splitlines, not to docker.
    stdout = '2026-05-01T10:00:01Z {"msg": "a\u2028b"}\n2026-05-01T10:00:03Z page\x0cbreak\n'
    stderr = "2026-05-01T10:00:00Z first\n2026-05-01T10:00:02Z middle\n"
    texts = [line.text for line in merge_log_streams(stdout, stderr)]
    assert texts == ["first", '{"msg": "a\u2028b"}', "middle", "page\x0cbreak"]


def test_merge_keeps_an_untimed_line_after_the_line_it_follows() -> None:
    # The docker CLI's own complaints carry no timestamp: they stay where they were written.
    stderr = (
        "2026-05-01T10:00:02Z panic: nil map\n"
        "error from daemon in stream: Error grabbing logs: unexpected EOF\n"
    )
    stdout = "2026-05-01T10:00:01Z one\n2026-05-01T10:00:03Z three\n"
    merged = merge_log_streams(stdout, stderr)
    assert [line.text for line in merged] == [
        "one",
        "panic: nil map",
        "error from daemon in stream: Error grabbing logs: unexpected EOF",
        "three",
    ]
    assert merged[2].timestamp == merged[1].timestamp


# -- DockerEngine.build against a stand-in docker CLI --------------------------------------------

_FAKE_DOCKER = textwrap.dedent(
    """
    import os, sys
    args = sys.argv[1:]
    if args[:1] == ["version"]:
        print('{"Client": {"Version": "28.2.2"}, "Server": {"Version": "20.10.24"}}')
    elif args[:1] == ["buildx"]:
        sys.exit("docker: 'buildx' is not a docker command.")
    elif args[:3] == ["inspect", "--type", "image"]:
        sys.exit("Error response from daemon: No such image: " + args[-1])
    elif args[:2] == ["network", "inspect"]:
        print('[{"Name": "bridge", "IPAM": {"Config": [{"Subnet": "172.17.0.0/16", "Gateway": "172.17.0.1"}]}}]')
    elif args[:1] == ["build"]:
        mode = os.environ["FAKE_DOCKER_BUILD"]
        # The docker CLI's notice before every legacy build, verbatim (docker 28.2.2).
        print("DEPRECATED: The legacy builder is deprecated and will be removed in a future release.\\n"
              "            BuildKit is currently disabled; enable it by removing the DOCKER_BUILDKIT=0\\n"
              "            environment-variable.\\n", file=sys.stderr, flush=True)
        print("Sending build context to Docker daemon  2.048kB", flush=True)
        print("Step 1/2 : FROM preflight-base/busybox", flush=True)
        if mode == "ok":
            print("argv " + " ".join(args[:2]) + " DOCKER_BUILDKIT=" + os.environ.get("DOCKER_BUILDKIT", ""))
            print("Successfully tagged api:test")
        elif mode == "fail":
            print("Step 2/2 : RUN make", flush=True)
            print("make: *** [all] Error 2", file=sys.stderr, flush=True)
            print("The command '/bin/sh -c make' returned a non-zero code: 2", file=sys.stderr)
            sys.exit(1)
        else:
            print("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
                  "Is the docker daemon running?", file=sys.stderr)
            sys.exit(1)
    else:
        sys.exit("unexpected: " + " ".join(args))
    """
)


@pytest.fixture
def fake_docker(tmp_path: Path) -> str:
    script = tmp_path / "docker"
    script.write_text(f"#!{sys.executable}\n{_FAKE_DOCKER}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def _spec(tmp_path: Path) -> BuildSpec:
    return BuildSpec(image="api:test", context=str(tmp_path), dockerfile=str(tmp_path / "Dockerfile"))


@pytest.mark.anyio
async def test_build_streams_lines_with_the_legacy_builder_without_its_deprecation_notice(
    fake_docker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_DOCKER_BUILD", "ok")
    monkeypatch.delenv("DOCKER_BUILDKIT", raising=False)
    lines: list[str] = []
    await DockerEngine(fake_docker).build(_spec(tmp_path), lines.append)
    assert lines == [
        "Sending build context to Docker daemon  2.048kB",
        "Step 1/2 : FROM preflight-base/busybox",
        "argv build --force-rm DOCKER_BUILDKIT=0",
        "Successfully tagged api:test",
    ]


@pytest.mark.anyio
async def test_a_failing_dockerfile_is_build_failed_with_the_tail(
    fake_docker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_DOCKER_BUILD", "fail")
    with pytest.raises(PreflightError) as caught:
        await DockerEngine(fake_docker).build(_spec(tmp_path), lambda _: None)
    error = caught.value
    assert error.code == "BUILD_FAILED"
    assert "exit 1" in error.message
    assert error.message.endswith("The command '/bin/sh -c make' returned a non-zero code: 2")
    assert error.details is not None
    assert error.details["exitCode"] == 1
    assert error.details["dockerfile"] == str(tmp_path / "Dockerfile")
    # stdout and stderr are read apart: each stream keeps its order, not their interleaving.
    assert [line for line in error.details["logTail"] if not line.startswith(("Step", "Sending"))] == [
        "make: *** [all] Error 2",
        "The command '/bin/sh -c make' returned a non-zero code: 2",
    ]


@pytest.mark.anyio
async def test_a_daemon_lost_during_a_build_is_docker_error_not_build_failed(
    fake_docker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_DOCKER_BUILD", "down")
    with pytest.raises(PreflightError) as caught:
        await DockerEngine(fake_docker).build(_spec(tmp_path), lambda _: None)
    assert caught.value.code == "DOCKER_ERROR"
    assert caught.value.retryable
    assert caught.value.hint == DAEMON_HINT
