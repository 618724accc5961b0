"""The connectors built into sdd, one module per service (`azure-devops` is azure_devops.py),
each a class `<Name>Connector` with a no-argument constructor. `registry.BUILTIN` names them and
imports one only when a configured connector uses it: nothing here is imported eagerly."""
