"""The cheap first pass: could this text do anything dangerous at all?

A text is lexed and judged only when its folded form (normalize.fold) names a program a rule
knows, a destructive verb, a redirection onto an absolute path, a function definition, ANSI-C
quoting or a PowerShell variable, when a command's program is a substitution, or when it uses a
variable it assigned itself. Every rule's
danger needs one of those, so a text without them is low risk. The word lists become trie-shaped
regular expressions (`de(?:lete|stroy)`): Python's engine tries alternatives one by one, so a
flat list of two hundred words costs ~0.2 µs a character, a trie a third of that.
"""

from __future__ import annotations

import re

from nerve.safety.accountrules import ACCOUNT_RULES
from nerve.safety.clirules import CLI_RULES, HIGH_VERBS, MEDIUM_VERBS, OBJECT_VERB_WORDS
from nerve.safety.exfilrules import CHANNEL_RULES
from nerve.safety.fsrules import FS_RULES
from nerve.safety.netrules import NET_RULES
from nerve.safety.normalize import fold
from nerve.safety.secretrules import SECRET_CLIS
from nerve.safety.servicerules import SERVICE_RULES, SERVICE_WORDS
from nerve.safety.toolrules import TOOL_RULES
from nerve.safety.verdict import wordset

__all__ = ["may_matter", "trie_pattern"]

# Programs whose rules can find danger: every program with a rule, and these. Not here: find,
# xargs, exec and awk, whose danger is always in another word of the text (-delete, rm, chmod, a
# nested command), and dig/host/drill, whose only danger is the word axfr.
_PROGRAMS = (
    wordset(
        "rm srm rmdir unlink shred dd wipefs fdisk sfdisk gdisk sgdisk parted blkdiscard mkswap "
        "git docker kubectl helm terraform aws gcloud gsutil az azcopy psql mysql mariadb "
        "mysqladmin sqlite3 redis-cli mongo mongosh clickhouse sqlcmd cqlsh curl wget shutdown "
        "reboot systemctl rsync rclone scp ssh eval source su pypy perl ruby node nodejs php "
        "deno bun lua osascript runner sh bash zsh dash ksh mksh fish busybox powershell pwsh "
        "cmd format del rd erase diskpart vssadmin wmic bcdedit reg cipher watch flock base64 "
        "xxd sync parallel docker-credential mysqldump pg_dump pg_dumpall mongodump"
    )
    | FS_RULES.keys()
    | TOOL_RULES.keys()
    | CLI_RULES.keys()
    | SERVICE_RULES.keys()
    | NET_RULES.keys()
    | SECRET_CLIS
    | CHANNEL_RULES.keys()
    | ACCOUNT_RULES.keys()
) - {"find", "dig", "host", "drill"}
# Word stems matched anywhere (deleteIndex, purge_all, unregister-task...).
_STEMS = wordset(
    "delet remov purg terminat truncat deregist unregist revok unsubscrib initialize-disk "
    "invalidat restore"
)


# Files whose reading, writing or sending matters whoever does it (sensitive.py): `cat` and `>>`
# are everywhere, so the file's name is what the first pass looks for.
_SECRETS = (
    r"|\.ssh\b|shadow|\.aws\b|\.kube\b|\.netrc|\.docker/|\.gnupg|git-credentials|\.pgpass"
    r"|id_(?:rsa|ed25519|ecdsa|dsa)|\.env\b|/dev/(?:tcp|udp)/|sudoers|/etc/(?:passwd|hosts)"
    r"|\.(?:bash|zsh)rc|\.profile|bash_profile|\.git/hooks/|printenv|/environ|_history|npmrc"
    r"|pypirc|s3cfg|\.boto\b|credentials|logins\.json|key[34]\.db|cookies|login data|keychain"
    r"|keyring|rclone\.conf|huggingface|>\s*[\"']?\.\./"
    r"|passw|secret|api\S{0,6}key|private.?key|\.pem\b|\.p12\b|\.kdbx|histfile|history -[cd]"
    r"|token|akia|bearer|\.gnupg|authorized_keys"
    r"|hist(?:file)?size|savehist|set \+o history|\.azure/|\.my\.cnf|/ssl/private|\.vault-token"
    r"|\.oci/|databrickscfg|\.config/gh/|ld_preload|setcap|http\.server|simplehttpserver|ngrok"
    r"|\$\{?\w*(?:secret|token|passw|api_?key|apikey|private_key|access_key|credential|_pass\b|_key\b)"
)

_Trie = dict[str, "_Trie"]


def trie_pattern(words: frozenset[str] | set[str]) -> str:
    """A regular expression matching exactly `words`, with common prefixes factored out."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        if len(branches) == 1 and "" not in node:
            return branches[0]
        body = "(?:" + "|".join(branches) + ")"
        return body + "?" if "" in node else body

    return emit(trie)


_WORDS = _PROGRAMS | HIGH_VERBS | MEDIUM_VERBS | OBJECT_VERB_WORDS | SERVICE_WORDS
# Programs whose rules judge only absolute, home or variable paths (chmod -R 777 /, mv ~ x,
# dd of=/dev/sda, cp x /dev/null): they matter only when the text has a /, ~ or $.
_PATH_PROGRAMS = wordset("chmod chown chgrp chattr setfacl mv cp install tee dd sed ln")
# Short words count as whole words only, and not after a dot (`*.sh`, `index.php` name files),
# except the short method names code-line rules look for (`.drop(`, `.wipe(`, `.void(`); longer
# ones and stems anywhere, except find's `-prune` (one dash: a predicate, not a verb).
# Separate patterns, because an alternation that starts with a lookbehind makes the engine try
# every alternative at every position; one whose alternatives all start with a literal can skip.
_SHORT = re.compile(
    r"(?<![a-z0-9.])(?:python[\d.]*|mkfs\S*|"
    + trie_pattern({w for w in _WORDS if len(w) < 5} | _PATH_PROGRAMS)
    + r")(?![a-z0-9])"
)
_ANYWHERE = re.compile(
    trie_pattern({w for w in _WORDS - _PATH_PROGRAMS if len(w) >= 5 and w != "prune"} | _STEMS)
    + r"|\.(?:drop|wipe|void)|prune(?<![^-]-prune)|>\s*[/~$]|\(\s*\)\s*\{|\$env:"
    + _SECRETS
)
_VAR_WORD = re.compile(r"\$\{?(\w+)\}?\s")
# A command whose program is a substitution (`$(echo rm) -rf /`, `` `cat f` x ``) can be anything.
_SUB_PROGRAM = re.compile(r"(?:^|[;&|({\n])\s*(?:!\s*)?[\"']?(?:\$\(|`)")


def may_matter(text: str, env: dict[str, str]) -> bool:
    """Whether `text` needs judging; `env` holds the variables set so far. A variable can only
    stand for a command when the text assigned it or it is in `env`; `$'\\x72m'` can spell any
    command, so ANSI-C quoting always counts."""
    folded = fold(text)
    paths = "/" in folded or "~" in folded or "$" in folded
    for m in _SHORT.finditer(folded):  # first: most commands start with a short program name
        if paths or m.group() not in _PATH_PROGRAMS:
            return True
    if _ANYWHERE.search(folded) or "$'" in text or _SUB_PROGRAM.search(text):
        return True
    if "$" not in folded or not (env or "=" in folded):
        return False
    if "=" in folded:
        return bool(_VAR_WORD.search(folded))
    names = {name.lower() for name in env}
    return any(m.group(1) in names for m in _VAR_WORD.finditer(folded))
