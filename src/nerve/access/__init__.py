"""Who may do what: the one security boundary, API keys as objects, their limits and budgets.

boundary.py   the ASGI layer every request passes: Host check without keys, key check with
principal.py  `Principal`: a key's name and policy, as routes see it (`principal_of(scope)`)
keyring.py    the config's keys and the store's managed keys, looked up by hash
keystore.py   the seam for managed keys (SQLite / PostgreSQL, in the store)
"""

from nerve.access.boundary import KEY_PROTOCOL, PUBLIC, Boundary, bearer, is_public
from nerve.access.keyring import Keyring
from nerve.access.principal import LOCAL, Budget, Principal, principal_of

__all__ = [
    "KEY_PROTOCOL",
    "LOCAL",
    "PUBLIC",
    "Boundary",
    "Budget",
    "Keyring",
    "Principal",
    "bearer",
    "is_public",
    "principal_of",
]
