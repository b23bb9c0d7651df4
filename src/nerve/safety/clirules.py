"""Shell rules for service CLIs, HTTP clients, remote copies and database clients.

Most cloud and SaaS CLIs share one grammar: `tool [group...] VERB [args]` (`aws s3 rb`, `gcloud
sql instances delete`, `vault kv destroy`, `op item delete`). The generic rule reads the first
subcommand-like words and flags and judges the verb, so a CLI nerve has never heard of is still
caught when it deletes. Verbs that only pause or archive are `medium`. Some verbs are judged
with their object: `clean` of stored data, `roll`/`rotate` of a credential, `cancel`/`void` of a
subscription or invoice, `restore` of a backup, `force-unlock`, an invalidation of every path.
HTTP clients are judged by method and endpoint (DELETE, `/delete_by_query`, `/_close`).
"""

from __future__ import annotations

import re

from nerve.safety.invocation import Invocation, flags_of, positionals
from nerve.safety.paths import classify, is_os_critical
from nerve.safety.sql import check_sql
from nerve.safety.targets import judge_read, workspace_of
from nerve.safety.verdict import LOW, Finding, RiskLevel, higher, wordset

__all__ = [
    "CLI_RULES",
    "HIGH_VERBS",
    "IMPLICIT",
    "MEDIUM_VERBS",
    "OBJECT_VERB_WORDS",
    "generic_cli",
    "sql_client",
]

HIGH_VERBS = wordset(
    "delete del destroy remove rm rb purge drop erase wipe terminate prune forget truncate "
    "flush flushall flushdb deregister unregister revoke deletefile rmdir rmdirs dedupe "
    "unsubscribe undeploy deprovision decommission nuke reset disable compact publish dropdb "
    "dropuser clear unpublish yank"
)
MEDIUM_VERBS = wordset(
    "clean cleanup kill stop archive cancel rollback untag uninstall deploy recreate restart "
    "suspend detach unset"
)
# Clearing or cleaning these loses nothing that cannot be rebuilt.
_REBUILD_VERBS = frozenset({"clear", "clean", "cleanup", "purge", "flush", "prune"})
_CACHE_WORDS = frozenset(
    {"cache", "caches", "tmp", "temp", "build", "screen", "console", "history", "terminal"}
)
# Subcommands that delete on tools whose verb does not say so.
IMPLICIT = {"rclone": frozenset({"sync", "move", "moveto"}), "deck": frozenset({"sync"})}
_PACKAGE_MANAGERS = wordset(
    "pip pip3 pipx uv poetry pdm npm yarn pnpm bun apt apt-get aptitude yum dnf zypper pacman "
    "apk brew port snap flatpak gem cargo go conda mamba choco scoop winget"
)
# Removing a package is undone by installing it again; a published release cannot be replaced.
_RELEASE_VERBS = frozenset({"publish", "unpublish", "yank"})
_SYNC_WORDS = frozenset({"sync", "rsync", "mirror"})
_SECRET_WRITES = frozenset({"put", "update", "set"})
_SECRET_WORDS = frozenset({"secret", "secrets"})
_JSON_DELETE = re.compile(r"[\"']action[\"']\s*:\s*[\"']delete[\"']", re.IGNORECASE)
_FLAG_VERBS = frozenset({"delete", "del", "remove", "purge", "prune", "wipe", "destroy", "drop"})
_DRY_RUN = frozenset(
    {"--dry-run", "--dryrun", "--what-if", "--whatif", "-whatif", "--simulate", "--noop"}
)
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9]*(?:[-_:][a-z0-9]+)*")
_SEGMENTS = re.compile(r"[-_:]")


# Verbs whose danger depends on what they act on: (verbs, objects, the object must be in the
# same word or the program's name, what it does). `splunk clean eventdata`, `stripe api_keys
# roll`, `stripe invoices void`, `gitlab-rake gitlab:backup:restore`, `tool force-unlock`.
_OBJECT_VERBS = (
    (
        wordset("clean cleanup"),
        wordset("eventdata userdata data database databases db index indexes indices kvstore"),
        False,
        "deletes stored data, not a cache",
    ),
    (
        wordset("roll rotate regenerate"),
        wordset("key keys apikey apikeys token tokens secret secrets credential credentials"),
        False,
        "replaces a live credential: whatever still uses the old one fails",
    ),
    (
        wordset("cancel void refund"),
        wordset("subscription subscriptions invoice invoices charge charges payment intents"),
        False,
        "cancels a live subscription or payment",
    ),
    (wordset("restore"), wordset("backup"), True, "restores a backup over the live data"),
    (wordset("break force"), wordset("lock unlock"), True, "breaks a lock another process holds"),
)
# What the first pass (triggers.py) must notice for these classes; the other verbs already are.
OBJECT_VERB_WORDS = wordset("roll rotate regenerate void refund break-lock force-unlock")
_INVALIDATE = frozenset({"invalidation", "invalidate", "invalidations"})
_EVERY_PATH = frozenset({"/*", "*", "/"})


def _object_verbs(inv: Invocation, seen: list[str]) -> Finding | None:
    own = set(_SEGMENTS.split(inv.prog))
    words = [set(_SEGMENTS.split(w)) for w in seen]
    every = own.union(*words)
    for verbs, objects, near, what in _OBJECT_VERBS:
        for word, segments in zip(seen, words, strict=True):
            if segments & verbs and ((own | segments) if near else every) & objects:
                return Finding("high", f"{inv.prog} {' '.join(seen)}: '{word}' {what}")
    if any(_INVALIDATE & s for s in words) and any(
        a.split("=", 1)[-1] in _EVERY_PATH for a in inv.args
    ):
        return Finding("high", f"{inv.prog} invalidates every cached path at once")
    return None


def _verb_level(word: str) -> str | None:
    segments = _SEGMENTS.split(word)
    if any(s in HIGH_VERBS for s in segments):
        return "high"
    if any(s in MEDIUM_VERBS for s in segments):
        return "medium"
    return None


def _flag_finding(inv: Invocation, i: int, arg: str) -> Finding | None:
    args = inv.args
    name = arg.lstrip("-").split("=", 1)
    segments = _SEGMENTS.split(name[0].lower())
    value = name[1] if len(name) > 1 else (args[i + 1] if i + 1 < len(args) else "")
    if arg in _HTTP_METHOD_OPTS or name[0] in ("request", "method"):
        if value.upper() == "DELETE":
            return Finding("high", f"{inv.prog} sends an HTTP DELETE")
    elif arg.startswith("-X") and arg[2:].upper() == "DELETE":
        return Finding("high", f"{inv.prog} sends an HTTP DELETE")
    if (
        arg.startswith("--")
        and set(segments) & _FLAG_VERBS
        and value.lower() not in ("false", "0", "no")
    ):
        return Finding("high", f"{inv.prog} {arg} deletes data")
    if segments[0] == "reset" and len(segments) > 1:
        return Finding("high", f"{inv.prog} {arg} resets stored state")
    return None


_TEST_RUNNERS = wordset("pytest py.test jest vitest mocha ava rspec phpunit nosetests ward tox nox")


def generic_cli(inv: Invocation) -> Finding:
    """Judge `tool group VERB ...` and destructive flags (--delete, --purge) of any CLI."""
    args = inv.args
    if any(a.split("=", 1)[0].lower() in _DRY_RUN for a in args):
        return LOW
    if inv.prog in _TEST_RUNNERS or args[:1] == ["test"]:
        return LOW  # `pytest -k delete`, `cargo test drop_table`: the words name tests
    best = LOW
    named = _SEGMENTS.split(inv.prog)
    if (len(named) > 1 or inv.prog in ("dropdb", "dropuser")) and _verb_level(inv.prog) == "high":
        best = Finding("high", f"{inv.prog}: the command itself is a destructive operation")
    seen: list[str] = []
    for i, arg in enumerate(args[:16]):
        if arg.startswith("-"):
            flagged = _flag_finding(inv, i, arg)
            if flagged is not None:
                best = higher(best, flagged)
            elif arg == "-d" and _SYNC_WORDS & set(seen):
                best = higher(
                    best, Finding("high", f"{inv.prog} {seen[-1]} -d deletes extra files")
                )
            continue
        if _JSON_DELETE.search(arg):
            best = higher(best, Finding("high", f"{inv.prog} submits a DELETE change"))
        if len(seen) >= 5 or not _SUBCOMMAND.fullmatch(arg):
            continue
        seen.append(arg)
        segments = set(_SEGMENTS.split(arg))
        if arg in IMPLICIT.get(inv.prog, ()):
            best = higher(
                best, Finding("high", f"{inv.prog} {arg} deletes files at the destination")
            )
            continue
        if segments & _SECRET_WRITES and (segments | set(seen)) & _SECRET_WORDS:
            best = higher(best, Finding("high", f"{inv.prog} {arg} overwrites a stored secret"))
            continue
        risk = _verb_level(arg)
        if risk == "high" and inv.prog in _PACKAGE_MANAGERS and not segments & _RELEASE_VERBS:
            risk = "medium"  # removing a package: it can be installed again
        if risk is None or (segments & _REBUILD_VERBS and (set(seen) | segments) & _CACHE_WORDS):
            continue
        action = " ".join(seen)
        best = higher(
            best,
            Finding(
                "high" if risk == "high" else "medium",
                f"{inv.prog} {action}: '{arg}' is a destructive operation",
            ),
        )
    return higher(best, _object_verbs(inv, seen)) if seen and not best.blocks else best


_HTTP_METHOD_OPTS = frozenset({"-X", "--request", "--method", "-m"})
_HTTP_VERB_IN_PATH = re.compile(
    r"(?:^|[/_\-.?&=]|(?<=[a-z]))(?:delete|destroy|purge|drop|wipe|erase|truncate|flush)"
    r"(?:$|[/_\-.?&=A-Z]|by|all|series|batch)",
    re.IGNORECASE,
)
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
# Search-cluster admin endpoints (Elasticsearch, OpenSearch) that take an index offline or
# change the whole cluster's behaviour.
_ADMIN_ENDPOINT = re.compile(
    r"/_(?:close|freeze|shutdown|disable)(?:$|[/?])|/_cluster/(?:settings|reroute)(?:$|[/?])"
)


def _http(inv: Invocation) -> Finding:
    method = "GET"
    urls: list[str] = []
    args = inv.args
    for i, arg in enumerate(args):
        low = arg.split("=", 1)
        if arg in _HTTP_METHOD_OPTS and i + 1 < len(args):
            method = args[i + 1].upper()
        elif low[0] in ("--request", "--method") and len(low) > 1:
            method = low[1].upper()
        elif arg.startswith("-X") and len(arg) > 2:
            method = arg[2:].upper()
        elif (
            arg.upper() in _METHODS
            and not arg.startswith("-")
            and inv.prog in ("http", "https", "xh", "xhs", "httpie")
        ):
            method = arg.upper()
        elif "://" in arg or arg.startswith((":", "/", "localhost", "127.")) or "." in arg:
            urls.append(arg)
    if method == "DELETE":
        return Finding("high", f"{inv.prog} sends an HTTP DELETE")
    if method in ("POST", "PUT", "PATCH"):
        for url in urls:
            path = url.split("://", 1)[-1].partition("/")[2]
            if _HTTP_VERB_IN_PATH.search("/" + path):
                return Finding("high", f"{inv.prog} calls a delete endpoint ({url})")
            if _ADMIN_ENDPOINT.search("/" + path):
                return Finding(
                    "high",
                    f"{inv.prog} {method} {url} takes an index offline or changes the "
                    "whole cluster's settings",
                )
    return LOW


def _remote_dest(inv: Invocation, paths: list[str]) -> Finding:
    if len(paths) < 2:
        return LOW
    dest = paths[-1]
    host, sep, path = dest.partition(":")
    remote = bool(sep) and "/" not in host
    target = path if remote else dest
    if classify(target) == "root" or is_os_critical(target):
        where = "on a remote host" if remote else "locally"
        return Finding(
            "high" if remote else "medium", f"{inv.prog} overwrites system files {where} ({dest})"
        )
    return LOW


def _rsync(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    if "n" in short or "--dry-run" in long or "--list-only" in long:
        return LOW
    paths = positionals(inv.args, frozenset({"-e", "--rsh", "--exclude"}))
    if "--remove-source-files" not in long and any(f.startswith("--del") for f in long):
        dest = paths[-1] if len(paths) > 1 else ""
        local = bool(dest) and ":" not in dest.split("/", 1)[0]  # not host:path
        if local and workspace_of(dest, inv.ctx) == "inside":  # dist/ to out/
            return Finding("medium", "rsync --delete removes files in the workspace")
        return Finding("high", "rsync --delete removes files at the destination")
    if "--remove-source-files" in long:
        return Finding("high", "rsync --remove-source-files deletes what it copies")
    return _remote_dest(inv, paths)


def _scp(inv: Invocation) -> Finding:
    return _remote_dest(inv, positionals(inv.args, frozenset({"-P", "-i", "-o", "-F", "-S", "-l"})))


_SSH_VALUE_OPTS = frozenset(f"-{c}" for c in "BbcDEeFIiJLlmOopQRSWw")


def _ssh(inv: Invocation) -> Finding:
    args, i = inv.args, 0
    while i < len(args) and args[i].startswith("-"):  # ssh's own options, before the host
        i += 2 if args[i] in _SSH_VALUE_OPTS else 1
    if len(args) > i + 1:
        return inv.ctx.nested(" ".join(args[i + 1 :]), "on the remote host", remote=True)
    best = LOW
    for red in inv.cmd.redirects:
        if red.op in ("<<", "<<-", "<<<"):
            best = higher(best, inv.ctx.nested(red.target, "on the remote host", remote=True))
    return best


_SQL_FLAGS = {
    "psql": ("-c", "--command"),
    "mysql": ("-e", "--execute"),
    "mariadb": ("-e", "--execute"),
    "clickhouse-client": ("-q", "--query"),
    "clickhouse": ("-q", "--query"),
    "sqlcmd": ("-Q", "-q"),
    "cqlsh": ("-e", "--execute"),
    "snowsql": ("-q", "--query"),
    "duckdb": ("-c",),
    "cockroach": ("-e", "--execute"),
    "trino": ("--execute",),
    "bq": (),
    "sqlite3": (),
}


def sql_client(inv: Invocation, stdin_text: str | None) -> Finding:
    """Judge the SQL a database client is given: by flag, argument, here-document or pipe."""
    flags = _SQL_FLAGS.get(inv.prog, ())
    texts: list[str] = []
    args = inv.args
    for i, arg in enumerate(args):
        head, eq, value = arg.partition("=")
        if arg in flags and i + 1 < len(args):
            texts.append(args[i + 1])
        elif eq and head in flags:
            texts.append(value)
        elif len(arg) > 2 and arg[:2] in flags and not arg.startswith("--"):
            texts.append(arg[2:])
    if inv.prog in ("sqlite3", "duckdb", "bq"):
        texts.extend(positionals(args)[1:])
        secret = judge_read(positionals(args)[0], inv.prog) if positionals(args) else LOW
        if secret.blocks:  # `sqlite3 ~/.mozilla/.../cookies.sqlite`: a browser's secrets
            return secret
    texts.extend(r.target for r in inv.cmd.redirects if r.op in ("<<", "<<-", "<<<"))
    if stdin_text:
        texts.append(stdin_text)
    best = LOW
    for text in texts:
        found = check_sql(text, inv.ctx.scope)
        if found.risk != "low":
            best = higher(best, found.labelled(f"{inv.prog}: "))
    return best


_REDIS_DANGER: dict[str, RiskLevel] = {
    "flushall": "high",
    "flushdb": "high",
    "shutdown": "high",
    "del": "high",
    "unlink": "high",
    "config": "medium",
    "debug": "medium",
    "swapdb": "medium",
}
_REDIS_VALUE_OPTS = frozenset({"-h", "-p", "-a", "-n", "-u", "-s", "--user", "--pass", "-r", "-i"})


def _redis(inv: Invocation) -> Finding:
    pos = positionals(inv.args, _REDIS_VALUE_OPTS)
    if pos and pos[0].lower() in _REDIS_DANGER:
        word = pos[0].upper()
        return Finding(_REDIS_DANGER[pos[0].lower()], f"redis-cli {word} deletes or stops data")
    return LOW


_MONGO_DANGER = re.compile(
    r"dropDatabase\s*\(|\.drop\s*\(|\.(?:deleteMany|remove)\s*\(\s*\{\s*\}|dropUser|dropAllUsers"
)


def _mongo(inv: Invocation) -> Finding:
    codes = [inv.args[i + 1] for i, a in enumerate(inv.args[:-1]) if a == "--eval"]
    codes += [r.target for r in inv.cmd.redirects if r.op in ("<<", "<<-", "<<<")]
    for code in codes:
        m = _MONGO_DANGER.search(code)
        if m:
            level: RiskLevel = "critical" if "Database" in m.group() else "high"
            return Finding(level, f"{inv.prog} runs {m.group().strip('.( {}')}, deleting data")
    return LOW


CLI_RULES = {
    **dict.fromkeys(("curl", "wget", "http", "https", "xh", "xhs", "httpie"), _http),
    "rsync": _rsync,
    "scp": _scp,
    "ssh": _ssh,
    "redis-cli": _redis,
    "mongo": _mongo,
    "mongosh": _mongo,
}
