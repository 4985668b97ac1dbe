"""Podman's command-line differences, read and written without Podman: ports, JSON lists, engine choice."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from preflight_sdk import PreflightError
from preflight_sdk.config.port_specs import parse_port
from preflight_sdk.engine.base import NetworkInfo, RemoveOutcome
from preflight_sdk.engine.docker import DockerEngine
from preflight_sdk.engine.errors import translate
from preflight_sdk.engine.inspect import (
    container_from_inspect,
    container_from_list,
    merge_log_streams,
    network_from_list,
)
from preflight_sdk.engine.lane import ContainerObject, ListedContainer
from preflight_sdk.engine.output import removal_outcomes
from preflight_sdk.engine.podman import PODMAN_LISTING, host_address, mend_log_line, publish_arg
from preflight_sdk.engine.whales import DOCKER_LISTING, Listing
from preflight_sdk.lifecycle.environment import Environment


@pytest.mark.parametrize(
    ("spec", "argument"),
    [
        ("0:8080", "8080/tcp"),  # Podman refuses host port 0: no host port asks for a free one
        ("8080", "8080/tcp"),
        ("9000:8080", "9000:8080/tcp"),
        ("127.0.0.1:0:8080", "127.0.0.1::8080/tcp"),
        ("127.0.0.1:9000:8080/udp", "127.0.0.1:9000:8080/udp"),
    ],
)
def test_a_free_host_port_is_asked_for_without_a_zero(spec: str, argument: str) -> None:
    assert publish_arg(parse_port(spec)) == argument


def test_network_listings_come_as_an_array_or_one_object_per_line() -> None:
    assert PODMAN_LISTING.networks("") == DOCKER_LISTING.networks("") == []
    podman = '[{"name": "a", "id": "1", "labels": {"k": "v"}}, {"name": "b", "id": "2"}]'
    docker = '{"ID": "1", "Name": "a", "Labels": "k=v"}\n{"ID": "2", "Name": "b", "Labels": ""}\n'
    expected = [NetworkInfo(id="1", name="a", labels={"k": "v"}), NetworkInfo(id="2", name="b")]
    assert [network_from_list(n) for n in PODMAN_LISTING.networks(podman)] == expected
    assert [network_from_list(n) for n in DOCKER_LISTING.networks(docker)] == expected


def test_a_listing_that_is_not_what_the_engine_prints_is_a_docker_error() -> None:
    with pytest.raises(PreflightError) as caught:
        DOCKER_LISTING.containers('{"ID": 7}\n')
    assert caught.value.code == "DOCKER_ERROR" and "list containers" in caught.value.message


def test_an_inspect_answer_of_another_shape_keeps_the_containers_environment_out_of_the_error() -> None:
    from preflight_sdk.engine.lane import ContainerObject, read

    answer = b'[{"Id": "c1", "Config": {"Env": ["API_TOKEN=s3cr3t-value"]}, "State": "running"}]'
    with pytest.raises(PreflightError) as caught:
        read(answer, list[ContainerObject], action="inspect container c1")
    assert caught.value.code == "DOCKER_ERROR" and "inspect container c1" in caught.value.message
    assert "s3cr3t-value" not in json.dumps(caught.value.to_info(), default=str)


def test_the_host_address_is_never_loopback() -> None:
    address = host_address()
    assert address is None or not address.startswith("127.")


def _context(tmp_path: Path, engine: str | None) -> Environment:
    (tmp_path / "e2e.yaml").write_text(
        "project: {name: p}\n" + (f"engine: {engine}\n" if engine else "") + "mocks: {m: {port: 0}}\n"
    )
    return Environment(tmp_path, None, None)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("in_file", "in_env", "chosen"),
    [
        (None, None, "docker"),
        ("podman", None, "podman"),
        ("podman", "docker", "docker"),  # the variable wins over the file
        (None, "Podman", "podman"),
    ],
)
async def test_the_engine_comes_from_the_variable_then_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_file: str | None, in_env: str | None, chosen: str
) -> None:
    if in_env is None:
        monkeypatch.delenv("PREFLIGHT_ENGINE", raising=False)
    else:
        monkeypatch.setenv("PREFLIGHT_ENGINE", in_env)
    ctx = _context(tmp_path, in_file)
    await ctx.ensure_loaded(persist=False)
    engine = ctx.engine
    assert isinstance(engine, DockerEngine) and engine.cli.docker == chosen
    assert ctx.engine is ctx.engine  # made once


@pytest.mark.anyio
async def test_an_unknown_engine_is_a_config_error_with_a_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFLIGHT_ENGINE", "containerd")
    ctx = _context(tmp_path, None)
    await ctx.ensure_loaded(persist=False)
    with pytest.raises(PreflightError) as caught:
        _ = ctx.engine
    assert caught.value.code == "CONFIG_INVALID"
    assert "containerd" in caught.value.message and "podman" in caught.value.hint


@pytest.mark.anyio
async def test_an_engine_named_in_the_file_must_be_one_preflight_knows(tmp_path: Path) -> None:
    with pytest.raises(PreflightError) as caught:
        await _context(tmp_path, "containerd").ensure_loaded(persist=False)
    assert caught.value.code == "CONFIG_INVALID"


@pytest.mark.parametrize(
    ("stderr", "code", "feature"),
    [
        ("Error: shop-api:e2e: image not known", "NOT_BUILT", None),
        (
            "Error: container-init binary not found on the host: stat /usr/libexec/podman/catatonit: no such file",
            "UNSUPPORTED_ON_ENGINE",
            "container.init",
        ),
        ("Error: something else", "DOCKER_ERROR", None),
    ],
)
def test_podmans_own_words_become_the_codes_docker_gets(stderr: str, code: str, feature: str | None) -> None:
    error = translate(stderr, action="start container pf-x-api", subject="pf-x-api")
    assert error.code == code
    if code == "NOT_BUILT":
        assert (error.details or {}).get("image") == "shop-api:e2e" and "shop-api:e2e" in error.message
    assert (error.details or {}).get("feature") == feature


def test_a_line_written_in_pieces_keeps_only_its_first_timestamp() -> None:
    raw = (
        b"2026-11-24T23:32:12.493315662Z mock answered "
        b"2026-11-24T23:32:12.4996349Z 201"
        b"2026-11-24T23:32:12.509780242Z \n"
    )
    [line] = merge_log_streams([("stdout", mend_log_line(raw))])[0]
    assert (line.timestamp, line.text) == ("2026-11-24T23:32:12.493315662Z", "mock answered 201")
    whole = b"2026-11-24T23:32:12.493315662Z started at 2026-11-24 23:32\n"
    assert mend_log_line(whole) == whole


@pytest.mark.parametrize(
    ("status", "running", "expected_status", "expected_code"),
    [
        ("stopped", False, "exited", 3),  # exited, cleanup not run yet: the code is known
        ("exited", False, "exited", 3),
        ("configured", False, "created", None),
        ("stopping", True, "running", None),
    ],
)
def test_podman_states_read_as_docker_states(
    status: str, running: bool, expected_status: str, expected_code: int | None
) -> None:
    info = container_from_inspect(
        msgspec.convert(
            {"Id": "c1", "State": {"Status": status, "Running": running, "ExitCode": 3}}, ContainerObject
        )
    )
    assert (info.status, info.exit_code) == (expected_status, expected_code)


def test_podman_rm_ignore_says_what_it_removed_and_why_one_failed_and_a_missing_ref_is_not_found() -> None:
    # `podman container rm --ignore a b c`: prints the refs it removed, one error line for a ref
    # it could not remove, and nothing at all for a ref that does not exist.
    stdout = "aaa\n"
    stderr = "Error: bbb: container is in use by another process\n"
    outcomes = removal_outcomes(["aaa", "bbb", "ccc"], stdout, stderr, 125, action="x", unnamed_missing=True)
    assert outcomes == [
        RemoveOutcome(ref="aaa", action="removed"),
        RemoveOutcome(ref="bbb", action="failed", error="bbb: container is in use by another process"),
        RemoveOutcome(ref="ccc", action="not_found"),
    ]
    # Docker's `rm -f` of a missing ref exits 0 in silence too, but then every ref was removed.
    assert removal_outcomes(["ccc"], "", "", 0, action="x")[0].action == "removed"


@pytest.mark.parametrize(
    ("listing", "out"),
    [
        (
            PODMAN_LISTING,
            '[{"Id": "c1", "Names": ["web"], "Image": "i", "State": "running", "Labels": {"k": "v"}}]',
        ),
        (
            DOCKER_LISTING,
            '{"ID": "c1", "Names": "web,alias", "Image": "i", "State": "running", "Labels": "k=v"}\n',
        ),
    ],
)
def test_every_listing_of_a_container_reads_the_same(listing: Listing, out: str) -> None:
    [item] = listing.containers(out)
    info = container_from_list(item)
    assert (info.id, info.name, info.image, info.status, info.running, info.labels) == (
        "c1",
        "web",
        "i",
        "running",
        True,
        {"k": "v"},
    )


def test_the_engine_apis_listed_container_reads_without_its_slash() -> None:
    item = msgspec.json.decode(
        b'{"Id": "c1", "Names": ["/web"], "Image": "i", "State": "exited", "Labels": null}',
        type=ListedContainer,
    )
    info = container_from_list(item)
    assert (info.name, info.status, info.running, info.labels) == ("web", "exited", False, {})
