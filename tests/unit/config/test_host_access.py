"""Settings that hand a container the host: each one loads, runs as asked, and is told once."""

from __future__ import annotations

import textwrap
from pathlib import Path

from preflight_sdk.config import load_config

HOSTILE = """\
services:
  agent:
    image: preflight-base/busybox
    privileged: true
    pid: host
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock
      - ./data:/data
    cap_add: [SYS_ADMIN, NET_ADMIN]
    security_opt: ["seccomp:unconfined", "apparmor=unconfined", "no-new-privileges:true"]
    devices: ["/dev/fuse:/dev/fuse"]
  root:
    build: {context: /, dockerfile: /tmp/Dockerfile}
  sibling:
    build: {context: ../elsewhere}
  calm:
    image: preflight-base/busybox
    volumes: ["./data:/data:ro"]
    cap_add: [NET_ADMIN]
"""


def _warnings(tmp_path: Path, compose: str) -> list[str]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "compose.yaml").write_text(textwrap.dedent(compose))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "Dockerfile").write_text("FROM preflight-base/busybox\n")
    return [w for w in load_config(root).warnings if "set aside" not in w]


def test_each_setting_that_hands_over_the_host_is_one_warning_naming_service_and_setting(tmp_path: Path) -> None:
    warnings = _warnings(tmp_path, HOSTILE)
    said = [w.split(": ", 1) for w in warnings]
    assert [(who, what.split(" ", 1)[0]) for who, what in said] == [
        ("service `agent`", "`privileged:"),
        ("service `agent`", "`pid:"),
        ("service `agent`", "`cap_add:"),
        ("service `agent`", "`security_opt:"),
        ("service `agent`", "`security_opt:"),
        ("service `agent`", "`devices:"),
        ("service `agent`", "`volumes:"),
        ("service `root`", "`build.context:"),
        ("service `sibling`", "`build.context:"),
    ], warnings
    text = "\n".join(warnings)
    assert "/var/run/docker.sock" in text and "controls the engine" in text
    assert "SYS_ADMIN" in text and "with seccomp and apparmor unconfined" in text
    assert "NET_ADMIN" not in text, "a capability that does not reach the host is not one of them"
    assert "/dev/fuse" in text
    assert f"{tmp_path / 'elsewhere'}" in text and "outside the project" in text
    assert "whole file system" in text
    assert all(w.startswith("service `") for w in warnings)


def test_a_service_without_such_settings_gets_no_warning(tmp_path: Path) -> None:
    assert _warnings(tmp_path, "services:\n  web: {image: preflight-base/busybox, cap_add: [NET_ADMIN]}\n") == []


def test_the_same_settings_in_e2e_yaml_are_told_too(tmp_path: Path) -> None:
    root = tmp_path / "e2e"
    root.mkdir()
    (root / "e2e.yaml").write_text(
        textwrap.dedent("""\
            project: {name: e2e-hostile}
            services:
              ci:
                build: {image: preflight-base/busybox}
                container:
                  volumes: ["/run/docker.sock:/var/run/docker.sock"]
                  options: {privileged: true, pid: host}
        """)
    )
    warnings = load_config(root).warnings
    assert [w.split(": ", 1)[1].split(" ", 1)[0] for w in warnings] == ["`privileged:", "`pid:", "`volumes:"]
