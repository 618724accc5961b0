"""The person's operations on role files: create, edit, pin, hide, duplicate, delete, share, add.

Every one of them is a person command: a role run can never change a role (its own boundary
included), so they all go through the same door as the record.

A grant comes only from the person (CONTRACT §13): what a role file she writes with one of
these commands grants is recorded in her trust ledger as hers, unless it granted something she
had not confirmed before the command (then it keeps waiting for `sdd trust review`). What a
template she adds grants (rules, model, level, delegation, ...) is shown to her and counts only
when her `confirm` callback says yes; its always_allow rules are otherwise left out, and the
rest waits unconfirmed. A pack's rules she has not confirmed never come along when it is copied.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import beneath
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError, UsageError
from sdd_git.paths import display
from sdd_git.roles.hostagents import HOST_SOURCES, agent_files, file_stem, host_of, identity
from sdd_git.roles.profile import NAME_PATTERN, PRODUCES, RoleProfile, Rule
from sdd_git.roles.registry import BUILTIN_NAMES, find_role, repo_role_path
from sdd_git.roles.roleedit import drop_always_allow_text, edit_role_text
from sdd_git.roles.rolefile import (
    ParsedRole,
    Problem,
    RoleFileError,
    parse_role,
    read_role,
    render_role,
)
from sdd_git.roles.templates import find_template, is_shipped
from sdd_git.roles.trust import confirm as confirm_role
from sdd_git.roles.trust import confirming, surface
from sdd_git.root import Root
from sdd_git.sink import person_write, refuse_inside_run
from sdd_git.trust.words import role_changes

Confirm = Callable[[list[str], Path], bool]
"""Asks the person whether to keep what this ROLE.md grants, said line by line in words."""


@dataclass(frozen=True)
class Added:
    """A role written from a template or another role, and what became of its always_allow rules."""

    name: str
    path: Path
    kept: tuple[Rule, ...] = ()  # rules that came along: she confirmed them, or they were hers
    left_out: tuple[Rule, ...] = ()  # rules she did not confirm: not in the new role file
    paused_routines: tuple[str, ...] = ()  # routines that came with a template, paused
    confirmed: bool = True  # whether what the new file grants is hers (else it waits)


_SECRET_KEY = re.compile(r"(key|token|secret|password|credential)", re.IGNORECASE)


def role_folder(root: Root, name: str) -> Path:
    return root.sdd / "roles" / name


def local_folder(root: Root, name: str) -> Path:
    """Conversation, memory and attachments of a role: gitignored, never copied or shared."""
    return root.local / "roles" / name


def pending_edit(root: Root, name: str) -> Path:
    return root.local / "role-edits" / name / "ROLE.md"


def _check_name(name: str) -> None:
    if not NAME_PATTERN.match(name):
        raise UsageError(
            f"'{name}' is not a role name",
            hint="use lowercase letters, digits and '-', 1 to 40 characters (e.g. builder)",
        )
    if name in BUILTIN_NAMES:
        raise UsageError(
            f"'{name}' is a built-in role and cannot be replaced", hint="pick another name"
        )


def _require_repo_role(root: Root, name: str) -> Path:
    path = repo_role_path(root, name)
    if path.is_file():
        return path
    if name in BUILTIN_NAMES:
        raise UsageError(f"'{name}' is a built-in role; it cannot be changed")
    for host_file, source in agent_files(root.path):
        if identity(file_stem(host_file)) == name or _named(host_file, source) == name:
            raise UsageError(
                f"'{name}' is {source}'s agent file {display(host_file)}: sdd changes it only "
                "with options, keeping the host's keys",
                hint=f"sdd role edit {name} --job ... (or pin, hide); or open the file yourself",
            )
    raise RecordError(
        f"no role '{name}' in this repo (no {display(path)})",
        hint=f"`sdd role list --all` shows the roles; from a template: sdd role add {name}",
    )


def _named(path: Path, source: str) -> str | None:
    try:
        return read_role(path, source=source, within=path.parents[2]).profile.name
    except (RecordError, OSError):
        return None


def _label_for(name: str) -> str:
    return name.replace("-", " ").capitalize()


def create(
    root: Root,
    name: str,
    job: str,
    *,
    label: str | None = None,
    description: str | None = None,
    template: str | None = None,
    level: float | None = None,
    delegation: str | None = None,
    produces: str | None = None,
    confirm: Confirm | None = None,
) -> Added:
    """A new role; from a template, its always_allow rules come along when it is shipped with
    sdd, or when `confirm` says yes (a shared template's rules are not the person's own)."""
    if not job.strip():
        raise UsageError(
            "the job is empty: a role has one job, and nothing was written",
            hint='sdd role create NAME --job "Implement accepted spec sections for ..."',
        )
    _check_name(name)
    if produces is None and template is None:
        # Never a default: `other` offers every tool, git_push and deploy included, and a
        # role made in passing must not get them without her saying so.
        raise UsageError(
            "say what the role produces; nothing was written",
            hint=f"add --produces ({', '.join(PRODUCES)}), e.g. sdd role create {name} "
            '--job "..." --produces code',
        )
    refuse_inside_run()  # before any question: a role run never gets to answer one
    _refuse_existing(root, name)
    updates: dict[str, Any] = {"role": name, "job": job.strip()}
    for key, value in (
        ("label", label),
        ("level", level),
        ("toolPolicy.delegation", delegation),
        ("produces", produces),
    ):
        if value is not None:
            updates[key] = int(value) if key == "level" and float(value).is_integer() else value
    if template is not None:
        folder = find_template(root, template)
        text, parsed = _read_template(folder / "ROLE.md")
        offered = parsed.profile.boundary.always_allow
        keep = is_shipped(folder, root) or _confirmed(confirm, parsed.profile, folder / "ROLE.md")
        updates.setdefault("label", _label_for(name))
        with person_write(root):
            _refuse_existing(root, name)
            path = _install(
                root, folder, name, updates, description, text, drop=not keep, pause=True
            )
            if keep:
                _confirm_file(root, path, "sdd role create --template")
        return _added(name, path, offered, keep)
    profile = RoleProfile(
        name=name,
        label=label or _label_for(name),
        job=job.strip(),
        level=level if level is not None else 0,
        delegation=delegation or "deny",
        produces=produces,
        description=description or "",
    )
    text = render_role(profile)
    parse_role(text, repo_role_path(root, name), folder_name=name)
    with person_write(root), confirming(root, repo_role_path(root, name), "sdd role create"):
        _refuse_existing(root, name)
        write_text_atomic(repo_role_path(root, name), text)
    return Added(name, repo_role_path(root, name))


def _role_text(root: Root, path: Path) -> str:
    """A role file's text: the product's own read with no link followed (a ROLE.md linked to
    docs/x.md is refused, and nothing is written from or through it); a pack as it is."""
    inside = beneath.within(root.path, path)
    return beneath.read_text(inside, path) if inside else path.read_text(encoding="utf-8")


def _refuse_existing(root: Root, name: str) -> None:
    if role_folder(root, name).exists():
        raise RecordError(
            f"a role named '{name}' already exists ({display(role_folder(root, name))})",
            hint=f"edit it (sdd role edit {name}) or choose another name",
        )


def _read_template(path: Path) -> tuple[str, ParsedRole]:
    """A template's ROLE.md, read once: the rules she is asked about are the rules installed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{display(path)}: role file not found") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{display(path)}: not UTF-8 text ({exc.reason})") from None
    return text, parse_role(text, path, source="template")


def _confirmed(confirm: Confirm | None, profile: RoleProfile, where: Path) -> bool:
    """She is shown everything the file grants; no one to ask: nothing of it counts."""
    return confirm is not None and confirm(grant_lines(profile), where)


def grant_lines(profile: RoleProfile) -> list[str]:
    """What a role file grants, line by line in words, as she is asked about it."""
    return role_changes(None, surface(profile))


def _confirm_file(root: Root, path: Path, how: str) -> None:
    """She confirmed what the role file at `path` grants, as it is now written."""
    profile = read_role(path, folder_name=path.parent.name, within=root.path).profile
    confirm_role(root, profile, how)


def _added(name: str, path: Path, rules: tuple[Rule, ...], kept: bool) -> Added:
    routines = path.parent / "routines"
    paused = tuple(sorted(p.stem for p in routines.glob("*.yaml"))) if routines.is_dir() else ()
    return Added(name, path, rules if kept else (), () if kept else rules, paused, kept)


def _install(
    root: Root,
    source: Path | None,
    name: str,
    updates: dict[str, Any],
    description: str | None,
    text: str | None = None,
    drop: bool = False,
    pause: bool = False,
) -> Path:
    """Copy a template folder in as the role `name`; its skills join `.sdd/skills/`.

    `text` is the ROLE.md as already read (and shown to the person); `drop` leaves its
    always_allow rules out. The role file appears whole, with that decision applied, or not at
    all. With no `source` folder (a single role file), only the role file is written.

    `pause`: the template's routines arrive paused. A routine starts the role on every event
    it listens to, with words she has not read: like a rule, it counts once she resumes it."""
    target = role_folder(root, name)
    if text is None:
        if source is None:
            raise UsageError("nothing to copy: no template folder and no role file text")
        text = (source / "ROLE.md").read_text(encoding="utf-8")
    if drop:
        text = drop_always_allow_text(text, target / "ROLE.md")
    text = edit_role_text(text, target / "ROLE.md", updates, description)
    parse_role(text, target / "ROLE.md", folder_name=name)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    try:
        if source is not None and (source / "routines").is_dir():
            _copy_folder(source / "routines", staging / "routines")
            if pause:
                _pause_routines(staging / "routines")
        write_text_atomic(staging / "ROLE.md", text)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    skills = source / "skills" if source is not None else None
    if skills is not None and skills.is_dir():
        for skill in sorted(p for p in skills.iterdir() if p.is_dir()):
            destination = root.sdd / "skills" / skill.name
            if not destination.exists():
                _copy_folder(skill, destination)
    return target / "ROLE.md"


def _copy_folder(source: Path, destination: Path) -> None:
    """A role's routines or a skill, copied as regular files and folders only: a link in it
    (`routines/nightly.yaml -> ~/.ssh/id_ed25519`, merged with the role) would otherwise put
    its target's bytes into her repository as a file of its own, ready for her next commit."""
    import os
    import stat

    def refuse(path: Path, what: str) -> None:
        raise UsageError(
            f"{display(path)} is {what}; sdd copies a role's routines and skills only as "
            "regular files and folders, so nothing was copied",
            hint=f"remove it (rm {display(path)}), or replace it with the file itself",
        )

    if source.is_symlink():
        refuse(source, "a link")
    for current, folders, files in os.walk(source, followlinks=False):
        for name in (*folders, *files):
            path = Path(current) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                refuse(path, "a link")
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                refuse(path, "not a regular file")
    shutil.copytree(source, destination, symlinks=True)


def _pause_routines(folder: Path) -> None:
    """Write `paused: true` into each routine file (comments and key order kept). A routine
    that cannot be paused so that sdd reads it paused (the editor reads it another way than
    sdd does: a key given twice) is left out of the copy: it never arrives running. A file
    that is no routine at all fires nothing, and is left as it is."""
    import io

    from ruamel.yaml import YAML

    from sdd_git.yamlio import round_trip_load

    for path in sorted(folder.glob("*.yaml")):
        editor = YAML(typ="rt")
        editor.width = 4096
        editor.preserve_quotes = True
        with contextlib.suppress(Exception):  # a file the editor cannot pause is judged below
            document = round_trip_load(editor, path.read_text(encoding="utf-8"), path)
            if hasattr(document, "insert"):
                document["paused"] = True
                buffer = io.StringIO()
                editor.dump(document, buffer)
                write_text_atomic(path, buffer.getvalue())
        if _would_run(path):
            path.unlink()


def _would_run(path: Path) -> bool:
    """Whether a routine file reads, as sdd's loader reads it, as a routine that is not paused
    (a trigger, and no `paused: true`). Decided on the parsed file, not on the routine's rules,
    which live above roles."""
    from sdd_git.yamlio import parse_yaml

    try:
        data = parse_yaml(path.read_text(encoding="utf-8"), path)
    except (RecordError, OSError, UnicodeDecodeError):
        return False  # not a file sdd would load: it fires nothing, and is left as it is
    if not isinstance(data, dict):
        return False
    triggered = any(k in data for k in ("on", True, "schedule"))
    return triggered and data.get("paused") is not True


def edit(root: Root, name: str, updates: dict[str, Any], description: str | None = None) -> Path:
    with person_write(root):
        path, target, source = _editable(root, name)
        if "role" in updates and updates["role"] != name:
            raise UsageError("a role is renamed by duplicating it, not by editing its name")
        if "job" in updates and not str(updates["job"]).strip():
            raise UsageError("the job is empty: a role has one job; nothing was changed")
        text = _role_text(root, path)
        new_text = edit_role_text(text, path, updates, description, source)
        if new_text != text:
            with confirming(root, path, "sdd role edit", source):
                write_text_atomic(target, new_text)
        return path


def _editable(root: Root, name: str) -> tuple[Path, Path, str]:
    """The role file to edit as it is named, the file to write, and its source.

    A repo role is edited in `.sdd/roles/`. Another host's agent file is edited where it is,
    in its own shape. An agent file that is a link never loads (sdd reads no link in the
    product), so none is edited through one."""
    path = repo_role_path(root, name)
    if path.is_file() or name in BUILTIN_NAMES:
        return _require_repo_role(root, name), path, "repo"
    profile, _ = find_role(root, name)
    if profile.source not in HOST_SOURCES or profile.path is None:
        _require_repo_role(root, name)  # raises, naming what can be changed instead
    assert profile.path is not None
    return profile.path, profile.path, profile.source


def add_always_allow(
    root: Root,
    name: str,
    tool: str,
    inputs: dict[str, Any] | None,
    *,
    prefix: list[str] | None = None,
    match: list[str] | None = None,
    saved: dict[str, str] | None = None,
) -> Path:
    """Save an "Always allow" answer: the same tool with the same inputs, for this role only;
    or, with `prefix`, a command-prefix rule whose `match` examples the file's reading checks.
    `saved`: when and from which stop, so that `sdd role rules` can say it."""
    rule: dict[str, Any] = {"tool": tool}
    if prefix is not None:
        rule.update(prefix=prefix, match=match or [])
    else:
        rule["inputs"] = inputs if inputs is not None else {}
    if saved is not None:
        rule["saved"] = saved
    from sdd_git.roles.roleedit import add_rule_text

    with person_write(root):
        path = repo_role_path(root, name)
        if not path.is_file():
            # A shipped template or a pack: the rule is this product's, so the role becomes a
            # file of this repo first, and the pack itself stays as it was.
            profile, _ = find_role(root, name)
            if profile.path is None or profile.source == "builtin":
                raise UsageError(f"'{name}' has no file to save a rule in")
            # Once in the repo, every rule in the file counts as hers: a pack's rules she has
            # not trusted stay behind, and only the rule she just allowed is added.
            pack_text = _role_text(root, profile.path)
            drop = bool(_held_rules(profile))
            _install(root, profile.path.parent, name, {"role": name}, None, pack_text, drop)
            if profile.trust is None or profile.trust.counts:
                _confirm_file(root, path, "sdd allow --always")
        text = _role_text(root, path)
        new_text = add_rule_text(text, path, "always_allow", rule)
        if new_text != text:
            with confirming(root, path, "sdd allow --always"):
                write_text_atomic(path, new_text)
        return path


@dataclass(frozen=True)
class Trusted:
    at: str
    key: str  # the ledger's key of the file she confirmed


def trust(root: Root, profile: RoleProfile, how: str) -> Trusted:
    """Record her confirmation of what the role's file grants, as it was shown to her
    (`profile.trust.surface`): a file changed while she read it stays unconfirmed."""
    from sdd_git.trust import ledger

    if profile.trust is None:
        raise UsageError(f"what '{profile.name}' grants counts already: nothing to confirm")
    with person_write(root):
        ledger.record(root, [(profile.trust.source, profile.trust.surface)], how)
    return Trusted(ledger.now(), profile.trust.source)


def _held_rules(profile: RoleProfile) -> tuple[Rule, ...]:
    """The always_allow rules of a role's file that she has not confirmed: a copy into the
    repo leaves them behind."""
    trust = profile.trust
    return trust.rules if trust is not None and not trust.counts else ()


def set_flag(root: Root, name: str, key: str, value: bool) -> Path:
    """Pin or hide a role. A repo role keeps the flag in its file and another host's agent
    file beside its own keys; a built-in, a shipped template or a pack in her view of the
    list (roles/view.py), never in a file that is not this repo's own."""
    from sdd_git.roles import view

    if not repo_role_path(root, name).is_file():
        profile, _ = find_role(root, name)  # no such role anywhere: said here
        if profile.source in view.VIEWED_SOURCES:
            with person_write(root):
                return view.set_flag(root, name, key, value)
    return edit(root, name, {key: value})


def begin_editor_edit(root: Root, name: str) -> tuple[Path, bool]:
    """The working copy the editor opens, and whether it resumes an earlier invalid save."""
    with person_write(root):
        path = _require_repo_role(root, name)
        working = pending_edit(root, name)
        if working.is_file():
            return working, True
        write_text_atomic(working, _role_text(root, path))
        return working, False


def finish_editor_edit(root: Root, name: str) -> bool:
    """Check the saved working copy; install it if valid. True when the role file changed."""
    working = pending_edit(root, name)
    with person_write(root):
        path = _require_repo_role(root, name)
        text = working.read_text(encoding="utf-8")
        try:
            parse_role(text, path, folder_name=name)
        except RoleFileError as exc:
            problems = [
                Problem(display(working), p.line, p.key, p.message, p.hint) for p in exc.problems
            ]
            error = RoleFileError(problems)
            error.hint = (
                f"{problems[0].hint}. Your text is kept in {display(working)}; "
                f"run `sdd role edit {name}` again to continue from it"
            ).lstrip(". ")
            raise error from None
        changed = text != _role_text(root, path)
        if changed:
            with confirming(root, path, "sdd role edit"):
                write_text_atomic(path, text)
        working.unlink()
        return changed


def _unique_name(root: Root, base: str, suffix: str) -> str:
    for number in range(1, 1000):
        candidate = f"{base}{suffix}" if number == 1 else f"{base}{suffix}-{number}"
        if suffix == "" and number > 1:
            candidate = f"{base}-{number}"
        if len(candidate) > 40:
            raise UsageError(f"no free name for a copy of '{base}' within 40 characters")
        if candidate not in BUILTIN_NAMES and not role_folder(root, candidate).exists():
            return candidate
    raise UsageError(f"no free name for '{base}'")


def duplicate(root: Root, name: str) -> Added:
    """`NAME-copy`: profile, settings, skills, routines and boundary; never the conversation.

    A copy of a pack is a repo role, whose rules count as written: so a pack's always_allow
    rules she has not trusted are left out of it."""
    with person_write(root):
        profile, _ = find_role(root, name)
        if profile.path is None:
            raise UsageError(f"'{name}' is {profile.source} and has no file to copy")
        new_name = _unique_name(root, name, "-copy")
        text = _role_text(root, profile.path)
        held = _held_rules(profile)
        path = _install(
            root,
            profile.path.parent,
            new_name,
            # A copy starts unpinned: pinning is what she chose for the original.
            {"role": new_name, "label": f"{profile.label} copy", "pinned": False},
            None,
            text,
            drop=bool(held),
        )
        if profile.trust is None or profile.trust.counts:
            _confirm_file(root, path, "sdd role duplicate")
        return Added(new_name, path, left_out=held)


@dataclass(frozen=True)
class Deleted:
    profile: Path
    local: Path | None


def delete(root: Root, name: str) -> Deleted:
    """Remove the profile with its routines, and the role's conversation and memory."""
    with person_write(root):
        _require_repo_role(root, name)
        folder = role_folder(root, name)
        local = local_folder(root, name)
        shutil.rmtree(folder)
        had_local = local.exists()
        if had_local:
            shutil.rmtree(local)
        return Deleted(folder, local if had_local else None)


def share(root: Root, name: str, force: bool = False) -> Path:
    """Write templates/NAME/: job, description, skills, routines, boundary; no secrets."""
    with person_write(root):
        path = _require_repo_role(root, name)
        target = root.path / "templates" / name
        if target.exists() and not force:
            raise RecordError(
                f"{display(target)} exists already",
                hint=f"pass --force to replace it with the current {name}",
            )
        profile = read_role(path, folder_name=name, within=root.path).profile
        updates: dict[str, Any] = {"pinned": False, "hidden": False}
        if isinstance(profile.model, str):
            updates["model"] = profile.model  # an alias names no secret
        elif profile.model:
            updates["model"] = {k: v for k, v in profile.model.items() if not _is_secret(k)}
        text = edit_role_text(_role_text(root, path), path, updates)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root.path))
        try:
            write_text_atomic(staging / "ROLE.md", text)
            if (path.parent / "routines").is_dir():
                _copy_folder(path.parent / "routines", staging / "routines")
            for skill in profile.skills:
                source = root.sdd / "skills" / skill
                if source.is_dir():
                    _copy_folder(source, staging / "skills" / skill)
            if target.exists():
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            staging.rename(target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return target


def _is_secret(key: str) -> bool:
    return bool(_SECRET_KEY.search(key)) and key != "api_key_env"


def add(root: Root, source: str, name: str | None = None, confirm: Confirm | None = None) -> Added:
    """A template becomes a new role; the name is made unique, so adding twice makes two roles.

    `source` is a template folder (a path, a templates/ entry or a shipped one) or one role
    file (a ROLE.md, or another host's agent file such as .claude/agents/NAME.md, which brings
    no routines or skills). Its always_allow rules are kept only when `confirm` says yes;
    otherwise the role is added without them. Its ask_first rules only make it ask more: they
    are always kept."""
    refuse_inside_run()  # before any question: a role run never gets to answer one
    as_file = Path(source)
    folder: Path | None = None
    if as_file.is_file():
        role_md = as_file
    else:
        folder = find_template(root, source)
        role_md = folder / "ROLE.md"
    text, parsed = _read_template(role_md)
    base = name or parsed.profile.name
    _check_name(base)
    offered = parsed.profile.boundary.always_allow
    # Shipped with sdd counts as shipped; anything else is asked before the lock is taken.
    shipped = folder is not None and is_shipped(folder, root)
    keep = shipped or _confirmed(confirm, parsed.profile, role_md)
    with person_write(root):
        new_name = _unique_name(root, base, "")
        path = _install(
            root, folder, new_name, {"role": new_name}, None, text, drop=not keep, pause=True
        )
        if keep:
            _confirm_file(root, path, "sdd role add")
    return _added(new_name, path, offered, keep)


@dataclass(frozen=True)
class Checked:
    path: Path
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)


def validate(root: Root | None, target: Path | None) -> list[Checked]:
    """Check role files: sdd's ROLE.md and other hosts' agent files. A folder that holds none
    is an error: checking nothing must not look like a pass."""
    if target is None:
        if root is None:
            raise UsageError("name a role file or folder to check")
        paths = sorted((root.sdd / "roles").glob("*/ROLE.md"))
        paths += sorted((root.path / "templates").glob("*/ROLE.md"))
        paths += [path for path, _ in agent_files(root.path)]
    elif target.is_file():
        paths = [target]
    elif (target / "ROLE.md").is_file():
        paths = [target / "ROLE.md"]
    elif target.is_dir():
        paths = sorted(target.rglob("ROLE.md"))
        paths += sorted(
            p for p in target.rglob("*.md") if p.name != "ROLE.md" and _host_file(p) is not None
        )
        if not paths:
            raise RecordError(
                f"{display(target)}: no role files here, so nothing was checked",
                hint="role files are .sdd/roles/NAME/ROLE.md, and other hosts' agent files "
                ".claude/agents/NAME.md and .github/agents/NAME.agent.md",
            )
    else:
        raise RecordError(f"{target}: no such file or folder")
    results = []
    for path in paths:
        folder_name = (
            path.parent.name if path.parent.parent.name in ("roles", "templates") else None
        )
        source = _host_file(path) or "repo"
        if source != "repo":
            folder_name = None
        try:
            inside = beneath.within(root.path, path) if root is not None else None
            parsed = read_role(path, source=source, folder_name=folder_name, within=inside)
            results.append(Checked(path, parsed.warnings))
        except RoleFileError as exc:
            results.append(Checked(path, exc.problems + exc.warnings))
    return results


def _host_file(path: Path) -> str | None:
    """`claude` or `copilot` for another host's agent file (by folder, or `.agent.md`)."""
    if path.name == "ROLE.md":
        return None
    return host_of(path) or ("copilot" if path.name.endswith(".agent.md") else None)
