"""`use_skill {name}`: load one skill's instructions, the second tier of the Agent Skills
standard. A read tool: it changes nothing, and what it loads grants nothing (a skill's
`allowed-tools` never widens a role's boundary; its scripts run only through `run_command`)."""

from __future__ import annotations

from sdd_git.roles import skills
from sdd_git.tools.base import Args, ToolContext, ToolFailed, ToolOutcome, root_dir
from sdd_git.tools.read import ReadTool
from sdd_git.tools.schema import ID_CHARS, bounded, make_schema


class UseSkill(ReadTool):
    schema = make_schema(
        "use_skill",
        "Load a skill's instructions by its name (the skills are listed in your instructions). "
        "Its other files are read with read_file.",
        {"name": bounded(ID_CHARS, "the skill's name, e.g. pdf-processing")},
        ("name",),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        wanted = args.text("name").strip().removeprefix("/")
        root = root_dir(context)
        catalog = skills.discover(root)
        found = catalog.get(wanted)
        if found is None:
            known = ", ".join(sorted(catalog.skills)) or "none"
            raise ToolFailed(f"no skill named '{wanted}'; the skills of this product: {known}")
        return ToolOutcome(
            skills.activation(found, root),
            {"skill": found.name, "path": found.path.relative_to(root).as_posix()},
        )
