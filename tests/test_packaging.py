"""The package list in pyproject.toml is written out by hand (templates/ is mapped into the
package); a new subpackage left off it would vanish from a wheel install."""

from __future__ import annotations

import tomllib
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
