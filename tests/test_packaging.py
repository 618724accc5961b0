"""The package list in pyproject.toml is written out by hand (templates/ is mapped into the
package); a new subpackage left off it would vanish from a wheel install. And the wheel and the
sdist themselves, built and opened."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_for_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "sdd_git").rglob("__init__.py")
    }
    assert found <= listed, f"add to pyproject.toml packages: {sorted(found - listed)}"
    assert config["package-dir"]["sdd_git.templates"] == "templates"


def test_the_shipped_data_files_match_the_package_data_patterns() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]
    assert "demo_scripts/*.yaml" in data["sdd_git"]
    assert list((ROOT / "sdd_git" / "demo_scripts").glob("*.yaml"))
    assert "*/ROLE.md" in data["sdd_git.templates"]
    assert len(list((ROOT / "templates").glob("*/ROLE.md"))) >= 6


def _repo_files(folder: Path) -> set[str]:
    """The files under `folder`, relative to it, without Python's byte-code caches."""
    return {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def test_the_wheel_and_the_sdist_are_whole_and_pass_twine_check(tmp_path: Path) -> None:
    """Built as a release is built (`python -m build`, isolated), then read as an installer
    and PyPI read them: every asset a wheel install needs is inside, by the repository's own
    files rather than a count, and the sdist carries what a packager tests from."""
    out = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")

    with zipfile.ZipFile(wheel) as archive:
        entries = {info.filename: info for info in archive.infolist()}
        metadata = archive.read(next(n for n in entries if n.endswith(".dist-info/METADATA")))
    names = set(entries)
    groups = {  # folder in the repository -> where the wheel must hold each of its files
        ROOT / "sdd_git": "sdd_git/",  # every module, py.typed, demo scripts, the page's assets
        ROOT / "templates": "sdd_git/templates/",
        ROOT / "hooks": "sdd_git/hooks/",
    }
    for folder, prefix in groups.items():
        want = {prefix + name for name in _repo_files(folder)}
        assert want <= names, f"missing from the wheel: {sorted(want - names)}"
    # Each group by name as well: a folder the walk above could miss by being empty is caught.
    for group in ("sdd_git/py.typed", "sdd_git/demo_scripts/", "sdd_git/page/templates/",
                  "sdd_git/page/static/", "sdd_git/templates/builder/ROLE.md",
                  "sdd_git/hooks/post-merge"):  # fmt: skip
        assert any(name.startswith(group) for name in names), group
    # The hooks are copied into .git/hooks from the installed package: they must stay runnable.
    for name in _repo_files(ROOT / "hooks"):
        mode = entries[f"sdd_git/hooks/{name}"].external_attr >> 16
        assert mode & 0o111, f"sdd_git/hooks/{name} lost its executable bit in the wheel"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "docs/")) for n in names)

    fields = metadata.decode()
    for line in (
        "License-Expression: MIT",
        "Requires-Python: >=3.11",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Operating System :: MacOS",
        "Classifier: Programming Language :: Python :: 3 :: Only",
        "Project-URL: Source, ",
        "Project-URL: Issues, ",
        "Project-URL: Documentation, ",
        "Project-URL: Homepage, ",
    ):
        assert line in fields, line

    with tarfile.open(sdist) as archive:
        top = f"{sdist.name.removesuffix('.tar.gz')}/"
        held = {m.name.removeprefix(top) for m in archive.getmembers() if m.isfile()}
    tests = {f"tests/{name}" for name in _repo_files(ROOT / "tests")}
    assert tests <= held, f"missing from the sdist: {sorted(tests - held)[:10]}"
    assert {"README.md", "LICENSE", "pyproject.toml"} <= held

    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
