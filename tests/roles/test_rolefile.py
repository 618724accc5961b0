from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.roles.rolefile import RoleFileError, parse_role, render_role

CANONICAL = """---
role: builder                  # the name
label: Builder
job: Implement accepted spec sections for the expenses service
level: 0                       # privilege level
toolPolicy.delegation: deny    # allow | deny
spawnableRoles: []
produces: code
scope: service:expenses
skills: [small-commits]
model: null
pinned: false
hidden: false
boundary:
  always_allow:
    - {tool: run_command, inputs: {command: "pytest -q"}}
  ask_first:
    - {tool: git_push}
---
The durable description: the standing rules this role follows.
"""

PATH = Path(".sdd/roles/builder/ROLE.md")


def errors_of(text: str, folder: str | None = "builder") -> list[str]:
    with pytest.raises(RoleFileError) as caught:
        parse_role(text, PATH, folder_name=folder)
    return [p.render() for p in caught.value.problems]


def test_the_contract_example_loads_exactly() -> None:
    parsed = parse_role(CANONICAL, PATH, folder_name="builder")
    role = parsed.profile
    assert parsed.warnings == ()
    assert (role.name, role.label, role.level, role.delegation) == ("builder", "Builder", 0, "deny")
    assert role.spawnable_roles == ()
    assert role.produces == "code" and role.scope == "service:expenses"
    assert role.skills == ("small-commits",)
    assert role.boundary.always_allow[0].tool == "run_command"
    assert role.boundary.always_allow[0].inputs == {"command": "pytest -q"}
    assert role.boundary.ask_first[0].tool == "git_push"
    assert role.boundary.ask_first[0].inputs is None
    assert role.description == "The durable description: the standing rules this role follows."


def test_nested_tool_policy_and_comma_lists_are_read_too() -> None:
    text = CANONICAL.replace(
        "toolPolicy.delegation: deny    # allow | deny", "toolPolicy: {delegation: allow}"
    )
    text = text.replace("spawnableRoles: []", "spawnableRoles: executor, builder")
    text = text.replace("skills: [small-commits]", "skills: small-commits, tdd")
    role = parse_role(text, PATH, folder_name="builder").profile
    assert role.delegation == "allow"
    assert role.spawnable_roles == ("executor", "builder")
    assert role.skills == ("small-commits", "tdd")


def test_an_agentproto_role_md_loads_unchanged_with_one_warning() -> None:
    pack = """---
role: reviewer
level: 50
toolPolicy.delegation: deny
skills: code-review, security-review
---

You review code for correctness and security issues. You do not
edit files or spawn sub-agents.
"""
    parsed = parse_role(pack, Path("roles/reviewer/ROLE.md"), "user", folder_name="reviewer")
    role = parsed.profile
    assert role.job == "You review code for correctness and security issues."
    assert role.level == 50 and role.delegation == "deny"
    assert role.skills == ("code-review", "security-review")
    assert len(parsed.warnings) == 1 and "an agentproto ROLE.md" in parsed.warnings[0].message


def test_a_flat_pack_that_is_not_valid_yaml_still_loads() -> None:
    pack = (
        "---\nrole: odd\nlevel: 5\ntoolPolicy.delegation: allow\n"
        "spawnableRoles: executor, odd\nskills: a: b, c\n---\nDo odd jobs. Carefully.\n"
    )
    role = parse_role(pack, None, "package").profile
    assert role.name == "odd" and role.level == 5 and role.delegation == "allow"
    assert role.spawnable_roles == ("executor", "odd")
    assert role.job == "Do odd jobs."


def test_an_agent_file_of_another_host_loads_with_one_warning() -> None:
    claude = """---
name: code-reviewer
description: Reviews code for quality and security.
tools: Read, Grep, Glob
model: sonnet
---
You are a senior code reviewer.
"""
    parsed = parse_role(claude, Path("x/code-reviewer/ROLE.md"), folder_name="code-reviewer")
    role = parsed.profile
    assert (role.name, role.job, role.level, role.delegation) == (
        "code-reviewer", "Reviews code for quality and security.", 0, "deny",
    )  # fmt: skip
    assert role.model == "sonnet"  # an alias her settings' models: resolve when it runs
    assert len(parsed.warnings) == 1 and "another host" in parsed.warnings[0].message


def test_bad_indentation_is_one_error_with_its_line() -> None:
    text = CANONICAL.replace("label: Builder", "label: Builder\n  job2: oops")
    problems = errors_of(text)
    assert len(problems) == 1
    assert problems[0].startswith(".sdd/roles/builder/ROLE.md:4:")
    assert "not valid YAML" in problems[0]


def test_level_high_is_one_error_at_the_level_line() -> None:
    problems = errors_of(CANONICAL.replace("level: 0   ", "level: high"))
    assert problems == [".sdd/roles/builder/ROLE.md:5: key 'level': must be a number, not 'high'"]


def test_a_missing_job_is_one_error() -> None:
    text = CANONICAL.replace("job: Implement accepted spec sections for the expenses service\n", "")
    problems = errors_of(text)
    assert len(problems) == 1
    assert problems[0].startswith(".sdd/roles/builder/ROLE.md:1:")
    assert "key 'job' is missing" in problems[0]


def test_a_blank_job_is_an_error() -> None:
    problems = errors_of(
        CANONICAL.replace(
            "job: Implement accepted spec sections for the expenses service", "job: '  '"
        )
    )
    assert problems == [".sdd/roles/builder/ROLE.md:4: key 'job': is blank: a role has one job"]


def test_every_mistake_is_reported_with_its_own_line() -> None:
    text = CANONICAL.replace("level: 0   ", "level: high").replace(
        "produces: code", "produces: poems"
    )
    text = text.replace("{tool: git_push}", "{tool: launch_rockets}")
    problems = errors_of(text)
    assert problems[0].startswith(".sdd/roles/builder/ROLE.md:5: key 'level'")
    assert problems[1].startswith(
        ".sdd/roles/builder/ROLE.md:8: key 'produces': 'poems' is not known"
    )
    assert problems[2].startswith(
        ".sdd/roles/builder/ROLE.md:18: key 'boundary.ask_first.0.tool': "
        "'launch_rockets' is not a tool"
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("role: builder", "role: Builder!"), "key 'role': the name must be lowercase"),
        (("role: builder", "role: other"), "does not match its folder 'builder'"),
        (("toolPolicy.delegation: deny", "toolPolicy.delegation: maybe"), "must be allow or deny"),
        (('{tool: run_command, inputs: {command: "pytest -q"}}', "{tool: run_command}"),
         "an always_allow rule must name the exact inputs"),
        (("scope: service:expenses", "scope: galaxy"), "'galaxy' is not a scope"),
        (("pinned: false", "pinned: sometimes"), "must be true or false"),
    ],
)  # fmt: skip
def test_field_errors(change: tuple[str, str], expected: str) -> None:
    problems = errors_of(CANONICAL.replace(*change))
    assert any(expected in p for p in problems), problems


def test_unknown_keys_are_warned_with_their_line_not_fatal() -> None:
    parsed = parse_role(
        CANONICAL.replace("label: Builder", "label: Builder\ncolour: blue"),
        PATH,
        folder_name="builder",
    )
    assert [w.render() for w in parsed.warnings] == [
        ".sdd/roles/builder/ROLE.md:4: key 'colour': unknown key 'colour' is ignored"
    ]


def test_no_front_matter_is_an_error_at_line_1() -> None:
    assert errors_of("Just text\n")[0].startswith(
        ".sdd/roles/builder/ROLE.md:1: a role file must start"
    )


def test_render_writes_the_canonical_keys_and_reads_back() -> None:
    role = parse_role(CANONICAL, PATH, folder_name="builder").profile
    text = render_role(role)
    assert "toolPolicy.delegation: deny" in text
    again = parse_role(text, PATH, folder_name="builder").profile
    assert again == role
