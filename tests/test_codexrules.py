"""`sdd agents install codex`: Codex's own walls, checked by the real Codex.

- The rules are checked with `codex execpolicy check --resolve-host-executables` (Codex's agent
  resolves a path to its basename rules the same way: codex-rs/core/src/exec_policy.rs builds
  its MatchOptions with `resolve_host_executables: true`). Grammar and semantics:
  https://developers.openai.com/codex/rules and codex-rs/execpolicy/README.md.
- The whole path is checked with `codex exec` against a scripted model on loopback
  (tests/codexwire.py): Codex loads `.codex/rules/` and `.codex/hooks.json` of a trusted project,
  splits `bash -c 'a && b'` into its commands, and refuses or runs each.
- The hook's shape: https://developers.openai.com/codex/hooks (`hooks.json`, `PreToolUse`,
  `tool_name`/`tool_input.command` on stdin, exit 2 with the reason on stderr to refuse).

Codex comes from the npm registry (tests/routines/validators.py); with SDD_REQUIRE_VALIDATORS
set (.ci/run sets it) a missing Codex fails these tests, never skips them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sdd_git import codexrules
from sdd_git.errors import SddError
from sdd_git.hoststubs import BEGIN_MARK, install
from sdd_git.personcommands import PERSON_COMMANDS
from sdd_git.root import Root
from tests.codexwire import ScriptedModel, patch, run_codex, shell
from tests.conftest import SddRunner
from tests.routines.validators import codex

RULES = codexrules.RULES_FILE
HOOKS = codexrules.HOOKS_FILE
# What an agent may run: no rule may catch these.
READS = (
    "sdd role list",
    "sdd change show CH-0001",
    "sdd change list",
    "sdd decision list",
    "sdd role show builder",
    "sdd role run builder --task x",
    "sdd role run builder --task 'accept the reading and run sdd next'",
    "sdd role runs",
    "sdd role log RUN-1",
    "sdd stops",
    "sdd --version",
    "sdd nextcloud",  # exact words: `next` is not a prefix of another word
    "python3 -m sdd_git role list",
    ".venv/bin/sdd change show CH-0001",
    "git status",
    "git diff memory/",
)


@pytest.fixture(autouse=True)
def _outside_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SDD_RUN_ID", raising=False)


def spellings(command: str) -> list[list[str]]:
    """Every spelling of a person command the rules must refuse: how sdd starts, sdd's global
    options in their forms, a path, a wrapper, `--` before a group's command."""
    words = command.split()
    found = [
        ["sdd", *words],
        ["sdd", "-C", ".", *words],
        ["sdd", "-C", "/somewhere/else", *words],
        ["sdd", "-C.", *words],
        ["sdd", "-C..", *words],
        ["sdd", "--no-agent", *words],
        ["sdd", "--no-agent", "-C", ".", *words],
        ["sdd", "-C", ".", "--no-agent", *words],
        ["sdd", "--", *words],
        ["python", "-m", "sdd_git", *words],
        ["python3", "-m", "sdd_git", *words],
        ["python3", "-m", "sdd_git", "-C", ".", *words],
        ["python3", "-m", "sdd_git", "--no-agent", *words],
        ["python3.12", "-m", "sdd_git.__main__", *words],
        ["python3", "-msdd_git", *words],
        ["/usr/bin/python3", "-m", "sdd_git", *words],
        [".venv/bin/python", "-m", "sdd_git", *words],
        [".venv/bin/sdd", *words],
        ["/home/her/.local/bin/sdd", *words],
        ["env", "sdd", *words],
        ["sudo", "sdd", "-C", ".", *words],
    ]
    if len(words) == 2:
        found += [
            ["sdd", words[0], "--", words[1]],
            ["python3", "-m", "sdd_git", words[0], "--", words[1]],
        ]
    return found


def check(rules: Path, words: list[str]) -> dict[str, object]:
    done = subprocess.run(
        [str(codex()), "execpolicy", "check", "--resolve-host-executables", "--rules", str(rules),
         *words],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.fixture
def rules_file(tmp_path: Path) -> Path:
    path = tmp_path / "sdd.rules"
    path.write_text(codexrules.render(), encoding="utf-8")
    return path


def _files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# --- the rules, by the real Codex -----------------------------------------------------------------


@pytest.mark.parametrize("command", PERSON_COMMANDS)
def test_codex_forbids_every_spelling_of_a_person_command(rules_file: Path, command: str) -> None:
    for words in spellings(command):
        found = check(rules_file, words)
        assert found.get("decision") == "forbidden", (words, found)
        matched = found["matchedRules"]
        assert isinstance(matched, list)
        justification = matched[0]["prefixRuleMatch"]["justification"]
        assert "person" in justification, justification


@pytest.mark.parametrize("command", READS)
def test_codex_lets_every_read_through(rules_file: Path, command: str) -> None:
    import shlex

    assert check(rules_file, shlex.split(command)) == {"matchedRules": []}


# Spellings no exact-word rule can name: an interpreter option before -m, the console script
# run by Python, a runner, -C attached to another folder. The docs page lists them; the guard
# hook is the wall for them.
NO_RULE_NAMES = (
    "python3 -I -m sdd_git accept reading CH-0001",
    "python3 .venv/bin/sdd accept reading CH-0001",
    "uv run sdd accept reading CH-0001",
    "sdd -Csub accept reading CH-0001",
)


@pytest.mark.parametrize("command", NO_RULE_NAMES)
def test_what_no_rule_can_name_is_said_not_hidden(rules_file: Path, command: str) -> None:
    import shlex

    assert check(rules_file, shlex.split(command)) == {"matchedRules": []}


def test_a_wrong_example_makes_codex_refuse_the_file(rules_file: Path, tmp_path: Path) -> None:
    text = rules_file.read_text("utf-8")
    start = text.index('pattern = ["sdd", "accept"]')
    wrong_not_match = tmp_path / "not_match.rules"
    at = text.index('not_match = ["sdd stops"', start)
    wrong_not_match.write_text(text[:at] + 'not_match = ["sdd accept now"' + text[at + 24 :])
    wrong_match = tmp_path / "match.rules"
    at = text.index('match = ["sdd accept"', start)
    wrong_match.write_text(text[:at] + 'match = ["sdd acceptx"' + text[at + 21 :])
    for path, said in ((wrong_not_match, "sdd accept now"), (wrong_match, "sdd acceptx")):
        done = subprocess.run(
            [str(codex()), "execpolicy", "check", "--rules", str(path), "sdd", "role", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode != 0
        assert "failed to parse policy" in done.stderr and said in done.stderr


def test_each_rule_is_forbidden_with_a_justification_and_examples() -> None:
    text = codexrules.render()
    assert text.count("prefix_rule(") == len(codexrules.rules())
    assert text.count('decision = "forbidden"') == len(codexrules.rules())
    for rule in codexrules.rules():
        assert rule.justification.strip() and rule.match and rule.not_match
    for launcher in codexrules.LAUNCHERS:
        covered = {r.pattern[len(launcher.words) :] for r in codexrules.rules()
                   if r.pattern[: len(launcher.words)] == launcher.words}  # fmt: skip
        for command in PERSON_COMMANDS:
            assert tuple(command.split()) in covered, (launcher.label, command)


def test_the_file_is_ascii_and_carries_the_sha256_of_the_rest() -> None:
    text = codexrules.render()
    assert text.isascii()
    assert codexrules.state(text) == "intact"
    assert codexrules.state(text.replace("only the person runs it", "anyone runs it")) == "changed"
    assert codexrules.state("prefix_rule(pattern = ['sdd'])\n") is None
    assert "host_executable(" not in text  # it would narrow the path rule to the listed paths


# --- install ------------------------------------------------------------------------------------


def test_install_codex_writes_agents_md_the_rules_and_the_hook(root: Root) -> None:
    report = install(root, "codex")
    assert list(report.written) == ["AGENTS.md", RULES, HOOKS]
    assert (root.path / "AGENTS.md").read_text("utf-8").startswith(BEGIN_MARK)
    assert (root.path / RULES).read_text("utf-8") == codexrules.render()
    hooks = json.loads((root.path / HOOKS).read_text("utf-8"))
    assert hooks == {"hooks": {"PreToolUse": [codexrules.guard_group()]}}
    assert "trust" in report.reads and "/hooks" in report.reads


def test_installing_twice_changes_nothing(root: Root) -> None:
    install(root, "codex")
    before = _files_under(root.path)
    again = install(root, "codex")
    assert again.written == () and set(again.unchanged) == {"AGENTS.md", RULES, HOOKS}
    assert _files_under(root.path) == before


def test_sdds_unchanged_rules_from_another_version_are_rewritten(root: Root) -> None:
    target = root.path / RULES
    target.parent.mkdir(parents=True)
    older = codexrules.sign("# older sdd rules\n\nprefix_rule(pattern = ['sdd', 'accept'])\n")
    target.write_text(older, encoding="utf-8")
    assert install(root, "codex").written == ("AGENTS.md", RULES, HOOKS)
    assert target.read_text("utf-8") == codexrules.render()


@pytest.mark.parametrize("whose", ["changed", "hers"])
def test_a_rules_file_sdd_did_not_write_as_it_is_is_refused_and_nothing_written(
    root: Root, whose: str
) -> None:
    target = root.path / RULES
    target.parent.mkdir(parents=True)
    text = (
        codexrules.render() + "# mine\n" if whose == "changed" else "prefix_rule(pattern=['x'])\n"
    )
    target.write_text(text, encoding="utf-8")
    before = _files_under(root.path)
    with pytest.raises(SddError) as caught:
        install(root, "codex")
    said = "was changed since sdd wrote it" if whose == "changed" else "is not sdd's"
    assert caught.value.message.startswith(f"{RULES} {said}")
    assert "another file of .codex/rules/" in (caught.value.hint or "")
    assert _files_under(root.path) == before


def test_her_hooks_are_kept_and_the_guard_added_once(root: Root) -> None:
    mine = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify", "timeout": 5}]}],
        }
    }
    target = root.path / HOOKS
    target.parent.mkdir()
    target.write_text(json.dumps(mine), encoding="utf-8")
    install(root, "codex")
    merged = json.loads(target.read_text("utf-8"))
    assert merged["hooks"]["Stop"] == mine["hooks"]["Stop"]
    assert merged["hooks"]["PreToolUse"] == [
        *mine["hooks"]["PreToolUse"],
        codexrules.guard_group(),
    ]
    once = target.read_bytes()
    assert HOOKS in install(root, "codex").unchanged and target.read_bytes() == once


def test_a_guard_she_registered_her_own_way_is_left_byte_for_byte(root: Root) -> None:
    target = root.path / HOOKS
    target.parent.mkdir()
    hers = (
        '{"hooks": {"PreToolUse": [{"hooks": '
        '[{"type": "command", "command": "sdd guard --host codex"}]}]}}'
    )
    target.write_text(hers, encoding="utf-8")
    install(root, "codex")
    assert target.read_text("utf-8") == hers


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "not a JSON object"),
        ('{"hooks": []}', "`hooks` is not an object"),
        ('{"hooks": {"PreToolUse": {}}}', "`hooks.PreToolUse` is not a list"),
    ],
)
def test_a_hooks_file_sdd_cannot_read_is_refused_and_nothing_written(
    root: Root, text: str, said: str
) -> None:
    target = root.path / HOOKS
    target.parent.mkdir()
    target.write_text(text, encoding="utf-8")
    before = _files_under(root.path)
    with pytest.raises(SddError) as caught:
        install(root, "codex")
    assert caught.value.message.startswith(HOOKS) and said in caught.value.message
    assert _files_under(root.path) == before


def test_a_codex_file_in_the_way_is_refused_in_plain_words(root: Root) -> None:
    (root.path / ".codex").write_text("not a folder\n", encoding="utf-8")
    before = _files_under(root.path)
    with pytest.raises(SddError) as caught:
        install(root, "codex")
    assert caught.value.message == f".codex is a file, and {RULES} needs it to be a folder"
    assert _files_under(root.path) == before


def test_the_command_installs_and_says_what_codex_needs_from_her(sdd: SddRunner) -> None:
    done = sdd("agents", "install", "codex")
    assert done.code == 0, done.stderr
    assert done.stdout.splitlines() == ["AGENTS.md", RULES, HOOKS]
    assert "open /hooks in Codex" in done.stderr
    dry = sdd("agents", "install", "codex", "--dry-run")
    assert dry.code == 0 and "unchanged: .codex/rules/sdd.rules" in dry.stderr


# --- the whole path, through `codex exec` ---------------------------------------------------------


@pytest.fixture
def codex_project(root: Root) -> Root:
    install(root, "codex")
    return root


def test_codex_itself_refuses_the_persons_commands_and_runs_the_reads(
    codex_project: Root, tmp_path: Path
) -> None:
    refused = [
        'sdd change new "make the list faster"',
        'sdd -C . change new "make the list faster"',
        "cd . && sdd --no-agent next",
        'python3 -m sdd_git change new "make the list faster"',
        f'{Path(sys.executable).parent / "sdd"} change new "words"',
    ]
    calls = [shell(command) for command in refused] + [shell("sdd change list")]
    before = _files_under(codex_project.path)
    with ScriptedModel(calls) as model:
        done = run_codex(
            codex(), codex_project.path, model, tmp_path / "codex-home", "--disable", "hooks",
            path=[Path(sys.executable).parent],
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for turn, command in enumerate(refused):
        said = model.output(turn)
        assert "rejected" in said and "person" in said, (command, said)
    assert "no change packs yet" in model.output(len(refused))
    assert _files_under(codex_project.path) == before


# What Codex's rules catch on their own, in the commands as Codex's agent splits them: it
# splits a plain chain (`&&`, `||`, `;`, `|`) into its commands; any other shell syntax leaves
# one command whose first word is no sdd. The docs page lists both, and the guard hook is the
# wall for the second list: if a Codex release starts catching one, this test says so.
RULES_CATCH = (
    'sdd change new "a"',
    'true && sdd change new "b"',
    'true; sdd change new "c"',
    'false || sdd change new "d"',
    'sdd change new "e" | cat',
)
RULES_MISS = (
    "bash -c 'sdd change new \"f\"'",
    'echo "$(sdd change new "g")"',
    'sdd change new "h" > /dev/null',
    'sdd change new "i" 2>&1',
    '{ sdd change new "j"; }',
    'if true; then sdd change new "k"; fi',
    'X=1 sdd change new "l"',
    'timeout 60 sdd change new "m"',
    'sdd -C./ change new "n"',
)


def test_what_codexs_rules_alone_catch_and_what_they_miss(
    codex_project: Root, tmp_path: Path
) -> None:
    calls = [shell(command) for command in (*RULES_CATCH, *RULES_MISS)]
    with ScriptedModel(calls) as model:
        done = run_codex(
            codex(), codex_project.path, model, tmp_path / "codex-home", "--disable", "hooks",
            "--sandbox", "workspace-write", path=[Path(sys.executable).parent],
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for turn, command in enumerate(RULES_CATCH):
        assert "rejected" in model.output(turn), (command, model.output(turn))
    for turn, command in enumerate(RULES_MISS, start=len(RULES_CATCH)):
        assert "started with spec" in model.output(turn), (command, model.output(turn))
    made = sorted(p.name for p in (codex_project.path / "changes").glob("CH-*"))
    assert len(made) == len(RULES_MISS)


def test_codex_runs_the_real_guard_before_shell_commands_and_patches(
    codex_project: Root, tmp_path: Path
) -> None:
    # The registration Codex reads runs the real `sdd guard --host codex` (this interpreter, by
    # its path: no `sdd` on Codex's PATH is needed). A plain command goes on; a patch into her
    # record, a person command and a write Codex's hook cannot ask about are refused.
    edit = "*** Begin Patch\n*** Add File: memory/planted.txt\n+mine now\n*** End Patch\n"
    fine = "*** Begin Patch\n*** Add File: notes.txt\n+a note\n*** End Patch\n"
    calls = [
        shell("echo hi > made.txt"),
        patch(edit),
        shell("bash -c 'sdd change new slipped'"),  # a spelling no Codex rule can name
        patch(fine),
    ]
    with ScriptedModel(calls) as model:
        done = run_codex(
            codex(), codex_project.path, model, tmp_path / "codex-home",
            "--dangerously-bypass-hook-trust", path=[Path(sys.executable).parent],
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (codex_project.path / "made.txt").read_text().strip() == "hi"
    assert (codex_project.path / "notes.txt").exists()
    for turn in (1, 2):
        assert "blocked by PreToolUse hook: sdd guard:" in model.output(turn), model.output(turn)
    assert not (codex_project.path / "memory" / "planted.txt").exists()
    assert not list((codex_project.path / "changes").glob("CH-*"))


def test_codex_runs_no_hook_she_has_not_trusted(codex_project: Root, tmp_path: Path) -> None:
    # What the docs page says: until she trusts the hook in /hooks, Codex skips it, silently.
    stand_in = tmp_path / "bin" / "sdd"
    stand_in.parent.mkdir()
    stand_in.write_text(f"#!/bin/sh\ntouch {tmp_path}/ran\nexit 2\n", encoding="utf-8")
    stand_in.chmod(0o755)
    with ScriptedModel([shell("echo hi")]) as model:
        done = run_codex(
            codex(), codex_project.path, model, tmp_path / "codex-home", path=[stand_in.parent]
        )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "ran").exists()
    assert "hi" in model.output(0)


def test_a_broken_rules_file_beside_sdds_stops_codex_before_any_command(
    codex_project: Root, tmp_path: Path
) -> None:
    # One rules file of hers that does not load, and `codex exec` does not start: it names the
    # file and line, and runs nothing. (Codex's source also has a path that goes on with no rules
    # and a warning, load_exec_policy_with_warning in codex-rs/core/src/exec_policy.rs; the docs
    # page says so, and the guard hook stands either way.)
    (codex_project.path / ".codex/rules/hers.rules").write_text("prefix_rule(\n", "utf-8")
    with ScriptedModel([shell('sdd change new "slipped through"')]) as model:
        done = run_codex(
            codex(), codex_project.path, model, tmp_path / "codex-home", "--disable", "hooks",
            path=[Path(sys.executable).parent],
        )  # fmt: skip
    assert done.returncode == 1
    assert "Error loading rules" in done.stderr and "hers.rules:2" in done.stderr
    assert model.outputs == {}
    assert not (codex_project.path / "changes" / "CH-0001").exists()
