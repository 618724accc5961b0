"""The foundation's readers of the record and of sdd's state: beneath the product, no link
followed at any name, nothing but regular files and folders (CONTRACT §6).

Every test runs with `openat2` where this kernel has it, and with the component walk that
other kernels (and seccomp filters that refuse openat2) get.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from sdd_git import beneath

ONLY = "sdd reads only regular files inside the product"


@pytest.fixture(params=["openat2", "walk"])
def product(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    if request.param == "openat2":
        if beneath.kernel_path() != "openat2":
            pytest.skip("this kernel has no openat2")
    else:
        monkeypatch.setattr(beneath, "_OPENAT2", beneath._Openat2())
        monkeypatch.setattr(beneath._OPENAT2, "probed", True)  # probed, and found missing
    root = tmp_path / "product"
    (root / "memory" / "specs").mkdir(parents=True)
    (root / "memory" / "specs" / "SPEC-0001.md").write_text("mine\n")
    (tmp_path / "secret").write_text("her key\n")
    yield root


def refused(call: object, *args: object) -> str:
    with pytest.raises(beneath.Refused) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value.message


def test_a_regular_file_reads_by_a_relative_or_an_absolute_path(product: Path) -> None:
    spec = product / "memory" / "specs" / "SPEC-0001.md"
    assert beneath.read_text(product, "memory/specs/SPEC-0001.md") == "mine\n"
    assert beneath.read_bytes(product, spec, limit=2) == b"mi"
    assert beneath.is_file(product, spec) and beneath.is_dir(product, spec.parent)
    with pytest.raises(FileNotFoundError):
        beneath.read_bytes(product, "memory/specs/SPEC-0002.md")


def test_a_link_at_the_name_is_refused_and_named_wherever_it_leads(product: Path) -> None:
    specs = product / "memory" / "specs"
    (specs / "OUT.md").symlink_to(product.parent / "secret")
    (specs / "IN.md").symlink_to("SPEC-0001.md")  # inside the product: still a link
    (specs / "PROC.md").symlink_to("/proc/self/environ")
    for name in ("OUT.md", "IN.md", "PROC.md"):
        said = refused(beneath.read_bytes, product, f"memory/specs/{name}")
        assert said == f"memory/specs/{name} is a link; {ONLY}"
        assert not beneath.is_file(product, specs / name)
        assert beneath.kind(product, specs / name) == "link"


def test_a_link_on_the_way_is_refused_and_named(product: Path) -> None:
    (product / "changes").symlink_to(product.parent)
    said = refused(beneath.read_bytes, product, "changes/secret")
    assert said == f"changes/secret goes through the link changes; {ONLY}"
    assert not beneath.is_file(product, "changes/secret")
    assert refused(beneath.entries, product, "changes") == f"changes is a link; {ONLY}"


def test_a_fifo_socket_or_folder_is_not_read_and_a_fifo_never_blocks(product: Path) -> None:
    specs = product / "memory" / "specs"
    os.mkfifo(specs / "FIFO.md")
    assert refused(beneath.read_bytes, product, specs / "FIFO.md").startswith(
        "memory/specs/FIFO.md is not a regular file"
    )
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(specs / "SOCK.md"))
        assert "is not a regular file" in refused(beneath.read_bytes, product, specs / "SOCK.md")
    with pytest.raises(IsADirectoryError):
        beneath.read_bytes(product, specs)


def test_a_path_outside_the_product_or_climbing_out_is_refused(product: Path) -> None:
    assert "outside the product" in refused(beneath.read_bytes, product, product.parent / "secret")
    assert "outside the product" in refused(beneath.read_bytes, product, "memory/../../secret")


def test_a_listing_gives_real_folders_and_regular_files_and_says_what_it_left_out(
    product: Path,
) -> None:
    roles = product / ".sdd" / "roles"
    (roles / "good").mkdir(parents=True)
    (roles / "linked").symlink_to(product.parent)
    (roles / "notes.md").write_text("x")
    os.mkfifo(roles / "pipe")
    listed = beneath.entries(product, ".sdd/roles")
    assert listed.folders == ("good",) and listed.files == ("notes.md",)
    assert listed.refused == (
        f".sdd/roles/linked is a link; {ONLY}",
        f".sdd/roles/pipe is not a regular file; {ONLY}",
    )
    assert beneath.entries(product, "no/such/folder") == beneath.Entries((), (), ())


def test_the_product_folder_itself_may_sit_behind_her_own_link(
    product: Path, tmp_path: Path
) -> None:
    """Only what is below the product is never followed: a product she reaches by a link of
    her own reads as usual, by either name."""
    (tmp_path / "shortcut").symlink_to(product)
    via = tmp_path / "shortcut"
    assert beneath.read_text(via, via / "memory/specs/SPEC-0001.md") == "mine\n"
    assert beneath.read_text(via, product / "memory/specs/SPEC-0001.md") == "mine\n"


def test_within_says_whether_a_path_is_the_products_own(tmp_path: Path) -> None:
    root = tmp_path / "p"
    assert beneath.within(root, root / ".sdd/roles/a/ROLE.md") == root
    assert beneath.within(root, tmp_path / "home/.sdd/roles/a/ROLE.md") is None
    assert beneath.within(root, tmp_path / "p2/x") is None
