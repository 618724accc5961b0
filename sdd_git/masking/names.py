"""Which variable names (and `.env` or credential-file keys) say that they hold a secret."""

from __future__ import annotations

import re

from sdd_git.masking.masker import has_secret_shape, url_credentials

# One part of a name (split at anything not a letter or digit), upper case. Matched whole, so
# GIT_AUTHOR_NAME (AUTHOR), PASSENGER_APP_ENV and KEYRING do not count, but APIKEY, MYSQLPWD,
# DBPASS, OAUTH and SESSIONID do.
_SECRET_PART = re.compile(
    r"""
    [A-Z0-9]*(?:KEYS?|PWD|PASS|PASSWORDS?|PASSWD|PASSPHRASE|DSN|AUTH|TOKENS?|SECRETS?
               |CREDENTIALS?|CREDS?|COOKIES?|SESSIONS?|PRIVATE|WEBHOOKS?)
    | (?:PASSWORD|PASSWD|PASSPHRASE|TOKEN|SECRET|CREDENTIAL|COOKIE|SESSION|PRIVATE|WEBHOOK
         |APIKEY|AUTHORI[SZ]ATION)[A-Z0-9]*
    | AUTH(?!OR)[A-Z0-9]+
    """,
    re.VERBOSE,
)
# A URL to a database or broker carries its password more often than not.
_DATABASE_URL = re.compile(
    r"(?:^|_)[A-Z0-9]*(?:DATABASE|DB|JDBC|MONGO|MONGODB|REDIS|POSTGRES|POSTGRESQL|PG|MYSQL"
    r"|MARIADB|AMQP|RABBITMQ|BROKER)_UR[LI]S?(?:_|$)"
)
# Shell variables that only look secret: PWD and OLDPWD are the current folder, and masking them
# would hide the product's path in every log line.
_NOT_SECRET = frozenset({"PWD", "OLDPWD"})


def is_secret_name(name: str) -> bool:
    """Whether a variable (or a `.env` key, or a credential file's key) holds a secret by its
    name alone."""
    upper = re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")
    if upper in _NOT_SECRET:
        return False
    if any(_SECRET_PART.fullmatch(part) for part in upper.split("_") if part):
        return True
    return bool(_DATABASE_URL.search(upper))


def is_secret_variable(name: str, value: str) -> bool:
    """Whether a variable holds a secret by its name, by a password inside its value, or by its
    value's shape (a JWT, a GitHub token... under any name)."""
    return is_secret_name(name) or bool(url_credentials(value)) or has_secret_shape(value)
