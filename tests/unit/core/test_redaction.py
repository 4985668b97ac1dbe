"""The redaction policy itself: quoted pairs (JSON and Python mappings), secret values masked
wherever they appear, and what is not a secret pair."""

from __future__ import annotations

import json

from preflight_sdk.config import load_config
from preflight_sdk.core.redaction import MIN_SECRET_CHARS, REDACTED, Redactor, secret_values
from preflight_sdk.core.results.run import CaseResult

HEADERS = {"Authorization": "Bearer abc123xyz", "X-Auth-Token": "tok-999", "Accept": "*/*"}


def test_a_header_mapping_printed_as_python_hides_every_secret_header() -> None:
    line = f"headers: {HEADERS!r}"
    shown = Redactor().text(line)
    assert "abc123xyz" not in shown and "tok-999" not in shown
    assert f"'Authorization': '{REDACTED}'" in shown and f"'X-Auth-Token': '{REDACTED}'" in shown
    assert "'Accept': '*/*'" in shown


def test_a_header_mapping_printed_as_json_hides_every_secret_header() -> None:
    shown = Redactor().text(f"headers json: {json.dumps(HEADERS)}")
    assert "abc123xyz" not in shown and "tok-999" not in shown
    assert f'"Authorization": "{REDACTED}"' in shown and '"Accept": "*/*"' in shown


def test_python_repr_with_a_quote_in_the_value_and_redact_names() -> None:
    line = repr({"ACCOUNT_PIN": "it's-1234", "user_ssn": "123-45", "name": "bob"})
    shown = Redactor(["pin", "ssn"]).text(line)
    assert "it's-1234" not in shown and "123-45" not in shown and "'name': 'bob'" in shown


def test_a_known_secret_value_is_masked_wherever_it_appears() -> None:
    policy = Redactor(values=["s3cr3t-value", "ab"])
    assert policy.text("assert 's3cr3t-value' == 'other'") == f"assert '{REDACTED}' == 'other'"
    assert policy.headers({"X-Echo": "got s3cr3t-value"}) == {"X-Echo": f"got {REDACTED}"}
    assert policy.body({"seen": ["s3cr3t-value"]}) == {"seen": [REDACTED]}
    assert policy.url("http://h/x?q=s3cr3t-value") == f"http://h/x?q={REDACTED}"
    # too short to mask by value: "ab" would hide every "ab" of every output
    assert len("ab") < MIN_SECRET_CHARS and policy.text("tab stab") == "tab stab"


def test_scrub_masks_values_in_every_field_of_a_result() -> None:
    case = CaseResult(
        id="s.login-s3cr3t-value",
        name="login s3cr3t-value",
        suite="s",
        status="passed",
        duration=1,
        timestamp=1,
    )
    shown = Redactor(values=["s3cr3t-value"]).scrub(case)
    assert isinstance(shown, CaseResult) and "s3cr3t-value" not in repr(shown)
    assert shown.name == f"login {REDACTED}"
    assert Redactor().scrub(case) is case


def test_a_file_and_line_or_a_pytest_node_is_not_a_pair() -> None:
    policy = Redactor()
    assert policy.text("tests/test_token.py:12: AssertionError") == "tests/test_token.py:12: AssertionError"
    assert policy.text("tests/test_auth.py::test_login") == "tests/test_auth.py::test_login"
    assert policy.text("File auth/session.ts:4:7") == "File auth/session.ts:4:7"
    assert policy.text("token:abc") == f"token:{REDACTED}"
    assert policy.text("api.key:12345 auth.py:s3cret") == f"api.key:{REDACTED} auth.py:{REDACTED}"
    assert policy.text("db.password: hunter22") == f"db.password: {REDACTED}"


def test_secret_values_come_from_secret_names_and_command_pairs() -> None:
    policy = Redactor(["pin"])
    found = secret_values(
        policy,
        [
            {"SVC_SECRET_VALUE": "v-1234", "GREETING": "hello", "ACCOUNT_PIN": 432154, "API_KEY": True},
            {"SESSION_TTL": 3600, "KEYCLOAK_URL": "http://keycloak:8080", "AUTH_DSN": "pg://u:pw-9@db/x"},
        ],
        ["login --password=pw-5678 --user=alice", "tests/test_token.py::test_x"],
    )
    # a short number and a URL without a password are settings, not secrets to mask everywhere
    assert found == ["v-1234", "432154", "pg://u:pw-9@db/x", "pw-5678"]


def test_the_project_policy_knows_its_secret_variables(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "e2e.yaml").write_text(
        "project: {name: p}\n"
        "redact: [pin]\n"
        "services:\n"
        "  api:\n"
        "    build: {image: 'x/api:1', args: {NPM_TOKEN: npm-tok-5}}\n"
        "    container: {environment: {SVC_SECRET_VALUE: svc-value-1, ACCOUNT_PIN: pin-value-2, MODE: prod}}\n"
        "tests:\n"
        "  suites:\n"
        "    - {id: py, runner: pytest, file: t.py, env: {PYSUITE_TOKEN: py-token-3}}\n"
        "    - {id: sh, runner: shell, command: 'run --password=sh-pw-4'}\n",
        encoding="utf-8",
    )
    (tmp_path / "t.py").write_text("", encoding="utf-8")
    policy = load_config(tmp_path).redactor
    assert set(policy.values) == {"svc-value-1", "pin-value-2", "py-token-3", "sh-pw-4", "npm-tok-5"}
    assert policy.text("got svc-value-1, pin-value-2, py-token-3, sh-pw-4 in prod") == (
        f"got {REDACTED}, {REDACTED}, {REDACTED}, {REDACTED} in prod"
    )
