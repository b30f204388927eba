"""Beat's periodic fixity audit: each tier's objects re-read once per its period, spread over the sweeps."""

from __future__ import annotations

from typing import Any

from tierpilot.integrity import service
from tierpilot.kit.jobs import celery_app


@celery_app.task(name="integrity.audit_due")
def audit_due() -> dict[str, Any]:
    """Check each tier's share of objects due (a second delivery finds the tiers leased and does nothing)."""
    done = service.audit_due()
    return {k: v for k, v in done.as_dict().items() if k != "findings"} | {"findings": len(done.findings)}
