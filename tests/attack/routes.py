"""The routes, as data: id, class, what it tries, the role's scripted calls, optional setup, flow
and extra check. Paths the attack needs are written as @HOME@, @PRODUCT@, @SDD_HOME@, @MARKERS@,
@TMP@, @SITE@ and @PY@ (see Attack.fill).

Classes: 1 code runners, 2 escaping the sandbox, 3 sdd's own process running planted code,
4 check-then-use, 5 rules planted for later, 6 secrets, 7 stops that hide the action,
8 the no-spec gate on the action.
"""

from __future__ import annotations

from tests.attack import routes_escape, routes_round2, routes_round3, routes_rules, routes_run
from tests.attack.harness import Route

ROUTES: list[Route] = [
    *routes_run.ROUTES,  # classes 1 and 3
    *routes_escape.ROUTES,  # classes 2 and 4
    *routes_rules.ROUTES,  # classes 5, 6, 7 and 8
    *routes_round2.ROUTES,  # round two, every class
    *routes_round3.ROUTES,  # round three: providers, host agent files, skills
]
CLASSES = {
    1: "code runners",
    2: "escaping the sandbox",
    3: "sdd's own process runs planted code",
    4: "check, then use",
    5: "rules planted for later",
    6: "secrets",
    7: "stops that hide the real action",
    8: "the no-spec gate is on the action",
}
