"""`python -m preflight_sdk.mocks.serve --state STATE --session ID`: a detached mock host (see `detached`).

Reads its spec (a `DetachedSpec` as JSON) from standard input, never from a file: it may hold
secrets. Serves the spec's mocks until SIGTERM/SIGINT, or until the checkout's state file stops
naming the session it serves (the environment was cleaned, or replaced by a new setup). The
arguments name that state file and session, so the process can be told from another checkout's.
"""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path

import anyio
import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.redaction import Redactor

from .detached import DetachedSpec
from .host import MockHost

__all__ = ["main"]

logger = logging.getLogger("preflight_sdk.mocks")


class _SessionStillCurrent:
    """True while the state file names `session_id` (an unreadable file is not ours to judge)."""

    def __init__(self, state_file: str, session_id: str) -> None:
        self.state_file = Path(state_file)
        self.session_id = session_id

    def __call__(self) -> bool:
        try:
            data = msgspec.json.decode(self.state_file.read_bytes())
        except FileNotFoundError:
            return False
        except (OSError, msgspec.DecodeError):
            return True
        # Only the session matters: a run on the kept environment may rewrite its state meanwhile.
        return not isinstance(data, dict) or data.get("sessionId") == self.session_id


async def _serve(spec: DetachedSpec) -> None:
    tls = None
    if spec.tls_folder is not None:
        from .tls import TlsIdentity, hosts_of, project_ca

        tls = await anyio.to_thread.run_sync(
            lambda: TlsIdentity(project_ca(spec.tls_folder or ""), hosts_of(spec.mocks))
        )
    host = MockHost(
        spec.mocks,
        bind_hosts=spec.bind_hosts,
        still_wanted=_SessionStillCurrent(spec.state_file, spec.session_id),
        redactor=Redactor(spec.redact_names, spec.redact_values),
        admin_token=spec.admin_token,
        tls=tls,
        tls_binds=spec.tls_binds,
        tls_port=spec.tls_port,
    )
    await host.start()
    logger.warning("serving %s for session %s", ", ".join(host.names), spec.session_id)
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with anyio.create_task_group() as group:

            async def until_signal() -> None:
                async for signum in signals:
                    logger.warning("signal %s: stopping", signum)
                    group.cancel_scope.cancel()
                    return

            group.start_soon(until_signal)
            # False once the session is over: the host's own watch runs on its server thread,
            # so there is no event of this loop to wait on.
            while host.running():  # noqa: ASYNC110
                await anyio.sleep(0.5)
            group.cancel_scope.cancel()
    await host.stop()


_MAX_SPEC_BYTES = 64 * 1024 * 1024


def main(argv: list[str] | None = None) -> int:
    """Serve the spec read from standard input; return the exit status."""
    args = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    if len(args) != 4 or args[0] != "--state" or args[2] != "--session":
        sys.stderr.write(
            "usage: python -m preflight_sdk.mocks.serve --state STATE --session ID < SPEC.json\n"
        )
        return 2
    spec = decoding.decode(sys.stdin.buffer.read(_MAX_SPEC_BYTES), DetachedSpec)
    if spec.state_file != args[1] or spec.session_id != args[3]:
        sys.stderr.write("the spec names another state file or session than the arguments\n")
        return 2
    anyio.run(_serve, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
