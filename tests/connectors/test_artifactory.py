"""The Artifactory connector against a loopback Artifactory speaking the JFrog REST API's wire
format (fixtures in fixtures/artifactory/ name the documentation page each follows)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.connectors.base import (
    ConnectorError,
    Missing,
    NotSignedIn,
    Refused,
    Result,
    Session,
    Unavailable,
)
from sdd_git.connectors.builtin.artifactory import ArtifactoryConnector
from sdd_git.connectors.operations import TABLE
from tests.connectors.loopback import Loopback, Seen, closed_port_url, fixture, json_reply

TOKEN = "cmVmdGtuOjAxOjE3" + "LoopbackReferenceToken" * 3  # the shape of a JFrog reference token
BASE = "/artifactory"
JAR = "org/acme/app/1.4.2/app-1.4.2.jar"


def routes() -> list[Any]:
    return [
        ("GET", rf"{BASE}/api/storage/libs-release-local/{JAR}",
         json_reply(fixture("artifactory", "file_info"))),
        ("GET", rf"{BASE}/api/storage/libs-release-local/org/acme/app",
         json_reply(fixture("artifactory", "folder_info"))),
        ("GET", rf"{BASE}/api/build/app/51", json_reply(fixture("artifactory", "build_info"))),
        ("GET", rf"{BASE}/api/build/my%20app/7", json_reply(fixture("artifactory", "build_info"))),
        ("POST", rf"{BASE}/api/build/promote/app/51",
         json_reply(fixture("artifactory", "promote_ok"))),
        ("POST", rf"{BASE}/api/build/promote/app/52",
         json_reply(fixture("artifactory", "promote_error"), 400)),
        ("POST", rf"{BASE}/api/build/promote/app/53",
         json_reply(fixture("artifactory", "promote_error"))),
    ]  # fmt: skip


@pytest.fixture
def artifactory() -> Iterator[Loopback]:
    with Loopback(routes(), fallback=json_reply(fixture("artifactory", "error_404"), 404)) as s:
        yield s


def session(url: str, token: str | None = TOKEN, **settings: Any) -> Session:
    return Session(name="artifactory", base_url=url + BASE, token=token, settings=settings)


def call(server: Loopback, operation: str, **args: Any) -> Result:
    return ArtifactoryConnector().call(session(server.url, user="ci-bot"), operation, args)


def assert_signed(seen: Seen) -> None:
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in seen.everything_but_auth()


def test_operations_are_its_rows_of_the_table() -> None:
    assert dict(ArtifactoryConnector().operations()) == TABLE["artifactory"]


def test_a_file_reads_with_its_size_checksums_and_who_deployed_it(artifactory: Loopback) -> None:
    result = call(artifactory, "get_item_info", repo="libs-release-local", path=JAR)
    assert result.text.splitlines()[0] == (
        f"artifact libs-release-local/{JAR}: 1048576 bytes, application/java-archive"
    )
    assert "sha256 3b5d5c3712955042212316173ccf37be800b8a8d9a4d1e2c5e0f3b3b3b3b3b3b" in result.text
    assert "by ci-bot" in result.text
    assert result.data["folder"] is False
    [seen] = artifactory.requests
    assert (seen.method, seen.raw_path) == ("GET", f"{BASE}/api/storage/libs-release-local/{JAR}")
    assert_signed(seen)


def test_a_folder_reads_with_its_children(artifactory: Loopback) -> None:
    result = call(artifactory, "get_item_info", repo="libs-release-local", path="/org/acme/app/")
    assert result.text.splitlines()[0] == "folder libs-release-local/org/acme/app: 3 items"
    assert "- 1.4.2/" in result.text and "- maven-metadata.xml" in result.text


def test_build_info_reads_its_commit_artifacts_and_promotions(artifactory: Loopback) -> None:
    result = call(artifactory, "get_build_info", build_name="app", build_number="51")
    text = result.text
    assert text.splitlines()[0] == (
        "build app 51: started 2024-03-05T10:00:00.000+0000, 1 modules, 2 artifacts"
    )
    assert "commit a91957a858 on main (https://git.example.com/acme/app.git)" in text
    assert "- org.acme:app:1.4.2: app-1.4.2.jar" in text
    assert "- staged to libs-staging-local on 2024-03-05T11:00:00.000+0000 by ada" in text


def test_a_build_name_with_a_space_is_one_encoded_segment(artifactory: Loopback) -> None:
    call(artifactory, "get_build_info", build_name="my app", build_number=7)
    assert artifactory.requests[0].raw_path == f"{BASE}/api/build/my%20app/7"


def test_a_404_is_missing_naming_the_record(artifactory: Loopback) -> None:
    with pytest.raises(Missing) as caught:
        call(artifactory, "get_item_info", repo="libs-release-local", path="org/acme/none.jar")
    assert caught.value.source == ("artifact libs-release-local/org/acme/none.jar on artifactory")
    with pytest.raises(Missing, match="missing: build app 99 on artifactory"):
        call(artifactory, "get_build_info", build_name="app", build_number="99")


def test_a_401_is_not_signed_in() -> None:
    with (
        Loopback([("GET", r".*", json_reply(fixture("artifactory", "error_401"), 401))]) as s,
        pytest.raises(NotSignedIn, match="Bad credentials"),
    ):
        call(s, "get_build_info", build_name="app", build_number="51")


def test_a_5xx_or_a_closed_port_is_unavailable() -> None:
    with (
        Loopback([("GET", r".*", json_reply(fixture("artifactory", "error_500"), 500))]) as s,
        pytest.raises(Unavailable, match="500"),
    ):
        call(s, "get_build_info", build_name="app", build_number="51")
    with pytest.raises(Unavailable):
        ArtifactoryConnector().call(
            session(closed_port_url()), "get_build_info", {"build_name": "a", "build_number": 1}
        )


def test_promote_sends_exactly_the_documented_request(artifactory: Loopback) -> None:
    result = call(
        artifactory, "promote_build", build_name="app", build_number="51",
        target_repo="libs-prod-local", status="staged",
    )  # fmt: skip
    assert result.text == "promoted build app 51 to libs-prod-local (moved) with status staged"
    [seen] = artifactory.requests
    assert (seen.method, seen.raw_path) == ("POST", f"{BASE}/api/build/promote/app/51")
    assert seen.headers["content-type"].startswith("application/json")
    body = seen.json()
    timestamp = body.pop("timestamp")
    assert body == {
        "comment": "promoted through sdd", "ciUser": "ci-bot", "dryRun": False,
        "targetRepo": "libs-prod-local", "copy": False, "artifacts": True,
        "dependencies": False, "failFast": True, "status": "staged",
    }  # fmt: skip
    assert len(timestamp) == len("2016-02-11T18:30:24.825+0200")
    assert_signed(seen)


def test_a_promotion_artifactory_refuses_is_refused_with_its_message(
    artifactory: Loopback,
) -> None:
    with pytest.raises(Refused, match="does not exist"):
        call(artifactory, "promote_build", build_name="app", build_number="52",
             target_repo="libs-prod-local")  # fmt: skip
    with pytest.raises(Refused, match="does not exist"):  # an error message in a 200
        call(artifactory, "promote_build", build_name="app", build_number="53",
             target_repo="libs-prod-local")  # fmt: skip


def test_a_promotion_to_a_released_status_is_never_sent(artifactory: Loopback) -> None:
    with pytest.raises(Refused):
        call(artifactory, "promote_build", build_name="app", build_number="51",
             target_repo="libs-prod-local", status="Released")  # fmt: skip
    assert artifactory.requests == []


@pytest.mark.parametrize(
    ("operation", "args"),
    [
        ("get_item_info", {"repo": "libs-release-local", "path": "../../api/security/users"}),
        ("get_item_info", {"repo": "libs-release-local", "path": "org/../../../api/system"}),
        ("get_item_info", {"repo": "libs-release-local", "path": "org/app.jar?list"}),
        ("get_item_info", {"repo": "libs-release-local", "path": "org/app.jar#x"}),
        ("get_item_info", {"repo": "libs-release-local", "path": "org/%2e%2e/%2e%2e/x"}),
        ("get_item_info", {"repo": "libs-release-local", "path": "org//app.jar"}),
        ("get_item_info", {"repo": "libs-release-local", "path": "org\\..\\x"}),
        ("get_item_info", {"repo": "../api", "path": "x"}),
        ("get_item_info", {"repo": "libs/release", "path": "x"}),
        ("get_build_info", {"build_name": "../../security", "build_number": "1"}),
        ("get_build_info", {"build_name": "app", "build_number": "51/../../x"}),
        ("get_build_info", {"build_name": "app?x", "build_number": "51"}),
        ("get_build_info", {"build_name": "%2e%2e", "build_number": "51"}),
        ("promote_build", {"build_name": "app", "build_number": "..", "target_repo": "x"}),
        ("promote_build", {"build_name": "app", "build_number": "51", "target_repo": "../x"}),
    ],
)
def test_an_argument_cannot_reach_another_endpoint(
    artifactory: Loopback, operation: str, args: dict[str, Any]
) -> None:
    with pytest.raises(ConnectorError):
        call(artifactory, operation, **args)
    assert artifactory.requests == []
