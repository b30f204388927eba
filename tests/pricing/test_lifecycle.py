from __future__ import annotations

from decimal import Decimal
from typing import Any

from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.pricing.engine import DAYS_PER_MONTH, scenario_usage
from tierpilot.pricing.lifecycle import Simulator, decay_rates, fit_decay, simulate
from tierpilot.pricing.schemas import Decay, Scenario

CATALOGS = shipped_catalogs()
EXACT = Decimal("1e-18")


def scenario(**lifecycle: Any) -> Scenario:
    spec: dict[str, Any] = {"horizon_months": 12, "ingest_gib_per_month": 100,
                            "decay": {"kind": "table", "table": [0]}, "search": False}
    spec.update(lifecycle)
    return Scenario.model_validate({
        "catalog": "aws-us-east-1-2026", "tiers": ["STANDARD", "STANDARD_IA", "GLACIER", "DEEP_ARCHIVE"],
        "volume_gib": 1, "mean_object_size_mib": 64, "egress": "internet", "lifecycle": spec})


def run(s: Scenario) -> Any:
    assert s.lifecycle is not None
    return simulate(s.lifecycle, s, CATALOGS, scenario_usage(s))


def test_keeping_everything_hot_accumulates_the_monthly_ingest() -> None:
    result = run(scenario())
    for m in result.keep_hot.months:
        assert list(m.stored_gib) == ["STANDARD"]
        assert abs(m.stored_gib["STANDARD"] - Decimal(100) * (m.month + 1)) < EXACT
        assert abs(m.cost.storage - Decimal(100) * (m.month + 1) * Decimal("0.023")) < EXACT
    assert abs(result.keep_hot.total - sum(Decimal(100) * k * Decimal("0.023") for k in range(1, 13))) < EXACT


def test_a_transition_moves_each_cohort_after_its_days() -> None:
    result = run(scenario(rules=[{"after_days": 60, "to": "STANDARD_IA"}]))
    months = result.policy.months
    total = [sum(m.stored_gib.values()) for m in months]
    assert all(abs(t - 100 * (i + 1)) < EXACT for i, t in enumerate(total))  # nothing lost, nothing doubled
    # month 1: the first cohort is 30.4-60.8 days old, so 0.8 day of it is in IA already
    assert abs(months[1].stored_gib["STANDARD_IA"] - 100 * (2 * DAYS_PER_MONTH - 60) / DAYS_PER_MONTH) < EXACT
    assert months[0].stored_gib["STANDARD_IA"] == 0
    assert result.policy.total < result.keep_hot.total
    assert result.savings == result.keep_hot.total - result.policy.total


def test_transition_fees_are_paid_once_per_object() -> None:
    result = run(scenario(rules=[{"after_days": 30, "to": "STANDARD_IA"}]))
    # 1,600 objects of 64 MiB per 100 GiB cohort, 0.01 $ per 1,000 transitions; every cohort of months 0-11
    # transitions within the horizon (day 30 falls in its first month)
    fees = sum(m.cost.requests for m in result.policy.months)
    assert abs(fees - 12 * 1600 * Decimal("0.01") / 1000) < EXACT


def test_leaving_a_class_before_its_minimum_duration_pays_the_remaining_days() -> None:
    result = run(scenario(rules=[{"after_days": 30, "to": "STANDARD_IA"}, {"after_days": 40, "to": "GLACIER"}]))
    early = sum(m.cost.early_deletion for m in result.policy.months)
    # each cohort leaves IA after 10 of its 30 days: 20 days of IA storage owed, per cohort that left
    # (the cohort of month 11 is 0-30.4 days old at the end and has not left)
    per_cohort = Decimal(100) * Decimal("0.0125") / DAYS_PER_MONTH * 20
    assert abs(early - 11 * per_cohort) < Decimal("1e-15")


def test_expiry_removes_data_and_charges_what_is_still_owed() -> None:
    result = run(scenario(horizon_months=24, rules=[{"after_days": 30, "to": "GLACIER"}], expire_after_days=61))
    last = result.policy.months[-1]
    assert abs(sum(last.stored_gib.values()) - Decimal(100) * 61 / DAYS_PER_MONTH) < EXACT
    assert sum(m.cost.early_deletion for m in result.policy.months) > 0  # 31 days of GLACIER's 90


def test_reads_follow_the_decay_curve_and_pay_restores() -> None:
    hot = run(scenario(decay={"kind": "table", "table": [2, 0.5, 0]},
                       rules=[{"after_days": 31, "to": "GLACIER"}]))
    months = hot.policy.months
    assert months[0].cost.restore == 0  # age 0-30 days: still in STANDARD
    assert months[1].cost.restore > 0  # age 1 month in GLACIER, read 0.5 times
    assert months[5].cost.egress > 0


def test_search_finds_the_cheapest_transition_day_on_the_grid() -> None:
    s = scenario(horizon_months=18, decay={"kind": "exponential", "initial_reads_per_month": 3,
                                           "half_life_months": 1},
                 rules=[{"after_days": 360, "to": "GLACIER"}], search=True, search_step_days=30)
    result = run(s)
    assert result.best is not None
    assert s.lifecycle is not None
    sim = Simulator(s.lifecycle, s, CATALOGS, scenario_usage(s))
    brute = min((sim.run([d]) for d in range(0, 18 * 31 + 1, 30)), key=lambda x: x.total)
    assert result.best.total == brute.total
    assert result.best.total <= result.policy.total
    assert result.best.rules[0].after_days == brute.rules[0].after_days


def test_search_over_two_rules_never_does_worse_than_the_given_policy() -> None:
    s = scenario(horizon_months=24, decay={"kind": "exponential", "initial_reads_per_month": 1,
                                           "half_life_months": 2, "floor": 0.01},
                 rules=[{"after_days": 30, "to": "STANDARD_IA"}, {"after_days": 400, "to": "DEEP_ARCHIVE"}],
                 search=True)
    result = run(s)
    assert result.best is not None and result.best.total <= result.policy.total
    days = [r.after_days for r in result.best.rules]
    assert days == sorted(days) and len(set(days)) == 2


def test_exponential_decay_halves_every_half_life() -> None:
    rates = decay_rates(Decay(kind="exponential", initial_reads_per_month=Decimal(4), half_life_months=Decimal(2),
                              floor=Decimal("0.5")), 8)
    assert rates[0] == 4 and abs(rates[2] - 2) < EXACT and abs(rates[4] - 1) < EXACT
    assert rates[7] == Decimal("0.5")


def test_decay_is_fitted_to_observed_reads_by_age() -> None:
    samples = [(Decimal(a), Decimal(3) * Decimal("0.5") ** (Decimal(a) / 4)) for a in range(12)]
    fitted = fit_decay(samples)
    assert abs(fitted.initial_reads_per_month - 3) < Decimal("0.001")
    assert abs(fitted.half_life_months - 4) < Decimal("0.001")
    flat = fit_decay([(Decimal(0), Decimal(1)), (Decimal(5), Decimal(1))])
    assert flat.half_life_months == 1200
