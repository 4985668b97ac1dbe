"""Extra options of generated commands that are not parameters of their operation.

An entry maps an operation name to `Extension`s: each adds one Click option to that operation's
command and may change the command's arguments before they are validated (for example an option
that fills in another argument). Keep per-command behaviour here, never in the generator.
"""

from __future__ import annotations

from typing import Any

import anyio
import click

from .params import Extension

__all__ = ["EXTENSIONS", "HEADER", "OPEN_REPORT", "SHARD_ON", "UPSTREAM"]


def _self(value: Any, args: dict[str, Any]) -> None:
    if value:
        args["self_check"] = True


def _shard_on(value: Any, args: dict[str, Any]) -> None:
    """`--shard-on A,B`: the engines of `shards`, comma-separated."""
    if value is not None:
        args["shards"] = [part.strip() for part in str(value).split(",") if part.strip()]


SHARD_ON = Extension(
    option=click.Option(
        ["--shard-on"],
        metavar="ENGINES",
        default=None,
        help="Split the suites over these engines, comma-separated: `local`, `context:NAME` or a "
        "DOCKER_HOST URL (e.g. `local,ssh://ci@builder`). Each runs its own copy of the environment.",
    ),
    apply=_shard_on,
    replaces="shards",
)


def _written_before(value: Any, args: dict[str, Any]) -> None:
    """The composed `init` command writes the starter before the operation runs."""


def _nothing(value: Any, args: dict[str, Any]) -> None:
    """An option that changes no argument (it acts after the operation)."""


async def _open_report(value: Any, project: Any, result: Any, out: Any) -> None:
    """`runs show ID --open`: open the run's report.html in the browser (written first when missing)."""
    if not value:
        return
    import webbrowser

    from preflight_sdk.runs.report import report_of

    _, path = await report_of(project._runs, result.run_id, write=True)
    if path is None:
        return
    uri = path.resolve().as_uri()
    opened = await anyio.to_thread.run_sync(webbrowser.open, uri)
    out.note(f"opened {uri}" if opened else f"no browser found: open {uri}")


OPEN_REPORT = Extension(
    option=click.Option(
        ["--open"],
        is_flag=True,
        default=False,
        help="Open the run's report.html (its page: verdict, failures, timeline) in the browser.",
    ),
    apply=_nothing,
    after=_open_report,
)


def _header(value: Any, args: dict[str, Any]) -> None:
    """`--header "Name: value"` (repeatable): the readable `--headers`."""
    if value:
        args["headers"] = [*args.get("headers", []), *value]


HEADER = Extension(
    option=click.Option(
        ["--header", "-H", "header"],
        multiple=True,
        metavar='"NAME: VALUE"',
        help='A header for every request sent, e.g. -H "Authorization: Bearer sk_test_…" (repeatable).',
    ),
    apply=_header,
    replaces="headers",
)


def _upstream(value: Any, args: dict[str, Any]) -> None:
    """`--upstream URL` (or `mock=URL,…`): written into `record` as `mock=URL`."""
    if value:
        from preflight_sdk.lifecycle.mockhost.recording import with_upstream

        args["record"] = with_upstream(args.get("record"), str(value))


UPSTREAM = Extension(
    option=click.Option(
        ["--upstream"],
        metavar="URL",
        default=None,
        help="The real service a recorded mock forwards to (default: its `proxy:`); with several "
        "mocks, `mock=URL` pairs, comma-separated.",
    ),
    apply=_upstream,
)


EXTENSIONS: dict[str, tuple[Extension, ...]] = {
    # `preflight test --shard-on local,ssh://ci@builder` (and `preflight run`): the readable `--shards`.
    "run": (SHARD_ON, UPSTREAM),
    # `preflight setup --record payments --upstream URL` (and `preflight up`).
    "setup": (UPSTREAM,),
    # `preflight init --from-compose FILE`: a starter e2e.yaml whose services come from FILE.
    "init": (
        Extension(
            option=click.Option(
                ["--from-compose"],
                metavar="FILE",
                type=click.Path(exists=True, dir_okay=False),
                help="Write an e2e.yaml whose services come from this compose file (see docs/compose.md).",
            ),
            apply=_written_before,
        ),
    ),
    # `preflight mocks check payments -H "Authorization: Bearer …"`: the readable `--headers`.
    "check_mock": (HEADER,),
    # `preflight runs show ID --open` (and `preflight get-run ID --open`): the run's page in a browser.
    "get_run": (OPEN_REPORT,),
    # `preflight verify --self`: the spelling users know for `--self-check`.
    "verify": (
        Extension(
            option=click.Option(["--self", "self_"], is_flag=True, help="Same as --self-check."),
            apply=_self,
        ),
    ),
}
