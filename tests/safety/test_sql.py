"""SF-1 layer 1 for SQL: each statement judged by verb, target and predicate."""

from __future__ import annotations

import pytest

from nerve.safety import check_rules


def blocked(sql: str) -> bool:
    return not check_rules("sql", sql).allowed


@pytest.mark.parametrize(
    "sql",
    [
        "DROP DATABASE billing",
        "drop schema analytics cascade",
        "DROP TABLE IF EXISTS orders",
        "DROP VIEW monthly_totals",
        "TRUNCATE TABLE audit_log",
        "truncate sessions",
        "DELETE FROM customers",
        "delete from `customers`;",
        'DELETE FROM "Sales"."Orders"',
        "UPDATE accounts SET balance = 0",
        "WITH stale AS (SELECT id FROM t WHERE age > 9) DELETE FROM t",
        "ALTER TABLE people DROP COLUMN email",
        "ALTER TABLE events DROP PARTITION p2019",
        "GRANT ALL PRIVILEGES ON *.* TO 'svc'@'%'",
    ],
)
def test_destructive_statements_are_blocked(sql: str) -> None:
    """SF-1: DROP, TRUNCATE, DELETE/UPDATE without WHERE, ALTER ... DROP, GRANT ALL."""
    assert blocked(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM customers WHERE 1=1",
        "DELETE FROM customers WHERE 1 = 1 -- all of them",
        "UPDATE accounts SET balance = 0 WHERE 'x'='x'",
        "DELETE FROM customers WHERE TRUE",
        "DELETE FROM customers WHERE id = 7 OR 1=1",
        "UPDATE accounts SET flag = 1 WHERE (2 > 1)",
        "DELETE FROM customers WHERE id = id",
        "DELETE FROM customers WHERE NOT FALSE",
        "UPDATE accounts SET flag = 1 WHERE note IS NULL OR note IS NOT NULL",
    ],
)
def test_an_always_true_where_counts_as_no_where(sql: str) -> None:
    """SF-1: tautologies are evaluated on the parsed predicate, not pattern-matched."""
    assert blocked(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM customers WHERE id = 7",
        "UPDATE accounts SET balance = 0 WHERE id IN (SELECT id FROM closed)",
        "DELETE FROM t WHERE created < now() - interval '30 days' AND 1=1",
        "SELECT * FROM orders WHERE 1=1",
        "DELETE FROM t WHERE a = 1 OR NOT a = 1",
        "DELETE FROM t WHERE a IS NULL OR b IS NOT NULL",
        "INSERT INTO logs (msg) VALUES ('DROP TABLE users')",
        "SELECT 'DELETE FROM users' AS example",
        "CREATE TABLE t (id INT REFERENCES u (id) ON DELETE CASCADE)",
        "ALTER TABLE people ALTER COLUMN name DROP DEFAULT",
        "ALTER TABLE people ADD COLUMN age INT",
        "GRANT SELECT ON reports TO analyst",
        "GRANT ALL ON shop.* TO 'app'@'localhost'",
        "SHOW TABLES",
        "-- DROP TABLE users\nSELECT 1",
        "/* TRUNCATE audit */ SELECT count(*) FROM audit",
    ],
)
def test_safe_statements_and_dangerous_words_as_data_are_allowed(sql: str) -> None:
    """SF-1: strings and comments are data; a real WHERE keeps DELETE/UPDATE safe."""
    assert not blocked(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "DROP/**/TABLE users",
        "DROP/* hidden */DATABASE shop",
        "/*!50000 DROP TABLE users */",
        "SELECT 1; DROP TABLE users",
        "SELECT name FROM t WHERE id = 1; DELETE FROM t; SELECT 2",
        "7; TRUNCATE TABLE payments --",
        "'; DELETE FROM users; --",
        "x'; UPDATE users SET role='admin' --",
        "Drop Table Users",
    ],
)
def test_comments_stacked_statements_and_injections_do_not_hide_anything(sql: str) -> None:
    """SF-1: comments become spaces, executable comments are code, each statement is judged."""
    assert blocked(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "EXEC('DR' + 'OP TABLE users')",
        "EXECUTE IMMEDIATE 'DROP TABLE ' || tab",
        "EXEC sp_executesql @stmt",
        "PREPARE s FROM @built",
        "EXEC xp_cmdshell 'format c:'",
    ],
)
def test_dynamic_sql_is_high_risk(sql: str) -> None:
    """SF-1: a statement built at run time cannot be judged before it runs."""
    verdict = check_rules("sql", sql)
    assert not verdict.allowed and verdict.risk_level == "high"


def test_a_prepared_literal_is_judged_by_its_text() -> None:
    """SF-1: PREPARE ... FROM 'literal' is as dangerous as the literal."""
    assert blocked("PREPARE s FROM 'DROP TABLE users'")
    assert not blocked("PREPARE s FROM 'SELECT * FROM users WHERE id = ?'")


def test_drop_database_is_critical_and_drop_table_high() -> None:
    """SF-4: the risk level distinguishes losing a database from losing a table."""
    assert check_rules("sql", "DROP DATABASE shop").risk_level == "critical"
    assert check_rules("sql", "DROP TABLE carts").risk_level == "high"


def test_text_that_is_not_sql_is_judged_as_a_command() -> None:
    """SF-1: `mysqladmin drop db` handed in as SQL is still caught."""
    assert blocked("mysqladmin -u root drop shop")
    assert not blocked("hello there")


def test_sqlglot_warnings_stay_off_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    """SF-1: a safety check must not write parser warnings to stderr."""
    check_rules("sql", "DELETE FROM t WHERE x = ANY_WEIRD_FN(1) !! 2")
    check_rules("sql", "GRANT ALL ON *.* TO bob")
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize(
    ("sql", "category"),
    [
        ("ALTER USER root IDENTIFIED BY 'x'", "credentials"),
        ("SET PASSWORD FOR root = PASSWORD('x')", "credentials"),
        ("ALTER ROLE app WITH PASSWORD 'x'", "credentials"),
        ("ALTER ROLE app SUPERUSER", "system"),
        ("EXEC sp_MSforeachtable 'DROP TABLE ?'", "code"),
    ],
)
def test_password_changes_superuser_grants_and_foreach_sql_are_blocked(
    sql: str, category: str
) -> None:
    """SF-1: a new password locks a login's owner out; SUPERUSER hands over the server."""
    verdict = check_rules("sql", sql)
    assert not verdict.allowed and verdict.category == category


@pytest.mark.parametrize(
    "sql", ["CREATE USER bob", "ALTER USER bob RENAME TO rob", "SELECT password FROM users"]
)
def test_ordinary_account_statements_are_allowed(sql: str) -> None:
    """SF-1: benign look-alikes of the login rules."""
    assert not blocked(sql)
