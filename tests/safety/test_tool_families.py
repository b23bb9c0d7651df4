"""SF-1 layer 1: destructive operations of tool families whose verb alone does not say so.

Each family is judged by a general rule (a flag class, an endpoint class, a verb class with its
object), so the examples here are deliberately not the labelled data's rows.
"""

from __future__ import annotations

import pytest

from nerve.safety import check_rules


def verdict(command: str) -> tuple[bool, str]:
    found = check_rules("shell", command)
    return not found.allowed, found.risk_level


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("curl -XPOST https://search.internal:9200/orders-2025/_close", True),
        ("curl -s -X POST 'localhost:9200/logs-*/_freeze?pretty'", True),
        ("xh PUT es.local:9200/_cluster/settings persistent:='{}'", True),
        ("curl -X POST http://es:9200/_cluster/reroute -d @moves.json", True),
        ("curl -X DELETE http://es:9200/orders-2025", True),
        ("curl -X POST http://es:9200/orders-2025/_open", False),
        ("curl http://es:9200/_cluster/settings", False),
        ("curl -X POST http://es:9200/orders-2025/_refresh", False),
    ],
)
def test_search_cluster_admin_endpoints_that_take_data_offline(
    command: str, expected: bool
) -> None:
    """Closing or freezing an index, or rewriting cluster settings, takes data offline."""
    assert verdict(command)[0] is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("printf 'disable server web/app2\\n' | socat - UNIX-CONNECT:/run/lb/admin.sock", True),
        ("echo 'shutdown session 0x55d1' | socat stdio /var/lib/lb/stats", True),
        ("echo 'set server api/node3 state maint' | socat stdio /run/lb.sock", True),
        ("echo 'set weight api/node3 0' | socat stdio /run/lb.sock", True),
        ("echo 'del map /etc/lb/hosts.map #3' | socat stdio /run/lb.sock", True),
        ("printf 'flush_all\\r\\n' | nc cache.internal 11211", True),
        ("socat stdio /run/lb.sock <<< 'disable frontend public'", True),
        ("echo 'show servers state' | socat stdio /run/lb.sock", False),
        ("echo 'set server api/node3 state ready' | socat stdio /run/lb.sock", False),
        ("echo stats | nc cache.internal 11211", False),
        ("haproxy -f /etc/lb/lb.cfg -st $(cat /run/lb.pid)", True),
        ("haproxy -c -f /etc/lb/lb.cfg", False),
    ],
)
def test_load_balancer_runtime_commands_that_stop_traffic(command: str, expected: bool) -> None:
    """Admin commands written into a control socket are judged by what they do."""
    assert verdict(command)[0] is expected


def test_a_graceful_haproxy_reload_is_only_medium() -> None:
    assert verdict("haproxy -f /etc/lb/lb.cfg -sf $(pidof haproxy)") == (False, "medium")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("nsupdate -k /etc/ddns.key <<EOF\nupdate delete www.corp.test. A\nsend\nEOF", True),
        ("printf 'del mail.corp.test. MX\\nsend\\n' | nsupdate -v", True),
        ("dig @ns1.corp.test corp.test AXFR", True),
        ("dig -t axfr corp.test @10.0.0.53", True),
        ("host -t axfr corp.test ns1.corp.test", True),
        ("dig +short corp.test MX", False),
        ("host www.corp.test", False),
    ],
)
def test_dns_record_deletes_and_zone_transfers(command: str, expected: bool) -> None:
    assert verdict(command)[0] is expected


def test_a_dns_update_that_only_adds_is_medium() -> None:
    update = "nsupdate <<EOF\nupdate add api.corp.test. 300 A 10.0.0.9\nsend\nEOF"
    assert verdict(update) == (False, "medium")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ssh-add -D", True),
        ("ssh-add -d ~/.ssh/deploy_ed25519", True),
        ("ssh-keygen -R build-7.corp.test", True),
        ("ssh-keygen -f ~/.ssh/known_hosts -R '[git.corp.test]:2222'", True),
        ("ssh-add ~/.ssh/deploy_ed25519", False),
        ("ssh-keygen -t ed25519 -f ~/.ssh/new_key -N ''", False),
        ("ssh-keygen -lf ~/.ssh/new_key.pub", False),
    ],
)
def test_ssh_key_store_removals(command: str, expected: bool) -> None:
    assert verdict(command)[0] is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("borg rdelete --repo /mnt/vault", True),
        ("borg recreate /mnt/vault::monday --exclude '*.iso'", True),
        ("borg break-lock /mnt/vault", True),
        ("restic -r s3:backups/app forget --keep-last 2 --prune", True),
        ("rclone cleanup gdrive:archive", True),
        ("kopia snapshot delete k1a2b3 --delete", True),
        ("borg create /mnt/vault::tuesday ~/work", False),
        ("restic -r s3:backups/app snapshots", False),
        ("restic unlock", False),
        ("rclone copy ./site gdrive:site", False),
    ],
)
def test_backup_repository_verbs(command: str, expected: bool) -> None:
    assert verdict(command)[0] is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pg_restore --clean -d shop nightly.dump", True),
        ("pg_restore -c -d shop nightly.dump", True),
        ("mongorestore --drop --uri mongodb://db:27017 ./dump", True),
        ("gitlab-backup restore BACKUP=1700000000_2025_01_01", True),
        ("rake app:backup:restore", True),
        ("pg_restore -Fc -d shop nightly.dump", False),
        ("restic restore latest --target ./restored", False),
    ],
)
def test_restores_that_replace_live_data(command: str, expected: bool) -> None:
    """`-Fc` is -F's value, not --clean; restoring into a new directory replaces nothing."""
    assert verdict(command)[0] is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("mvn -DskipTests deploy", True),
        ("./mvnw -B release:perform -Darguments=-DskipTests", True),
        ("./gradlew :core:publish", True),
        ("gradle publishAllPublicationsToSonatypeRepository", True),
        ("twine upload dist/*", True),
        ("gem push nerve-0.1.0.gem", True),
        ("cargo yank --version 0.3.1", True),
        ("npm unpublish left-pad@1.0.0", True),
        ("npm publish --access public", True),
        ("mvn clean verify", False),
        ("./gradlew publishToMavenLocal", False),
        ("twine check dist/*", False),
    ],
)
def test_publishing_a_release_cannot_be_taken_back(command: str, expected: bool) -> None:
    assert verdict(command)[0] is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("splunk clean kvstore -app search", True),
        ("acme-cli clean userdata --tenant t1", True),
        ("stripe secrets rotate whsec_1", True),
        ("az cosmosdb keys regenerate --name db1 -g rg --key-kind primary", True),
        ("billing-cli subscriptions cancel sub_42", True),
        ("stripe invoices void in_9", True),
        ("acme-cli locks force-unlock state-7", True),
        ("terraform force-unlock 6e2b", True),
        ("aws cloudfront create-invalidation --distribution-id E1 --paths '/*'", True),
        ("gcloud compute url-maps invalidate-cdn-cache web --path '/*'", True),
        ("aws cloudfront create-invalidation --distribution-id E1 --paths /index.html", False),
        ("npm cache clean --force", False),
        ("make clean", False),
        ("vault token renew", False),
        ("gh run cancel 1234", False),
    ],
)
def test_verbs_judged_with_their_object(command: str, expected: bool) -> None:
    """clean + stored data, rotate + credential, cancel + subscription, force + lock..."""
    assert verdict(command)[0] is expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("billing.subscriptions.cancel('sub_77')", True),
        ("stripe.PaymentIntent.cancel(intent_id)", True),
        ("client.invoices.void_invoice('in_3')", True),
        ("task.cancel()", False),
        ("client.subscriptions.list(limit=3)", False),
    ],
)
def test_code_that_cancels_billing_objects(code: str, expected: bool) -> None:
    assert verdict(code)[0] is expected


@pytest.mark.parametrize(
    "command",
    ["pip uninstall -y requests", "poetry remove httpx", "docker stop web", "git push origin main"],
)
def test_recoverable_operations_stay_medium(command: str) -> None:
    """Reinstallable, restartable or non-destructive: allowed, but strict mode refuses them."""
    assert verdict(command) == (False, "medium")
