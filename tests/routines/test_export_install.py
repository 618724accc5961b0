"""Exported CI installs what she pinned (issue 21, part 7): every file sdd writes for a CI engine
(a routine's GitHub workflow, GitLab job and Jenkinsfile, and Copilot's setup steps) installs sdd
from `ci.install` of her confirmed `.sdd/config.yaml`, a git commit or a wheel with its hashes,
never by the bare name `sdd-git` that no registry serves; with none pinned nothing is written;
and every action a workflow uses is pinned to a full commit id.

The wheel form is installed for real by pip, from the lines the exported step carries: it
installs a wheel and its dependency given with their hashes, and refuses a dependency without
one or a wheel whose hash differs."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from sdd_git.errors import RecordError
from sdd_git.root import Root
from sdd_git.routines.export import ENGINES, export_definition
from sdd_git.routines.routine import Routine
from sdd_git.trust.pending import WaitsForHer
from tests.conftest import SddRunner
from tests.routines.test_export import (
    COMMIT,
    FULL_SHA_USES,
    GIT_PIN,
    TRIGGERS,
    _bash,
    _load,
    _routine,
    pin,
)
from tests.routines.validators import actionlint, zizmor
from tests.runner.scripted import add_role
from tests.trusthelp import confirm

COPILOT_SETUP = ".github/workflows/copilot-setup-steps.yml"
# What the old export wrote, and any install of sdd by its name alone: `pip install sdd-git`,
# `sdd-git==0.1.0`, `"sdd-git>=0.1"`.
BARE_NAME = re.compile(r"sdd[-_]git\s*(==|>=|~=|['\"]|$)", re.M)


def _wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A real (tiny) wheel named `name`, with its RECORD: what pip installs."""
    dist = name.replace("-", "_")
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{dist}_standin.py": "X = 1\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    folder.mkdir(parents=True, exist_ok=True)
    record = []
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
            digest = hashlib.sha256(text.encode()).digest()
            encoded = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            record.append(f"{member},sha256={encoded},{len(text.encode())}")
        record.append(f"{info}/RECORD,,")
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _wheel_pin(root: Root, *, dependency_hashed: bool = True) -> dict[str, str]:
    """sdd as a wheel in the repository (dist/), its dependency beside it, and the requirements
    file that lists the dependency (with its hash, or without)."""
    dist = root.path / "dist"
    sdd = _wheel(dist, "sdd-git", "0.1.0", ("sdd-dep-standin==1.0",))
    dep = _wheel(dist, "sdd-dep-standin", "1.0")
    line = "./dist/sdd_dep_standin-1.0-py3-none-any.whl"
    if dependency_hashed:
        line += f" \\\n    --hash=sha256:{_sha(dep)}"
    (root.path / "ci").mkdir(exist_ok=True)
    (root.path / "ci" / "sdd-requirements.txt").write_text(f"# for CI\n{line}\n")
    install = {
        "wheel": f"dist/{sdd.name}",
        "sha256": _sha(sdd),
        "requirements": "ci/sdd-requirements.txt",
    }
    pin(root, install)
    return install


@pytest.fixture
def builder(root: Root) -> Root:
    add_role(root, "builder")
    return root


def _all(root: Root) -> dict[str, Routine]:
    return {name: _routine(root, name, trigger) for name, trigger in TRIGGERS.items()}


def _every_file(root: Root) -> dict[str, str]:
    """Every file sdd writes for a CI engine, by a name: each routine on each engine, and
    Copilot's setup steps."""
    from sdd_git.hoststubs import install

    files = {
        f"{name}.{engine}": export_definition(root, routine, engine)
        for name, routine in _all(root).items()
        for engine in ENGINES
    }
    install(root, "copilot")
    files["copilot"] = (root.path / COPILOT_SETUP).read_text()
    return files


def _install_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "pip install" in line]


# --- the two forms, as configured ---------------------------------------------------------------


def test_no_exported_file_installs_sdd_by_a_bare_name(builder: Root) -> None:
    pin(builder)
    for where, text in _every_file(builder).items():
        assert BARE_NAME.search(text) is None, where
        lines = _install_lines(text)
        assert lines, where
        assert all(f"'sdd-git @ {GIT_PIN}'" in line for line in lines), (where, lines)


def test_the_pinned_git_commit_is_installed_by_every_engine_and_the_copilot_steps(
    builder: Root,
) -> None:
    pin(builder)
    files = _every_file(builder)
    step = next(
        s for s in yaml.safe_load(files["copilot"])["jobs"]["copilot-setup-steps"]["steps"]
        if s.get("name") == "Install sdd"
    )  # fmt: skip
    assert step["run"] == f"python -m pip install 'sdd-git @ {GIT_PIN}'\nsdd --version\n"
    job = _load(files["merged.gitlab-ci"])["sdd-routine-merged"]
    assert job["script"][0] == f"python -m pip install 'sdd-git @ {GIT_PIN}'"
    assert f"\"$venv/bin/python\" -m pip install 'sdd-git @ {GIT_PIN}'" in files["merged.jenkins"]
    for engine in ENGINES:  # and the header says where it comes from
        assert f"installs sdd from {GIT_PIN} (ci.install" in files[f"nightly.{engine}"]


def test_the_hashed_wheel_is_installed_with_require_hashes_as_configured(builder: Root) -> None:
    install = _wheel_pin(builder)
    wheel_line = f"echo './{install['wheel']} --hash=sha256:{install['sha256']}' > "
    pip_line = (
        "-m pip install --require-hashes -r \"$sdd_requirement\" -r 'ci/sdd-requirements.txt'"
    )
    for where, text in _every_file(builder).items():
        assert BARE_NAME.search(text) is None, where
        assert wheel_line in text, where
        assert pip_line in text, where
        assert "sdd_requirement=$(mktemp)" in text, where
    # Copilot's steps read her requirements file, so they check the repository out first.
    steps = yaml.safe_load((builder.path / COPILOT_SETUP).read_text())["jobs"][
        "copilot-setup-steps"
    ]["steps"]
    assert [s["name"] for s in steps] == [
        "Check out the repository",
        "Set up Python",
        "Install sdd",
    ]
    assert steps[0]["with"] == {"persist-credentials": False}


def test_a_wheel_at_an_https_url_is_named_sdd_git_with_its_hash(builder: Root) -> None:
    _wheel_pin(builder)
    url = "https://files.example.com/sdd/sdd_git-0.1.0-py3-none-any.whl"
    pin(builder, {"wheel": url, "sha256": "ab" * 32, "requirements": "ci/sdd-requirements.txt"})
    text = export_definition(builder, _routine(builder, "merged", "on: pr-merged"), "jenkins")
    assert f"echo 'sdd-git @ {url} --hash=sha256:{'ab' * 32}' > \"$sdd_requirement\"" in text


# --- none, unconfirmed, or of another shape: nothing is written -----------------------------------


def test_with_no_install_source_export_exits_1_writes_nothing_and_shows_both_forms(
    sdd: SddRunner, builder: Root, tmp_path: Path
) -> None:
    _routine(builder, "merged", "on: pr-merged")
    for engine in ENGINES:
        out = tmp_path / f"out-{engine}.yml"
        done = sdd("routine", "export", "merged", f"--{engine}", "--out", str(out))
        assert done.code == 1, done.stderr
        assert not out.exists()
        assert "pins no source for CI to install sdd from (key ci.install is missing)" in (
            done.stderr
        )
        assert "hint: pin the sdd that CI installs" in done.stderr
        assert "ci: {install: git+https://github.com/OWNER/sdd.git@COMMIT}" in done.stderr
        assert "ci: {install: {wheel: " in done.stderr and "sha256: HEX" in done.stderr
        printed = sdd("routine", "export", "merged", f"--{engine}")
        assert printed.code == 1 and printed.stdout == ""


def test_with_no_install_source_copilot_setup_steps_are_not_written(
    sdd: SddRunner, root: Root
) -> None:
    done = sdd("agents", "install", "copilot")
    assert done.code == 1, done.stderr
    assert "key ci.install is missing" in done.stderr
    assert not (root.path / COPILOT_SETUP).exists()
    assert not (root.path / "AGENTS.md").exists()  # all of the host's files, or none


def test_an_install_source_she_has_not_confirmed_is_not_used(
    sdd: SddRunner, builder: Root, tmp_path: Path
) -> None:
    # A pull request changes where CI installs sdd from: nothing counts until she accepts it.
    pin(builder)
    routine = _routine(builder, "merged", "on: pr-merged")
    data = yaml.safe_load(builder.config.read_text())
    data["ci"]["install"] = "git+https://github.com/attacker/sdd.git@" + "e" * 40
    builder.config.write_text(yaml.safe_dump(data))
    with pytest.raises(WaitsForHer):
        export_definition(builder, routine, "github-actions")
    out = tmp_path / "wf.yml"
    done = sdd("routine", "export", "merged", "--github-actions", "--out", str(out))
    assert done.code == 3 and "sdd trust review" in done.stderr
    assert not out.exists()
    confirm(builder, ".sdd/config.yaml")  # she read it and said yes
    assert "attacker/sdd.git@" + "e" * 40 in export_definition(builder, routine, "github-actions")


@pytest.mark.parametrize(
    ("install", "said"),
    [
        ("git+https://github.com/acme/sdd.git@main", "a git URL at a full commit id"),
        ("git+https://github.com/acme/sdd.git@3f1c2a9", "a git URL at a full commit id"),
        (f"git+ssh://git@github.com/acme/sdd.git@{COMMIT}", "a git URL at a full commit id"),
        (f"git+https://me:pw@github.com/acme/sdd.git@{COMMIT}", "a git URL at a full commit id"),
        (f"git+https://github.com/acme/sdd.git@{COMMIT}; curl x|sh", "a git URL"),
        ("sdd-git==0.1.0", "a git URL at a full commit id"),
        ({"wheel": "https://x.example/sdd_git-0.1.0-py3-none-any.whl"}, "without sha256"),
        ({"wheel": "https://x.example/sdd_git-0.1.0-py3-none-any.whl", "sha256": "ab" * 32},
         "without requirements"),
        ({"wheel": "http://x.example/sdd_git-0.1.0-py3-none-any.whl", "sha256": "ab" * 32,
          "requirements": "ci/sdd-requirements.txt"}, "an https URL or a path"),
        ({"wheel": "https://x.example/evil-1.0-py3-none-any.whl", "sha256": "ab" * 32,
          "requirements": "ci/sdd-requirements.txt"}, "ending in sdd_git-VERSION"),
        ({"wheel": "https://x.example/sdd_git-0.1.0-py3-none-any.whl", "sha256": "abc",
          "requirements": "ci/sdd-requirements.txt"}, "64 hex digits"),
        ({"wheel": "https://x.example/sdd_git-0.1.0-py3-none-any.whl", "sha256": "ab" * 32,
          "requirements": "../outside.txt"}, "a path in the repository"),
        ({"url": "https://x.example/sdd_git-0.1.0-py3-none-any.whl"}, "is not one of wheel"),
    ],
)  # fmt: skip
def test_an_install_source_of_another_shape_is_refused_with_the_two_forms(
    builder: Root, install: Any, said: str
) -> None:
    _wheel_pin(builder)  # her requirements file exists: each case fails on its own fault
    pin(builder, install)
    routine = _routine(builder, "merged", "on: pr-merged")
    for engine in ENGINES:
        with pytest.raises(RecordError, match=re.escape(said)) as caught:
            export_definition(builder, routine, engine)
        assert caught.value.hint and "ci: {install: git+https://" in caught.value.hint


def test_a_wheel_in_the_repository_whose_hash_differs_is_refused(builder: Root) -> None:
    install = _wheel_pin(builder)
    pin(builder, {**install, "sha256": "0" * 64})
    with pytest.raises(RecordError, match=f"{install['wheel']} has the sha256 {install['sha256']}"):
        export_definition(builder, _routine(builder, "merged", "on: pr-merged"), "gitlab-ci")


def test_a_requirements_file_with_an_unhashed_line_or_sdd_itself_is_refused(builder: Root) -> None:
    _wheel_pin(builder, dependency_hashed=False)
    routine = _routine(builder, "merged", "on: pr-merged")
    with pytest.raises(RecordError, match=r"sdd-requirements.txt:2: .* has no --hash=sha256"):
        export_definition(builder, routine, "github-actions")
    (builder.path / "ci" / "sdd-requirements.txt").write_text(
        f"sdd-git==0.1.0 --hash=sha256:{'a' * 64}\n"
    )
    with pytest.raises(RecordError, match=r"sdd-requirements.txt:1: names sdd-git"):
        export_definition(builder, routine, "github-actions")


# --- actions pinned; the validators ------------------------------------------------------------


def _uses(text: str) -> list[str]:
    return [line.split("uses:", 1)[1].strip() for line in text.splitlines() if "uses:" in line]


@pytest.mark.parametrize("form", ["git", "wheel"])
def test_every_action_is_pinned_to_a_full_commit_id_with_its_tag_beside_it(
    builder: Root, form: str
) -> None:
    if form == "wheel":
        _wheel_pin(builder)
    else:
        pin(builder)
    files = _every_file(builder)
    github = {k: v for k, v in files.items() if k.endswith("github-actions") or k == "copilot"}
    for where, text in github.items():
        used = _uses(text)
        assert used, where
        for value in used:
            action, _, tag = value.partition(" # ")
            assert FULL_SHA_USES.match(action), (where, value)
            assert re.fullmatch(r"v\d+\.\d+\.\d+", tag), (where, value)


def test_exported_workflows_and_copilot_steps_pass_zizmor_and_actionlint(
    builder: Root, tmp_path: Path
) -> None:
    _wheel_pin(builder)
    files = _every_file(builder)
    folder = tmp_path / "workflows"
    folder.mkdir()
    written = []
    for where, text in files.items():
        if where.endswith("github-actions") or where == "copilot":
            path = folder / f"{where.replace('.', '-')}.yml"
            path.write_text(text)
            written.append(path)
    # zizmor really reads them: the unpinned action the old export used is a finding.
    unpinned = folder / "unpinned.yml"
    unpinned.write_text(
        "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n        with:\n          persist-credentials: false\n"
    )
    audited = zizmor(*written, unpinned)
    assert "unpinned-uses" in audited.stdout, audited.stdout + audited.stderr
    assert [line for line in audited.stdout.splitlines() if "-->" in line] == [
        line for line in audited.stdout.splitlines() if "-->" in line and "unpinned.yml" in line
    ], audited.stdout
    clean = zizmor(*written)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert actionlint(*written) == []


# --- the wheel form, installed by pip -----------------------------------------------------------


def _install_step(root: Root) -> str:
    routine = _routine(root, "merged", "on: pr-merged")
    job = _load(export_definition(root, routine, "github-actions"))["jobs"]["routine"]
    (step,) = [s for s in job["steps"] if s.get("name") == "Install sdd"]
    return str(step["run"])


def _pip(script: str, root: Root, target: Path, *, find_links: Path | None = None) -> Any:
    bin_dir = target.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "python").exists():
        (bin_dir / "python").symlink_to(sys.executable)
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": os.environ["HOME"],
        "PIP_TARGET": str(target),  # nothing of the test's own interpreter changes
        "PIP_NO_INDEX": "1",  # no registry: only what the files name
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_CONFIG_FILE": os.devnull,
    }
    if find_links is not None:
        env["PIP_FIND_LINKS"] = str(find_links)
    return _bash(script, env, root.path)


def test_the_exported_wheel_lines_install_it_and_its_hashed_dependency_with_pip(
    builder: Root, tmp_path: Path
) -> None:
    _wheel_pin(builder)
    target = tmp_path / "site"
    done = _pip(_install_step(builder), builder, target)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (target / "sdd_git_standin.py").is_file()
    assert (target / "sdd_dep_standin_standin.py").is_file()


def test_pip_refuses_a_dependency_without_a_hash_and_a_wheel_whose_hash_differs(
    builder: Root, tmp_path: Path
) -> None:
    install = _wheel_pin(builder)
    script = _install_step(builder)
    # Her requirements file loses the dependency's hash after the export: pip, offered the
    # dependency, refuses to install anything.
    (builder.path / "ci" / "sdd-requirements.txt").write_text("# emptied\n")
    target = tmp_path / "site"
    done = _pip(script, builder, target, find_links=builder.path / "dist")
    assert done.returncode != 0
    assert "Hashes are required in --require-hashes mode" in done.stderr
    assert not (target / "sdd_git_standin.py").exists()
    # The wheel itself is swapped for another with the same name.
    _wheel(builder.path / "dist", "sdd-git", "0.1.0", ("other==1",))
    assert _sha(builder.path / install["wheel"]) != install["sha256"]
    done = _pip(script, builder, tmp_path / "site2", find_links=builder.path / "dist")
    assert done.returncode != 0
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in done.stderr
