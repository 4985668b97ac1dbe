"""Processes seen in /proc: the `preflight-mcp` serving a project, and a process's live children."""

from __future__ import annotations

from pathlib import Path


def server_pid(project: Path) -> int:
    """The pid of the preflight-mcp process serving `project` (found in /proc by its arguments)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(a.endswith(b"preflight-mcp") for a in argv) and str(project).encode() in argv:
                return int(entry.name)
    raise AssertionError(f"no preflight-mcp process serves {project}")


def children(pid: int) -> list[str]:
    """The command lines of `pid`'s live child processes."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(cmdline.strip())
    return found
