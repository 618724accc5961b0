"""`return_artifact`: a network node's owner returns what it made, by reference.

The network keeps only the reference and a summary, never the owner's conversation, and the
tool checks that the reference names something real: a peer is not trusted on its word."""

from __future__ import annotations

import hashlib
import re

from sdd_git.records import ids
from sdd_git.toolnames import ToolClass
from sdd_git.tools import beneath
from sdd_git.tools.base import Args, BaseTool, ToolContext, ToolFailed, ToolOutcome, root_dir
from sdd_git.tools.gitcall import git_output, has_head, in_git_repo
from sdd_git.tools.schema import make_schema, text_property

KINDS = ("commit", "file", "scenario", "draft", "summary")
_FILE_READ_CAP = 64 * 1024 * 1024
NOT_RESULTS = (".git", ".sdd", "memory", "changes")  # the record and the tools' own state


class ReturnArtifact(BaseTool):
    tool_class: ToolClass = "draft"
    schema = make_schema(
        "return_artifact",
        "Return what you made for your part of the plan, by reference: a commit, a file, a "
        "scenario (CH-0001/SC-1), a drafted spec section (SPEC-0001#S2), or only a summary.",
        {
            "kind": {"type": "string", "enum": list(KINDS)},
            "ref": text_property("the commit, the file path, the scenario or the section id"),
            "summary": text_property("what it is and does, in a sentence or two"),
        },
        ("kind", "ref", "summary"),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        kind = args.text("kind").strip()
        ref = args.text("ref").strip()
        summary = args.text("summary").strip()
        if kind not in KINDS:
            raise ToolFailed(f"return_artifact: kind must be one of {', '.join(KINDS)}")
        artifact = {"kind": kind, "ref": ref, "summary": summary, **_checked(kind, ref, context)}
        return ToolOutcome(
            f"Returned {kind} {artifact['ref']}. The plan's network records it with your summary.",
            {"artifact": artifact},
            artifact=artifact,
        )


def _checked(kind: str, ref: str, context: ToolContext) -> dict[str, str]:
    """What makes the reference exact (a commit's full id, a file's sha256), or ToolFailed."""
    if kind == "commit":
        if not (in_git_repo(context) and has_head(context)):
            raise ToolFailed("return_artifact: the product has no commit yet")
        try:
            full = git_output(context, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        except ToolFailed:
            full = ""
        if not re.fullmatch(r"[0-9a-f]{40,64}", full.strip()):
            raise ToolFailed(f"return_artifact: no commit {ref!r} in this repository")
        return {"ref": full.strip()}
    if kind == "file":
        with beneath.folder(root_dir(context)) as top:
            found = top.resolve(ref)
            if found.status is None or not found.is_file:
                raise ToolFailed(f"return_artifact: no file {ref} in the product")
            if found.rel.split("/")[0] in NOT_RESULTS:
                raise ToolFailed(
                    f"return_artifact: {found.rel} is sdd's or git's own file, not a result"
                )
            data = top.read(found, _FILE_READ_CAP).data
        return {"ref": found.rel, "sha256": hashlib.sha256(data).hexdigest()}
    if kind == "scenario":
        from sdd_git.records.scenarios import load_scenarios

        match = ids.SCENARIO_ID.match(ref)
        folder = context.root.change_dir(match.group(1)) if match else None
        if match is None or folder is None or not (folder / "change.yaml").is_file():
            raise ToolFailed(f"return_artifact: no scenario {ref} (write it as CH-0001/SC-1)")
        _own_change(match.group(1), ref, context)
        if not any(s.id == match.group(2) for s in load_scenarios(folder)):
            raise ToolFailed(f"return_artifact: {match.group(1)} has no scenario {match.group(2)}")
        return {}
    if kind == "draft":
        from sdd_git.errors import RecordError
        from sdd_git.records.spec import read_spec

        match = ids.SECTION_ID.match(ref)
        path = context.root.spec_file(match.group(1)) if match else None
        if match is None or path is None or not path.is_file():
            raise ToolFailed(f"return_artifact: no spec section {ref} (write it as SPEC-0001#S2)")
        try:
            spec = read_spec(path)
            spec.section(match.group(2))
        except RecordError as exc:
            raise ToolFailed(f"return_artifact: {exc.message}") from None
        _own_change(str(spec.meta.get("change") or ""), ref, context)
        return {}
    return {}  # a summary needs no file: its ref is recorded as given


def _own_change(change: str, ref: str, context: ToolContext) -> None:
    """A node's result is of its own change: a scenario or a section another change already
    has is real, and is still no work done for this one."""
    if context.change is not None and change != context.change:
        raise ToolFailed(
            f"return_artifact: {ref} belongs to {change or 'no change'}, and this run works on "
            f"{context.change}; return what you made for {context.change}"
        )
