"""The older tools that act on a code host or a deploy target: `open_pull_request`,
`merge_pull_request` and `deploy`. Each is `connector_act` under another name: it finds the
connector and operation the configuration names, and acts through the same operation table
(forbidden is the person's, `missing:` when the record is not there). Each keeps its own stop
words and its own name in the run log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sdd_git.tools.act import ActTool
from sdd_git.tools.actionwords import code_host_words, deploy_words, plain, quoted
from sdd_git.tools.base import Args, ToolContext, ToolFailed, ToolOutcome
from sdd_git.tools.connector import checked_operation, missing_words
from sdd_git.tools.gitcall import git_output, require_git_repo
from sdd_git.tools.schema import ID_CHARS, NAME_CHARS, bounded, make_schema


class ConnectorAlias(ActTool):
    """A consequential act on a connector, under an older tool's name."""

    def _act(
        self, context: ToolContext, name: str, operation: str, given: dict[str, object], what: str
    ) -> ToolOutcome:
        from sdd_git.connectors.base import ConnectorError, Missing
        from sdd_git.connectors.calls import call_connector
        from sdd_git.connectors.config import find_connector

        config = find_connector(context.root, name)
        checked_operation(config, operation, given)
        try:
            result = call_connector(
                context.root, name, operation, given, mask=context.mask, config=config
            )
        except Missing as exc:
            words = missing_words(exc)
            return ToolOutcome.nothing_done(_not_done(f"{words}, so {what} did not happen"), words)
        except ConnectorError as exc:
            raise ToolFailed(f"nothing was done: {exc.message}") from None
        return ToolOutcome(result.text, {"connector": name, "operation": operation})


class OnCodeHost(ConnectorAlias):
    """A pull request's tool: its words name the code host and the repository it acts on."""

    def headline(self, args: dict[str, Any]) -> str:
        raise NotImplementedError

    def action(self, args: dict[str, Any], root: Path | None) -> str:
        return self.headline(args) + code_host_words(root, args, self.name)


def _not_done(what: str) -> str:
    return f"Nothing was done: {what}. Tell the person; do not report it as done."


def _code_host(context: ToolContext) -> tuple[str, str, str] | None:
    """(connector name, its table kind, the repository) of the configured code host."""
    from sdd_git.connectors.config import code_host, repository

    host = code_host(context.root)
    if host is None:
        return None
    repo = repository(context.root, host)
    if repo is None:
        raise ToolFailed(
            f"{host.name} has no repository to act on: name it in .sdd/config.yaml "
            f"(connectors.{host.name}.repo: owner/name) or add a git remote named origin"
        )
    return host.name, host.table_kind, repo


class OpenPullRequest(OnCodeHost):
    schema = make_schema(
        "open_pull_request",
        "Open a pull request on the configured code host (head: default the current branch; "
        "base: default the main branch).",
        {
            "title": {"type": "string", "description": "the pull request's title"},
            "body": {"type": "string", "description": "its description"},
            "base": bounded(NAME_CHARS, "the branch to merge into"),
            "head": bounded(NAME_CHARS, "the branch with the work"),
        },
        ("title",),
    )

    def headline(self, args: dict[str, Any]) -> str:
        return f"Open a pull request titled {quoted(args.get('title'))}"

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        from sdd_git.connectors.config import main_branch
        from sdd_git.connectors.operations import TABLE

        title = args.text("title")
        body, base, head = (args.opt_text(key) for key in ("body", "base", "head"))
        host = _code_host(context)
        if host is None:
            return ToolOutcome.nothing_done(
                _not_done(
                    "no connector to a code host is configured, so no pull request was opened"
                ),
                "no connector",
            )
        name, kind, repo = host
        if head is None:
            require_git_repo(context)
            head = git_output(context, "rev-parse", "--abbrev-ref", "HEAD").strip()
        base = base or main_branch(context.root)
        if kind == "gitlab":
            if "open_merge_request" not in TABLE["gitlab"]:
                return ToolOutcome.nothing_done(
                    _not_done(f"{name} (GitLab) cannot open a merge request in this version"),
                    "no operation",
                )
            given: dict[str, object] = {"project": repo, "title": title,
                                        "source_branch": head, "target_branch": base}  # fmt: skip
            if body:
                given["description"] = body
            return self._act(context, name, "open_merge_request", given, "no merge request")
        given = {"repo": repo, "title": title, "head": head, "base": base}
        if body:
            given["body"] = body
        return self._act(context, name, "open_pull_request", given, "no pull request")


class MergePullRequest(OnCodeHost):
    schema = make_schema(
        "merge_pull_request",
        "Merge a pull request by number on the configured code host.",
        {"number": {"type": "integer", "minimum": 1, "description": "the pull request's number"}},
        ("number",),
    )

    def headline(self, args: dict[str, Any]) -> str:
        return f"Merge pull request #{plain(args.get('number'))}"

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        number = args.integer("number")
        host = _code_host(context)
        if host is None:
            return ToolOutcome.nothing_done(
                _not_done(
                    f"no connector to a code host is configured, so pull request #{number} "
                    "was not merged"
                ),
                "no connector",
            )
        name, kind, repo = host
        what = f"the merge of #{number}"
        if kind == "gitlab":
            given: dict[str, object] = {"project": repo, "iid": number}
            return self._act(context, name, "merge_merge_request", given, what)
        given = {"repo": repo, "number": number}
        return self._act(context, name, "merge_pull_request", given, what)


class Deploy(ConnectorAlias):
    schema = make_schema(
        "deploy",
        "Deploy to a named target (a target configured under deploy: in .sdd/config.yaml).",
        {"target": bounded(ID_CHARS, "the deploy target's name")},
        ("target",),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        from sdd_git.connectors.config import deploy_operation, deploy_targets, find_connector

        target = args.text("target")
        targets = deploy_targets(context.root)
        found = targets.get(target)
        if found is None:
            named = f" (configured: {', '.join(targets)})" if targets else ""
            return ToolOutcome.nothing_done(
                _not_done(
                    f"no deploy target {target!r} is configured{named}, so nothing was deployed"
                ),
                "no deploy target",
            )
        config = find_connector(context.root, found.connector)
        operation = deploy_operation(found, config.table_kind)
        return self._act(
            context, found.connector, operation, dict(found.args), f"the deploy to {target}"
        )

    def action(self, args: dict[str, Any], root: Path | None) -> str:
        return f"Deploy to {plain(args.get('target'))}" + deploy_words(root, args)
