"""Command-line contracts of a manifest (`provides.cli`): each command must exit 0, and print JSON
matching its `output_schema` when one is declared. Run without a shell, in the manifest's folder."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from preflight_sdk.processes.commands import run_command

from .result import CliReport, Finding
from .spec import CliContract

__all__ = ["check_cli"]


async def check_cli(
    contracts: Sequence[CliContract], *, cwd: Path | None, env: Mapping[str, str], limit: float
) -> list[CliReport]:
    """Run every contract (one after another, each within `limit` seconds) and report on each."""
    return [await _check(contract, cwd=cwd, env=env, limit=limit) for contract in contracts]


async def _check(
    contract: CliContract, *, cwd: Path | None, env: Mapping[str, str], limit: float
) -> CliReport:
    shown = shlex.join(contract.command)
    started = time.perf_counter()
    findings: list[Finding] = []
    exit_code: int | None = None
    try:
        done = await run_command(
            contract.command, cwd=str(cwd) if cwd else None, env=dict(env), timeout=limit
        )
    except TimeoutError:
        findings.append(
            Finding(
                severity="error", code="CLI_TIMEOUT", message=f"`{shown}` did not finish within {limit:g}s"
            )
        )
    except OSError as exc:
        findings.append(
            Finding(
                severity="error",
                code="CLI_NOT_FOUND",
                message=f"`{shown}` cannot start: {exc.strerror or exc}",
            )
        )
    else:
        exit_code = done.returncode
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            findings.append(
                Finding(
                    severity="error",
                    code="CLI_EXIT_STATUS",
                    message=f"`{shown}` exited with {done.returncode}: {tail[0]}",
                )
            )
        elif contract.output_schema is not None:
            findings.extend(_output_findings(shown, done.stdout, contract.output_schema))
    return CliReport(
        command=shown,
        status="failed" if any(f.severity == "error" for f in findings) else "passed",
        duration=round((time.perf_counter() - started) * 1000),
        exit_code=exit_code,
        findings=findings,
    )


def _output_findings(shown: str, stdout: str, schema: dict[str, object]) -> list[Finding]:
    import jsonschema  # lazy: only manifests with output schemas need it

    try:
        document = json.loads(stdout)
    except ValueError as exc:
        return [
            Finding(
                severity="error", code="CLI_OUTPUT_NOT_JSON", message=f"`{shown}` did not print JSON ({exc})"
            )
        ]
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    return [
        Finding(
            severity="error",
            code="CLI_OUTPUT_SCHEMA",
            message=f"`{shown}` output at /{'/'.join(map(str, e.absolute_path))}: {e.message}",
        )
        for e in errors[:5]
    ]
