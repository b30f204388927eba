"""Figures the API's /metrics reads from the database at scrape time: restore items and lifecycle moves by
state, and each active reservation's booked vs achieved rate.

Each domain counts its own rows (its repository); reservations are labelled by a digest of their id, because
the id itself is the credential a client presents in X-Tierpilot-Reservation.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable

from prometheus_client.core import Metric
from sqlalchemy.orm import Session

from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.metrics import gauge_family
from tierpilot.lifecycle import repository as lifecycle
from tierpilot.reservations import repository as reservations
from tierpilot.reservations.models import Reservation
from tierpilot.restores import repository as restores

log = logging.getLogger(__name__)
RESTORE_STATES = ("pending", "ongoing", "ready", "failed", "expired")
MOVE_STATES = ("queued", "running", "switched", "failed")  # always exposed (0 when none), others when present
MAX_RESERVATIONS = 500


def reservation_label(reservation_id: str) -> str:
    """A stable, non-secret label for a reservation (the dashboard shows the same digest)."""
    return hashlib.sha256(reservation_id.encode()).hexdigest()[:12]


def restore_items(session: Session, owner_id: int | None) -> dict[str, int]:
    """Restore items by state (one owner's, or everyone's)."""
    totals = dict.fromkeys(RESTORE_STATES, 0)
    for row in restores.tier_counts(session, owner_id):
        for state, value in zip(RESTORE_STATES, row[3:8], strict=True):
            totals[state] += int(value or 0)
    loose, _oldest = restores.loose_items_active(session, owner_id)
    totals["pending"] += loose  # gateway restores without a batch: counted as waiting on the tier
    return totals


def lifecycle_moves(session: Session) -> dict[str, int]:
    return dict.fromkeys(MOVE_STATES, 0) | lifecycle.count_moves_by_state(session, None)


def active_reservations(session: Session, owner_id: int | None) -> list[Reservation]:
    return reservations.list_reservations(session, owner_id=owner_id, states=("active",), now=utcnow(),
                                          limit=MAX_RESERVATIONS)


def collect() -> Iterable[Metric]:
    """Gauges from the database (nothing when it cannot be read: a scrape never fails on them)."""
    try:
        with transaction() as session:
            totals = restore_items(session, None)
            moves = lifecycle_moves(session)
            active = active_reservations(session, None)
            booked = [([reservation_label(r.id), r.direction], float(r.rate_bps)) for r in active]
            achieved = [([reservation_label(r.id), r.direction], float(r.achieved_mean_bps or 0)) for r in active]
    except Exception:
        log.warning("could not read state gauges", exc_info=True)
        return
    yield gauge_family("tierpilot_restore_items", "restore items by state (batches and gateway restores)",
                       ["state"], (([s], float(n)) for s, n in totals.items()))
    yield gauge_family("tierpilot_lifecycle_moves", "lifecycle moves by state", ["state"],
                       (([s], float(n)) for s, n in sorted(moves.items())))
    yield gauge_family("tierpilot_reservation_booked_bytes_per_second", "rate booked by each active reservation",
                       ["reservation", "direction"], booked)
    yield gauge_family("tierpilot_reservation_achieved_bytes_per_second",
                       "mean rate each active reservation achieved over the seconds that carried traffic",
                       ["reservation", "direction"], achieved)
