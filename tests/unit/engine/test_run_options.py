"""Run options say the same thing over the socket (the create body) and on the command line (flags)."""

from __future__ import annotations

import itertools

from preflight_sdk.config.port_specs import parse_port
from preflight_sdk.config.run_options import RunOptions, Ulimit
from preflight_sdk.engine.base import ContainerSpec
from preflight_sdk.engine.run_options import option_flags
from preflight_sdk.engine.socket_lane import container_body

OPTIONS = RunOptions(
    cap_add=["NET_ADMIN"],
    sysctls={"net.core.somaxconn": "1024"},
    tmpfs=["/cache:size=1024"],
    ulimits={"nofile": Ulimit(soft=10, hard=20)},
    shm_size=1024,
    cpus=0.5,
    stop_grace_period="1m",
    stop_signal="SIGUSR1",
    labels={"team": "qa", "preflight.project": "spoofed"},
    hostname="apphost",
    tty=True,
)


def test_the_create_body_carries_every_option() -> None:
    spec = ContainerSpec(name="c", image="i", network="n", labels={"preflight.project": "p"}, options=OPTIONS)
    body = container_body(spec)
    host = body["HostConfig"]
    assert host["CapAdd"] == ["NET_ADMIN"] and host["Sysctls"] == {"net.core.somaxconn": "1024"}
    assert host["Tmpfs"] == {"/cache": "size=1024"} and host["ShmSize"] == 1024
    assert host["Ulimits"] == [{"Name": "nofile", "Soft": 10, "Hard": 20}]
    assert host["NanoCpus"] == 500_000_000
    assert (body["StopTimeout"], body["StopSignal"], body["Hostname"], body["Tty"]) == (
        60,
        "SIGUSR1",
        "apphost",
        True,
    )
    assert body["Labels"] == {"team": "qa", "preflight.project": "p"}  # preflight's own labels win


def test_the_flags_carry_every_option() -> None:
    flags = option_flags(OPTIONS)
    pairs = list(itertools.pairwise(flags))
    for pair in [
        ("--cap-add", "NET_ADMIN"),
        ("--sysctl", "net.core.somaxconn=1024"),
        ("--tmpfs", "/cache:size=1024"),
        ("--ulimit", "nofile=10:20"),
        ("--shm-size", "1024"),
        ("--cpus", "0.5"),
        ("--stop-timeout", "60"),
        ("--stop-signal", "SIGUSR1"),
        ("--hostname", "apphost"),
    ]:
        assert pair in pairs, pair
    assert "--tty" in flags and "--privileged" not in flags


def test_a_container_in_another_ones_network_has_no_aliases_ports_or_host_name() -> None:
    spec = ContainerSpec(
        name="c",
        image="i",
        network="container:pf-p-s-app",
        aliases=["sidecar"],
        ports=[parse_port("0:80")],
        options=OPTIONS,
    )
    body = container_body(spec)
    assert body["HostConfig"]["NetworkMode"] == "container:pf-p-s-app"
    assert "NetworkingConfig" not in body and "Hostname" not in body
    assert (body["ExposedPorts"], body["HostConfig"]["PortBindings"]) == ({}, {})


def test_a_zero_is_an_option_set_and_false_or_empty_is_not() -> None:
    options = RunOptions(oom_score_adj=0, cpu_shares=0, privileged=False, cap_drop=[])
    host = container_body(ContainerSpec(name="c", image="i", network="n", options=options))["HostConfig"]
    assert (host["OomScoreAdj"], host["CpuShares"]) == (0, 0)
    assert "Privileged" not in host and "CapDrop" not in host
    pairs = list(itertools.pairwise(option_flags(options)))
    assert ("--oom-score-adj", "0") in pairs and ("--cpu-shares", "0") in pairs
    assert "--privileged" not in option_flags(options) and "--cap-drop" not in option_flags(options)
