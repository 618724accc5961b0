"""Skills: folders holding a SKILL.md, as the Agent Skills standard (agentskills.io) defines them.

A skill is found in the product's `.sdd/skills`, `.agents/skills`, `.claude/skills` or
`.github/skills` (the first wins on a name clash, with a warning). The standard's progressive
disclosure is kept: a role's system prompt carries only each skill's name and description; the
body loads when the model calls `use_skill` or the person writes `/name`; the folder's other
files are read with the read tools on demand. Frontmatter never reaches a model.

Two readings of one file: `check_text` is strict (every rule of the standard, for
`sdd skill validate`), `discover` is lenient as the standard's client guide advises (a name that
does not match its folder still loads, with a warning; a skill with no description, or whose
frontmatter cannot be read at all, is skipped with a warning), so a skill written for another
host still works here.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from sdd_git import beneath, frontmatter
from sdd_git.errors import RecordError
from sdd_git.paths import display
from sdd_git.roles.rolefile import Problem

try:
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

# Where a product keeps skills, in the order a name clash is decided: sdd's own folder first,
# then the cross-client convention, then the two hosts whose skills people already have.
SKILL_FOLDERS = (".sdd/skills", ".agents/skills", ".claude/skills", ".github/skills")
SKILL_FILE = "SKILL.md"

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_BODY_BYTES = 200 * 1024  # as read_file: a body past this is cut, with a note
MAX_RESOURCES = 50  # files listed beside a loaded body; the model reads them on demand
ALLOWED_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
_ALLOWED_TEXT = ", ".join(ALLOWED_KEYS)


def valid_name(name: str) -> bool:
    """The standard's name rule: 1-64 lowercase letters or digits and single inner hyphens."""
    if not 1 <= len(name) <= MAX_NAME or name != name.lower():
        return False
    if name.startswith("-") or name.endswith("-") or "--" in name:
        return False
    return all(c.isalnum() or c == "-" for c in name)


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path  # the SKILL.md file
    source: str  # which of SKILL_FOLDERS it was found in
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()

    @property
    def folder(self) -> Path:
        return self.path.parent

    def as_json(self, root: Path) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "path": _relative(self.path, root),
            "source": self.source,
            "license": self.license,
            "compatibility": self.compatibility,
            "metadata": dict(self.metadata),
            "allowed_tools": list(self.allowed_tools),
        }


@dataclass(frozen=True)
class Catalog:
    """Every skill of a product by name, and what was odd on the way."""

    skills: dict[str, Skill]
    warnings: tuple[str, ...] = ()

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def __bool__(self) -> bool:
        return bool(self.skills)


@dataclass(frozen=True)
class Checked:
    """One SKILL.md read against the standard: its fields, its body, and every problem."""

    path: Path
    data: dict[str, Any]
    body: str
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)


class SkillFileError(RecordError):
    """A SKILL.md that breaks the standard; `problems` holds every one found."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = tuple(problems)
        first = self.problems[0]
        extra = f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        super().__init__(first.render() + extra, hint=first.hint)


# --- reading one file ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Split:
    front: str
    body: str
    front_line: int  # 1-based file line of the front matter's first line


def _split(text: str) -> _Split | None:
    """The front matter between the opening and closing `---` lines, or None if there is none."""
    try:
        parts = frontmatter.split(text)
    except (frontmatter.NotOpened, frontmatter.NotClosed):
        return None
    return _Split(parts.front, parts.body.strip(), frontmatter.FRONT_LINE)


def _key_lines(front: str, first_line: int) -> dict[str, int]:
    """Top-level key -> 1-based file line, and each duplicated key under `key#2`."""
    lines: dict[str, int] = {}
    try:
        node = yaml.compose(front, Loader=_Loader)
    except yaml.YAMLError:
        return lines
    if isinstance(node, yaml.MappingNode):
        for key_node, _value in node.value:
            key = str(key_node.value)
            at = key_node.start_mark.line + first_line
            lines[f"{key}#2" if key in lines else key] = at
    return lines


def _flow_keys(front: str) -> list[str]:
    """Top-level keys whose value is written in flow style (`[a, b]`, `{a: b}`)."""
    try:
        node = yaml.compose(front, Loader=_Loader)
    except yaml.YAMLError:
        return []
    if not isinstance(node, yaml.MappingNode):
        return []
    return [
        str(key.value)
        for key, value in node.value
        if isinstance(value, yaml.SequenceNode | yaml.MappingNode) and value.flow_style
    ]


def _quoted_fallback(front: str, where: str, line_offset: int) -> dict[str, Any] | None:
    """Frontmatter that other hosts accept though it is not YAML: an unquoted `: ` inside a
    top-level value (`description: Use when: ...`). Each such value is quoted and read again."""
    fixed = []
    for raw in front.splitlines():
        key, sep, value = raw.partition(":")
        value = value.strip()
        if sep and key and not raw[:1].isspace() and ": " in value and value[:1] not in "\"'[{|>":
            raw = f"{key}: " + '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        fixed.append(raw)
    from sdd_git.yamlio import refuse_alias_bombs

    repaired = "\n".join(fixed)
    # The repaired text is new YAML: bounded like the text it came from, which did not parse.
    refuse_alias_bombs(repaired, where, line_offset)
    try:
        data = yaml.load(repaired, Loader=_Loader)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def check_text(text: str, where: str, folder_name: str | None) -> Checked:
    """Read one SKILL.md strictly: every rule of the standard, each problem with its line."""
    path = Path(where)
    split = _split(text)
    if split is None:
        problem = Problem(
            where, 1, None, "a SKILL.md must start with YAML frontmatter between two '---' lines",
            "put 'name: ...' and 'description: ...' between two '---' lines at the top",
        )  # fmt: skip
        return Checked(path, {}, text.strip(), (problem,))
    problems: list[Problem] = []
    from sdd_git.yamlio import AliasBomb, refuse_alias_bombs

    try:
        refuse_alias_bombs(split.front, where, split.front_line - 1)
    except AliasBomb as exc:
        problem = Problem(where, exc.line, None, exc.message.split(": ", 1)[-1], exc.hint or "")
        return Checked(path, {}, split.body, (problem,))
    try:
        loaded = yaml.load(split.front, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = split.front_line + (mark.line if mark is not None else 0)
        try:
            loaded = _quoted_fallback(split.front, where, split.front_line - 1)
        except AliasBomb as bomb:
            problem = Problem(
                where, bomb.line, None, bomb.message.split(": ", 1)[-1], bomb.hint or ""
            )
            return Checked(path, {}, split.body, (problem,))
        hint = (
            "quote the value: a ': ' inside it reads as a new key"
            if loaded is not None
            else "check the indentation and quoting on that line"
        )
        problems.append(Problem(where, line, None, "the frontmatter is not valid YAML", hint))
        if loaded is None:
            return Checked(path, {}, split.body, tuple(problems))
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        problems.append(
            Problem(
                where, split.front_line, None, "the frontmatter must be 'key: value' lines",
                "write name: and description: on their own lines",
            )
        )  # fmt: skip
        return Checked(path, {}, split.body, tuple(problems))
    data: dict[str, Any] = {str(k): v for k, v in loaded.items()}
    lines = _key_lines(split.front, split.front_line)

    def add(key: str | None, message: str, hint: str, severity: str = "error") -> None:
        line = lines.get(key or "", split.front_line) if key else split.front_line
        problems.append(Problem(where, line, key, message, hint, severity))

    for key in lines:
        if key.endswith("#2"):
            base = key[:-2]
            problems.append(
                Problem(
                    where, lines[key], base, "the key appears twice",
                    "keep one; YAML readers disagree on which one counts",
                )
            )  # fmt: skip
    for key in _flow_keys(split.front):
        add(
            key,
            "uses flow style ([...] or {...}), which the reference validator skills-ref refuses",
            "write it in block style, one item per line",
            "warning",
        )
    for key in data:
        if key not in ALLOWED_KEYS:
            add(
                key,
                "is not a key of the Agent Skills standard",
                f"the standard allows only {_ALLOWED_TEXT}; put anything else under metadata:",
            )
    _check_name(data, folder_name, add)
    _check_description(data, add)
    _check_optional(data, add)
    return Checked(path, data, split.body, tuple(problems))


class _Add(Protocol):
    """The `add` callback of check_text: one problem, at the key's line."""

    def __call__(
        self, key: str | None, message: str, hint: str, severity: str = "error"
    ) -> None: ...


def _check_name(data: dict[str, Any], folder_name: str | None, add: _Add) -> None:
    if "name" not in data:
        add(None, "the required key 'name' is missing", "add name: the-folder-name")
        return
    name = data["name"]
    if not isinstance(name, str) or not name.strip():
        add("name", "must be non-empty text", "e.g. name: pdf-processing")
        return
    name = unicodedata.normalize("NFKC", name.strip())
    if not valid_name(name):
        add(
            "name",
            f"'{name}' is not a skill name",
            f"1-{MAX_NAME} lowercase letters, digits and single hyphens, not first or last "
            "(e.g. pdf-processing)",
        )
    if folder_name is not None and unicodedata.normalize("NFKC", folder_name) != name:
        add(
            "name",
            f"'{name}' does not match its folder '{folder_name}'",
            f"rename the folder to {name}/, or set name: {folder_name}",
        )


def _check_description(data: dict[str, Any], add: _Add) -> None:
    if "description" not in data:
        add(
            None,
            "the required key 'description' is missing",
            "add description: what the skill does and when to use it",
        )
        return
    _check_text(
        data,
        "description",
        MAX_DESCRIPTION,
        add,
        "say what the skill does and when to use it",
        "shorten it; put detail in the body",
    )


def _check_text(
    data: dict[str, Any], key: str, most: int, add: _Add, empty_hint: str, long_hint: str
) -> None:
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        add(key, "must be non-empty text", empty_hint)
    elif len(value) > most:
        add(key, f"is {len(value)} characters; the standard allows {most}", long_hint)


def _check_optional(data: dict[str, Any], add: _Add) -> None:
    if "license" in data and not isinstance(data["license"], str):
        add("license", "must be text", "a license name, or the name of a bundled license file")
    if "compatibility" in data:
        hint = "e.g. compatibility: Requires git"
        _check_text(data, "compatibility", MAX_COMPATIBILITY, add, hint, "shorten it")
    if "metadata" in data:
        value = data["metadata"]
        if not isinstance(value, dict):
            add("metadata", "must be a map of text keys to text values", "e.g. author: me")
        else:
            for key, item in value.items():
                if isinstance(item, dict | list) or item is None:
                    add("metadata", f"'{key}' must be a text value", f'e.g. {key}: "..."')
                elif not isinstance(item, str):
                    add(
                        "metadata",
                        f"'{key}' is {type(item).__name__}, not text",
                        f'quote it: {key}: "{item}"',
                        "warning",
                    )
    if "allowed-tools" in data and not isinstance(data["allowed-tools"], str):
        add(
            "allowed-tools",
            "must be one space-separated text",
            "e.g. allowed-tools: Read Grep Bash(git:*)",
        )


# --- finding a product's skills -----------------------------------------------------------------


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def skill_files(root: Path, refused: list[str] | None = None) -> Iterator[tuple[str, Path]]:
    """(source folder, SKILL.md) for each skill folder directly under the four skill folders.

    A skill is read into a prompt: a link (a skill folder, a SKILL.md, a skill folder's parent)
    is never followed, and is said in `refused` when it is given."""
    for source in SKILL_FOLDERS:
        try:
            listed = beneath.entries(root, source)
            for name in listed.folders:
                kind = beneath.kind(root, f"{source}/{name}/{SKILL_FILE}")
                if kind == "file":
                    yield source, root / source / name / SKILL_FILE
                elif kind is not None and refused is not None:
                    refused.append(f"{source}/{name}/{SKILL_FILE} is not a regular file")
        except beneath.Refused as exc:
            if refused is not None:
                refused.append(exc.message)
            continue
        if refused is not None:
            refused.extend(listed.refused)


def _read(path: Path, root: Path | None) -> str:
    """A SKILL.md's text, read no further than the YAML cap (its front matter is YAML)."""
    from sdd_git.yamlio import MAX_YAML_BYTES, capped

    if root is not None:
        data = beneath.read_bytes(root, path, MAX_YAML_BYTES + 1)
    else:
        with path.open("rb") as handle:
            data = handle.read(MAX_YAML_BYTES + 1)
    return capped(data, path).decode("utf-8")


def _text_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return ()


def front_matter(path: Path, root: Path | None) -> dict[str, Any]:
    """A skill's front matter as it loads (its grant surface); empty when it does not load.
    `root`: the product holding it (read with no link followed), None for a file of hers."""
    try:
        text = _read(path, root)
    except (OSError, UnicodeDecodeError, RecordError):
        return {}
    return dict(check_text(text, path.name, path.parent.name).data)


def load_skill(path: Path, source: str, root: Path) -> tuple[Skill | None, list[str]]:
    """One skill, leniently: loaded when it has a name and a description, with a warning for
    each rule it breaks; else None and the reason."""
    shown = _relative(path, root)
    try:
        text = _read(path, root)
    except beneath.Refused as exc:
        return None, [f"warning: skipped {exc.message}"]
    except RecordError as exc:
        return None, [f"warning: skipped {exc.message}"]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [f"warning: skipped {shown}: it cannot be read ({exc})"]
    checked = check_text(text, shown, path.parent.name)
    data = checked.data
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        first = checked.problems[0].render() if checked.problems else shown
        return None, [f"warning: skipped {first} (a skill needs a name and a description)"]
    name = data.get("name")
    name = name.strip() if isinstance(name, str) and name.strip() else path.parent.name
    warnings = [f"warning: {p.render()}" for p in checked.problems]
    metadata = data.get("metadata")
    skill = Skill(
        name=unicodedata.normalize("NFKC", name),
        description=" ".join(description.split()),
        path=path,
        source=source,
        license=str(data["license"]) if data.get("license") is not None else None,
        compatibility=str(data["compatibility"]) if data.get("compatibility") else None,
        metadata={str(k): str(v) for k, v in metadata.items()}
        if isinstance(metadata, dict)
        else {},
        allowed_tools=_text_list(data.get("allowed-tools")),
    )
    return skill, warnings


def discover(root: Path) -> Catalog:
    """Every skill of the product, by name; the first folder in SKILL_FOLDERS wins a clash."""
    found: dict[str, Skill] = {}
    warnings: list[str] = []
    refused: list[str] = []
    for source, path in skill_files(root, refused):
        skill, notes = load_skill(path, source, root)
        warnings.extend(notes)
        if skill is None:
            continue
        if skill.name in found:
            kept = found[skill.name]
            warnings.append(
                f"warning: {_relative(path, root)} is shadowed by "
                f"{_relative(kept.path, root)}: both are the skill '{skill.name}'"
            )
            continue
        found[skill.name] = skill
    warnings.extend(f"warning: skipped {why}" for why in refused)
    return Catalog(found, tuple(warnings))


def for_role(
    catalog: Catalog, names: Iterable[str], role_file: Path | None, root: Path
) -> tuple[tuple[Skill, ...], tuple[str, ...]]:
    """The skills a role's `skills:` names, and a warning for each name no skill has."""
    where = _relative(role_file, root) if role_file is not None else "the role"
    out: list[Skill] = []
    warnings: list[str] = []
    for name in names:
        skill = catalog.get(name)
        if skill is None:
            warnings.append(
                f"warning: {where}: key 'skills': no skill '{name}' in {', '.join(SKILL_FOLDERS)}"
            )
        elif skill not in out:
            out.append(skill)
    return tuple(out), tuple(warnings)


# --- what a model receives ----------------------------------------------------------------------


def body(skill: Skill, root: Path) -> str:
    """The skill's instructions, read now (an edit since discovery counts), frontmatter removed.
    Read with no link followed: the file may have been swapped for one since discovery."""
    text = _read(skill.path, beneath.within(root, skill.path))
    split = _split(text)
    content = split.body if split is not None else text.strip()
    data = content.encode("utf-8")
    if len(data) > MAX_BODY_BYTES:
        kept = data[:MAX_BODY_BYTES].decode("utf-8", errors="ignore")
        content = f"{kept}\n[cut: the body is {len(data):,} bytes; this shows the first 200 KB]"
    return content


def resources(skill: Skill, root: Path) -> list[str]:
    """The skill folder's other files (references/, scripts/, assets/), product-relative, never
    read here: the model opens the ones the body points to with read_file."""
    out: list[str] = []
    for path in sorted(skill.folder.rglob("*")):
        if path.name == SKILL_FILE and path.parent == skill.folder:
            continue
        if path.is_file() and not path.is_symlink() and ".git" not in path.parts:
            out.append(_relative(path, root))
            if len(out) > MAX_RESOURCES:
                break
    return out


def activation(skill: Skill, root: Path) -> str:
    """The body as the model receives it, wrapped so it is told apart from other text, with the
    folder its relative paths start from and the files it may read next."""
    folder = _relative(skill.folder, root)
    lines = [f'<skill_content name="{skill.name}">', body(skill, root), ""]
    lines.append(
        f"Skill folder: {folder} (relative paths in this skill start there; read its files with "
        "read_file; a script runs only through run_command, which stops for the person)."
    )
    files = resources(skill, root)
    if files:
        shown = files[:MAX_RESOURCES]
        lines.append("<skill_resources>")
        lines.extend(f"  <file>{f}</file>" for f in shown)
        if len(files) > MAX_RESOURCES:
            lines.append(f"  (more files than {MAX_RESOURCES}; list_files {folder} shows all)")
        lines.append("</skill_resources>")
    lines.append("</skill_content>")
    return "\n".join(lines)


def catalog_text(skills: Iterable[Skill]) -> str:
    """The standard's tier 1: name and description of each skill, never its frontmatter or body."""
    listed = list(skills)
    if not listed:
        return ""
    lines = [
        "Skills: instructions for particular tasks. When a task matches a skill's description, "
        "call use_skill with its name to load its instructions before you start.",
        "<available_skills>",
    ]
    for skill in listed:
        lines.append(
            f"  <skill><name>{_escape(skill.name)}</name>"
            f"<description>{_escape(skill.description)}</description></skill>"
        )
    lines.append("</available_skills>")
    return "\n".join(lines)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# --- validate -----------------------------------------------------------------------------------


def check_file(path: Path, root: Path | None = None) -> Checked:
    shown = display(path)
    try:
        text = _read(path, beneath.within(root, path) if root is not None else None)
    except RecordError as exc:
        return Checked(path, {}, "", (Problem(shown, 1, None, exc.message, exc.hint or ""),))
    except (OSError, UnicodeDecodeError) as exc:
        problem = Problem(shown, 1, None, f"cannot be read ({exc})", "save it as UTF-8 text")
        return Checked(path, {}, "", (problem,))
    return check_text(text, shown, path.parent.name)


def files_to_check(root: Path | None, target: Path | None) -> list[Path]:
    """The SKILL.md files `sdd skill validate [PATH]` checks: PATH's (a SKILL.md, a skill folder,
    or any folder holding skills), else the product's and its templates'."""
    if target is None:
        if root is None:
            raise RecordError("name a skill file or folder to check")
        paths = [p for _source, p in skill_files(root)]
        paths += sorted((root / "templates").glob(f"*/skills/*/{SKILL_FILE}"))
        return paths
    if target.is_file():
        return [target]
    if (target / SKILL_FILE).is_file():
        return [target / SKILL_FILE]
    if target.is_dir():
        return sorted(p for p in target.rglob(SKILL_FILE) if ".git" not in p.parts)
    raise RecordError(f"{target}: no such file or folder")
