"""Scenario builders shared by the pricing tests."""

from __future__ import annotations

from typing import Any

from tierpilot.pricing.schemas import Scenario

# The case study's measured per-access charges (PRICES.md section A): $ per full read of 633 GiB.
CASE_STUDY_MEASURED = {
    "STANDARD": {"requests": 0.031},
    "STANDARD_IA": {"requests": 0.083, "retrieval": 6.982},
    "GLACIER": {"requests": 0.029, "restore": 8.365},
    "GLACIER@bulk": {"requests": 0.029, "restore": 2.324},
}


def case_study(**extra: Any) -> Scenario:
    """633 GiB in 1,000 objects in AWS Tokyo 2018, read from inside the region."""
    body: dict[str, Any] = {
        "catalog": "aws-ap-northeast-1-2018",
        "tiers": ["STANDARD", "STANDARD_IA", "GLACIER", "GLACIER@bulk"],
        "volume_gib": 633,
        "objects": 1000,
        "reads_per_month": 1,
        "restore_speed": "standard",
        "egress": "same-region",
    }
    body.update(extra)
    return Scenario.model_validate(body)
