"""A scenario's report: the JSON the CLI prints and the API returns, and its CSV export."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from tierpilot.pricing.engine import Breakdown, Evaluation, OneOffCost, evaluate, scenario_usage
from tierpilot.pricing.lifecycle import LifecycleResult, Simulation, simulate
from tierpilot.pricing.schemas import COMPONENTS, Catalog, Scenario


def money(x: Decimal) -> float:
    """USD as a JSON number, to a millionth of a dollar (rounding is for display only)."""
    return round(float(x), 6)


def freq(x: Decimal) -> float:
    return float(f"{x:.6g}")


def _breakdown(b: Breakdown) -> dict[str, float]:
    return {k: money(v) for k, v in b.as_dict().items()}


def _one_off(c: OneOffCost) -> dict[str, float]:
    return {"initial_upload": money(c.initial_upload), "transitions": money(c.transitions),
            "early_deletion": money(c.early_deletion), "total": money(c.total)}


def _simulation(sim: Simulation) -> dict[str, Any]:
    return {
        "rules": [r.model_dump() for r in sim.rules],
        "total": money(sim.total),
        "months": [{"month": m.month, "stored_gib": {k: money(v) for k, v in m.stored_gib.items()},
                    "cost": _breakdown(m.cost)} for m in sim.months],
    }


def _lifecycle(result: LifecycleResult) -> dict[str, Any]:
    return {"policy": _simulation(result.policy), "keep_hot": _simulation(result.keep_hot),
            "best": _simulation(result.best) if result.best is not None else None,
            "savings": money(result.savings)}


def build_report(s: Scenario, catalogs: Mapping[str, Catalog]) -> dict[str, Any]:
    """Evaluate the scenario and shape the answer as JSON-ready data."""
    ev = evaluate(s, catalogs)
    lifecycle = simulate(s.lifecycle, s, catalogs, scenario_usage(s)) if s.lifecycle is not None else None
    return report_json(ev, lifecycle)


def report_json(ev: Evaluation, lifecycle: LifecycleResult | None) -> dict[str, Any]:
    s = ev.scenario
    used = {t.pricing.catalog.id: t.pricing.catalog for t in ev.tiers}
    installation = {t.label: t.tier for t in s.tiers}
    tiers = []
    for t in ev.tiers:
        p, cls = t.pricing, t.pricing.cls
        restore = p.restore
        tiers.append({
            "tier": p.label,
            "installation_tier": installation.get(p.label),
            "catalog": p.catalog.id,
            "storage_class": cls.id,
            "name": cls.name,
            "restore_speed": p.speed,
            "restore_hours": ({"typical": float(restore.typical_hours), "max": float(restore.max_hours)}
                              if restore is not None else None),
            "min_storage_days": cls.min_storage_days,
            "min_billable_bytes": cls.min_billable_bytes,
            "billable_gib": money(t.model.billable_gib),
            "estimated": list(cls.estimated),
            "measured": p.measured is not None,
            "monthly": _breakdown(t.monthly),
            "total": _breakdown(t.monthly.scaled(Decimal(s.months))),
            "annual": money(t.monthly.total * 12),
            "one_off": _one_off(ev.one_off[p.label]),
            "tco": money(t.monthly.total * s.months + ev.one_off[p.label].total),
        })
    return {
        "scenario": s.model_dump(mode="json", exclude_none=True),
        "units": {"money": "USD", "volume": "GiB (2^30 bytes)", "frequency": "full reads of the data set per month",
                  "monthly": "USD per month", "total": f"USD over {s.months} months"},
        "catalogs": [{"id": c.id, "provider": c.provider, "region": c.region, "currency": c.currency,
                      "valid_from": c.valid_from.isoformat(), "source": c.source,
                      "has_estimates": bool(c.estimated or any(k.estimated for k in c.classes))}
                     for c in used.values()],
        "months": s.months,
        "reads_per_month": freq(s.reads_per_month),
        "tiers": tiers,
        "break_even": [{"cheaper_below": b.cheaper_below, "cheaper_above": b.cheaper_above,
                        "reads_per_month": freq(b.reads_per_month)} for b in ev.break_even],
        "dominance": [{"cheaper": d.cheaper, "costlier": d.costlier, "equal": d.equal} for d in ev.dominance],
        "cheapest": [{"from": freq(b.start), "to": freq(b.to) if b.to is not None else None, "tier": b.tier}
                     for b in ev.cheapest],
        "sweep": {"reads_per_month": [freq(f) for f in ev.frequencies],
                  "totals": {label: [money(v) for v in values] for label, values in ev.sweep.items()}},
        "hybrid": [{"name": h.name, "parts": [{"tier": p.tier, "data_share": float(p.data_share),
                                               "read_share": float(p.read_share), "monthly": _breakdown(p.monthly)}
                                              for p in h.parts],
                    "fixed_monthly": money(h.fixed_monthly), "monthly_total": money(h.monthly_total),
                    "annual_total": money(h.annual_total)} for h in ev.hybrid],
        "lifecycle": _lifecycle(lifecycle) if lifecycle is not None else None,
        "notes": ev.notes,
    }


def report_csv(report: Mapping[str, Any]) -> str:
    """The report as sections of CSV (one header row each, a blank line between), for spreadsheets."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["tierpilot cost report", f"{report['reads_per_month']} full reads per month",
                f"{report['months']} months", "USD"])
    w.writerow([])
    w.writerow(["catalog", "provider", "region", "currency", "valid_from", "has_estimates", "source"])
    for c in report["catalogs"]:
        w.writerow([c["id"], c["provider"], c["region"], c["currency"], c["valid_from"], c["has_estimates"],
                    f"{' | '.join(c['source'])} (prices valid from {c['valid_from']})"])
    w.writerow([])
    w.writerow(["input", "value"])
    for key, value in report["scenario"].items():
        w.writerow([key, value if isinstance(value, str | int | float) else _compact(value)])
    for section in ("monthly", "total"):
        w.writerow([])
        w.writerow([f"{section} (USD)", "catalog", "storage_class", "restore_speed", *COMPONENTS, "total"])
        for t in report["tiers"]:
            w.writerow([t["tier"], t["catalog"], t["storage_class"], t["restore_speed"] or "",
                        *(t[section][k] for k in (*COMPONENTS, "total"))])
    w.writerow([])
    w.writerow(["one-off (USD)", "initial_upload", "transitions", "early_deletion", "total",
                f"total cost of ownership over {report['months']} months"])
    for t in report["tiers"]:
        o = t["one_off"]
        w.writerow([t["tier"], o["initial_upload"], o["transitions"], o["early_deletion"], o["total"], t["tco"]])
    w.writerow([])
    w.writerow(["break_even: cheaper_below", "cheaper_above", "reads_per_month"])
    for b in report["break_even"]:
        w.writerow([b["cheaper_below"], b["cheaper_above"], b["reads_per_month"]])
    for d in report["dominance"]:
        w.writerow([d["cheaper"], d["costlier"], "equal at every frequency" if d["equal"] else "never dearer"])
    w.writerow([])
    w.writerow(["cheapest: from reads_per_month", "to", "tier"])
    for band in report["cheapest"]:
        w.writerow([band["from"], "" if band["to"] is None else band["to"], band["tier"]])
    if report["hybrid"]:
        w.writerow([])
        w.writerow(["hybrid plan", "monthly_total", "annual_total", "parts"])
        for h in report["hybrid"]:
            parts = "; ".join(f"{p['tier']} data {p['data_share']:.0%} reads {p['read_share']:.0%}" for p in h["parts"])
            w.writerow([h["name"], h["monthly_total"], h["annual_total"], parts])
    if report["lifecycle"] is not None:
        lc = report["lifecycle"]
        w.writerow([])
        w.writerow(["lifecycle month", "policy total", "keep-hot total", *(["best total"] if lc["best"] else [])])
        best = lc["best"]["months"] if lc["best"] else None
        for i, m in enumerate(lc["policy"]["months"]):
            row = [m["month"], m["cost"]["total"], lc["keep_hot"]["months"][i]["cost"]["total"]]
            w.writerow(row + ([best[i]["cost"]["total"]] if best else []))
    w.writerow([])
    w.writerow(["sweep: reads_per_month", *report["sweep"]["totals"].keys()])
    totals = list(report["sweep"]["totals"].values())
    for i, f in enumerate(report["sweep"]["reads_per_month"]):
        w.writerow([f, *(series[i] for series in totals)])
    if report["notes"]:
        w.writerow([])
        for note in report["notes"]:
            w.writerow(["note", note])
    return out.getvalue()


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
