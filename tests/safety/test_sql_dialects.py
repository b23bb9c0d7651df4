"""SF-1 for SQL: text is read as its dialect reads it; "any" takes the strictest reading."""

from __future__ import annotations

import pytest

from nerve.safety import Scope, check_rules


def blocked(sql: str, dialect: str) -> bool:
    return not check_rules("sql", sql, Scope(dialect=dialect)).allowed  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sql", "blocked_in", "allowed_in"),
    [
        # MySQL needs whitespace after `--`: `--1` is minus minus one, so the DROP runs.
        ("SELECT 1 --1;DROP TABLE users", ("any", "mysql", "mariadb"), ("postgres", "sqlite")),
        ("SELECT 1 --;DROP TABLE users", ("any", "mysql"), ("postgres", "mssql", "oracle")),
        # `#` starts a comment only in MySQL and MariaDB.
        ("SELECT 1 # ;DROP TABLE t", ("any", "postgres", "sqlite", "mssql"), ("mysql", "mariadb")),
        # A backslash escapes a quote only in MySQL strings (and PostgreSQL's E'...').
        ("SELECT '\\'; DROP TABLE t; -- '", ("any", "postgres", "sqlite"), ("mysql",)),
        ("SELECT 'a\\'; DROP TABLE t; #'", ("any", "postgres"), ("mysql", "mariadb")),
        ("SELECT E'\\'; DROP TABLE t; --'", (), ("postgres", "mysql")),
        # Dollar quotes are strings only in PostgreSQL.
        ("SELECT $x$; DROP TABLE t; $x$", ("any", "mysql", "sqlite"), ("postgres",)),
        # Block comments nest in PostgreSQL and T-SQL: this one ends after the quote.
        ("/* /* */ ' */ DROP TABLE t; -- '", ("any", "postgres", "mssql"), ("mysql", "sqlite")),
        # [brackets] quote a name in T-SQL and SQLite.
        ("SELECT [a'b]; DROP TABLE t; --']", ("any", "mssql"), ()),
    ],
)
def test_comments_and_strings_are_read_as_the_dialect_reads_them(
    sql: str, blocked_in: tuple[str, ...], allowed_in: tuple[str, ...]
) -> None:
    """SF-1 (issue 16): what one dialect runs is judged; "any" judges what any dialect runs."""
    for dialect in blocked_in:
        assert blocked(sql, dialect), dialect
    for dialect in allowed_in:
        assert not blocked(sql, dialect), dialect


@pytest.mark.parametrize("dialect", ["any", "postgres", "mysql", "mariadb", "sqlite", "mssql"])
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 'C:\\temp\\' AS dir, 1 -- DROP TABLE t",
        "SELECT 'it''s' FROM t -- ; DROP TABLE t",
        "SELECT a FROM t WHERE b = 'x' /* ; DROP TABLE t */",
        "SELECT 1 -- comment with DROP TABLE t",
    ],
)
def test_comments_and_strings_every_dialect_agrees_on_stay_data(sql: str, dialect: str) -> None:
    """SF-1 (issue 16): a benign look-alike is allowed under every reading."""
    assert not blocked(sql, dialect)


def test_a_dollar_quoted_body_is_data_in_postgres() -> None:
    """SF-1: `$$ ... $$` is a string in PostgreSQL, whatever it holds."""
    assert not blocked("SELECT $$ DROP TABLE t; $$ AS s", "postgres")
