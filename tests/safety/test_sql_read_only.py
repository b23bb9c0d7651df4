"""SF-1 for SQL in read-only mode: only statements that read pass; anything else is refused."""

from __future__ import annotations

import pytest

from nerve.safety import Scope, check_rules

READ_ONLY = Scope(mode="read_only")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM orders WHERE id = 1",
        "select count(*) from t; select max(id) from t",
        "SELECT x INTO @v FROM t",
        "(SELECT 1) UNION (SELECT 2)",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "VALUES (1), (2)",
        "TABLE orders",
        "SHOW TABLES",
        "DESCRIBE orders",
        "DESC orders",
        "EXPLAIN DELETE FROM t",
        "EXPLAIN ANALYZE SELECT * FROM t",
        "BEGIN; SELECT 1; COMMIT",
        "START TRANSACTION READ ONLY",
        "ROLLBACK",
        "SET search_path TO app",
        "SET statement_timeout = '5s'",
        "SET @n = (SELECT count(*) FROM t)",
        "USE shop",
        "PRAGMA table_info(users)",
        "PRAGMA user_version",
        "DECLARE c CURSOR FOR SELECT * FROM t",
        "FETCH 10 FROM c",
        "COPY (SELECT * FROM t) TO STDOUT",
        "SELECT 'DELETE FROM t' AS example -- UPDATE",
        "SELECT '\"hi' AS x FROM x",
    ],
)
def test_reads_pass_in_read_only_mode(sql: str) -> None:
    """SF-1 (issue 16): SELECT, SHOW, DESCRIBE, EXPLAIN, transaction control, session SETs."""
    assert check_rules("sql", sql, READ_ONLY).allowed


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES (1)",
        "UPDATE t SET a = 1 WHERE id = 2",
        "DELETE FROM t WHERE id = 2",
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = 1",
        "REPLACE INTO t VALUES (1)",
        "CREATE TABLE x (a int)",
        "ALTER TABLE t ADD COLUMN b int",
        "GRANT SELECT ON t TO bob",
        "CALL refresh()",
        "EXEC dbo.refresh",
        "COPY t FROM STDIN",
        "LOCK TABLE t",
        "SELECT * INTO backup FROM t",
        "SELECT * FROM t FOR UPDATE",
        "SELECT * FROM t FOR SHARE",
        "SELECT * FROM t LOCK IN SHARE MODE",
        "SELECT nextval('s')",
        "SELECT setval('s', 1)",
        "SELECT pg_advisory_lock(1)",
        "SELECT pg_terminate_backend(42)",
        "EXPLAIN ANALYZE DELETE FROM t WHERE id = 1",
        "WITH d AS (DELETE FROM t WHERE id = 3 RETURNING *) SELECT * FROM d",
        "SELECT 1; INSERT INTO t VALUES (2)",
        "BEGIN DELETE FROM t WHERE id = 1; END",
        "SET GLOBAL max_connections = 10",
        "SET default_transaction_read_only = off",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
        "SET ROLE admin",
        "PRAGMA journal_mode = WAL",
        "PRAGMA optimize",
        "COMMIT PREPARED 'tx1'",
        "RESET MASTER",
        "ANALYZE t",
        "VACUUM",
        "frobnicate the table",
    ],
)
def test_everything_else_is_refused_in_read_only_mode(sql: str) -> None:
    """SF-1 (issue 16): writes, locks, state-changing functions and unknown statements are
    refused (fail closed), with category read_only unless a rule found worse."""
    verdict = check_rules("sql", sql, READ_ONLY)
    assert not verdict.allowed and verdict.risk_level == "high"
    assert verdict.category == "read_only"


def test_the_refusal_names_the_statement() -> None:
    """SF-4: the reason says which statement is not a read."""
    assert "INSERT" in check_rules("sql", "SELECT 1; INSERT INTO t VALUES (1)", READ_ONLY).reason


def test_a_destructive_statement_keeps_its_own_category_in_read_only_mode() -> None:
    """SF-4: DROP DATABASE is still critical and destructive, not merely 'not a read'."""
    verdict = check_rules("sql", "DROP DATABASE shop", READ_ONLY)
    assert verdict.risk_level == "critical" and verdict.category == "destructive"


def test_default_mode_still_allows_ordinary_writes() -> None:
    """SF-1: read-only is an option; without it an INSERT or a scoped UPDATE passes."""
    assert check_rules("sql", "INSERT INTO t VALUES (1)").allowed
    assert check_rules("sql", "UPDATE t SET a = 1 WHERE id = 2").allowed


@pytest.mark.parametrize("dialect", ["any", "mysql"])
def test_read_only_mode_reads_text_as_the_dialect_does(dialect: str) -> None:
    """SF-1 (issue 16): a write hidden from PostgreSQL by `--1` still runs in MySQL."""
    scope = Scope(mode="read_only", dialect=dialect)  # type: ignore[arg-type]
    assert not check_rules("sql", "SELECT 1 --1; INSERT INTO t VALUES (1)", scope).allowed
    postgres = Scope(mode="read_only", dialect="postgres")
    assert check_rules("sql", "SELECT 1 --1; INSERT INTO t VALUES (1)", postgres).allowed
