"""Build inputs: the files `.dockerignore` lets Docker see, and the reasons a change is given."""

from __future__ import annotations

from pathlib import Path

from preflight_sdk.engine.base import BuildSpec
from preflight_sdk.faces.reflection.registry import reflect
from preflight_sdk.lifecycle.images.context_noise import changed_names, dockerignore_hint
from preflight_sdk.lifecycle.images.dockerignore import context_files
from preflight_sdk.lifecycle.images.inputs import build_inputs, build_reasons


def _tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def test_dockerignore_patterns_exclude_as_docker_does(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            ".dockerignore": "# comment\n*.log\n/build\n**/cache\ndocs\n!docs/keep.md\nsecret?.txt\n",
            "app.py": "",
            "x.log": "",
            "sub/y.log": "",  # `*.log` matches at the top only
            "build/out.bin": "",
            "a/b/cache/z": "",
            "docs/old.md": "",
            "docs/keep.md": "",
            "secret1.txt": "",
            "secret10.txt": "",
            "Dockerfile": "",
        },
    )
    assert context_files(root) == [
        ".dockerignore",
        "Dockerfile",
        "app.py",
        "docs/keep.md",
        "secret10.txt",
        "sub/y.log",
    ]


def test_a_change_is_named_by_what_changed(tmp_path: Path) -> None:
    root = _tree(
        tmp_path, {"Dockerfile": "FROM x\n", "app.py": "1\n", ".dockerignore": "notes\n", "notes": "a"}
    )
    spec = BuildSpec(image="i", context=str(root), dockerfile=str(root / "Dockerfile"), args={"A": "1"})
    before = build_inputs(spec)
    (root / "notes").write_text("ignored change")
    assert build_inputs(spec).digest == before.digest
    (root / "app.py").write_text("2\n")
    changed = build_inputs(spec)
    assert changed.digest != before.digest
    assert build_reasons(before, changed) == ["app.py changed"]
    (root / "Dockerfile").write_text("FROM y\n")
    assert build_reasons(changed, build_inputs(spec)) == ["Dockerfile changed"]
    other_args = BuildSpec(image="i", context=str(root), dockerfile=str(root / "Dockerfile"), args={"A": "2"})
    assert build_reasons(build_inputs(spec), build_inputs(other_args)) == ["build args changed"]


def test_preflight_s_own_folder_in_a_context_is_not_a_build_input(tmp_path: Path) -> None:
    # A context of `.` holds `.preflight/` (store, lock, records), which changes on every run.
    root = _tree(tmp_path, {"Dockerfile": "FROM x\n", "app.py": "1\n", ".preflight/preflight.db": "a"})
    spec = BuildSpec(image="i", context=str(root), dockerfile=str(root / "Dockerfile"))
    before = build_inputs(spec, root)
    assert set(before.files) == {"app.py"}
    (root / ".preflight" / "preflight.db").write_text("b")
    (root / ".preflight" / "runs").mkdir()
    (root / ".preflight" / "runs" / "r1.json").write_text("{}")
    assert build_inputs(spec, root).digest == before.digest
    sub = BuildSpec(image="i", context=str(root / ".preflight"), dockerfile=str(root / "Dockerfile"))
    assert "preflight.db" in build_inputs(sub, root).files, (
        "only the folder as seen from the root is left out"
    )


def test_a_host_virtualenv_or_e2e_yaml_in_the_context_is_counted_as_one_and_pointed_at_dockerignore(
    tmp_path: Path,
) -> None:
    files = {f".venv/lib/site-packages/pkg/m{i}.py": "1\n" for i in range(40)}
    root = _tree(
        tmp_path, {"Dockerfile": "FROM x\nCOPY . /app\n", "app.py": "1\n", "e2e.yaml": "a\n", **files}
    )
    spec = BuildSpec(image="i", context=str(root), dockerfile=str(root / "Dockerfile"))
    before = build_inputs(spec, root)
    for relative in files:
        (root / relative).write_text("2\n")
    (root / "e2e.yaml").write_text("b\n")
    (reason,) = build_reasons(before, build_inputs(spec, root))
    assert reason == (
        "40 files under .venv/, e2e.yaml changed (.venv/, e2e.yaml are in the build context: "
        "list them in its .dockerignore if the image does not need them)"
    )
    # Listed there, they are no input any more; the application's own files are named as before.
    (root / ".dockerignore").write_text(".venv\ne2e.yaml\n")
    listed = build_inputs(spec, root)
    (root / "e2e.yaml").write_text("c\n")
    (root / ".venv/lib/site-packages/pkg/m0.py").write_text("3\n")
    assert build_inputs(spec, root).digest == listed.digest
    (root / "app.py").write_text("2\n")
    assert build_reasons(listed, build_inputs(spec, root)) == ["app.py changed"]


def test_noise_deep_in_a_context_is_named_by_its_folder_and_many_entries_are_bounded() -> None:
    changed = [f"svc{i}/node_modules/x/index.js" for i in range(6)] + ["src/app.py", "src/__pycache__/a.pyc"]
    assert changed_names(changed)[:2] == [
        "1 file under svc0/node_modules/",
        "1 file under svc1/node_modules/",
    ]
    hint = dockerignore_hint(changed)
    assert (
        hint is not None
        and "svc0/node_modules/, svc1/node_modules/, svc2/node_modules/, svc3/node_modules/ and 3 more"
        in hint
    )
    assert dockerignore_hint(["src/app.py", "requirements.txt"]) is None
    assert dockerignore_hint([".venv/bin/python", "app.py"]) == (
        ".venv/ is in the build context: list it in its .dockerignore if the image does not need it"
    )


def test_watch_is_an_iterator_for_people_not_a_tool() -> None:
    names = {op.name for op in reflect()}
    assert "run" in names and "watch" not in names and "follow_logs" not in names
