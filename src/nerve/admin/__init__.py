"""The admin panel (SPEC AD-1..AD-4): a page at /admin and its API under /admin/api.

Seam: `mount_admin(app)` adds the routes to a NerveApp and returns the `AdminPanel`, whose
`open()`/`close()` run in the server's lifespan. Inside: `auth` (password, sessions, HTTPS
rule), `throttle` (login limits), `masking` (secrets out of config text), `keystore` (provider
keys), `http` (the guard), `routes` + `config_api` + `access_api` (HTTP), `static/` (plain
HTML/JS/CSS, no external URLs), `store` (the session secret and revocations in `storage.url`,
shared by every worker and replica). The event log it shows (the shared JSONL file or
PostgreSQL table) lives in `nerve.events`. To add a view: an endpoint in `routes.py` behind
`guard`, a tab in `static/index.html`, its renderer in `static/admin.js`.
"""

from nerve.admin.panel import AdminPanel
from nerve.admin.routes import mount_admin

__all__ = ["AdminPanel", "mount_admin"]
