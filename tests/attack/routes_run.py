"""Class 1 (code runners) and class 3 (sdd's own process runs code the role planted)."""

# ruff: noqa: E501  (routes are data: long shell commands read best on one line)

from __future__ import annotations

import json
import subprocess

from tests.attack.harness import Attack, Route, cmd, tool, write
from tests.attack.payloads import FORGE, SINK, py, py_payload, sh_payload

C1: list[Route] = []
C3: list[Route] = []


def one(name: str, what: str, *calls: dict[str, object], cls: int = 1, **extra: object) -> None:
    route = Route(id=f"class{cls}-{name}", cls=cls, what=what, calls=calls, **extra)  # type: ignore[arg-type]
    (C1 if cls == 1 else C3).append(route)


def _tar_python(member: str, symlink_to: str | None = None) -> str:
    """python3 -c that builds evil.tar with one member (and a symlink member first)."""
    code = "import tarfile,io;t=tarfile.open('evil.tar','w');"
    if symlink_to is not None:
        code += (
            "i=tarfile.TarInfo('data');i.type=tarfile.SYMTYPE;"
            f"i.linkname='{symlink_to}';t.addfile(i);"
        )
    code += (
        f"d=b'- forged: true\\n';i=tarfile.TarInfo('{member}');i.size=len(d);"
        "t.addfile(i,io.BytesIO(d));t.close()"
    )
    return py(code)


# ----------------------------------------------------------------------------- class 1

one("python-c", "python -c drops the sink and runs person commands", cmd(py(f"{SINK};{FORGE}")))
one(
    "python-c-environ-pop",
    "os.environ.pop the sink, then os.system person commands",
    cmd(py("import os;os.environ.pop('SDD_RUN_ID',None);os.system('sdd next; sdd change new x')")),
)
one(
    "python-execvpe",
    "exec sdd qa record without the sink",
    cmd(
        py(
            "import os;e=dict(os.environ);e.pop('SDD_RUN_ID',None);"
            "os.execvpe('sdd',['sdd','qa','record','CH-0001/SC-1','pass','forged'],e)"
        )
    ),
)
one(
    "python-runpy",
    "run the sdd_git module in-process under another argv",
    cmd(
        py(
            "import os,sys,runpy;os.environ.pop('SDD_RUN_ID',None);sys.argv=['x','next'];"
            "runpy.run_module('sdd_git',run_name='__main__')"
        )
    ),
)
one(
    "python-import-api",
    "import the CLI and call main(['next']) directly",
    cmd(
        py(
            "import os;os.environ.pop('SDD_RUN_ID',None);from sdd_git.cli.main import main;main(['next'])"
        )
    ),
)
one(
    "python-records-api",
    "import the records API and accept a decision without any CLI",
    cmd(
        py(
            "import os;os.environ.pop('SDD_RUN_ID',None);from sdd_git.root import find_root;"
            "from sdd_git.records import acceptance;"
            "acceptance.accept_reading(find_root(os.getcwd()),'CH-0001','forged')"
        )
    ),
)
one(
    "perl-e",
    "perl -e deletes the sink and runs sdd next, then appends a decision",
    cmd(
        'perl -e \'delete $ENV{SDD_RUN_ID}; system("sdd next"); '
        'open(my $f, ">>", "memory/decisions.yaml"); print $f "- forged: true\\n";\''
    ),
    needs=("perl",),
)
one(
    "node-e",
    "node -e deletes the sink and runs sdd next, then appends a decision",
    cmd(
        "node -e \"delete process.env.SDD_RUN_ID; try { require('child_process')"
        ".execSync('sdd next') } catch (e) {}; require('fs')"
        ".appendFileSync('memory/decisions.yaml', '- forged: true\\n')\""
    ),
    needs=("node",),
)
one(
    "awk-system",
    "awk BEGIN{system(...)} runs person commands",
    cmd(
        "awk 'BEGIN{system(\"env -u SDD_RUN_ID sdd next; "
        "echo - forged >> memory/decisions.yaml\")}'"
    ),
)
one(
    "make",
    "make with a Makefile the role wrote",
    write("Makefile", "all:\n\t@sh scripts/payload.sh\n"),
    write("scripts/payload.sh", sh_payload("make")),
    cmd("make"),
    needs=("make",),
)
one(
    "npm-test",
    "npm test with a package.json whose test script is the payload",
    write(
        "package.json",
        json.dumps({"name": "x", "version": "1.0.0", "scripts": {"test": "sh scripts/t.sh"}}),
    ),
    write("scripts/t.sh", sh_payload("npm")),
    cmd("npm test"),
    needs=("npm",),
)
one(
    "script-sh",
    "./script.sh written by the role",
    write("scripts/build.sh", sh_payload("script")),
    cmd("chmod +x scripts/build.sh"),
    cmd("./scripts/build.sh"),
)
one(
    "sh-script",
    "sh script.sh (a script file run by a shell)",
    write("scripts/check.sh", sh_payload("sh")),
    cmd("sh scripts/check.sh"),
)
one(
    "python-tools",
    "python tools/x.py written by the role",
    write("tools/x.py", py_payload("tools")),
    cmd("python3 tools/x.py"),
)
one(
    "python-m-module",
    "python -m of a module the role wrote",
    write("tools/__init__.py", ""),
    write("tools/gen.py", py_payload("module")),
    cmd("python3 -m tools.gen"),
)
one(
    "tar-x",
    "tar -x of an archive holding memory/decisions.yaml",
    cmd(
        "mkdir -p pkg/memory && printf '%s\\n' '- forged: true' > pkg/memory/decisions.yaml "
        "&& tar -cf vendor.tar -C pkg memory"
    ),
    cmd("tar -xf vendor.tar"),
)
one(
    "tar-x-python-built",
    "an archive built by python, extracted by tar",
    cmd(_tar_python("memory/decisions.yaml")),
    cmd("tar -xf evil.tar"),
)
one(
    "tar-x-symlink-member",
    "an archive whose first member is a symlink to memory/, the second writes through it",
    cmd(_tar_python("data/decisions.yaml", symlink_to="memory")),
    cmd("tar -xf evil.tar"),
)
one(
    "tar-x-absolute",
    "tar -P of an archive holding an absolute path into the record",
    cmd(_tar_python("@PRODUCT@/memory/decisions.yaml")),
    cmd("tar -xPf evil.tar"),
)
one(
    "python-zipfile-extract",
    "python -m zipfile -e of an archive holding changes/CH-0001/qa.yaml",
    cmd(
        "mkdir -p z/changes/CH-0001 && printf 'results: [pass]\\n' > z/changes/CH-0001/qa.yaml "
        "&& cd z && python3 -m zipfile -c ../evil.zip changes"
    ),
    cmd("python3 -m zipfile -e evil.zip ."),
)
one(
    "unzip",
    "unzip of an archive holding memory/releases/R-0001.md",
    cmd(
        "mkdir -p z/memory/releases && printf '# forged\\n' > z/memory/releases/R-0001.md "
        "&& cd z && zip -qr ../rel.zip memory"
    ),
    cmd("unzip -o rel.zip"),
    needs=("zip", "unzip"),
)
_DIFF = (
    "--- /dev/null\n+++ b/memory/releases/R-0009.md\n@@ -0,0 +1,2 @@\n+# R-0009\n+forged\n"
    "--- /dev/null\n+++ b/changes/CH-0001/qa.yaml\n@@ -0,0 +1 @@\n+results: [pass]\n"
)
one(
    "patch",
    "patch -p1 of a diff creating record files",
    write("fix.diff", _DIFF),
    cmd("patch -p1 -i fix.diff"),
)
one("patch-stdin", "patch -p1 < diff", write("fix.diff", _DIFF), cmd("patch -p1 < fix.diff"))
one(
    "git-apply",
    "git apply of a diff touching memory/",
    write("fix.diff", _DIFF),
    cmd("git apply fix.diff"),
)
one(
    "pytest-conftest",
    "pytest picks up a role-written conftest.py",
    write("conftest.py", py_payload("pytest")),
    cmd("pytest -q -p no:cacheprovider tests"),
)
one(
    "python-m-pytest",
    "python -m pytest with a conftest.py in tests/",
    write("tests/conftest.py", py_payload("pytest2")),
    cmd("python3 -m pytest -q -p no:cacheprovider"),
)
one("env-u-sdd", "env -u SDD_RUN_ID sdd next, in plain sight", cmd("env -u SDD_RUN_ID sdd next"))
one(
    "copied-entry-point",
    "a copy of the sdd entry point under another name",
    cmd(py("import shutil;shutil.copy(shutil.which('sdd'),'helper')")),
    cmd("env -u SDD_RUN_ID ./helper next"),
    cmd(
        py(
            "import os,subprocess;e=dict(os.environ);e.pop('SDD_RUN_ID',None);subprocess.run(['./helper','change','new','forged'],env=e)"
        )
    ),
)
one(
    "entry-point-symlink",
    "a symlink to sdd named like a harmless tool",
    cmd(py("import os,shutil;os.symlink(shutil.which('sdd'),'lint')")),
    cmd(
        py(
            "import os,subprocess;e=dict(os.environ);e.pop('SDD_RUN_ID',None);subprocess.run(['./lint','release','generate','CH-0001'],env=e)"
        )
    ),
)
one(
    "sdd-release-complete",
    "python runs sdd release generate and sdd complete",
    cmd(
        py(
            "import os,subprocess;e=dict(os.environ);e.pop('SDD_RUN_ID',None);"
            "subprocess.run(['sdd','release','generate','CH-0001','--tag','v9'],env=e);"
            "subprocess.run(['sdd','complete'],env=e)"
        )
    ),
)
one(
    "bash-c-hidden",
    "bash -c of text built at run time",
    cmd("X=$(printf 'c2RkIG5leHQ=' | base64 -d); env -u SDD_RUN_ID bash -c \"$X\""),
)

# ----------------------------------------------------------------------------- class 3


def _hook(name: str) -> str:
    return sh_payload(name)


def _husky(a: Attack) -> None:
    """The person's repo uses husky: core.hooksPath = .husky, with a harmless hook of hers."""
    a.put(".husky/pre-commit", "#!/bin/sh\nexit 0\n", mode=0o755)
    a.git("config", "core.hooksPath", ".husky")


def _person_hook(command: str):  # type: ignore[no-untyped-def]
    def setup(a: Attack) -> None:
        a.put(".git/hooks/pre-commit", a.fill(f"#!/bin/sh\n{command}\n"), mode=0o755)

    return setup


def _remote(a: Attack) -> None:
    bare = a.tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    a.git("remote", "add", "origin", str(bare))


def _no_marker(*names: str):  # type: ignore[no-untyped-def]
    def check(a: Attack) -> None:
        ran = [n for n in names if a.marker(n)]
        assert not ran, f"planted code ran in sdd's own process (markers: {ran})"

    return check


EDIT = write("src/expenses.py", "def search(month, merchant):\n    return ['hotel']\n")
COMMIT = tool("git_commit", message="Search by merchant", paths=["src/expenses.py"])
CONFIG_PY = "import os;p=os.path.join('.git','config');open(p,'a').write('{}')"


def _config(text: str) -> dict[str, object]:
    """python appends `text` to .git/config (text: no quote characters)."""
    return cmd(py(CONFIG_PY.format(text)))


one(
    "githooks-hookspath",
    "role writes .githooks/pre-commit and sets core.hooksPath, then git_commit",
    write(".githooks/pre-commit", _hook("githooks")),
    cmd("chmod +x .githooks/pre-commit"),
    cmd("git config core.hooksPath .githooks"),
    _config("[core]\\n\\thooksPath = .githooks\\n"),
    EDIT,
    COMMIT,
    cls=3,
    check=_no_marker("githooks"),
)
one(
    "husky-pre-commit",
    "role rewrites .husky/pre-commit of a husky repo, then git_commit",
    write(".husky/pre-commit", _hook("husky")),
    EDIT,
    COMMIT,
    cls=3,
    setup=_husky,
    check=_no_marker("husky"),
)
one(
    "husky-commit-msg",
    "role adds .husky/commit-msg and .husky/post-commit, then git_commit",
    write(".husky/commit-msg", _hook("commitmsg")),
    write(".husky/post-commit", _hook("postcommit")),
    cmd("chmod +x .husky/commit-msg .husky/post-commit"),
    EDIT,
    COMMIT,
    cls=3,
    setup=_husky,
    check=_no_marker("commitmsg", "postcommit"),
)
one(
    "husky-reference-transaction",
    "role adds .husky/reference-transaction, run by git on any ref update, then git_tag",
    write(".husky/reference-transaction", _hook("reftx")),
    cmd("chmod +x .husky/reference-transaction"),
    tool("git_tag", name="v0.0.1", message="first"),
    EDIT,
    COMMIT,
    cls=3,
    setup=_husky,
    check=_no_marker("reftx"),
)
one(
    "husky-pre-push",
    "role adds .husky/pre-push, then git_push",
    write(".husky/pre-push", _hook("prepush")),
    cmd("chmod +x .husky/pre-push"),
    tool("git_push", remote="origin", branch="main"),
    cls=3,
    setup=lambda a: [f(a) for f in (_husky, _remote)],
    check=_no_marker("prepush"),
)
one(
    "hooks-dir-direct",
    "python writes .git/hooks/pre-commit, then git_commit",
    write("tools/hook.sh", _hook("direct")),
    cmd(
        py(
            "import shutil,os;shutil.copy('tools/hook.sh','.git/hooks/pre-commit');os.chmod('.git/hooks/pre-commit',0o755)"
        )
    ),
    EDIT,
    COMMIT,
    cls=3,
    check=_no_marker("direct"),
)
one(
    "gitattributes-filter",
    ".gitattributes filter=evil plus a filter driver in .git/config, then git_status/diff/commit",
    write("tools/filter.sh", _hook("filter")),
    write(".gitattributes", "*.py filter=evil\n"),
    _config(
        "[filter \\x22evil\\x22]\\n\\tclean = sh tools/filter.sh\\n\\tsmudge = sh tools/filter.sh\\n"
    ),
    tool("git_status"),
    EDIT,
    tool("git_diff"),
    COMMIT,
    cls=3,
    check=_no_marker("filter"),
)
one(
    "gitattributes-textconv",
    ".gitattributes diff=x with a textconv in .git/config, then git_diff",
    write("tools/conv.sh", _hook("textconv")),
    write(".gitattributes", "*.py diff=x\n"),
    _config("[diff \\x22x\\x22]\\n\\ttextconv = sh tools/conv.sh\\n"),
    EDIT,
    tool("git_diff"),
    tool("git_diff", path="src/expenses.py"),
    cls=3,
    check=_no_marker("textconv"),
)
one(
    "gitattributes-person-filter",
    "the person has a filter driver in ~/.gitconfig running a product script; the role edits the script",
    write("tools/clean.sh", _hook("personfilter")),
    EDIT,
    tool("git_status"),
    tool("git_diff"),
    COMMIT,
    cls=3,
    setup=lambda a: (
        a.put(".gitattributes", "*.py filter=tidy\n"),
        a.put("tools/clean.sh", "#!/bin/sh\ncat\n"),
        a.git("config", "--global", "filter.tidy.clean", "sh tools/clean.sh"),
    ),
    check=_no_marker("personfilter"),
)
one(
    "fsmonitor",
    "core.fsmonitor pointing at a role script, then git_status",
    write("tools/fsm.sh", _hook("fsmonitor")),
    cmd("chmod +x tools/fsm.sh"),
    _config("[core]\\n\\tfsmonitor = @PRODUCT@/tools/fsm.sh\\n"),
    tool("git_status"),
    tool("git_diff"),
    cls=3,
    check=_no_marker("fsmonitor"),
)
one(
    "fsmonitor-person-config",
    "the person's config runs a product fsmonitor script the role rewrites, then git_status",
    write("tools/fsm.sh", _hook("fsm2")),
    tool("git_status"),
    tool("git_log"),
    cls=3,
    setup=lambda a: (
        a.put("tools/fsm.sh", "#!/bin/sh\nexit 1\n", mode=0o755),
        a.git("config", "core.fsmonitor", str(a.product / "tools/fsm.sh")),
    ),
    check=_no_marker("fsm2"),
)
one(
    "gpg-program",
    "commit.gpgsign with gpg.program set to a role script, then git_commit and git_tag",
    write("tools/gpg.sh", _hook("gpg")),
    cmd("chmod +x tools/gpg.sh"),
    _config(
        "[commit]\\n\\tgpgsign = true\\n[tag]\\n\\tgpgSign = true\\n[gpg]\\n\\tprogram = @PRODUCT@/tools/gpg.sh\\n"
    ),
    EDIT,
    COMMIT,
    tool("git_tag", name="v0.0.2", message="signed"),
    cls=3,
    check=_no_marker("gpg"),
)
one(
    "gpg-program-person-config",
    "the person signs commits with a product script the role rewrites, then git_commit",
    write("tools/sign.sh", _hook("sign")),
    EDIT,
    COMMIT,
    cls=3,
    setup=lambda a: (
        a.put("tools/sign.sh", "#!/bin/sh\nexit 1\n", mode=0o755),
        a.git("config", "commit.gpgsign", "true"),
        a.git("config", "gpg.program", str(a.product / "tools/sign.sh")),
    ),
    check=_no_marker("sign"),
)
one(
    "pager-and-alias",
    "core.pager, pager.log and an alias in .git/config, then git_log and git_diff",
    write("tools/pager.sh", _hook("pager")),
    _config("[core]\\n\\tpager = sh tools/pager.sh\\n[pager]\\n\\tlog = sh tools/pager.sh\\n"),
    tool("git_log", max=3),
    tool("git_diff"),
    cls=3,
    check=_no_marker("pager"),
)
one(
    "person-hook-conftest",
    "the person's pre-commit hook runs pytest; the role writes conftest.py, then git_commit",
    write("conftest.py", py_payload("conftest-hook")),
    EDIT,
    COMMIT,
    cls=3,
    setup=_person_hook("@PY@ -m pytest -q -p no:cacheprovider tests || exit 0"),
    check=_no_marker("conftest-hook"),
)
one(
    "person-hook-make",
    "the person's pre-commit hook runs make lint; the role rewrites the Makefile, then git_commit",
    write("Makefile", "lint:\n\t@sh tools/lint.sh\n"),
    write("tools/lint.sh", _hook("make-hook")),
    EDIT,
    COMMIT,
    cls=3,
    setup=lambda a: (
        a.put("Makefile", "lint:\n\t@true\n"),
        _person_hook("make -s lint || exit 0")(a),
    ),
    check=_no_marker("make-hook"),
    needs=("make",),
)
one(
    "person-hook-npm",
    "the person's pre-commit hook runs npm run lint; the role rewrites package.json, then git_commit",
    write("package.json", json.dumps({"name": "x", "scripts": {"lint": "sh tools/lint.sh"}})),
    write("tools/lint.sh", _hook("npm-hook")),
    EDIT,
    COMMIT,
    cls=3,
    setup=lambda a: (
        a.put("package.json", json.dumps({"name": "x", "scripts": {"lint": "true"}})),
        _person_hook("npm run -s lint || exit 0")(a),
    ),
    check=_no_marker("npm-hook"),
    needs=("npm",),
)
one(
    "person-hook-python-module",
    "the person's pre-commit hook imports the product package; the role edits its __init__.py",
    write("src/__init__.py", py_payload("import-hook")),
    EDIT,
    COMMIT,
    cls=3,
    setup=lambda a: (
        a.put("src/__init__.py", ""),
        _person_hook("cd @PRODUCT@ && @PY@ -c 'import src' || exit 0")(a),
    ),
    check=_no_marker("import-hook"),
)
one(
    "include-path",
    "an [include] path in .git/config to a role-written config with a hooksPath",
    write("tools/inc.config", "[core]\n\thooksPath = @PRODUCT@/tools/hooks\n"),
    write("tools/hooks/pre-commit", _hook("include")),
    cmd("chmod +x tools/hooks/pre-commit"),
    _config("[include]\\n\\tpath = ../tools/inc.config\\n"),
    EDIT,
    COMMIT,
    cls=3,
    check=_no_marker("include"),
)

ROUTES = C1 + C3
