"""How a command runs: inside the strongest sandbox the machine allows, or with none (and then
every stop says so, and a tamper check restores the record after each command)."""
