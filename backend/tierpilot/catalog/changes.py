"""The objects generation: every transaction that changes the ``objects`` table moves it after its commit.

A gateway on PostgreSQL keeps the rows GET and HEAD read under this counter (``hotread``), as it keeps S3 keys
under the credentials generation: a row read under a value answers later requests that read the same value.
That is right only if no change to the table commits without moving the counter before it is answered, and so
the counter is not left to each writer to remember. Every statement that any process importing the catalog runs
through SQLAlchemy in a session is looked at after it ran: an INSERT, UPDATE or DELETE of the table (by the ORM's
flush, an ORM or Core statement, or SQL text) notes its session, whose commit then moves the counter once, before
the session's caller goes on to answer (``generations.changed``). Lifecycle moves, restores, deletions, adoptions
and the gateway's access-time flushes all count.

The counter lives in Redis, so it moves only where the installation has Redis (``TIERPILOT_REDIS_URL``) and a
database other than SQLite: a SQLite reader watches the database's own WAL index instead (``hotread``), and
without Redis nothing on PostgreSQL is kept. A move that fails after a commit (Redis lost in the same few
milliseconds) is logged; the rows a gateway kept then stay at most ``TIERPILOT_GATEWAY_CACHE_S`` old.
"""

from __future__ import annotations

import functools
import logging
import re
import weakref
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.engine import Connection
from sqlalchemy.engine.default import DefaultExecutionContext
from sqlalchemy.orm import Session, SessionTransaction
from sqlalchemy.sql.elements import TextClause

from tierpilot.catalog.models import Object
from tierpilot.kit import generations
from tierpilot.kit.settings import get_settings

log = logging.getLogger("tierpilot.catalog.changes")

OBJECTS_GENERATION = "catalog:objects"
_TABLE_NAME = Object.__tablename__
_WRITES_TABLE = re.compile(rf'\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?{_TABLE_NAME}"?(?:\s|\(|$)', re.I)

# the session each connection runs a transaction of (the connection's own object: made at each checkout), on
# databases other than SQLite
_sessions: weakref.WeakKeyDictionary[Connection, Session] = weakref.WeakKeyDictionary()


@functools.lru_cache(maxsize=256)
def _sql_writes_table(sql: str) -> bool:
    return _WRITES_TABLE.search(sql) is not None


def _writes_table(statement: str, context: DefaultExecutionContext) -> bool:
    compiled = context.compiled
    if compiled is None or isinstance(compiled.statement, TextClause):  # SQL text: read as text
        return _sql_writes_table(statement)
    if context.isinsert or context.isupdate or context.isdelete:
        return getattr(getattr(compiled.statement, "table", None), "name", None) == _TABLE_NAME
    return False


def _begun(session: Session, _transaction: SessionTransaction, connection: Connection) -> None:
    if connection.dialect.name != "sqlite":
        _sessions[connection] = session


def _executed(conn: Connection, _cursor: Any, statement: str, _parameters: Any, context: DefaultExecutionContext,
              _many: bool) -> None:
    if conn.dialect.name == "sqlite" or not _writes_table(statement, context):
        return
    session = _sessions.get(conn)
    if session is None:  # a connection of no session: nothing to move the counter at its commit
        log.error("a statement changed %s outside a session; gateways may keep the rows it changed for "
                  "TIERPILOT_GATEWAY_CACHE_S", _TABLE_NAME)
    elif get_settings().redis_url:  # the transaction changed the table: the counter moves after its commit
        generations.changed(session, OBJECTS_GENERATION)


event.listen(Session, "after_begin", _begun)
event.listen(Engine, "after_cursor_execute", _executed)  # every statement, SQL text included
