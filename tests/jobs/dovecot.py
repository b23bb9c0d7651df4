"""A real IMAP server for the mail tests: Debian's dovecot-imapd on loopback, set up per test.

Config, passwd-file, maildirs and runtime files live in a fresh directory under /tmp (pytest's
tmp_path is private to root, and dovecot's mail processes must not run as root). Started once per
session as a subprocess in the foreground (`dovecot -F`) on a free port; each test gets a fresh
user (a passwd-file per user), so no test sees another's mail.
"""

from __future__ import annotations

import grp
import imaplib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"

_CONF = """\
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
default_internal_user = {internal}
default_internal_group = {internal_group}
default_login_user = {login}
first_valid_uid = {uid}
mail_location = maildir:{root}/mail/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/users/%u
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/home/%u
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Dovecot:
    def __init__(self, users: dict[str, str]) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="nerve-dovecot-"))
        self.root.chmod(0o755)
        self.port = _free_port()
        if os.geteuid() == 0:  # root: dovecot's own users (the package creates them)
            internal, login = "dovecot", "dovenull"
            uid, gid = pwd.getpwnam("dovecot").pw_uid, grp.getgrnam("dovecot").gr_gid
        else:
            internal = login = pwd.getpwuid(os.geteuid()).pw_name
            uid, gid = os.geteuid(), os.getegid()
        for sub in ("run", "state", "mail", "home"):
            (self.root / sub).mkdir()
            if sub in ("mail", "home"):
                os.chown(self.root / sub, uid, gid)
        (self.root / "users").mkdir()
        (self.root / "dovecot.conf").write_text(
            _CONF.format(
                root=self.root,
                port=self.port,
                uid=uid,
                gid=gid,
                internal=internal,
                internal_group=grp.getgrgid(pwd.getpwnam(internal).pw_gid).gr_name,
                login=login,
            )
        )
        self.users: dict[str, str] = {}
        for user, password in users.items():
            self.add_user(user, password)

    def add_user(self, user: str, password: str) -> None:
        self.users[user] = password
        (self.root / "users" / user).write_text(f"{user}:{{PLAIN}}{password}\n")

    def start(self, timeout: float = 15) -> Dovecot:
        conf = str(self.root / "dovecot.conf")
        self.proc = subprocess.Popen([DOVECOT, "-F", "-c", conf], stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while True:  # polling until the port answers, not a timing assumption
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"dovecot did not start: {self.log()}") from None
                time.sleep(0.02)

    def log(self) -> str:
        path = self.root / "dovecot.log"
        return path.read_text() if path.exists() else "(no log)"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)

    def session(self, user: str) -> imaplib.IMAP4:
        imap = imaplib.IMAP4("127.0.0.1", self.port, timeout=10)
        try:
            imap.login(user, self.users[user])
        except BaseException:
            imap.shutdown()
            raise
        return imap

    def append(
        self, user: str, sender: str, subject: str, body: str, *, seen: bool = False
    ) -> None:
        raw = f"From: {sender}\r\nSubject: {subject}\r\nContent-Type: text/plain\r\n\r\n{body}\r\n"
        imap = self.session(user)
        try:
            status, _ = imap.append("INBOX", r"(\Seen)" if seen else None, None, raw.encode())
            assert status == "OK"
        finally:
            imap.logout()

    def unseen(self, user: str) -> int:
        imap = self.session(user)
        try:
            imap.select("INBOX", readonly=True)
            _, data = imap.uid("SEARCH", None, "UNSEEN")
            return len((data[0] or b"").split())
        finally:
            imap.logout()


@pytest.fixture(scope="session")
def dovecot_server() -> Iterator[Dovecot]:
    if not os.path.exists(DOVECOT):
        reason = "dovecot is not installed: apt-get install dovecot-imapd"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must run the mail tests", pytrace=False)
        pytest.skip(reason)
    server = Dovecot({}).start()
    yield server
    server.stop()


@pytest.fixture
def mailbox(dovecot_server: Dovecot) -> tuple[Dovecot, str]:
    """The server and a fresh user (password: wonderland) with an empty INBOX."""
    user = f"u{uuid.uuid4().hex[:10]}"
    dovecot_server.add_user(user, "wonderland")
    return dovecot_server, user
