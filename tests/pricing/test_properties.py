"""Property tests of the engine over every shipped catalog and class (hypothesis)."""

from __future__ import annotations

import os
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.pricing.engine import DAYS_PER_MONTH, TierModel, band_cost, compare, resolve_tiers, scenario_usage
from tierpilot.pricing.schemas import DESTINATIONS, SPEEDS, Scenario

CATALOGS = shipped_catalogs()
TIERS = [(c.id, k.id) for c in CATALOGS.values() for k in c.classes]
EXACT = Decimal("1e-18")
PROPS = settings(max_examples=int(os.environ.get("PRICING_EXAMPLES", "150")), deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


def decimals(lo: str, hi: str, places: int = 4) -> st.SearchStrategy[Decimal]:
    return st.decimals(min_value=Decimal(lo), max_value=Decimal(hi), places=places, allow_nan=False,
                       allow_infinity=False)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    catalog, cls = draw(st.sampled_from(TIERS))
    body: dict[str, Any] = {
        "catalog": catalog,
        "tiers": [cls],
        "volume_gib": draw(decimals("0.001", "2000000", 3)),
        "reads_per_month": draw(decimals("0", "200")),
        "read_fraction": draw(decimals("0.01", "1", 2)),
        "writes_per_month": draw(st.sampled_from([Decimal(0), Decimal("0.5"), Decimal(3)])),
        "egress": draw(st.sampled_from(DESTINATIONS)),
        "egress_share": draw(decimals("0", "1", 2)),
        "restore_speed": draw(st.sampled_from(SPEEDS)),
        "restored_copy_days": draw(decimals("0", "30", 1)),
    }
    if draw(st.booleans()):
        body["mean_object_size_mib"] = draw(decimals("0.001", "5000", 3))
    else:
        body["objects"] = draw(st.integers(min_value=1, max_value=10**9))
    if draw(st.booleans()):
        body["early_deletion"] = {"share_per_month": draw(decimals("0", "1", 2)),
                                  "age_days": draw(decimals("0", "400", 1))}
    if draw(st.booleans()):
        body["get_part_size_mib"] = draw(st.sampled_from([Decimal(8), Decimal(64)]))
    return body


def model_of(body: dict[str, Any]) -> TierModel:
    s = Scenario.model_validate(body)
    return TierModel(resolve_tiers(s, CATALOGS)[0], scenario_usage(s))


@PROPS
@given(scenarios())
def test_costs_are_never_negative(body: dict[str, Any]) -> None:
    model = model_of(body)
    for f in (Decimal(0), Decimal(body["reads_per_month"]), Decimal(1000)):
        assert all(v >= 0 for v in model.at(f).as_dict().values())


@PROPS
@given(scenarios(), decimals("1", "3", 2))
def test_cost_is_monotone_in_volume(body: dict[str, Any], factor: Decimal) -> None:
    bigger = {**body, "volume_gib": body["volume_gib"] * factor}
    f = Decimal(body["reads_per_month"])
    assert model_of(bigger).total(f) >= model_of(body).total(f)


@PROPS
@given(scenarios(), decimals("0", "100"), decimals("0", "100"))
def test_cost_is_monotone_in_access_frequency(body: dict[str, Any], f1: Decimal, f2: Decimal) -> None:
    lo, hi = sorted((f1, f2))
    model = model_of(body)
    assert model.total(hi) >= model.total(lo)
    assert all(getattr(model.at(hi), k) >= getattr(model.at(lo), k) for k in ("storage", "requests", "restore"))


@PROPS
@given(scenarios(), st.integers(min_value=1, max_value=4 << 20))
def test_minimum_billable_size_never_lowers_a_cost(body: dict[str, Any], min_bytes: int) -> None:
    label = body["tiers"][0]
    without = model_of({**body, "price_overrides": {label: {"min_billable_bytes": 0}}})
    with_min = model_of({**body, "price_overrides": {label: {"min_billable_bytes": min_bytes}}})
    f = Decimal(body["reads_per_month"])
    assert with_min.total(f) >= without.total(f)
    assert with_min.billable_gib >= without.billable_gib


@PROPS
@given(scenarios(), decimals("0.01", "1", 2), decimals("0", "400", 1))
def test_early_deletion_is_charged_exactly_for_the_remaining_days(body: dict[str, Any], share: Decimal,
                                                                  age: Decimal) -> None:
    model = model_of({**body, "writes_per_month": 0, "early_deletion": {"share_per_month": share, "age_days": age}})
    cls = model.pricing.cls
    remaining = max(Decimal(0), cls.min_storage_days - age)
    month_of_storage = band_cost(cls.storage, model.billable_gib)
    expected = share * month_of_storage * remaining / DAYS_PER_MONTH
    assert abs(model.at(Decimal(0)).early_deletion - expected) < EXACT
    if age >= cls.min_storage_days:
        assert model.at(Decimal(0)).early_deletion == 0


@PROPS
@given(scenarios(), st.lists(decimals("0", "500"), min_size=1, max_size=10))
def test_piecewise_linear_curve_equals_the_breakdown(body: dict[str, Any], fs: list[Decimal]) -> None:
    model = model_of(body)
    curve = model.curve()
    for f in [*fs, *curve.breaks]:
        assert abs(curve.at(f) - model.total(f)) <= Decimal("1e-12") * (1 + model.total(f))


@PROPS
@given(scenarios(), st.sampled_from(TIERS))
def test_break_evens_are_points_of_equal_cost(body: dict[str, Any], other: tuple[str, str]) -> None:
    a = model_of(body)
    b = model_of({**body, "tiers": [f"{other[0]}:{other[1]}"], "catalog": body["catalog"]})
    result = compare(a.curve(), b.curve())
    if isinstance(result, list):
        for x in result:
            f = x.reads_per_month
            assert abs(a.total(f) - b.total(f)) <= Decimal("1e-12") * (1 + a.total(f))
    else:
        cheaper, costlier = (a, b) if result.cheaper == a.pricing.label else (b, a)
        for f in (Decimal(0), Decimal("0.3"), Decimal(7), Decimal(5000)):
            assert cheaper.total(f) <= costlier.total(f) + Decimal("1e-12")
