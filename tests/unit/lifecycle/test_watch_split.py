"""Which changed paths start a `watch` run: those changed after the run, told by their stamps."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from preflight_sdk.lifecycle.watch import named, now, split_at


def test_a_file_changed_before_the_moment_is_the_runs_own_and_one_changed_after_is_not(
    tmp_path: Path,
) -> None:
    during = tmp_path / "touched.py"
    during.write_text("x")
    os.utime(during, (100.0, 100.0))  # mtime in the past; its ctime is now: a chmod or touch counts
    moment = now()
    later = tmp_path / "edited.py"
    later.write_text("y")
    after, before = split_at([later], moment)
    assert after == {later} and not before
    old = tmp_path / "old.py"
    old.write_text("z")
    after, before = split_at([old], now() + 60)
    assert before == {old} and not after


def test_a_deleted_file_is_dated_by_its_folder(tmp_path: Path) -> None:
    gone = tmp_path / "sub" / "scratch.txt"
    gone.parent.mkdir()
    gone.write_text("x")
    moment = now()
    gone.unlink()  # the folder changes now: after the moment
    assert split_at([gone], moment)[0] == {gone}
    assert split_at([gone], now() + 60)[1] == {gone}


def test_whole_second_stamps_compare_by_whole_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ext3 and HFS+ keep whole seconds: a change made 0.4 s after the moment is stamped before it.
    from preflight_sdk.lifecycle import watch

    monkeypatch.setattr(watch, "_stamp", lambda path: 1000.0)
    assert split_at([tmp_path / "a"], 1000.6)[0] == {tmp_path / "a"}
    monkeypatch.setattr(watch, "_stamp", lambda path: 999.0)
    assert split_at([tmp_path / "a"], 1000.6)[1] == {tmp_path / "a"}
    monkeypatch.setattr(watch, "_stamp", lambda path: 1000.5)
    assert split_at([tmp_path / "a"], 1000.6)[1] == {tmp_path / "a"}, "a fine stamp compares finely"


def test_names_are_relative_to_the_project_and_bounded(tmp_path: Path) -> None:
    paths = [tmp_path / "app" / f"m{i}.py" for i in range(5)]
    assert named(paths, str(tmp_path), most=2) == "app/m0.py, app/m1.py and 3 more"
    assert named([Path("/elsewhere/x")], str(tmp_path)) == "/elsewhere/x"
