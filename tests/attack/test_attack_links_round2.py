"""Attack round 2 on issue 21 part 1 and 2 (CONTRACT §6): no link, no special file, nothing
outside; YAML from the repo bounded and capped.

Attackers: the author of a merged pull request (every tracked file, force-added ones under
`.sdd/local` too, links anywhere) and another local user (a world-writable folder like /tmp).
Each test asserts the SAFE behaviour, so it fails while its route still gets through. Real
parts only: real git repositories with real merges, real symlinks, real FIFOs, real child
processes with a timeout (a route that hangs sdd must never hang the suite)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner, commit_all, git
from tests.runner.scripted import add_role

pytestmark = pytest.mark.attack

STRANGER = {
    "GIT_AUTHOR_NAME": "Stranger", "GIT_AUTHOR_EMAIL": "stranger@example.invalid",
    "GIT_COMMITTER_NAME": "Stranger", "GIT_COMMITTER_EMAIL": "stranger@example.invalid",
}  # fmt: skip
SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nher-private-key-7c1d0e\n"
SECRET_MARK = "her-private-key-7c1d0e"
HANG_SECONDS = 20


def _merge_from_stranger(folder: Path, make: Callable[[Path], list[str]]) -> None:
    """A branch with the stranger's commit (what `make` puts there, force-added), merged into
    her main for real."""
    main = git(folder, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(folder, "checkout", "-q", "-b", "outside")
    paths = make(folder)
    git(folder, "add", "-f", *paths)
    subprocess.run(["git", "commit", "-q", "-m", "a helpful contribution"], cwd=folder,
                   env={**os.environ, **STRANGER}, check=True)  # fmt: skip
    git(folder, "checkout", "-q", main)
    git(folder, "merge", "-q", "--no-ff", "-m", "merge", "outside")


def _her_secret(tmp_path: Path) -> Path:
    """Her private key, outside the product (a file of her home)."""
    ssh = Path(os.environ["HOME"]) / ".ssh"
    ssh.mkdir(exist_ok=True, mode=0o700)
    key = ssh / "id_ed25519"
    key.write_text(SECRET)
    key.chmod(0o600)
    return key


def _limited() -> None:
    # A route that reads /dev/zero or expands an alias bomb must not take the machine with it.
    resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024, 1536 * 1024 * 1024))


def _sdd_child(root: Root, *args: str) -> subprocess.CompletedProcess[str] | None:
    """`python -m sdd_git ARGS` as a real child; None when it was still running after
    HANG_SECONDS (it is killed then)."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "sdd_git", *args], cwd=root.path, capture_output=True,
            text=True, timeout=HANG_SECONDS, stdin=subprocess.DEVNULL, preexec_fn=_limited,
            check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None


def _files_holding(folder: Path, mark: str) -> list[str]:
    """Regular files (no link followed) in the working tree, outside .git, holding `mark`."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            if mark in path.read_text(errors="replace"):
                found.append(str(path.relative_to(folder)))
    return found


def _her_repo(root: Root) -> None:
    add_role(root, "builder")  # her role, confirmed before the stranger's pull request
    commit_all(root.path, "hers")


# =============================================================================================
# Locks: a merged link at a lock's name (attacker: the PR author, with another local user's
# FIFO in a world-writable folder, or no helper at all with /dev/zero)


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
@pytest.mark.parametrize(
    ("lock", "command"),
    [
        ("record.lock", ("change", "new", "Let people export their expenses")),
        ("watch.lock", ("watch", "--status")),
    ],
)
def test_route_a_merged_lock_link_never_hangs_or_exhausts_her_command(
    root: Root, tmp_path: Path, target: str, lock: str, command: tuple[str, ...]
) -> None:
    """`.sdd/local/record.lock -> /tmp/x/fifo` (or `-> /dev/zero`), force-added in a merged
    pull request: the lock's O_CREAT|O_EXCL fails on the link, and the holder is then read
    with `Path.read_text`, which follows the link. sdd must refuse the link at once, never
    block on a FIFO or read an endless file."""
    _her_repo(root)
    if target == "fifo":
        shared = tmp_path / "shared"
        shared.mkdir()
        shared.chmod(0o1777)  # /tmp-like: another local user made the FIFO there
        os.mkfifo(shared / "fifo")
        pointed = str(shared / "fifo")
    else:
        pointed = target

    def make(folder: Path) -> list[str]:
        link = folder / ".sdd" / "local" / lock
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(pointed)
        return [f".sdd/local/{lock}"]

    _merge_from_stranger(root.path, make)
    assert (root.local / lock).is_symlink()
    done = _sdd_child(root, *command)
    assert done is not None, (
        f"`sdd {' '.join(command)}` hung for {HANG_SECONDS}s reading the merged link "
        f".sdd/local/{lock} -> {pointed}"
    )
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, (
        f"`sdd {' '.join(command)}` died reading .sdd/local/{lock} -> {pointed}: "
        f"{done.stderr[-400:]}"
    )


# =============================================================================================
# Person commands that copy a role: links inside a role folder (attacker: the PR author)


@pytest.mark.parametrize("what", ["a routine file", "the routines folder"])
@pytest.mark.parametrize("command", ["duplicate", "share"])
def test_route_copying_a_role_never_copies_a_linked_files_target_into_the_repo(
    sdd: SddRunner, root: Root, tmp_path: Path, what: str, command: str
) -> None:
    """A merged `.sdd/roles/builder/routines/nightly.yaml -> ~/.ssh/id_ed25519` (or the whole
    `routines -> ~/.ssh`). `sdd role duplicate builder` and `sdd role share builder` copy the
    folder with shutil.copytree, which follows links: her key lands in the repo as a regular
    file (`.sdd/roles/builder-copy/routines/...` or `templates/builder/routines/...`), and her
    next `git add -A` commits it."""
    _her_repo(root)
    key = _her_secret(tmp_path)

    def make(folder: Path) -> list[str]:
        routines = folder / ".sdd" / "roles" / "builder" / "routines"
        if what == "a routine file":
            routines.mkdir(parents=True, exist_ok=True)
            (routines / "nightly.yaml").symlink_to(key)
            return [".sdd/roles/builder/routines/nightly.yaml"]
        routines.symlink_to(key.parent)
        return [".sdd/roles/builder/routines"]

    _merge_from_stranger(root.path, make)
    said = sdd("role", command, "builder")
    leaked = _files_holding(root.path, SECRET_MARK)
    assert not leaked, (
        f"`sdd role {command} builder` copied the target of a merged link ({what}) into the "
        f"repo: {leaked}; sdd said {(said.stdout + said.stderr)[-300:]!r}"
    )


# =============================================================================================
# sdd init in a clone (attacker: the PR author / the repo's author)


@pytest.mark.parametrize("target", ["her key", "/proc/self/environ"])
def test_route_init_never_copies_a_linked_gitignores_target_into_the_repo(
    tmp_path: Path, target: str
) -> None:
    """A repository whose `.gitignore` is a link (to her key by a guessed path, or to
    `/proc/self/environ`, which needs no guess). `sdd init` reads it with `Path.read_text`,
    appends its lines and writes the result atomically in place of the link: the target's
    text is now a regular, tracked-to-be `.gitignore` in her repo."""
    product = tmp_path / "clone"
    product.mkdir()
    git(product, "init", "-q")
    if target == "her key":
        pointed, mark = str(_her_secret(tmp_path)), SECRET_MARK
    else:
        pointed, mark = "/proc/self/environ", "ci-job-token-4b2a99"
    (product / ".gitignore").symlink_to(pointed)
    env = {**os.environ, "CI_JOB_JWT": "ci-job-token-4b2a99"}
    done = subprocess.run(
        [sys.executable, "-m", "sdd_git", "init"], cwd=product, capture_output=True, text=True,
        timeout=60, env=env, check=False,
    )  # fmt: skip
    leaked = _files_holding(product, mark)
    assert not leaked, (
        f"`sdd init` wrote the target of the link .gitignore -> {pointed} into the repo: "
        f"{leaked}; sdd said {(done.stdout + done.stderr)[-300:]!r}"
    )


# =============================================================================================
# YAML: the alias bound and the size cap in every reader (attacker: the PR author)


def _bomb_lines(levels: int = 8) -> list[str]:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return lines


def test_route_a_skill_whose_frontmatter_needs_the_quoting_fallback_cannot_bomb_sdd(
    root: Root,
) -> None:
    """A 565-byte SKILL.md: an unquoted `description: Use when: ...` makes the strict load fail,
    so `refuse_alias_bombs` (which returns on a YAML error) lets it by, and `_quoted_fallback`
    loads the fixed text with no bound. `str()` of the bombed `license` then walks 387 million
    values: `sdd skill list` never ends."""
    skill = root.sdd / "skills" / "boom" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    front = ["name: boom", "description: Use when: anything happens", *_bomb_lines()]
    skill.write_text("---\n" + "\n".join([*front, "license: *a8"]) + "\n---\nDo it.\n")
    assert skill.stat().st_size < 1024
    done = _sdd_child(root, "skill", "list")
    assert done is not None, (
        f"`sdd skill list` was still expanding a {skill.stat().st_size}-byte alias bomb after "
        f"{HANG_SECONDS}s"
    )
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr[-400:]
    assert "alias" in done.stderr, f"the bomb is not named: {done.stderr[-400:]!r}"


@pytest.mark.parametrize("which", ["role", "skill"])
def test_route_a_role_or_skill_file_over_the_yaml_cap_is_refused(
    sdd: SddRunner, root: Root, which: str
) -> None:
    """CONTRACT §6: YAML read from the repo refuses files over a size cap (2 MiB). ROLE.md and
    SKILL.md are read with `beneath.read_text` and no limit: a merged 3 MiB front matter is
    read and parsed whole (300 MB takes as long and as much memory as the routine file did
    before d1152db)."""
    filler = "x" * (3 * 1024 * 1024)
    if which == "role":
        path = root.sdd / "roles" / "huge" / "ROLE.md"
        text = (
            f"---\nrole: huge\njob: Do huge work\nlevel: 1\ntoolPolicy.delegation: deny\n"
            f"produces: review\ndescription: {filler}\n---\nHuge.\n"
        )
        args = ("role", "list", "--all")
    else:
        path = root.sdd / "skills" / "huge" / "SKILL.md"
        text = f"---\nname: huge\ndescription: {filler}\n---\nHuge.\n"
        args = ("skill", "list")
    path.parent.mkdir(parents=True)
    path.write_text(text)
    listed = sdd(*args)
    assert "huge" not in listed.stdout, (
        f"a {len(text):,}-byte {path.name} (over the 2 MiB cap) was read and listed"
    )
    assert "2,097,152" in listed.stderr or "more than" in listed.stderr, listed.stderr[-300:]
