"""The shapes of the ids in her record, in one place: a change (CH-0001), a spec (SPEC-0001), a
section of a spec (SPEC-0001#S1), a decision (D-0001), a scenario of a change (CH-0001/SC-1) and
a release (R-0001). A number has four digits or more."""

from __future__ import annotations

import re

CHANGE_ID = re.compile(r"^CH-(\d{4,})$")  # group 1: the number
SPEC_ID = re.compile(r"^SPEC-\d{4,}$")
SECTION_ID = re.compile(r"^(SPEC-\d{4,})#(S\d+)$")  # the spec, the section
DECISION_ID = re.compile(r"^D-(\d{4,})$")  # group 1: the number
SCENARIO_ID = re.compile(r"^(CH-\d{4,})/(SC-\d+)$")  # the change, the scenario
RELEASE_ID = re.compile(r"^R-\d{4,}$")
