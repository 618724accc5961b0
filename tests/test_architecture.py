"""The shape DESIGN.md promises, checked on the code itself: dependencies point one way, no
module imports another's private names, and the one dispatch is the only caller of a tool's
executor."""

from __future__ import annotations

import ast
from pathlib import Path

import sdd_git
from sdd_git.tools.toolbox import TOOLS

PACKAGE = Path(sdd_git.__file__).parent
# Lower numbers are lower layers; a module may import only its own layer or lower ones.
LAYERS = {
    "errors": 0, "paths": 0, "atomicfile": 0, "lockfile": 0, "yamlio": 0, "parsecache": 0,
    "root": 0, "config": 0, "sink": 0, "masker": 0, "childenv": 0, "shown_text": 0, "__init__": 0,
    "beneath": 0, "statefolders": 0, "masking": 0, "netaddress": 0, "timestamps": 0,
    "valuekind": 0, "reaper": 0, "frontmatter": 0, "http": 1,
    "roles": 1, "records": 1, "tools": 1, "connectors": 1, "providers": 1, "sandbox": 1,
    "hoststubs": 1, "trust": 1, "cipins": 1,
    "runner": 2,
    "network": 3, "routines": 3, "events": 3,
    "cli": 4, "page": 4, "demo": 4, "__main__": 4,
}  # fmt: skip


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(("sdd_git", *path.relative_to(PACKAGE).with_suffix("").parts))
        out.append((name, ast.parse(path.read_text(encoding="utf-8"))))
    return out


def _imports(tree: ast.Module) -> list[tuple[str, list[str], int]]:
    """Every import in the module, lazy ones inside functions too: (module, names, line)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((a.name, [], node.lineno) for a in node.names)
    return found


def _layer(module: str) -> tuple[str, int]:
    part = module.split(".")[1] if module.count(".") else "__init__"
    assert part in LAYERS, f"{module}: put its package in LAYERS (tests/test_architecture.py)"
    return part, LAYERS[part]


def test_every_import_points_down_the_layers_of_design_md() -> None:
    upward = []
    for name, tree in _modules():
        part, level = _layer(name)
        for target, _names, line in _imports(tree):
            if not target.startswith("sdd_git.") and target != "sdd_git":
                continue
            target_part, target_level = _layer(target)
            if target_level > level:
                upward.append(f"{name}:{line} -> {target}")
            if (
                part == "providers"
                and target_level > 0
                and target_part not in ("providers", "http")
            ):
                upward.append(f"{name}:{line} -> {target} (providers import only their own)")
            if part == "sandbox" and target_level == 1 and target_part != "sandbox":
                upward.append(f"{name}:{line} -> {target} (the sandbox stands alone)")
            if part == "trust" and target_level == 1 and target_part != "trust":
                upward.append(f"{name}:{line} -> {target} (the trust ledger is a leaf)")
    assert upward == []


def test_no_module_imports_the_private_names_of_another() -> None:
    private = []
    for name, tree in _modules():
        for target, names, line in _imports(tree):
            if target.startswith("sdd_git") and target != name:
                private += [
                    f"{name}:{line} imports {target}.{n}"
                    for n in names
                    if n[0] == "_" and not n.startswith("__")
                ]
    assert private == []


def test_only_the_one_dispatch_reaches_a_tools_executor() -> None:
    executors = {type(tool).__name__ for tool in TOOLS.values()} | {"TOOLS"}
    reached = []
    for name, tree in _modules():
        if name.startswith("sdd_git.tools.") or name == "sdd_git.runner.dispatch":
            continue
        for target, names, line in _imports(tree):
            if target.startswith("sdd_git.tools"):
                reached += [f"{name}:{line} imports {n}" for n in names if n in executors]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("execute", "_execute"):
                reached.append(f"{name}:{node.lineno} calls .{node.attr}")
    assert reached == []
