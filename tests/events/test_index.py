"""The hooks' index: what the shell hooks read, without Python, to know whether anyone listens."""

from __future__ import annotations

from sdd_git.root import Root
from sdd_git.routines.hookindex import index_path, read_index, write_index
from tests.events.hookhelp import routine


def lines(root: Root) -> list[str]:
    text = index_path(root).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if not line.startswith("#")]


def test_the_index_lists_the_main_branch_and_each_unpaused_trigger_once(root: Root) -> None:
    routine(root, "a", "pr-merged")
    routine(root, "b", "pr-merged")
    routine(root, "c", "push main")
    routine(root, "d", "main-build-failed", paused=True)
    routine(root, "e", '"file-changed src/**"', role="builder")
    write_index(root)
    assert lines(root) == [
        "main main",
        "listen file-changed src/**",
        "listen pr-merged",
        "listen push main",
    ]
    assert read_index(root) == ("main", ["file-changed src/**", "pr-merged", "push main"])


def test_with_no_routine_the_index_names_only_the_main_branch(root: Root) -> None:
    write_index(root)
    assert lines(root) == ["main main"]


def test_the_main_branch_comes_from_the_config(root: Root) -> None:
    with root.config.open("a", encoding="utf-8") as config:
        config.write("main_branch: trunk\n")
    routine(root, "a", "push trunk")
    write_index(root)
    assert lines(root) == ["main trunk", "listen push trunk"]


def test_a_routine_file_that_does_not_load_is_left_out(root: Root) -> None:
    routine(root, "good", "pr-merged")
    routine(root, "bad", "push main").write_text("name: bad\non: push\n", encoding="utf-8")
    write_index(root)
    assert lines(root) == ["main main", "listen pr-merged"]


def test_pausing_the_only_listener_empties_the_index(root: Root) -> None:
    path = routine(root, "a", "pr-merged")
    write_index(root)
    assert "listen pr-merged" in lines(root)
    path.write_text(path.read_text().replace("paused: false", "paused: true"))
    write_index(root)
    assert lines(root) == ["main main"]
