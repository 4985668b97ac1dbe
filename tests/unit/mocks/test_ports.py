"""Finding the holder of a port in procfs, and the bind address rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from preflight_sdk.core.errors import InputError
from preflight_sdk.mocks.listeners import check_bind_hosts, find_port_holder

HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"


def fake_proc(tmp_path: Path, tcp: str = "", tcp6: str = "", sockets: dict[int, int] | None = None) -> Path:
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "tcp").write_text(HEADER + tcp)
    (tmp_path / "net" / "tcp6").write_text(HEADER + tcp6)
    for pid, inode in (sockets or {}).items():
        fd = tmp_path / str(pid) / "fd"
        fd.mkdir(parents=True)
        os.symlink("/dev/null", fd / "0")
        os.symlink(f"socket:[{inode}]", fd / "7")
        (tmp_path / str(pid) / "cmdline").write_bytes(b"node\0server.js\0--port\x009081\0")
    return tmp_path


def line(local: str, state: str, inode: int) -> str:
    rest = f"00000000:00000000 00:00000000 00000000  1000 0 {inode} 1 0 100 0"
    return f"   0: {local} 00000000:0000 {state} {rest}\n"


def test_holder_of_an_ipv4_listener_is_found_by_inode(tmp_path: Path) -> None:
    proc = fake_proc(
        tmp_path,
        tcp=line("0100007F:1F90", "01", 111)
        + line("0100007F:2381", "0A", 4242),  # 8080 established, 9089 listen
        sockets={300: 999, 412: 4242},
    )
    holder = find_port_holder(0x2381, proc)
    assert holder is not None
    assert (holder.pid, holder.command) == (412, "node server.js --port 9081")
    assert find_port_holder(8080, proc) is None  # only an established connection uses 8080


def test_holder_of_an_ipv6_listener_and_of_a_bound_socket(tmp_path: Path) -> None:
    proc = fake_proc(
        tmp_path,
        tcp=line("0100007F:0050", "07", 77),
        tcp6=line("00000000000000000000000000000000:1F91", "0A", 88),
        sockets={10: 77, 20: 88},
    )
    assert find_port_holder(8081, proc).pid == 20  # type: ignore[union-attr]
    assert find_port_holder(80, proc).pid == 10  # type: ignore[union-attr]


def test_no_procfs_means_no_holder(tmp_path: Path) -> None:
    assert find_port_holder(8080, tmp_path / "missing") is None


def test_bind_hosts_always_start_with_loopback_and_drop_duplicates() -> None:
    assert check_bind_hosts(["172.17.0.1", "127.0.0.1", "172.17.0.1"]) == ["127.0.0.1", "172.17.0.1"]
    assert check_bind_hosts([]) == ["127.0.0.1"]
    assert check_bind_hosts(["[::1]"]) == ["127.0.0.1", "::1"]
    with pytest.raises(InputError):
        check_bind_hosts(["0.0.0.0"])
