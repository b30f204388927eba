from __future__ import annotations

from decimal import Decimal

import pytest

from tests.pricing.helpers import CASE_STUDY_MEASURED, case_study
from tierpilot.kit.errors import Invalid, NotFound
from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.pricing.engine import (
    DAYS_PER_MONTH,
    BreakEven,
    Dominance,
    TierModel,
    band_cost,
    compare,
    evaluate,
    resolve_tiers,
    scenario_usage,
)
from tierpilot.pricing.schemas import Band, Scenario

CATALOGS = shipped_catalogs()
EXACT = Decimal("1e-20")  # Decimal arithmetic in another order differs in the 28th digit only


def _crossing(ev_break_even: list[BreakEven], below: str, above: str) -> Decimal:
    found = [b.reads_per_month for b in ev_break_even if b.cheaper_below == below and b.cheaper_above == above]
    assert len(found) == 1, ev_break_even
    return found[0]


def _monthly(s: Scenario) -> dict[str, dict[str, Decimal]]:
    return {t.pricing.label: t.monthly.as_dict() for t in evaluate(s, CATALOGS).tiers}


def test_storage_per_month_of_633_gib_matches_the_case_study_bill() -> None:
    monthly = _monthly(case_study())
    assert round(monthly["STANDARD"]["storage"], 1) == Decimal("15.8")
    assert round(monthly["STANDARD_IA"]["storage"], 1) == Decimal("12.0")
    assert round(monthly["GLACIER"]["storage"], 1) == Decimal("3.2")


def test_glacier_storage_includes_the_40_kib_per_object_overhead() -> None:
    glacier = _monthly(case_study())["GLACIER"]["storage"]
    data = Decimal(633) * Decimal("0.005")
    overhead = 1000 * (Decimal(32768) * Decimal("0.005") + Decimal(8192) * Decimal("0.025")) / 2**30
    assert glacier == data + overhead


def test_break_even_from_measured_charges_matches_the_case_study() -> None:
    ev = evaluate(case_study(measured=CASE_STUDY_MEASURED), CATALOGS)
    assert abs(_crossing(ev.break_even, "STANDARD_IA", "STANDARD") - Decimal("0.54")) <= Decimal("0.01")
    assert abs(_crossing(ev.break_even, "GLACIER", "STANDARD_IA") - Decimal("6.6")) <= Decimal("0.1")


def test_break_even_s3_vs_ia_from_catalog_prices_is_0_60() -> None:
    ev = evaluate(case_study(), CATALOGS)
    assert abs(_crossing(ev.break_even, "STANDARD_IA", "STANDARD") - Decimal("0.60")) <= Decimal("0.02")


@pytest.mark.parametrize("measured", [False, True])
def test_glacier_bulk_is_cheaper_than_ia_at_every_frequency(measured: bool) -> None:
    s = case_study(measured=CASE_STUDY_MEASURED if measured else {})
    ev = evaluate(s, CATALOGS)
    assert Dominance("GLACIER@bulk", "STANDARD_IA") in ev.dominance
    bulk, ia = ev.sweep["GLACIER@bulk"], ev.sweep["STANDARD_IA"]
    assert all(b < i for b, i in zip(bulk, ia, strict=True))
    assert not [b for b in ev.break_even if {b.cheaper_below, b.cheaper_above} == {"GLACIER@bulk", "STANDARD_IA"}]


def test_break_even_is_where_the_two_totals_are_equal() -> None:
    ev = evaluate(case_study(), CATALOGS)
    models = {t.pricing.label: t.model for t in ev.tiers}
    for b in ev.break_even:
        low, high = models[b.cheaper_below], models[b.cheaper_above]
        f = b.reads_per_month
        assert abs(low.total(f) - high.total(f)) < Decimal("1e-9")
        assert low.total(f * Decimal("0.9")) < high.total(f * Decimal("0.9"))
        assert low.total(f * Decimal("1.1")) > high.total(f * Decimal("1.1"))


def test_break_even_is_found_in_closed_form_across_egress_bands() -> None:
    # egress differs between providers; the crossing lies beyond the first 10 TiB egress band
    s = Scenario.model_validate({"catalog": "aws-us-east-1-2026",
                                 "tiers": ["STANDARD", "gcp-us-central1-2026:NEARLINE"],
                                 "volume_gib": 20000, "objects": 20000, "egress": "internet"})
    ev = evaluate(s, CATALOGS)
    models = {t.pricing.label: t.model for t in ev.tiers}
    assert ev.break_even
    for b in ev.break_even:
        f = b.reads_per_month
        assert abs(models[b.cheaper_below].total(f) - models[b.cheaper_above].total(f)) < Decimal("1e-9")


def test_cheapest_bands_cover_all_frequencies_and_agree_with_the_sweep() -> None:
    ev = evaluate(case_study(), CATALOGS)
    assert ev.cheapest[0].start == 0 and ev.cheapest[-1].to is None
    for a, b in zip(ev.cheapest, ev.cheapest[1:], strict=False):
        assert a.to == b.start and a.tier != b.tier
    for i, f in enumerate(ev.frequencies):
        band = next(x for x in ev.cheapest if x.start <= f and (x.to is None or f < x.to))
        cheapest = min(ev.sweep, key=lambda label: ev.sweep[label][i])
        assert ev.sweep[band.tier][i] == ev.sweep[cheapest][i]


def test_identical_tiers_are_reported_equal() -> None:
    s = Scenario.model_validate({"catalog": "aws-us-east-1-2026",
                                 "tiers": ["STANDARD", {"class": "STANDARD", "label": "same"}],
                                 "volume_gib": 10, "objects": 10})
    ev = evaluate(s, CATALOGS)
    assert ev.dominance == [Dominance("STANDARD", "same", equal=True)]


def test_curve_matches_the_full_breakdown_everywhere() -> None:
    s = Scenario.model_validate({"catalog": "aws-us-east-1-2026",
                                 "tiers": ["STANDARD", "INTELLIGENT_TIERING", "GLACIER", "DEEP_ARCHIVE@bulk"],
                                 "volume_gib": 600000, "mean_object_size_mib": 4, "egress": "internet",
                                 "restored_copy_days": 7})
    ev = evaluate(s, CATALOGS)
    for t in ev.tiers:
        curve = t.model.curve()
        for f in [*ev.frequencies[::7], *curve.breaks]:
            assert abs(curve.at(f) - t.model.total(f)) < Decimal("1e-9"), (t.pricing.label, f)


def test_intelligent_tiering_moves_idle_data_to_cheaper_tiers() -> None:
    s = Scenario.model_validate({"catalog": "aws-us-east-1-2026", "tiers": ["INTELLIGENT_TIERING"],
                                 "volume_gib": 1000, "mean_object_size_mib": 64})
    model = TierModel(resolve_tiers(s, CATALOGS)[0], scenario_usage(s))
    gib = model.billable_gib
    # read every month or more often: all in Frequent Access
    assert model.at(Decimal(2)).storage == gib * Decimal("0.023")
    # never read: all in Archive Instant Access
    assert model.at(Decimal(0)).storage == gib * Decimal("0.004")
    # read every 60 days: 30 days frequent, 30 days infrequent
    f = DAYS_PER_MONTH / 60
    assert abs(model.at(f).storage - gib * (Decimal("0.023") + Decimal("0.0125")) / 2) < Decimal("1e-12")
    # monitoring: 16,000 objects at 0.0025 $ per 1,000
    assert model.at(Decimal(0)).monitoring == Decimal(16000) * Decimal("0.0025") / 1000


def test_small_objects_are_billed_at_the_minimum_billable_size() -> None:
    s = Scenario.model_validate({"catalog": "aws-us-east-1-2026", "tiers": ["STANDARD", "STANDARD_IA"],
                                 "volume_gib": 1, "objects": 1024 * 32})  # 32 KiB objects
    monthly = _monthly(s)
    assert monthly["STANDARD"]["storage"] == Decimal("0.023")
    assert monthly["STANDARD_IA"]["storage"] == 4 * Decimal("0.0125")  # billed as 128 KiB each


def test_size_histogram_is_scaled_to_the_volume() -> None:
    hist = [{"size_bytes": 64 * 1024, "count": 100}, {"size_bytes": 2**30, "count": 1}]
    a = Scenario.model_validate({"catalog": "aws-us-east-1-2026", "tiers": ["STANDARD_IA"], "size_histogram": hist})
    b = Scenario.model_validate({"catalog": "aws-us-east-1-2026", "tiers": ["STANDARD_IA"], "size_histogram": hist,
                                 "volume_gib": a and 2 * (1 + 100 * 64 * 1024 / 2**30)})
    sa, sb = _monthly(a)["STANDARD_IA"]["storage"], _monthly(b)["STANDARD_IA"]["storage"]
    assert abs(sb - 2 * sa) < Decimal("1e-12")
    assert sa == (Decimal(2**30) + 100 * Decimal(128 * 1024)) / 2**30 * Decimal("0.0125")


def test_early_deletion_is_charged_for_the_remaining_days() -> None:
    s = case_study(early_deletion={"share_per_month": 0.1, "age_days": 10})
    monthly = _monthly(s)
    assert monthly["STANDARD"]["early_deletion"] == 0
    ia_storage = monthly["STANDARD_IA"]["storage"]
    assert abs(monthly["STANDARD_IA"]["early_deletion"] - Decimal("0.1") * ia_storage * 20 / DAYS_PER_MONTH) < EXACT


def test_overwrites_inside_the_minimum_duration_pay_early_deletion() -> None:
    monthly = _monthly(case_study(writes_per_month=2))
    ia = monthly["STANDARD_IA"]
    # every overwrite deletes a version about 15.2 days old: 14.8 days of a 30-day minimum are owed
    owed_days = 30 - DAYS_PER_MONTH / 2
    assert abs(ia["early_deletion"] - 2 * ia["storage"] / DAYS_PER_MONTH * owed_days) < EXACT
    assert ia["requests"] == Decimal("0.001") + 2 * 1000 * Decimal("0.01") / 1000


def test_egress_uses_volume_bands_and_the_destination() -> None:
    base = {"catalog": "aws-us-east-1-2026", "tiers": ["STANDARD"], "volume_gib": 20000, "objects": 20000,
            "reads_per_month": 1}
    internet = _monthly(Scenario.model_validate({**base, "egress": "internet"}))["STANDARD"]["egress"]
    assert internet == band_cost([Band(up_to_gib=Decimal(100), price=Decimal(0)),
                                  Band(up_to_gib=Decimal(10240), price=Decimal("0.09")),
                                  Band(up_to_gib=Decimal(51200), price=Decimal("0.085")),
                                  Band(price=Decimal("0.05"))], Decimal(20000))
    assert internet == (10240 - 100) * Decimal("0.09") + (20000 - 10240) * Decimal("0.085")
    half = _monthly(Scenario.model_validate({**base, "egress": "internet", "egress_share": 0.5}))
    assert half["STANDARD"]["egress"] == (10000 - 100) * Decimal("0.09")
    research = _monthly(Scenario.model_validate({**base, "egress": "research-network"}))["STANDARD"]["egress"]
    assert 0 < research < internet * Decimal("0.35")
    assert _monthly(Scenario.model_validate({**base, "egress": "same-region"}))["STANDARD"]["egress"] == 0


def test_restored_copies_are_billed_at_the_copy_class_rate_and_do_not_pile_up() -> None:
    s = case_study(restored_copy_days=3)
    model = {t.pricing.label: t.model for t in evaluate(s, CATALOGS).tiers}["GLACIER"]
    # the 2018 catalog carries the rule of its date: the temporary copy is billed as Reduced Redundancy
    rrs = CATALOGS["aws-ap-northeast-1-2018"].storage_class("REDUCED_REDUNDANCY").storage[0].price
    assert model.pricing.cls.restored_copy_class == "REDUCED_REDUNDANCY" and rrs < Decimal("0.025")
    one = model.at(Decimal(1)).restored_copy
    assert abs(one - Decimal(633) * rrs * 3 / DAYS_PER_MONTH) < EXACT
    # reads every 3 days or more often keep one copy alive all month, never more
    assert model.at(Decimal(100)).restored_copy == Decimal(633) * rrs


def test_fixed_costs_apply_to_the_tiers_they_name() -> None:
    s = case_study(fixed_costs=[{"name": "staff", "monthly": 100}, {"name": "tape robot", "monthly": 50,
                                                                    "tiers": ["GLACIER"]}])
    monthly = _monthly(s)
    assert monthly["STANDARD"]["fixed"] == 100
    assert monthly["GLACIER"]["fixed"] == 150


def test_price_overrides_replace_catalog_prices() -> None:
    s = case_study(price_overrides={"STANDARD_IA": {"retrieval_per_gib": 0.011}})
    assert _monthly(s)["STANDARD_IA"]["retrieval"] == Decimal(633) * Decimal("0.011")


def test_onprem_cost_per_tib_month_is_editable() -> None:
    s = Scenario.model_validate({"catalog": "onprem-example-2026", "tiers": ["DISK"], "volume_gib": 2048,
                                 "objects": 2048,
                                 "price_overrides": {"DISK": {"cost_per_tib_month": {"hardware": 10, "staff": 5}}}})
    # power keeps the catalog's 1.5; 2 TiB at 16.5 $/TiB-month
    assert _monthly(s)["DISK"]["storage"] == Decimal(2) * Decimal("16.5")


def test_missing_restore_speed_falls_back_and_says_so() -> None:
    s = Scenario.model_validate({"catalog": "aws-us-east-1-2026", "tiers": ["DEEP_ARCHIVE"], "volume_gib": 1,
                                 "objects": 1, "restore_speed": "expedited"})
    ev = evaluate(s, CATALOGS)
    assert ev.tiers[0].pricing.speed == "standard"
    assert "no expedited restores" in ev.notes[0]


def test_ranged_gets_count_one_request_per_part() -> None:
    ia = _monthly(case_study(get_part_size_mib=8))["STANDARD_IA"]
    # 633 GiB in 1,000 objects of 648.2 MiB: 82 ranged GETs of 8 MiB each (the bill showed 0.083 $)
    assert ia["requests"] == 1000 * 82 * Decimal("0.001") / 1000


def test_compare_finds_every_crossing_of_piecewise_linear_costs() -> None:
    from tierpilot.pricing.engine import Curve

    d = Decimal
    # a: 0.5 + f up to 1, flat 1.5 up to 3, then rising by 2 per read; b: 1 + f/4
    a = Curve("a", (d(0), d(1), d(3)), (d("0.5"), d("1.5"), d("-4.5")), (d(1), d(0), d(2)))
    b = Curve("b", (d(0),), (d(1),), (d("0.25"),))
    result = compare(a, b)
    assert isinstance(result, list)
    assert [(x.cheaper_below, x.cheaper_above) for x in result] == [("a", "b"), ("b", "a"), ("a", "b")]
    roots = [x.reads_per_month for x in result]
    assert abs(roots[0] - d(2) / 3) < EXACT and roots[1] == 2 and abs(roots[2] - (3 + d(1) / 7)) < EXACT


def test_touching_without_crossing_is_not_a_break_even() -> None:
    from tierpilot.pricing.engine import Curve

    d = Decimal
    a = Curve("a", (d(0), d(1)), (d(0), d(2)), (d(2), d(0)))  # 2f up to 1, then flat 2
    b = Curve("b", (d(0),), (d(1),), (d(1),))  # 1 + f: equal to a only at f = 1
    assert compare(a, b) == Dominance("a", "b")


def test_unknown_catalog_and_class_are_clear_errors() -> None:
    with pytest.raises(NotFound, match="no price catalog"):
        evaluate(Scenario.model_validate({"catalog": "aws-mars-1", "tiers": ["STANDARD"], "volume_gib": 1,
                                          "objects": 1}), CATALOGS)
    with pytest.raises(Invalid, match="has no class NEARLINE"):
        evaluate(case_study(tiers=["NEARLINE"]), CATALOGS)


def test_catalog_id_without_date_means_the_newest() -> None:
    s = Scenario.model_validate({"catalog": "aws-ap-northeast-1", "tiers": ["STANDARD"], "volume_gib": 1,
                                 "objects": 1})
    assert evaluate(s, CATALOGS).tiers[0].pricing.catalog.id == "aws-ap-northeast-1-2026"


def test_hybrid_plan_splits_data_and_reads() -> None:
    s = Scenario.model_validate({
        "catalog": "aws-us-east-1-2026", "tiers": ["STANDARD"], "volume_gib": 1000, "objects": 1000,
        "reads_per_month": 1, "egress": "same-region",
        "fixed_costs": [{"name": "ops", "monthly": 10}],
        "hybrid": [{"name": "disk + IA + archive", "parts": [
            {"tier": "onprem-example-2026:DISK", "data_share": 0.1, "read_share": 0.8},
            {"tier": "STANDARD_IA", "data_share": 0.3, "read_share": 0.2},
            {"tier": "DEEP_ARCHIVE@bulk", "data_share": 0.6, "read_share": 0}]}]})
    h = evaluate(s, CATALOGS).hybrid[0]
    disk, ia, deep = h.parts
    assert disk.monthly.storage == Decimal(100) * Decimal("11.5") / 1024
    # IA serves 20 % of one full read of 1,000 GiB: 200 GiB retrieved
    assert ia.monthly.retrieval == Decimal(200) * Decimal("0.01")
    assert deep.monthly.restore == 0
    assert h.monthly_total == disk.monthly.total + ia.monthly.total + deep.monthly.total + 10
    assert h.annual_total == 12 * h.monthly_total


def test_hybrid_by_age_derives_data_shares_from_the_age_spread() -> None:
    s = Scenario.model_validate({
        "catalog": "aws-us-east-1-2026", "tiers": ["STANDARD"], "volume_gib": 1000, "objects": 1000,
        "hybrid": [{"name": "by age", "by": "age", "retention_days": 360, "parts": [
            {"tier": "STANDARD", "max_age_days": 90}, {"tier": "GLACIER"}]}]})
    h = evaluate(s, CATALOGS).hybrid[0]
    assert [p.data_share for p in h.parts] == [Decimal("0.25"), Decimal("0.75")]


def test_scenario_validation_names_the_problem() -> None:
    from pydantic import ValidationError

    bad = [
        ({"tiers": ["STANDARD", "STANDARD"]}, "listed twice"),
        ({"objects": None}, "exactly one of"),
        ({"measured": {"NEARLINE": {"requests": 1}}}, "not one of the tiers"),
        ({"tiers": ["standard"]}, "tier 'standard'"),
        ({"reads_per_month": -1}, "greater than or equal"),
        ({"hybrid": [{"name": "h", "parts": [{"tier": "STANDARD", "data_share": 0.5}]}]}, "add up to"),
    ]
    for change, message in bad:
        with pytest.raises(ValidationError, match=message):
            case_study(**change)
