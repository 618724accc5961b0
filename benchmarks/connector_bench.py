"""The time a connector read adds over the service's own reply.

    python benchmarks/connector_bench.py [--reads 200] [--quick]

Each row is one read of a built-in connector (GitHub, GitLab, Jenkins, Artifactory, Azure DevOps)
against the loopback server its tests use (tests/connectors/: the same routes and fixtures, the
services' wire format), in this process. A read is timed from `connector.call` to its return.
The server stamps each request it answers (`time.perf_counter` when its handler starts, and
again when the reply is written); the sum of those over the read's requests is the server's own
time. What the read adds is the difference: building and signing the requests, a TCP connection
per request on loopback, reading and parsing the answers, following pages and redirects, cutting
the log excerpt and writing the text. The table gives the median over N reads (and the 95th
percentile of what is added), after 10 untimed reads.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(CHECKOUT))

from sdd_git.connectors.base import Result  # noqa: E402
from tests.connectors import (  # noqa: E402
    test_artifactory,
    test_azure_devops,
    test_github,
    test_gitlab,
    test_jenkins,
)
from tests.connectors.loopback import Loopback  # noqa: E402

WARMUP = 10


@dataclass(frozen=True)
class Case:
    name: str
    routes: Callable[[], list[Any]]
    read: Callable[[Loopback], Result]


CASES = [
    Case("github get_issue", test_github.routes,
         lambda s: test_github.call(s, "get_issue", repo="acme/app", number=7)),
    Case("github list_issues (2 Link pages)", test_github.routes,
         lambda s: test_github.call(s, "list_issues", repo="acme/app")),
    Case("github get_workflow_run, failed (jobs, 302, log excerpt)", test_github.routes,
         lambda s: test_github.call(s, "get_workflow_run", repo="acme/app", run_id=30433642)),
    Case("gitlab get_issue", test_gitlab.routes,
         lambda s: test_gitlab.call(s, "get_issue", iid=6)),
    Case("gitlab get_pipeline, failed (jobs, trace excerpt)", test_gitlab.routes,
         lambda s: test_gitlab.call(s, "get_pipeline", pipeline_id=46)),
    Case("jenkins get_build, failed (console excerpt)", test_jenkins.routes,
         lambda s: test_jenkins.call(s, "get_build", job="acme/app/main", number=42)),
    Case("jenkins get_test_report", test_jenkins.routes,
         lambda s: test_jenkins.call(s, "get_test_report", job="acme/app/main", number=42)),
    Case("artifactory get_item_info", test_artifactory.routes,
         lambda s: test_artifactory.call(s, "get_item_info", repo="libs-release-local",
                                         path=test_artifactory.JAR)),
    Case("artifactory get_build_info", test_artifactory.routes,
         lambda s: test_artifactory.call(s, "get_build_info", build_name="app",
                                         build_number="51")),
    Case("azure-devops get_work_item (2 comment pages)", test_azure_devops.routes,
         lambda s: test_azure_devops.call(s, "get_work_item", id=42)),
    Case("azure-devops get_build, failed (timeline, log excerpt)", test_azure_devops.routes,
         lambda s: test_azure_devops.call(s, "get_build", build_id=301)),
]  # fmt: skip


@dataclass(frozen=True)
class Timed:
    requests: int
    total_ms: list[float]
    server_ms: list[float]

    @property
    def added_ms(self) -> list[float]:
        return [t - s for t, s in zip(self.total_ms, self.server_ms, strict=True)]


def served(server: Loopback, count: int) -> float:
    """The server's own time over its last `count` requests, once every reply is stamped."""
    deadline = time.monotonic() + 5
    while True:
        last = server.requests[-count:]
        if all(s.replied for s in last) or time.monotonic() > deadline:
            break
        time.sleep(0.0005)
    if not all(s.replied for s in last):
        raise SystemExit("connector_bench: the server did not stamp its replies")
    return sum(s.replied - s.received for s in last) * 1000


def run(case: Case, reads: int) -> Timed:
    total, server_time = [], []
    with Loopback(case.routes()) as server:
        for _ in range(WARMUP):
            case.read(server)
        server.clear()
        count = 0
        for _ in range(reads):
            before = len(server.requests)
            start = time.perf_counter()
            case.read(server)
            elapsed = (time.perf_counter() - start) * 1000
            count = len(server.requests) - before
            total.append(elapsed)
            server_time.append(served(server, count))
            server.clear()
    return Timed(count, total, server_time)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=200, help="timed reads per row (200)")
    parser.add_argument("--quick", action="store_true", help="20 reads per row")
    options = parser.parse_args(argv)
    reads = 20 if options.quick else options.reads
    print(f"Python {platform.python_version()} on {platform.machine()}, {platform.system()}; "
          f"N={reads} reads per row, {WARMUP} untimed first\n")  # fmt: skip
    print("| read | requests | read (ms) | server's own (ms) | added (ms) | added p95 (ms) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for case in CASES:
        timed = run(case, reads)
        print(
            f"| {case.name} | {timed.requests} | {statistics.median(timed.total_ms):.2f} | "
            f"{statistics.median(timed.server_ms):.2f} | "
            f"{statistics.median(timed.added_ms):.2f} | {percentile(timed.added_ms, 0.95):.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
