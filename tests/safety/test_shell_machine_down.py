"""SF-1: taking the machine down or off the network, and reading secrets in less common ways
(issue 16)."""

from __future__ import annotations

import pytest

from nerve.safety import Scope, Verdict, check_rules

WORKSPACE = Scope.of("/home/dev/proj")


def verdict(command: str, scope: Scope = WORKSPACE) -> Verdict:
    return check_rules("shell", command, scope)


@pytest.mark.parametrize(
    "command",
    [
        "perl -e 'fork while fork'",
        "python3 -c 'import os\nwhile True: os.fork()'",
        "ip link set eth0 down",
        "ifconfig eth0 down",
        "nmcli networking off",
        "iptables -P INPUT DROP",
        "umount -l /",
        "mount -o remount,ro /",
        "pkill -KILL -u root",
        "killall -u dev",
        "mdadm --zero-superblock /dev/sda",
        "xfs_repair -L /dev/sda1",
        "kubectl scale deploy --all --replicas=0 -n prod",
    ],
)
def test_commands_that_take_the_machine_down_or_off_the_network_block(command: str) -> None:
    assert not verdict(command).allowed


@pytest.mark.parametrize(
    "command",
    [
        "ip addr show",
        "ifconfig lo down",
        "iptables -A INPUT -p tcp --dport 8080 -j ACCEPT",
        "umount /mnt/usb",
        "mount -o remount,ro /mnt/backup",
        "killall -u dev node",
        "mdadm --detail /dev/md0",
        "xfs_repair -n /dev/sdb1",
        "kubectl scale deploy api --replicas=3",
    ],
)
def test_their_everyday_neighbours_pass(command: str) -> None:
    assert verdict(command).allowed


@pytest.mark.parametrize(
    "command",
    [
        "perl -ne print ~/.ssh/id_rsa",
        "declare -p AWS_SECRET_ACCESS_KEY",
        "locate id_rsa",
        "cat ~/.bash_history | grep -i pass",
        "cat /var/lib/jenkins/secrets/initialAdminPassword",
        "python3 -c \"import shutil,os; shutil.rmtree(os.path.expanduser('~'))\"",
        "python3 -c \"import os; [os.remove(os.path.join('/etc', f)) for f in os.listdir(d)]\"",
        "rm -rf ${HOME:?}/",
    ],
)
def test_secrets_and_deletes_behind_an_extra_step_are_still_seen(command: str) -> None:
    assert not verdict(command).allowed


def test_their_harmless_forms_pass() -> None:
    for command in ("perl -ne 'print if /TODO/' src/app.pl", "declare -p PATH", "locate README"):
        assert verdict(command).allowed, command
