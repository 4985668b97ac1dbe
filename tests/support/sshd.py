"""An OpenSSH server in front of the second Docker daemon, so a project can reach it at `ssh://`.

Debian's `sshd` runs by pid from a temporary directory (fresh host and client keys, its own
config, log and pid file) on `<address>:<free port>` only. Its sessions get
`DOCKER_HOST=<second daemon's socket>` (`SetEnv`, OpenSSH >= 8.7), so the `docker system
dial-stdio` the docker CLI runs over ssh talks to the second daemon, as on another machine.
The client side never touches ~/.ssh: `client_bin` holds an `ssh` wrapper to put first in PATH
that runs `/usr/bin/ssh -F <temporary client config>`.
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
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SSHD", "SshServer", "keygen", "ssh_client_bin", "start_sshd"]

SSHD = "/usr/sbin/sshd"
_START_WAIT = 15.0


@dataclass
class SshServer:
    """A running sshd: where it listens, and the client files that reach it."""

    root: Path
    pid: int
    address: str
    port: int
    process: subprocess.Popen[bytes]

    def host(self, user: str = "root") -> str:
        """The Docker host URL of the engine behind this server."""
        return f"ssh://{user}@{self.address}:{self.port}"

    @property
    def client_bin(self) -> Path:
        """A directory whose `ssh` uses the temporary client config (multiplexed connections)."""
        return self.root / "bin"

    def log(self) -> str:
        return (self.root / "sshd.log").read_text(errors="replace")

    def stop(self) -> None:
        """Close the client's master connections, stop sshd, remove every file."""
        subprocess.run(
            ["/usr/bin/ssh", "-F", str(self.root / "ssh_config"), "-O", "exit", "-p", str(self.port),
             f"root@{self.address}"],
            capture_output=True, check=False, timeout=10,
        )  # fmt: skip
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self.process.wait(timeout=5)
        shutil.rmtree(self.root, ignore_errors=True)


def _free_port(address: str) -> int:
    with socket.socket() as listener:
        listener.bind((address, 0))
        return int(listener.getsockname()[1])


def keygen(path: Path) -> Path:
    """A new passphrase-less ed25519 key at `path` (and `path`.pub)."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], capture_output=True, check=True
    )
    return path


def ssh_client_bin(directory: Path, identity: Path, *, multiplex: bool = True) -> Path:
    """A directory (under `directory`) whose `ssh` logs in with `identity` only, never reading ~/.ssh.

    Docker opens one ssh connection per CLI call: with `multiplex`, a master connection kept for a
    minute makes every later call a new channel on it, with no key exchange (the project test
    takes 8-10 s with it, 14 s without).
    """
    config = directory / "ssh_config"
    config.write_text(
        "Host *\n"
        f"IdentityFile {identity}\n"
        "IdentitiesOnly yes\n"
        f"UserKnownHostsFile {directory}/known_hosts\n"
        "StrictHostKeyChecking accept-new\n"
        "BatchMode yes\n"
        "ConnectTimeout 10\n"
        "LogLevel ERROR\n"
        + (f"ControlMaster auto\nControlPath {directory}/cm-%C\nControlPersist 60\n" if multiplex else "")
    )
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "ssh"
    wrapper.write_text(f'#!/bin/sh\nexec /usr/bin/ssh -F "{config}" "$@"\n')
    wrapper.chmod(0o755)
    return bin_dir


def start_sshd(address: str, docker_host: str) -> SshServer:
    """Start sshd on `address` with sessions talking to `docker_host` (RuntimeError if it fails)."""
    if not Path(SSHD).exists():
        raise RuntimeError(f"{SSHD} is missing (scripts/ensure-sshd installs Debian's openssh-server)")
    # sshd's privilege-separation directory, which the package's service would create at boot.
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="pf-sshd-", dir="/tmp"))
    root.chmod(0o700)
    keygen(root / "host_key")
    keygen(root / "client_key")
    shutil.copy(root / "client_key.pub", root / "authorized_keys")
    port = _free_port(address)
    (root / "sshd_config").write_text(
        f"ListenAddress {address}:{port}\n"
        f"HostKey {root}/host_key\n"
        f"PidFile {root}/sshd.pid\n"
        f"AuthorizedKeysFile {root}/authorized_keys\n"
        "PermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "UsePAM no\n"
        "StrictModes no\n"
        f"SetEnv DOCKER_HOST={docker_host}\n"
    )
    ssh_client_bin(root, root / "client_key")
    process = subprocess.Popen(
        [SSHD, "-D", "-f", str(root / "sshd_config"), "-E", str(root / "sshd.log")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    server = SshServer(root, process.pid, address, port, process)
    try:
        _wait_until_listening(server)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_until_listening(server: SshServer) -> None:
    deadline = time.monotonic() + _START_WAIT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"sshd exited at start ({server.process.returncode}):\n{server.log()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection((server.address, server.port), timeout=1):
            return
        time.sleep(0.1)
    raise RuntimeError(f"sshd did not listen on {server.address}:{server.port} within {_START_WAIT:.0f}s")
