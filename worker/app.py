"""The worker and beat processes: the shared Celery app with every domain's tasks and the beat schedule."""

from __future__ import annotations

from datetime import timedelta

from tierpilot.app import wiring
from tierpilot.kit.jobs import broker_reachable, celery_app
from tierpilot.kit.settings import get_settings
from worker.steps import Heartbeat, ResumeMoves

# Each domain's tasks module; tasks take ids, are idempotent and named `<domain>.<verb>`.
TASK_MODULES = [
    "tierpilot.audit.tasks",
    "tierpilot.auth.tasks",
    "tierpilot.notifications.tasks",
    "tierpilot.restores.tasks",
    "tierpilot.lifecycle.tasks",
    "tierpilot.reservations.tasks",
    "tierpilot.tiers.tasks",
    "tierpilot.adoption.tasks",
    "tierpilot.benchmarks.tasks",
    "tierpilot.spend.tasks",
    "tierpilot.integrity.tasks",
    "tierpilot.catalog.tasks",
    "tierpilot.events.tasks",
]

BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    # a backstop: walks every tier directory, so rarely
    "tiers.housekeep": {"task": "tiers.housekeep", "schedule": timedelta(hours=6), "options": {"expires": 3600}},
    # picks the adopted buckets whose last scan is TIERPILOT_ADOPT_RESCAN_S old; checks at least once a minute
    "tiers.rescan_adopted": {"task": "tiers.rescan_adopted",
                             "schedule": timedelta(seconds=min(60.0, get_settings().adopt_rescan_s)),
                             "options": {"expires": 300}},
    "auth.purge_expired_tokens": {"task": "auth.purge_expired_tokens", "schedule": timedelta(hours=1)},
    "auth.purge_expired_keys": {"task": "auth.purge_expired_keys", "schedule": timedelta(hours=1)},
    "audit.prune": {"task": "audit.prune", "schedule": timedelta(hours=1), "options": {"expires": 3600}},
    # restore sweeps read due rows from the database; a sweep not started within a few periods is dropped
    "restores.poll_due": {"task": "restores.poll_due", "schedule": timedelta(seconds=get_settings().restore_sweep_s),
                          "options": {"expires": 5 * get_settings().restore_sweep_s}},
    "restores.expire": {"task": "restores.expire", "schedule": timedelta(minutes=1), "options": {"expires": 300}},
    "notifications.deliver_webhooks": {"task": "notifications.deliver_webhooks", "schedule": timedelta(seconds=5),
                                       "options": {"expires": 60}},
    "lifecycle.sweep": {"task": "lifecycle.sweep", "schedule": timedelta(seconds=get_settings().lifecycle_sweep_s)},
    # metering feeds the live booked-vs-achieved chart: a few seconds behind the gateways
    "reservations.rollup_metering": {"task": "reservations.rollup_metering", "schedule": timedelta(seconds=5),
                                     "options": {"expires": 30}},
    "reservations.advance_states": {"task": "reservations.advance_states", "schedule": timedelta(seconds=15),
                                    "options": {"expires": 60}},
    # closes finished UTC days of stored bytes (a run finding nothing to close returns at once); hourly, so a day
    # is closed within an hour of its end even after a missed run
    "spend.roll_up": {"task": "spend.roll_up", "schedule": timedelta(hours=1), "options": {"expires": 3600}},
    # the usage deltas each write appends, folded before the Overview has many to sum
    "catalog.fold_usage": {"task": "catalog.fold_usage", "schedule": timedelta(minutes=1), "options": {"expires": 120}},
    # each tier's objects due a fixity check since the last sweep (a sweep finding a tier leased leaves it)
    "integrity.audit_due": {"task": "integrity.audit_due", "schedule": timedelta(seconds=get_settings().fixity_sweep_s),
                            "options": {"expires": get_settings().fixity_sweep_s}},
    # the outbox of bucket events: a drain sends what is due (several may run: rows are leased)
    "events.deliver": {"task": "events.deliver", "schedule": timedelta(seconds=get_settings().events_drain_s),
                       "options": {"expires": 10 * get_settings().events_drain_s}},
    "events.housekeep": {"task": "events.housekeep", "schedule": timedelta(minutes=1), "options": {"expires": 120}},
}


celery_app.conf.update(include=TASK_MODULES, beat_schedule=BEAT_SCHEDULE)
# each time the consumer has (re)connected: a heartbeat for `tierpilot worker`, held lifecycle moves handed out again
celery_app.steps["consumer"].update({Heartbeat, ResumeMoves})
wiring.install()

from worker import metrics as _metrics  # noqa: E402,F401  (task outcome and duration signals)

__all__ = ["BEAT_SCHEDULE", "TASK_MODULES", "broker_reachable", "celery_app"]
