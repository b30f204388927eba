"""Exports of a restore batch: its objects as CSV, and a shell script copying the readable ones out."""

from __future__ import annotations

import csv
import io
import shlex
from collections.abc import Iterator

from sqlalchemy.orm import Session

from tierpilot.audit.service import csv_cell
from tierpilot.auth.models import User
from tierpilot.kit.db import transaction
from tierpilot.kit.errors import Invalid
from tierpilot.kit.settings import get_settings
from tierpilot.restores import repository, service


def export_csv(session: Session, user: User, batch_id: int) -> Iterator[str]:
    """bucket,key,size,state,expires_at of every object, in key order (streamed from its own read)."""
    return _csv_rows(service.own_batch(session, user, batch_id).id)


def _csv_rows(batch_id: int) -> Iterator[str]:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["bucket", "key", "size", "state", "expires_at"])
    with transaction() as session:
        for bucket, key, size, state, expires in repository.iter_items(session, batch_id):
            writer.writerow([csv_cell(bucket), csv_cell(key), size, state, expires.isoformat() if expires else ""])
            if buf.tell() > 64 * 1024:
                yield _drain(buf)
    yield _drain(buf)


def _drain(buf: io.StringIO) -> str:
    text = buf.getvalue()
    buf.seek(0)
    buf.truncate()
    return text


def export_commands(session: Session, user: User, batch_id: int, tool: str, dest: str = ".") -> Iterator[str]:
    """A shell script copying every readable object of the batch to ``dest``/bucket/key."""
    if tool not in ("aws", "tierpilot"):
        raise Invalid("tool must be aws or tierpilot")
    batch = service.own_batch(session, user, batch_id)
    return _command_lines(batch.id, batch.name, tool, dest)


def _command_lines(batch_id: int, name: str, tool: str, dest: str) -> Iterator[str]:
    endpoint = shlex.quote(get_settings().gateway_url)
    yield (f"#!/bin/sh\n# restore batch {batch_id} ({name.replace(chr(10), ' ')}): objects readable through "
           "the gateway\n# credentials: export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (Settings > S3 keys)\n"
           "set -e\n")
    chunk: list[str] = []
    with transaction() as session:
        for bucket, key, _size, _state, _expires in repository.iter_items(session, batch_id, ("ready",)):
            src = shlex.quote(f"s3://{bucket}/{key}")
            dst = shlex.quote(f"{dest.rstrip('/') or '/'}/{bucket}/{key}")
            if tool == "aws":
                chunk.append(f"aws s3 cp {src} {dst} --endpoint-url {endpoint}\n")
            else:
                chunk.append(f"tierpilot cp {src} {dst} --endpoint {endpoint} --quiet\n")
            if len(chunk) >= 1000:
                yield "".join(chunk)
                chunk = []
    yield "".join(chunk)
