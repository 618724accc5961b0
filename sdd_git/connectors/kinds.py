"""The connector kinds sdd ships, each as "module:Class", imported only when used.

A table of names, below both the configuration (which checks a built-in's keys) and the
registry (which makes the connector), so neither imports the other."""

from __future__ import annotations

BUILTIN: dict[str, str] = {
    "github": "sdd_git.connectors.builtin.github:GitHubConnector",
    "gitlab": "sdd_git.connectors.builtin.gitlab:GitLabConnector",
    "jenkins": "sdd_git.connectors.builtin.jenkins:JenkinsConnector",
    "artifactory": "sdd_git.connectors.builtin.artifactory:ArtifactoryConnector",
    "jira": "sdd_git.connectors.builtin.jira:JiraConnector",
    "aha": "sdd_git.connectors.builtin.aha:AhaConnector",
    "asana": "sdd_git.connectors.builtin.asana:AsanaConnector",
    "azure-devops": "sdd_git.connectors.builtin.azure_devops:AzureDevOpsConnector",
    "slack": "sdd_git.connectors.builtin.slack:SlackConnector",
    "teams": "sdd_git.connectors.builtin.teams:TeamsConnector",
    "script": "sdd_git.connectors.script:ScriptConnector",
    "mcp": "sdd_git.connectors.mcp:McpConnector",
}
# The services `sdd connectors` always lists, configured or not.
SERVICES = tuple(kind for kind in BUILTIN if kind not in ("script", "mcp"))
