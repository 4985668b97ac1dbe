"""`preflight`: the command line, generated from the same registry as the MCP tools.

Every operation is a command (underscores become dashes: `preflight run-suite smoke`). A few
commands compose operations for people at a terminal: `preflight run` builds, starts, tests and
cleans up, `preflight up` keeps the environment running until Ctrl-C, `preflight init` writes a
starter project; the plain `run` operation stays available as `preflight test`.

Global options (`-C/--project`, `--config`, `--json`) are accepted before or after the command.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Awaitable, Callable, Iterator, MutableMapping, Sequence
from functools import partial
from typing import Any

import anyio
import click
import msgspec

from preflight_sdk._version import __version__
from preflight_sdk.core.errors import InputError, PreflightError
from preflight_sdk.core.hints import word
from preflight_sdk.faces.mcp.pool import ProjectFactory, default_factory
from preflight_sdk.faces.reflection.examples import PROJECT_PATH, shown_arguments
from preflight_sdk.faces.reflection.outcome import error_envelope, unwrap
from preflight_sdk.faces.reflection.registry import Operation, Registry, reflect

from .extensions import EXTENSIONS
from .followups import FOLLOW_UPS, interactive
from .output import EXIT_USAGE, Output, internal_error
from .params import Extension, click_params, collect_arguments, hide_replaced
from .words import CLI

__all__ = [
    "ALIASES",
    "RENAMED",
    "Settings",
    "build_cli",
    "command_name",
    "defer",
    "execute",
    "follow_to_the_end",
    "global_options",
    "main",
    "operation_command",
    "run_cli",
]

# An operation whose name a composed command takes, and its command (`preflight run` builds, sets up,
# runs and cleans; the plain operation is `preflight test`). Every other operation's command is its
# MCP tool name without `preflight_`, underscores as dashes.
RENAMED = {"run": "test", "import_file": "import"}
# Shorter names a command also answers to (not listed in `--help`, so each command shows once).
ALIASES = {"architecture": "read-architecture", "import-file": "import"}

SECTIONS = (
    ("Everyday", ("run", "up", "test", "run-suite", "watch", "status", "logs", "clean", "init")),
    ("Environment", ("build", "setup", "mocks", "mock-requests", "check-mock", "schema")),
    ("Runs", ("runs",)),
    ("Contracts", ("check-response", "generate")),
    ("Saved tests", (
        "save-test", "run-test", "get-test", "list-tests", "delete-test", "get-latest-run",
        "save-suite", "list-suites", "delete-suite", "export-tests", "import-tests",
    )),
    ("Import", ("import",)),
    ("MCP", ("verify", "mcp")),
    ("Decisions", ("clarify", "read-architecture")),
)  # fmt: skip
"""The sections of `preflight --help`, in order; a command in none is listed under "Other"."""

SHOWN_UNDER_RUNS = (
    "list-runs",
    "get-run",
    "diff-runs",
    "resume-run",
    "cancel-run",
    "get-artifact",
    "prune-runs",
)
"""Commands `preflight runs` also serves (`runs show` is `get-run`): left out of `--help`, so each
appears once; they still run under their own names."""

SHOWN_UNDER_GENERATE = ("generate-cases",)
"""`preflight generate cases` is `generate-cases`, listed once (under `generate`)."""

Work = Callable[[Any, Output], Awaitable[Any]]


def command_name(op: Operation) -> str:
    """The CLI command of an operation: `run_suite` → `run-suite`, `run` → `test`."""
    return RENAMED.get(op.name, op.name.replace("_", "-"))


class Settings:
    """The global options of one invocation, and how to open its project."""

    def __init__(self, factory: ProjectFactory) -> None:
        self.factory = factory
        self.project = "."
        self.project_given = False
        self.config: str | None = None
        self.json = False
        self.engine_host: str | None = None
        self.context: str | None = None

    def open(self) -> Any:
        """Open the project the options name (no I/O)."""
        if self.engine_host or self.context:
            return self.factory(self.project, self.config, engine_host=self.engine_host, context=self.context)
        return self.factory(self.project, self.config)


def _set(field: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value is None or value is False:
            return
        settings = ctx.find_object(Settings)
        if settings is not None:
            setattr(settings, field, value)
            if field == "project":
                settings.project_given = True

    return callback


def global_options() -> list[click.Parameter]:
    """`-C/--project`, `--config`, `--engine-host`, `--context` and `--json`, for the group and every command."""
    return [
        _setting(
            ["-C", "--project"],
            "Project directory holding e2e.yaml (or the file itself). Default: `.`.",
            type=click.Path(file_okay=True, dir_okay=True),
        ),
        _setting(["--config"], "Config file to use instead of e2e.yaml / e2e.yml, relative to the project."),
        _setting(
            ["--engine-host"],
            "Docker engine to run on (`ssh://user@host`, `tcp://host:2375`); default: e2e.yaml, DOCKER_HOST.",
            metavar="URL",
        ),
        _setting(
            ["--context"],
            "Docker context to run on; default: e2e.yaml's `engine:`, DOCKER_CONTEXT.",
            metavar="NAME",
        ),
        _setting(
            ["--json"],
            "Print only the result envelope as JSON on stdout (no progress).",
            is_flag=True,
            default=False,
        ),
    ]


def _setting(decls: list[str], help_text: str, **kwargs: Any) -> click.Option:
    """An option that sets the `Settings` field its long name says (`--engine-host`: engine_host)."""
    field = decls[-1].removeprefix("--").replace("-", "_")
    kwargs.setdefault("default", None)
    return click.Option(decls, expose_value=False, callback=_set(field), help=help_text, **kwargs)


def execute(ctx: click.Context, work: Work) -> None:
    """Run `work(project, output)` on a fresh event loop; print its outcome; exit with its code."""
    settings = ctx.find_object(Settings)
    assert settings is not None
    ctx.exit(run_work(settings, work))


def run_work(settings: Settings, work: Work) -> int:
    """Run `work` and print its outcome; return the exit code."""
    out = Output(json=settings.json)
    try:
        result = anyio.run(work, settings.open(), out)
    except (Exception, KeyboardInterrupt, BaseExceptionGroup) as exc:
        error = unwrap(exc)
        if isinstance(error, KeyboardInterrupt):
            return out.cancelled()
        if isinstance(error, PreflightError):
            return out.error(error)
        if isinstance(error, Exception):
            return out.error(internal_error(error))
        raise
    return out.result(result)


def _still_running(result: Any) -> bool:
    return getattr(result, "status", None) in ("queued", "running") and bool(getattr(result, "run_id", None))


async def follow_to_the_end(project: Any, result: Any, kwargs: dict[str, Any], out: Output) -> Any:
    """Return the finished run when `result` is a run that `--wait` left running, else `result`.

    At a terminal, `--wait` bounds the wait for the verdict, not the run: the run lives in this
    process, so it is followed here to its end (the verdict is printed then), after a note with
    its id and the command that follows it from elsewhere.
    """
    if kwargs.get("wait") is None or not _still_running(result):
        return result
    run_id, wait = result.run_id, kwargs["wait"]
    out.note(
        f"run {run_id} is still {result.status} after {wait}: following it here to its end (Ctrl-C "
        f"cancels it); from another terminal: preflight runs show {run_id} --wait 10m"
    )
    while _still_running(result):
        result = await project.get_run(run_id, wait="1h")
    return result


def command_help(
    op: Operation,
    params: list[click.Parameter],
    words: list[str] | None = None,
    *,
    description: str | None = None,
) -> str:
    """The command's help: summary and body rewrapped by Click, example and tips kept as written.

    `words` is how the command is invoked (default `preflight <command>`), for the example;
    `description` replaces the operation's summary and body (a composed command says what it adds).
    """
    parts = [description] if description is not None else [op.doc.summary, op.doc.description]
    tips = word(op.doc.tips, CLI) if op.doc.tips else op.doc.tips
    for title, text in (("Example", cli_example(op, params, words)), ("Tips", tips)):
        if text:
            indented = "\n".join(f"  {line}" if line else "" for line in text.splitlines())
            parts.append(f"\b\n{title}:\n{indented}")  # \b: Click leaves the paragraph as it is
    return "\n\n".join(part for part in parts if part)


def operation_command(op: Operation, extensions: tuple[Extension, ...]) -> click.Command:
    def callback(**values: Any) -> None:
        ctx = click.get_current_context()
        settings = ctx.find_object(Settings)
        assert settings is not None
        try:
            kwargs = collect_arguments(op, values, extensions)
        except InputError as exc:
            ctx.exit(Output(json=settings.json).error(exc))

        async def work(project: Any, out: Output) -> Any:
            method = getattr(project, op.name)
            result = await (method(**kwargs, progress=out.sink()) if op.progress else method(**kwargs))
            result = await follow_to_the_end(project, result, kwargs, out)
            follow_up = FOLLOW_UPS.get(op.name)
            if (
                follow_up is not None
                and not settings.json
                and kwargs.get("answers") is None
                and interactive()
            ):
                result = await follow_up(project, result, kwargs)
            for extension in extensions:
                if extension.after is not None:
                    await extension.after(values.get(extension.option.name), project, result, out)
            return result

        execute(ctx, work)

    params: list[click.Parameter] = [*click_params(op), *(extension.option for extension in extensions)]
    hide_replaced(params, extensions)
    taken = {name for param in params for name in param.opts}
    # A command's own option wins (clarify's `--context` is its background text); the global one
    # is still accepted before the command name.
    params += [option for option in global_options() if not taken.intersection(option.opts)]
    return click.Command(
        command_name(op),
        callback=callback,
        params=params,
        help=command_help(op, params),
        short_help=op.doc.summary or op.title,
    )


def cli_example(op: Operation, params: list[click.Parameter], invoked: list[str] | None = None) -> str | None:
    """The docstring's example (a Python call) as the command line that does the same."""
    arguments = shown_arguments(op)
    if arguments is None:
        return None
    by_name = {p.name: p for p in params}
    words = list(invoked or ["preflight", command_name(op)])
    for name, value in arguments.items():
        param = by_name.get("project" if name == PROJECT_PATH else name)
        if isinstance(param, click.Argument):
            words.append(str(value))
        elif isinstance(param, click.Option) and param.is_flag:
            off = param.secondary_opts[0] if param.secondary_opts else None
            words.extend([param.opts[-1]] if value else [off] if off else [])
        elif isinstance(param, click.Option):
            shown = json.dumps(value) if isinstance(value, (dict, list)) else str(value)
            words.extend([param.opts[-1] if name != PROJECT_PATH else "-C", shown])
    return shlex.join(words)


class _Group(click.Group):
    """The `preflight` group: each invocation gets fresh `Settings`."""

    factory: ProjectFactory = staticmethod(default_factory)

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        extra.setdefault("obj", Settings(self.factory))
        return super().make_context(info_name, args, parent, **extra)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List each command once, under the section of what it is for (see `SECTIONS`)."""
        shown = {
            name: command
            for name in self.list_commands(ctx)
            if (command := self.get_command(ctx, name)) is not None and not command.hidden
        }
        limit = formatter.width - 6 - max((len(name) for name in shown), default=0)
        placed: set[str] = set()
        for title, names in SECTIONS:
            rows = [(n, shown[n].get_short_help_str(limit)) for n in names if n in shown]
            placed.update(n for n, _ in rows)
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        rest = [(n, c.get_short_help_str(limit)) for n, c in shown.items() if n not in placed]
        if rest:
            with formatter.section("Other commands"):
                formatter.write_dl(rest)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in ALIASES:
            return super().get_command(ctx, ALIASES[cmd_name])
        return found


def build_cli(registry: Registry | None = None, factory: ProjectFactory = default_factory) -> click.Group:
    """Return the `preflight` command group for `registry` (default: the operations of `Project`)."""
    from . import composed as cli_composed

    reg = registry if registry is not None else reflect()

    @click.group(
        name="preflight",
        cls=_Group,
        params=global_options(),
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    @click.version_option(__version__, "--version", "-V", prog_name="preflight")
    def group() -> None:
        """Stand up a project's real test environment, run its end-to-end suites, see why they fail."""

    assert isinstance(group, _Group)
    group.factory = factory
    commands = group.commands = _Commands()
    for op in reg:
        defer(group, command_name(op), partial(operation_command, op, EXTENSIONS.get(op.name, ())))
    cli_composed.add_composed(group, reg)
    folded = [
        *(SHOWN_UNDER_RUNS if "runs" in commands else ()),
        *(SHOWN_UNDER_GENERATE if "generate" in commands else ()),
    ]
    # Listed once, under its group; each still runs under its own name.
    commands.hidden.update(name for name in folded if name in commands)
    return group


def defer(group: click.Group, name: str, build: Callable[[], click.Command]) -> None:
    """Add the command `build()` makes to `group` under `name`, built only when it is asked for."""
    commands = group.commands
    assert isinstance(commands, _Commands)
    commands.defer(name, build)


class _Commands(MutableMapping[str, click.Command]):
    """A group's commands by name, each built the first time it is asked for.

    `preflight status` builds its one command, not the table of fifty (their options, help and
    examples come from reflecting each operation); `--help` and the docs ask for every one.
    """

    def __init__(self) -> None:
        self._built: dict[str, click.Command] = {}
        self._pending: dict[str, Callable[[], click.Command]] = {}
        self.hidden: set[str] = set()
        """Names that run but are left out of `--help` (listed under a group instead)."""

    def defer(self, name: str, build: Callable[[], click.Command]) -> None:
        self._built.pop(name, None)
        self._pending[name] = build

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._built:
            self._built[name] = self._pending.pop(name)()
        command = self._built[name]
        if name in self.hidden:
            command.hidden = True
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._pending.pop(name, None)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        if self._pending.pop(name, None) is None:
            del self._built[name]

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in self._pending

    def __iter__(self) -> Iterator[str]:
        return iter([*self._built, *self._pending])

    def __len__(self) -> int:
        return len(self._built) + len(self._pending)


def run_cli(argv: Sequence[str] | None = None, *, registry: Registry | None = None) -> int:
    """Run the CLI; return the exit code (a usage error with `--json` still prints an envelope)."""
    args = list(sys.argv[1:] if argv is None else argv)
    group = build_cli(registry)
    try:
        code = group.main(args=args, prog_name="preflight", standalone_mode=False)
    except click.exceptions.UsageError as exc:
        exc.show()
        if "--json" in args:
            error = InputError(
                exc.format_message(), hint="see `preflight --help` or `preflight COMMAND --help`"
            )
            click.echo(msgspec.json.encode(error_envelope(error, CLI)).decode())
        return EXIT_USAGE
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.exceptions.ClickException as exc:
        exc.show()
        return exc.exit_code
    return code if isinstance(code, int) else 0


def main() -> None:
    """Console entry point of `preflight`."""
    sys.exit(run_cli())
