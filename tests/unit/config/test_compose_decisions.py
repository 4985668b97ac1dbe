"""Every key of the compose specification has a decision, and each decision is what happens."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from preflight_sdk.config import load_config
from preflight_sdk.config.compose import load_compose
from preflight_sdk.config.compose.decisions import DECISIONS
from preflight_sdk.config.compose.schema import compose_schema
from preflight_sdk.lifecycle.setup.specs import container_spec

DOCS = Path(__file__).resolve().parents[3] / "docs" / "compose.md"
BASE = {"image": "preflight-base/busybox"}

# A value for each service key that is not honoured, to see it warned about or refused.
NOT_HONOURED_SAMPLES: dict[str, Any] = {
    "annotations": {"a": "b"},
    "attach": False,
    "blkio_config": {"weight": 300},
    "cgroup": "host",
    "cgroup_parent": "m-executor-abcd",
    "cpu_count": 2,
    "cpu_percent": 50,
    "cpu_period": 100000,
    "cpu_quota": 50000,
    "cpu_rt_period": 1000,
    "cpu_rt_runtime": 500,
    "cpuset": "0",
    "credential_spec": {"file": "x.json"},
    "deploy": {"replicas": 2},
    "develop": {"watch": [{"path": "./src", "action": "sync", "target": "/src"}]},
    "device_cgroup_rules": ["c 1:3 mr"],
    "external_links": ["redis"],
    "gpus": "all",
    "isolation": "default",
    "logging": {"driver": "none"},
    "mac_address": "02:42:ac:11:65:43",
    "mem_swappiness": 10,
    "memswap_limit": "1g",
    "models": ["llm"],
    "oom_kill_disable": True,
    "post_start": [{"command": "echo hi"}],
    "pre_stop": [{"command": "echo bye"}],
    "provider": {"type": "awesomecloud"},
    "pull_refresh_after": "daily",
    "restart": "always",
    "runtime": "runc",
    "scale": 2,
    "storage_opt": {"size": "1G"},
    "use_api_socket": True,
}

# A value for each honoured service key, and what it must change in the container spec.
HONOURED_SAMPLES: dict[str, tuple[Any, str]] = {
    "build": ({"context": "."}, "dockerfile"),
    "cap_add": (["NET_ADMIN"], "options"),
    "cap_drop": (["ALL"], "options"),
    "command": ("sleep 1", "command"),
    "configs": (["settings"], "volumes"),
    "container_name": ("the-app", "aliases"),
    "cpu_shares": (512, "options"),
    "cpus": (0.5, "options"),
    "devices": (["/dev/null:/dev/nothing"], "options"),
    "dns": ("9.9.9.9", "options"),
    "dns_opt": (["ndots:2"], "options"),
    "dns_search": ("example.test", "options"),
    "domainname": ("example.test", "options"),
    "entrypoint": ("/bin/sh -c", "entrypoint"),
    "env_file": ("app.env", "env"),
    "environment": ({"A": "1"}, "env"),
    "extends": ({"service": "base"}, "env"),
    "extra_hosts": (["printer:10.0.0.9"], "options"),
    "group_add": (["2000"], "options"),
    "healthcheck": ({"test": ["CMD", "true"]}, "health"),
    "hostname": ("apphost", "aliases"),
    "image": ("preflight-base/python", "image"),
    "init": (True, "init"),
    "ipc": ("shareable", "options"),
    "label_file": ("labels.env", "options"),
    "labels": ({"team": "qa"}, "options"),
    "links": (["base:legacy"], "links"),
    "mem_limit": ("64m", "options"),
    "mem_reservation": ("32m", "options"),
    "network_mode": ("service:base", "network"),
    "networks": ({"back": {"aliases": ["extra"]}}, "aliases"),
    "oom_score_adj": (100, "options"),
    "pid": ("host", "options"),
    "pids_limit": (50, "options"),
    "platform": ("linux/amd64", "options"),
    "ports": (["8080"], "ports"),
    "privileged": (True, "options"),
    "profiles": (["never"], "absent"),
    "pull_policy": ("never", "pull"),
    "read_only": (True, "read_only"),
    "secrets": (["token"], "volumes"),
    "security_opt": (["no-new-privileges:true"], "options"),
    "shm_size": ("64m", "options"),
    "stdin_open": (True, "options"),
    "stop_grace_period": ("7s", "options"),
    "stop_signal": ("SIGUSR1", "options"),
    "sysctls": ({"net.core.somaxconn": 1024}, "options"),
    "tmpfs": ("/scratch", "options"),
    "tty": (True, "options"),
    "ulimits": ({"nofile": 1024}, "options"),
    "user": ("1000", "user"),
    "userns_mode": ("host", "options"),
    "uts": ("host", "options"),
    "volumes": (["./data:/data"], "volumes"),
    "working_dir": ("/srv", "working_dir"),
    "volumes_from": (["base:ro"], "options"),
    # Honoured with nothing to do: a service reaches every port of another already.
    "expose": (["9000"], "nothing"),
    "depends_on": (["base"], "depends"),
}

PROJECT_FILES = {
    "app.env": "FROM_FILE=1\n",
    "labels.env": "from.file=yes\n",
    "token.txt": "t\n",
    "settings.conf": "s\n",
}
TOP = {
    "networks": {"back": {}},
    "secrets": {"token": {"file": "./token.txt"}},
    "configs": {"settings": {"file": "./settings.conf"}},
}


def _load(root: Path, document: dict[str, Any], **options: Any) -> Any:
    for name, text in PROJECT_FILES.items():
        (root / name).write_text(text)
    path = root / "compose.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return load_compose([path], environ={"CF_VAR": "x"}, project="p", **options)


def _spec(root: Path, services: dict[str, Any], **top: Any) -> tuple[dict[str, Any], Any]:
    """The loaded e2e.yaml's container spec of `app`, by way of a compose-only project."""
    (root / "compose.yaml").write_text(yaml.safe_dump({"services": services, **TOP, **top}, sort_keys=False))
    for name, text in PROJECT_FILES.items():
        (root / name).write_text(text)
    loaded = load_config(root, environ={})
    service = loaded.service("app")
    if service is None:
        return {}, loaded
    spec = container_spec(loaded, service, session="s", network="n", mocks={})
    return {
        "image": service.build.image,
        "pull": service.build.pull,
        "dockerfile": service.build.dockerfile,
        "command": spec.command,
        "entrypoint": spec.entrypoint,
        "env": dict(spec.env),
        "aliases": list(spec.aliases),
        "volumes": list(spec.volumes),
        "ports": list(spec.ports),
        "health": spec.health,
        "init": spec.init,
        "read_only": spec.read_only,
        "user": spec.user,
        "working_dir": spec.working_dir,
        "options": spec.options,
        "network": spec.network,
        "depends": service.depends_on,
        "links": [list(s.container.aliases) for s in loaded.services],
    }, loaded


def _schema_keys(definition: str) -> set[str]:
    schema = compose_schema()
    if definition == "top-level":
        return set(schema["properties"])
    if definition == "build":
        return set(schema["definitions"]["service"]["properties"]["build"]["oneOf"][1]["properties"])
    name = {"service": "service", "healthcheck": "healthcheck", "network": "network"}.get(
        definition, definition
    )
    return set(schema["definitions"][name]["properties"])


# -- the table ------------------------------------------------------------------------------------


@pytest.mark.parametrize("definition", list(DECISIONS))
def test_every_key_of_the_specification_has_exactly_one_decision(definition: str) -> None:
    assert set(DECISIONS[definition]) == _schema_keys(definition)


def test_the_table_in_the_docs_is_the_decisions() -> None:
    rows = re.findall(
        r"^\| (\S+) \| `([a-z0-9_]+)` \| (honoured|set aside|refused) \| (.+) \|$", DOCS.read_text(), re.M
    )
    documented = {(section, key): verdict for section, key, verdict, _ in rows}
    expected = {
        (section, key): {"aside": "set aside"}.get(verdict, verdict)
        for section, keys in DECISIONS.items()
        for key, (verdict, _) in keys.items()
    }
    assert documented == expected


def test_every_service_key_has_a_sample_here() -> None:
    assert set(NOT_HONOURED_SAMPLES) | set(HONOURED_SAMPLES) == set(DECISIONS["service"])
    for key in NOT_HONOURED_SAMPLES:
        assert DECISIONS["service"][key][0] != "honoured", key
    for key in HONOURED_SAMPLES:
        assert DECISIONS["service"][key][0] == "honoured", key


# -- set aside: a warning once per key and file; refused: a problem with its line and hint ---------


@pytest.mark.parametrize("key", [k for k, (verdict, _) in DECISIONS["service"].items() if verdict == "aside"])
def test_a_key_set_aside_is_warned_about_once_per_file(tmp_path: Path, key: str) -> None:
    value = NOT_HONOURED_SAMPLES[key]
    loaded = _load(tmp_path, {"services": {"a": {**BASE, key: value}, "b": {**BASE, key: value}}})
    assert loaded.problems == []
    assert set(loaded.services) == {"a", "b"}
    (warning,) = loaded.warnings
    assert f"compose.yaml:4: `{key}` set aside: {DECISIONS['service'][key][1]}" in warning
    assert warning.endswith("(and 1 more place in this file)")


@pytest.mark.parametrize(
    "key", [k for k, (verdict, _) in DECISIONS["service"].items() if verdict == "refused"]
)
def test_a_refused_key_is_a_problem_with_its_line_and_hint(tmp_path: Path, key: str) -> None:
    loaded = _load(tmp_path, {"services": {"other": BASE, "a": {**BASE, key: NOT_HONOURED_SAMPLES[key]}}})
    (problem,) = loaded.problems
    assert (problem.path, problem.line) == (f"$.services.a.{key}", 6)
    assert DECISIONS["service"][key][1] in problem.message


def test_restart_no_and_scale_one_are_not_warned_about(tmp_path: Path) -> None:
    loaded = _load(tmp_path, {"services": {"a": {**BASE, "restart": "no", "scale": 1}}})
    assert (loaded.problems, loaded.warnings) == ([], [])


# -- honoured: each key changes the container as compose would ----------------------------------


@pytest.mark.parametrize("key", list(HONOURED_SAMPLES))
def test_an_honoured_key_reaches_the_container(tmp_path: Path, key: str) -> None:
    value, where = HONOURED_SAMPLES[key]
    base = {"image": "preflight-base/busybox", "environment": {"FROM_BASE": "1"}}
    plain, _ = _spec(tmp_path, {"base": base, "app": dict(BASE)})
    spec, loaded = _spec(tmp_path, {"base": base, "app": {**BASE, key: value}})
    # Honoured, never set aside; a key that hands the container the host is told (config/host_access.py).
    hands_over = key in ("privileged", "pid", "devices")  # the samples of cap_add and security_opt are tame
    assert [w.split(": ", 2)[1].split(" ")[0].strip("`:") for w in loaded.warnings] == ([key] if hands_over else [])
    if where == "absent":
        assert spec == {}
    elif where == "nothing":
        assert spec == plain
    else:
        assert spec[where] != plain[where], (key, spec[where])


def test_run_options_read_as_compose_reads_them(tmp_path: Path) -> None:
    app = {
        **BASE,
        "sysctls": ["net.core.somaxconn=1024"],
        "extra_hosts": {"printer": ["10.0.0.9", "::1"]},
        "ulimits": {"nofile": {"soft": 10, "hard": 20}, "nproc": "64"},
        "shm_size": "1gb",
        "cpus": "0.25",
        "stop_grace_period": "1m30s",
        "devices": [{"source": "/dev/null", "target": "/dev/x", "permissions": "r"}],
    }
    spec, _ = _spec(tmp_path, {"app": app})
    options = spec["options"]
    assert options.sysctls == {"net.core.somaxconn": "1024"}
    assert options.extra_hosts == ["printer:10.0.0.9", "printer:::1"]
    assert {n: (u.soft, u.hard) for n, u in options.ulimits.items()} == {
        "nofile": (10, 20),
        "nproc": (64, 64),
    }
    assert (options.shm_size, options.cpus, options.stop_grace_period) == (1024**3, 0.25, "1m30s")
    assert options.devices == ["/dev/null:/dev/x:r"]


# -- definitions: networks, volumes, secrets, configs --------------------------------------------


DEFINITION_SAMPLES: dict[str, dict[str, Any]] = {
    "network": {
        "name": "n",
        "driver": "overlay",
        "driver_opts": {"a": "b"},
        "ipam": {"config": [{"subnet": "172.28.0.0/16"}]},
        "external": True,
        "internal": True,
        "enable_ipv4": True,
        "enable_ipv6": True,
        "attachable": True,
        "labels": {"a": "b"},
    },
    "volume": {
        "name": "v",
        "external": True,
        "driver": "nfs",
        "driver_opts": {"type": "nfs"},
        "labels": {"a": "b"},
    },
    "secret": {
        "name": "s",
        "file": "./token.txt",
        "environment": "CF_VAR",
        "external": True,
        "labels": {"a": "b"},
        "driver": "vault",
        "driver_opts": {"a": "b"},
        "template_driver": "golang",
    },
    "config": {
        "name": "c",
        "file": "./settings.conf",
        "environment": "CF_VAR",
        "content": "x",
        "external": True,
        "labels": {"a": "b"},
        "template_driver": "golang",
    },
}


@pytest.mark.parametrize(
    ("kind", "key"), [(kind, key) for kind, keys in DEFINITION_SAMPLES.items() for key in keys]
)
def test_each_definition_key_is_honoured_warned_or_refused(tmp_path: Path, kind: str, key: str) -> None:
    assert set(DEFINITION_SAMPLES[kind]) == set(DECISIONS[kind])
    section = f"{kind}s"
    definition = {key: DEFINITION_SAMPLES[kind][key]}
    if kind in ("secret", "config") and key not in ("file", "environment", "content", "external"):
        definition["file"] = "./token.txt"
    service: dict[str, Any] = dict(BASE)
    if kind == "network":
        service["networks"] = ["thing"]
    elif kind == "volume":
        service["volumes"] = ["thing:/data"]
    else:
        service[section] = ["thing"]
    loaded = _load(tmp_path, {"services": {"a": service}, section: {"thing": definition}})
    verdict = DECISIONS[kind][key][0]
    if (kind, key) in (("network", "external"),):
        verdict = "aside"
    if (kind, key) == ("volume", "driver"):
        verdict = "refused"  # only `local`, which the sample is not
    if verdict == "refused":
        assert [p.path for p in loaded.problems] == [f"$.{section}.thing.{key}"]
        assert loaded.problems[0].line is not None
    elif verdict == "aside":
        assert loaded.problems == []
        assert [w.split(": `")[1].split("`")[0] for w in loaded.warnings] == [f"{section}.*.{key}"]
    else:
        assert (loaded.problems, loaded.warnings) == ([], [])
        if kind in ("secret", "config") and key != "name":
            mount = loaded.services["a"]["container"]["volumes"][0]
            target = "/run/secrets/thing" if kind == "secret" else "/thing"
            assert mount.endswith(f":{target}:ro")
