"""API shapes of the planner beyond pricing's: a scenario's month in the terms of a bucket's saved plan."""

from __future__ import annotations

from pydantic import BaseModel, Field

from tierpilot.pricing.schemas import Speed


class PlanUsageOut(BaseModel):
    """What a scenario does in a month at its read frequency, as the fields of a bucket's planned monthly usage
    (``PUT /api/spend/plans/{bucket}``: the Spend view prices it with the bucket's own tiers)."""

    reads_gib: float = Field(description="GiB transferred by the month's reads (read share and read-ahead included)")
    read_requests: int = Field(description="GET-class requests a month: the reads' GETs, plus GET and HEAD counts")
    write_requests: int = Field(description="PUT-class requests a month: the overwrites' PUTs, plus PUT, COPY, "
                                            "POST and LIST counts")
    restores_gib: float = Field(description="GiB the month's reads restore when some tier of the scenario is an "
                                            "archive (its reads need a restore); 0 otherwise")
    restore_speed: Speed
    basis: list[str] = Field(description="how each figure follows from the scenario, in words")
