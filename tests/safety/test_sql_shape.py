"""SF-1 for SQL: CTEs, EXPLAIN ANALYZE and executable comments do not hide the statement."""

from __future__ import annotations

import pytest

from nerve.safety import Scope, check_rules


def blocked(sql: str, dialect: str = "any") -> bool:
    return not check_rules("sql", sql, Scope(dialect=dialect)).allowed  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "sql",
    [
        "WITH x AS (SELECT 1) DELETE FROM t",
        "WITH x AS (SELECT 1), y AS (SELECT 2) DROP TABLE t",
        "WITH x AS (SELECT 1) EXEC('DROP TABLE t')",
        "WITH x AS (SELECT 1) UPDATE t SET a = 1",
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) DELETE FROM t",
        "WITH x AS (SELECT ')' AS p, (1 + (2)) AS q) DELETE FROM t",
        "WITH x AS MATERIALIZED (SELECT 1) TRUNCATE t",
        "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
        "WITH a AS (SELECT 1), u AS (UPDATE t SET x = 1 RETURNING id) SELECT * FROM u",
    ],
)
def test_a_leading_with_does_not_hide_the_statement_or_a_data_modifying_cte(sql: str) -> None:
    """SF-1 (issue 16): the statement after the CTEs, and each CTE body, is judged."""
    assert blocked(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION SELECT i + 1 FROM n WHERE i < 9) TABLE n",
        "WITH d AS (DELETE FROM t WHERE id = 3 RETURNING *) SELECT * FROM d",
        "WITH x AS (SELECT 'DROP TABLE t; (' AS s) SELECT s FROM x",
        "WITH x AS (SELECT 1) UPDATE t SET a = 1 WHERE id = 2",
    ],
)
def test_cte_reads_and_ctes_with_a_real_where_are_allowed(sql: str) -> None:
    """SF-1 (issue 16): benign look-alikes of the CTE cases."""
    assert not blocked(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "EXPLAIN ANALYZE DELETE FROM t",
        "EXPLAIN ANALYSE UPDATE t SET x = 1",
        "EXPLAIN (ANALYZE, BUFFERS) UPDATE t SET x = 1",
        "EXPLAIN (ANALYZE true, FORMAT JSON) DELETE FROM t",
        "EXPLAIN ANALYZE WITH x AS (SELECT 1) DELETE FROM t",
        "ANALYZE DELETE FROM t",
    ],
)
def test_explain_analyze_runs_the_statement_so_it_is_judged(sql: str) -> None:
    """SF-1 (issue 16): EXPLAIN ANALYZE (and MariaDB's ANALYZE stmt) executes it."""
    assert blocked(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "EXPLAIN DELETE FROM t",
        "EXPLAIN (ANALYZE false) DELETE FROM t",
        "EXPLAIN (ANALYZE off, COSTS) UPDATE t SET x = 1",
        "EXPLAIN ANALYZE SELECT * FROM t",
        "EXPLAIN ANALYZE DELETE FROM t WHERE id = 4",
        "ANALYZE VERBOSE t",
    ],
)
def test_a_plan_only_explain_and_an_analyzed_read_are_allowed(sql: str) -> None:
    """SF-1 (issue 16): a plan does not run the statement."""
    assert not blocked(sql)


@pytest.mark.parametrize("dialect", ["any", "mysql", "mariadb"])
@pytest.mark.parametrize(
    "sql", ["/*! DROP TABLE t */", "/*!50000 DROP TABLE t */", "SELECT 1 /*!, (DELETE FROM t) */"]
)
def test_mysql_executable_comments_run_in_mysql_and_mariadb(sql: str, dialect: str) -> None:
    """SF-1 (issue 16): `/*! ... */` is code for MySQL and MariaDB."""
    if "DELETE" in sql:
        sql = "SELECT 1; /*! DELETE FROM t */"
    assert blocked(sql, dialect)


@pytest.mark.parametrize("sql", ["/*M! DROP TABLE t */", "/*M!100100 DROP TABLE t */"])
def test_mariadb_executable_comments_run_in_mariadb_only(sql: str) -> None:
    """SF-1 (issue 16): `/*M! ... */` is code for MariaDB, a comment for MySQL and PostgreSQL."""
    assert blocked(sql, "mariadb") and blocked(sql, "any")
    assert not blocked(sql, "mysql") and not blocked(sql, "postgres")


def test_an_executable_comment_is_a_comment_in_postgres() -> None:
    """SF-1 (issue 16): PostgreSQL reads `/*! ... */` as a plain comment."""
    assert not blocked("/*!50000 DROP TABLE t */ SELECT 1", "postgres")
    assert blocked("/*!50000 DROP TABLE t */ SELECT 1", "any")


@pytest.mark.parametrize(
    "sql",
    [
        "BEGIN DELETE FROM t; END",
        "IF OBJECT_ID('t') IS NOT NULL DROP TABLE t",
        "WHILE 1 = 1 DELETE FROM t",
        "DO $$ BEGIN DELETE FROM t; END $$",
        "DO 'BEGIN DROP TABLE x; END'",
    ],
)
def test_procedural_blocks_and_do_bodies_are_judged(sql: str) -> None:
    """SF-1: a statement inside IF/BEGIN, or in a PostgreSQL DO body, runs."""
    assert blocked(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "BEGIN TRANSACTION; UPDATE t SET a = 1 WHERE id = 2; COMMIT",
        "DO $$ BEGIN UPDATE t SET a = 1 WHERE id = 2; END $$",
        "DO $$ BEGIN RAISE NOTICE 'DROP TABLE t'; END $$",
        "IF EXISTS (SELECT 1 FROM t) SELECT 1",
    ],
)
def test_benign_blocks_are_allowed(sql: str) -> None:
    """SF-1: a block whose statements are safe passes."""
    assert not blocked(sql)


@pytest.mark.parametrize(
    ("sql", "category"),
    [
        ("DROP TABLE t", "destructive"),
        ("TRUNCATE t", "destructive"),
        ("DELETE FROM t", "destructive"),
        ("WITH x AS (SELECT 1) DELETE FROM t", "destructive"),
        ("ALTER TABLE t DROP COLUMN c", "destructive"),
        ("EXEC('DROP TABLE ' + @t)", "code"),
        ("PREPARE s FROM @sql", "code"),
        ("SHUTDOWN", "system"),
    ],
)
def test_sql_findings_name_their_category(sql: str, category: str) -> None:
    """SF-4: a blocking SQL finding says what kind of harm it is."""
    assert check_rules("sql", sql).category == category
