"""The shape DESIGN.md promises, checked on the code itself: dependencies point one way, no
package cycle, no module imports another's private names, and the one dispatch is the only
caller of a tool's executor."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import sdd_git
from sdd_git.tools.toolbox import TOOLS

PACKAGE = Path(sdd_git.__file__).parent

# The foundation: imports nothing above it. A new top-level module of the foundation is named
# here, and only here.
FOUNDATION = frozenset({
    "__init__", "errors", "paths", "atomicfile", "lockfile", "yamlio", "parsecache", "root",
    "config", "sink", "childenv", "shown_text", "beneath", "statefolders", "masker", "masking",
    "toolnames", "frontmatter", "reaper", "netaddress", "timestamps", "valuekind", "recordjson",
    "personcommands", "settings", "secretstore",
})  # fmt: skip
# DESIGN's order, lowest first; a module may import its own level or lower ones.
ORDER: tuple[tuple[str, ...], ...] = (
    tuple(sorted(FOUNDATION)),
    ("providers", "sandbox", "shellpolicy", "trust", "http"),
    # The protected paths (sandbox's tables, the classifier's findings) and `sdd guard`, which
    # another agent's host runs before each tool call: nothing of roles, records or the runner.
    ("protected", "hostguard"),
    ("roles",),
    ("records",),
    ("connectors", "hoststubs", "hostclaude", "cipins", "codexrules"),
    ("tools",),
    ("runner",),
    ("routines",),
    ("network", "events"),
    ("cli", "page", "demo", "__main__"),
)
LAYERS = {part: level for level, parts in enumerate(ORDER) for part in parts}
# Peers of level 1 that stand alone: what each may import of sdd_git beyond itself.
LEAVES = {
    "providers": FOUNDATION | {"http"},
    "sandbox": FOUNDATION,
    "trust": FOUNDATION,
    "shellpolicy": frozenset(),
}


def _sources() -> list[tuple[str, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(("sdd_git", *path.relative_to(PACKAGE).with_suffix("").parts))
        out.append((name, path.read_text(encoding="utf-8")))
    return out


def _modules() -> list[tuple[str, ast.Module]]:
    return [(name, ast.parse(source)) for name, source in _sources()]


def _imports(tree: ast.Module) -> list[tuple[str, list[str], int]]:
    """Every import in the module, lazy ones inside functions too: (module, names, line)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((a.name, [], node.lineno) for a in node.names)
    return found


def _part(module: str) -> str:
    part = module.split(".")[1] if module.count(".") else "__init__"
    assert part in LAYERS, f"{module}: put its package in ORDER (tests/test_architecture.py)"
    return part


def _edges() -> Iterator[tuple[str, int, str, str]]:
    """(module, line, its top-level part, a top-level part it imports), for every sdd_git import;
    `from sdd_git import lockfile` imports the part `lockfile`."""
    for name, tree in _modules():
        part = _part(name)
        for target, names, line in _imports(tree):
            if target == "sdd_git":
                for imported in names:
                    if f"sdd_git.{imported}" != "sdd_git.__version__":
                        yield name, line, part, _part(f"sdd_git.{imported}")
            elif target.startswith("sdd_git."):
                yield name, line, part, _part(target)


def test_every_import_points_down_the_layers_of_design_md() -> None:
    upward = []
    for name, line, part, target in _edges():
        if LAYERS[target] > LAYERS[part]:
            upward.append(f"{name}:{line} -> {target}")
        if part in LEAVES and target != part and target not in LEAVES[part]:
            upward.append(f"{name}:{line} -> {target} ({part} is a leaf)")
    assert upward == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycles_are_found_in_a_planted_graph() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_cycle_between_packages_lazy_imports_included() -> None:
    graph: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    for name, line, part, target in _edges():
        if target != part:
            graph.setdefault(part, set()).add(target)
            where.setdefault((part, target), f"{name}:{line}")
    cycles = _cycles(graph)
    shown = [
        [f"{a} -> {b} ({where[(a, b)]})" for a in cycle for b in cycle if (a, b) in where]
        for cycle in cycles
    ]
    assert shown == []


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


# Where a tool's executor may be reached from: the tools themselves, and the one dispatch.
EXECUTOR_HOME = ("sdd_git.tools.", "sdd_git.runner.dispatch")
TOOL_SOURCES = frozenset({"TOOLS", "toolbox"} | {type(tool).__name__ for tool in TOOLS.values()})


def _names_in(node: ast.AST) -> set[str]:
    return {
        n.id if isinstance(n, ast.Name) else n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Name | ast.Attribute)
    }


def executor_calls(source: str) -> list[str]:
    """Every place in `source` that reaches a tool's executor: `.execute(`/`._execute(` on
    anything, and `.run(` on a tool, that is on anything taken from `TOOLS`, `toolbox` or a tool
    class, directly or through a name bound from one (`tool = TOOLS[name]`, `for tool in ...`)."""
    tree = ast.parse(source)
    tainted = set(TOOL_SOURCES)
    changed = True
    while changed:  # names bound from a tool, and from those, until nothing new is bound
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr):
                value = node.value
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            elif isinstance(node, ast.For | ast.comprehension):
                value, targets = node.iter, [node.target]
            else:
                continue
            if value is None or not _names_in(value) & tainted:
                continue
            bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if bound - tainted:
                tainted |= bound
                changed = True
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        attr, receiver = node.func.attr, node.func.value
        if attr in ("execute", "_execute") or (attr == "run" and _names_in(receiver) & tainted):
            found.append(f"{node.lineno}: .{attr}(")
    return found


def test_the_executor_check_catches_a_planted_call() -> None:
    planted = (
        "from sdd_git.tools import toolbox\n"
        "def fire(args, ctx):\n"
        '    return toolbox.TOOLS["write_file"].run(args, ctx)\n'
    )
    assert executor_calls(planted) == ["3: .run("]
    through_a_name = (
        "from sdd_git.tools.toolbox import TOOLS\n"
        "def fire(args, ctx):\n"
        '    tool = TOOLS.get("write_file")\n'
        "    return tool.run(args, ctx)\n"
    )
    assert executor_calls(through_a_name) == ["4: .run("]
    assert executor_calls("def f(t, a, c):\n    return t._execute(a, c)\n") == ["2: ._execute("]
    harmless = (
        "import subprocess\n"
        "from sdd_git.runner.run import start\n"
        "def f(clock, args):\n"
        "    subprocess.run(args)\n"
        "    return clock.run(args, None)\n"
    )
    assert executor_calls(harmless) == []


# Modules whose `db.execute(` is SQL on their own sqlite3 connection, not a tool: each imports
# sqlite3, names its connection `db`, and imports nothing of the tools (checked below).
SQL_MODULES = frozenset({"sdd_git.runner.runindex"})


def _sql_calls(source: str) -> set[int]:
    """The lines of `db.execute(` calls: SQL, in a module of SQL_MODULES."""
    return {
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "execute"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "db"
    }


def test_only_the_one_dispatch_reaches_a_tools_executor() -> None:
    reached = []
    for name, source in _sources():
        if name.startswith(EXECUTOR_HOME):
            continue
        imports = _imports(ast.parse(source))
        for target, names, line in imports:
            if target.startswith("sdd_git.tools"):
                reached += [f"{name}:{line} imports {n}" for n in names if n in TOOL_SOURCES]
        sql = set()
        if name in SQL_MODULES:
            assert "sqlite3" in {target for target, _, _ in imports}, name
            assert not [t for t, _, _ in imports if t.startswith("sdd_git.tools")], name
            sql = _sql_calls(source)
        reached += [
            f"{name}:{where}"
            for where in executor_calls(source)
            if int(where.split(":")[0]) not in sql
        ]
    assert reached == []
