"""A compose key with a typo is told with the key it most likely means, as e2e.yaml's are."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight_sdk.config import load_config
from preflight_sdk.core.errors import ConfigError


def _problems(tmp_path: Path, compose: str) -> list[str]:
    (tmp_path / "compose.yaml").write_text(textwrap.dedent(compose))
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.code == "CONFIG_INVALID"
    return [p.render() for p in caught.value.problems]


def test_service_key_typos_get_a_did_you_mean_with_their_line(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        """\
        services:
          web:
            image: preflight-base/busybox
            enviroment: {A: "1"}
            prots: ["8080:80"]
        """,
    )
    compose = str(tmp_path / "compose.yaml")
    assert (
        f"{compose}:4:5: $.services.web.enviroment: compose schema: unknown key `enviroment` (did you mean `environment`?)"
        in problems
    ), problems
    assert (
        f"{compose}:5:5: $.services.web.prots: compose schema: unknown key `prots` (did you mean `ports`?)"
        in problems
    ), problems


def test_a_top_level_typo_and_one_with_no_close_key(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        """\
        services:
          web: {image: preflight-base/busybox, zzqqxx: 1}
        volumez: {}
        """,
    )
    assert any("unknown key `volumez` (did you mean `volumes`?)" in p for p in problems), problems
    assert any("unknown key `zzqqxx`" in p and "did you mean" not in p for p in problems), problems


def test_a_curl_health_test_says_it_is_probed_from_the_host_instead(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        textwrap.dedent("""\
            services:
              web:
                image: preflight-base/busybox
                healthcheck:
                  test: ["CMD", "curl", "-f", "http://localhost:8000/health"]
        """)
    )
    loaded = load_config(tmp_path)
    (said,) = [w for w in loaded.warnings if "healthcheck.test" in w]
    assert said.startswith(f"{tmp_path / 'compose.yaml'}:5: `healthcheck.test` set aside: "), said
    assert "curl -f http://localhost:8000/health" in said and "not run in the container" in said, said
    assert "GET /health on container port 8000, from the host" in said, said
    assert loaded.services[0].container.healthcheck is not None
