"""A second Docker daemon for tests (and benchmarks): its own socket, data, exec root and bridge.

It stands in for "another machine's engine": it has none of the main daemon's images or
containers, its containers sit on a bridge of their own, and besides its unix socket it listens
on `tcp://<this machine's address>:<port>` so a project can reach it the way it reaches a remote
engine. It is started and stopped by pid; `stop` removes its bridge and every file it made.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BASE_IMAGES", "SecondEngine", "host_address", "start_second_dockerd"]

BASE_IMAGES = ("preflight-base/busybox", "preflight-base/python")
_START_WAIT = 60.0


def host_address() -> str:
    """This machine's address on its default route (what a container on any bridge can reach)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.254", 9))  # no packet is sent: this only picks the route
        return str(probe.getsockname()[0])


def _free_port(address: str) -> int:
    with socket.socket() as listener:
        listener.bind((address, 0))
        return int(listener.getsockname()[1])


def _free_subnet() -> str:
    """A /24 in 10.231.0.0/16 that no interface of this machine uses yet."""
    used = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True, check=True).stdout
    for third in range(os.getpid() % 200, 256):
        if f"10.231.{third}." not in used:
            return f"10.231.{third}.1/24"
    raise RuntimeError("no free 10.231.x.0/24 subnet for a second Docker bridge")


@dataclass
class SecondEngine:
    """A running second dockerd: how to reach it, and what to clean when it stops."""

    root: Path
    pid: int
    bridge: str
    unix_host: str
    tcp_host: str
    address: str  # where its published ports and its view of this machine are
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def docker_env(self) -> dict[str, str]:
        """The environment for a `docker` command talking to this daemon."""
        return {**os.environ, "DOCKER_HOST": self.unix_host}

    def docker(
        self, *args: str, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run `docker ARGS` against this daemon."""
        return subprocess.run(
            ["docker", *args],
            env=self.docker_env(),
            capture_output=True,
            text=True,
            check=check,
            timeout=timeout,
        )

    def stop(self) -> None:
        """Stop the daemon (and its containers), remove its bridge and its files."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _alive(self.pid):
            time.sleep(0.1)
        if _alive(self.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
        subprocess.run(["ip", "link", "delete", self.bridge], capture_output=True, check=False)
        # Unmount what the daemon left mounted under its root before removing it.
        mounts = Path("/proc/mounts").read_text().splitlines()
        for line in reversed(mounts):
            point = line.split()[1]
            if point.startswith(str(self.root)):
                subprocess.run(["umount", "-l", point], capture_output=True, check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped) is gone for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def start_second_dockerd(*, images: tuple[str, ...] = BASE_IMAGES, tcp: bool = True) -> SecondEngine:
    """Start a second dockerd and load `images` from the main daemon into it (RuntimeError if it fails)."""
    if shutil.which("dockerd") is None:
        raise RuntimeError("dockerd is not installed (scripts/ensure-docker installs it)")
    root = Path(tempfile.mkdtemp(prefix="pf-dockerd-", dir="/tmp"))
    bridge = f"pfbr{os.getpid() % 100000}"
    subnet = _free_subnet()
    address = host_address()
    for command in (
        ["ip", "link", "add", bridge, "type", "bridge"],
        ["ip", "addr", "add", subnet, "dev", bridge],
        ["ip", "link", "set", bridge, "up"],
    ):
        subprocess.run(command, capture_output=True, text=True, check=True)
    unix_host = f"unix://{root}/docker.sock"
    tcp_host = f"tcp://{address}:{_free_port(address)}" if tcp else unix_host
    argv = [
        "dockerd",
        "--host", unix_host,
        "--data-root", str(root / "data"),
        "--exec-root", str(root / "exec"),
        "--pidfile", str(root / "docker.pid"),
        "--bridge", bridge,
        "--iptables=false",
        "--ip-masq=false",
        "--shutdown-timeout=2",  # containers left running must not hold a test up for 10 s each
    ]  # fmt: skip
    if tcp:
        # An explicit --tls=false: without it dockerd waits 15 s at start to warn about plain TCP.
        argv += ["--host", tcp_host, "--tls=false"]
    with (root / "dockerd.log").open("ab") as log:
        process = subprocess.Popen(
            argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
        )
    engine = SecondEngine(root, process.pid, bridge, unix_host, tcp_host, address, process)
    try:
        _wait_until_up(engine, process)
        if images:
            _copy_images(engine, images)
    except BaseException:
        engine.stop()
        raise
    return engine


def _wait_until_up(engine: SecondEngine, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_WAIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = (engine.root / "dockerd.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the second dockerd exited at start ({process.returncode}):\n{tail}")
        if engine.docker("info", check=False, timeout=10).returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError(f"the second dockerd did not answer within {_START_WAIT:.0f}s")


def _copy_images(engine: SecondEngine, images: tuple[str, ...]) -> None:
    """`docker save` from the main daemon piped into `docker load` on the second one."""
    save = subprocess.Popen(["docker", "save", *images], stdout=subprocess.PIPE)
    load = subprocess.run(
        ["docker", "load", "-q"], stdin=save.stdout, env=engine.docker_env(), capture_output=True, text=True
    )
    if save.stdout is not None:
        save.stdout.close()
    if save.wait() != 0 or load.returncode != 0:
        raise RuntimeError(f"could not copy {', '.join(images)} to the second dockerd: {load.stderr.strip()}")
