"""Programs that print or pack a file: judged by what they read, since output reaches the agent.

`cat ~/.ssh/id_rsa`, `grep -r . ~/.aws`, `tar czf k.tgz ~/.ssh`, `base64 /etc/shadow` put a
secret into the agent's context or a copy (`high`, credentials); `cat .env` is `medium` (ordinary
development, but strict mode asks); `ls ~/.aws` lists names and passes.
"""

from __future__ import annotations

from nerve.safety.invocation import Invocation, positionals
from nerve.safety.targets import judge_read
from nerve.safety.verdict import LOW, Finding, higher, wordset

__all__ = ["READERS", "judge_reader"]

READERS = wordset(
    "cat tac head tail less more bat batcat nl od xxd hexdump strings base64 base32 grep egrep "
    "fgrep rg ag cut sort uniq jq yq tar zip 7z gzip bzip2 xz gpg openssl vim vi nano view emacs"
)
_VALUE_OPTS = wordset("-n -c -e -f -m -A -B -C -d -t -k -o --output -C --directory -u -r")


def judge_reader(inv: Invocation) -> Finding:
    if inv.prog == "gpg" and any(a.startswith("--export-secret") for a in inv.args):
        return Finding("high", "gpg exports private keys", "credentials")
    best = LOW
    for path in positionals(inv.args, _VALUE_OPTS):
        if "/" in path or path.startswith(".") or path.startswith("id_"):
            best = higher(best, judge_read(path, inv.prog))
            if best.blocks:
                break
    return best
