"""One run of a role: gate, plan, the turn loop, guard, boundary, stops, and its log."""
