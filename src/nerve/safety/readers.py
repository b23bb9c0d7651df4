"""Programs that print or pack a file: judged by what they read, since output reaches the agent.

`cat ~/.ssh/id_rsa`, `grep -r . ~/.aws`, `tar czf k.tgz ~/.ssh`, `base64 /etc/shadow`, `od -c
/etc/shadow` put a secret into the agent's context or a copy (`high`, credentials); `cat .env` is
`medium` (ordinary development, but strict mode asks); `ls ~/.aws` lists names and passes. Every
argument that names a path is judged, whatever option precedes it: guessing which options take
a value (`-c` does for head, not for od) let `od -c /etc/shadow` through. A grep that sweeps a
home or the system for secret words is a hunt (hunts.py).
"""

from __future__ import annotations

from nerve.safety.hunts import grep_hunt
from nerve.safety.invocation import Invocation
from nerve.safety.targets import judge_read
from nerve.safety.verdict import Finding, higher, wordset

__all__ = ["READERS", "judge_reader"]

READERS = wordset(
    "cat tac head tail less more bat batcat nl od xxd hexdump strings base64 base32 grep egrep "
    "fgrep rg ag ack cut sort uniq jq yq tar zip 7z gzip bzip2 xz gpg openssl vim vi nano view "
    "emacs rev diff cmp comm paste join fold fmt expand unexpand column iconv look"
)


def judge_reader(inv: Invocation) -> Finding:
    if inv.prog == "gpg" and any(a.startswith("--export-secret") for a in inv.args):
        return Finding("high", "gpg exports private keys", "credentials")
    best = grep_hunt(inv)
    for arg in inv.args:
        if best.blocks:
            break
        path = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
        if path.startswith("-"):
            continue
        if "/" in path or path.startswith(".") or path.startswith("id_"):
            best = higher(best, judge_read(path, inv.prog))
    return best
