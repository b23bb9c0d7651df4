"""Fact history in bulk: what `FactHistoryStore` runs on either backend (export, import).

`scan_fact_history` reads the history in the order it was appended (by `seq`), a keyset page at a
time. `add_fact_history` appends the changes not already there, so importing one file twice
leaves one copy of each change. A change is already there when the history holds one with the
same user, entity and attribute (matched as `fact_history` matches them: trimmed, any case),
value, session and time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nerve.memory.codec import Row, change_row
from nerve.memory.model import FactChange

__all__ = ["ADD_POSTGRES", "ADD_SQLITE", "new_rows", "page_sql"]

_COLUMNS = "user_id, entity, attribute, entity_key, attribute_key, value, session_id, changed_at"
_SAME = (
    "h.user_id = t.user_id AND h.entity_key = t.entity_key AND h.attribute_key = t.attribute_key"
    " AND h.changed_at = t.changed_at AND h.value = t.value"
)

# One row per change; `t` is the change, the NOT EXISTS probes the fact_history_key index.
ADD_SQLITE = (
    f"INSERT INTO fact_history ({_COLUMNS}) SELECT {_COLUMNS} FROM (SELECT ? AS user_id,"
    " ? AS entity, ? AS attribute, ? AS entity_key, ? AS attribute_key, ? AS value,"
    " ? AS session_id, ? AS changed_at) AS t"
    f" WHERE NOT EXISTS (SELECT 1 FROM fact_history AS h WHERE {_SAME}"
    " AND h.session_id IS t.session_id)"
)
# All changes in one statement; `ord` keeps them in the given order (seq follows it).
ADD_POSTGRES = (
    f"INSERT INTO fact_history ({_COLUMNS}) SELECT {_COLUMNS} FROM unnest($1::text[],"
    " $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::float8[])"
    f" WITH ORDINALITY AS t({_COLUMNS}, ord)"
    f" WHERE NOT EXISTS (SELECT 1 FROM fact_history AS h WHERE {_SAME}"
    " AND h.session_id IS NOT DISTINCT FROM t.session_id) ORDER BY ord"
)


def new_rows(changes: Sequence[FactChange]) -> list[Row]:
    """`change_row` of each change (refusing NUL and NaN before any write), each identical
    change once: one statement cannot see the rows it inserts itself."""
    return list(dict.fromkeys(change_row(change) for change in changes))


def page_sql(
    user_id: str | None, after: int, limit: int, mark: Callable[[int], str]
) -> tuple[str, list[Any]]:
    """The next page of the history after `seq` `after`: rows of (seq, user_id, entity,
    attribute, value, session_id, changed_at)."""
    where = f"seq > {mark(1)}"
    params: list[Any] = [after]
    if user_id is not None:
        params.append(user_id)
        where += f" AND user_id = {mark(2)}"
    params.append(limit)
    sql = (
        "SELECT seq, user_id, entity, attribute, value, session_id, changed_at FROM fact_history"
        f" WHERE {where} ORDER BY seq LIMIT {mark(len(params))}"
    )
    return sql, params
