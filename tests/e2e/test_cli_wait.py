"""`preflight run --wait` at a terminal: the wait bounds how long the verdict is waited for, not
the run, which lives in the command's process; past it the command names the run and the command
that follows it, then follows it to its end and prints the verdict."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

PREFLIGHT = str(Path(sys.executable).parent / "preflight")


def test_run_past_its_wait_names_the_run_and_prints_the_verdict_at_its_end(tmp_path: Path) -> None:
    (tmp_path / "slow.sh").write_text("sleep 3\necho done\n")
    (tmp_path / "e2e.yaml").write_text(
        textwrap.dedent(
            """\
            project: {name: waiting}
            tests:
              suites:
                - {id: slow, runner: shell, file: slow.sh, expect: {exitCode: 0, stdout: done}}
            """
        )
    )

    done = subprocess.run(
        [PREFLIGHT, "-C", str(tmp_path), "run", "--wait", "1s"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    note = re.search(r"run (\w{26}) is still running after 1s", done.stderr)
    assert note is not None, done.stderr
    assert f"preflight runs show {note.group(1)} --wait 10m" in done.stderr
    assert done.stdout.startswith("✓ PASSED · 1 suite, 1 case: 1 passed")
    assert "RUNNING" not in done.stdout
    # The report's duration is the run's; the command says what it took in all.
    took = re.search(r"preflight run took (\d+\.\d) s in all", done.stderr)
    assert took is not None and float(took.group(1)) >= 3.0
