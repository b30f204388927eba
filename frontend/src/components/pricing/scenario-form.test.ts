import { describe, expect, it } from "vitest";
import type { CatalogSummary, InstallationTier } from "@/api/pricing";
import {
  DEFAULT_FORM,
  fromScenario,
  installationStart,
  prefilledForm,
  tierRef,
  tierRefLabel,
  tierText,
  toScenario,
  volumeIn,
} from "./scenario-form";

describe("scenario form", () => {
  it("turns the default form into the case-study scenario", () => {
    const { body, errors } = toScenario(DEFAULT_FORM);
    expect(errors).toEqual({});
    expect(body).toMatchObject({
      catalog: "aws-ap-northeast-1-2018",
      volume_gib: 633,
      objects: 1000,
      reads_per_month: 1,
      read_fraction: 1,
      egress: "same-region",
      frequency_range: { min: 0.01, max: 100, points: 200 },
      lifecycle: null,
      hybrid: [],
    });
    expect(body?.tiers[3]).toEqual({
      storage_class: "GLACIER",
      catalog: null,
      restore_speed: "bulk",
      label: "GLACIER@bulk",
    });
  });

  it("reads tier references with catalog and restore speed", () => {
    expect(tierRef("gcp-us-central1-2026:COLDLINE")).toEqual({
      storage_class: "COLDLINE",
      catalog: "gcp-us-central1-2026",
      restore_speed: null,
      label: "gcp-us-central1-2026:COLDLINE",
    });
    expect(tierText(tierRef("azure-eastus-2026:ARCHIVE@expedited"))).toBe(
      "azure-eastus-2026:ARCHIVE@expedited",
    );
  });

  it("reads an installation tier as tier:NAME, labelled with the tier's name", () => {
    expect(tierRef("tier:archive@bulk")).toEqual({
      tier: "archive",
      restore_speed: "bulk",
      label: "archive@bulk",
    });
    expect(tierRef("tier:hot-disk")).toEqual({ tier: "hot-disk", restore_speed: null, label: "hot-disk" });
    expect(tierText(tierRef("tier:archive@bulk"))).toBe("tier:archive@bulk");
    expect(fromScenario({ tiers: [{ tier: "hot-disk", label: "hot-disk" }] }).tiers).toEqual([
      "tier:hot-disk",
    ]);
  });

  it("names the fields to fix and sends nothing meanwhile", () => {
    const { body, errors } = toScenario({
      ...DEFAULT_FORM,
      volume: "lots",
      freqMin: "10",
      freqMax: "1",
      tiers: [],
    });
    expect(body).toBeNull();
    expect(errors).toMatchObject({
      volume: "Enter a number",
      freqMax: "Must be above the lower end",
      tiers: "Pick at least one tier",
    });
  });

  it("takes the volume in the unit chosen beside it and sends GiB", () => {
    expect(toScenario({ ...DEFAULT_FORM, volume: "200", volumeUnit: "TiB" }).body?.volume_gib).toBe(204800);
    expect(toScenario({ ...DEFAULT_FORM, volume: "1.5", volumeUnit: "PiB" }).body?.volume_gib).toBe(1572864);
    expect(toScenario({ ...DEFAULT_FORM, volume: "633", volumeUnit: "GiB" }).body?.volume_gib).toBe(633);
  });

  it("shows a saved volume in the largest unit that keeps it short and exact", () => {
    expect(volumeIn(204800)).toEqual({ volume: "200", unit: "TiB" });
    expect(volumeIn(633)).toEqual({ volume: "633", unit: "GiB" });
    expect(volumeIn(1536)).toEqual({ volume: "1.5", unit: "TiB" });
    expect(volumeIn(1024 ** 2 * 3)).toEqual({ volume: "3", unit: "PiB" });
    expect(volumeIn(1234.5678)).toEqual({ volume: "1234.5678", unit: "GiB" });
    expect(volumeIn(0)).toEqual({ volume: "0", unit: "GiB" });
    const form = fromScenario({ volume_gib: 204800 });
    expect([form.volume, form.volumeUnit]).toEqual(["200", "TiB"]);
    expect(toScenario(form).body?.volume_gib).toBe(204800);
  });

  it("keeps the installation's ticked tiers when the form is filled from measured data", () => {
    const current = {
      ...DEFAULT_FORM,
      tiers: ["tier:hot-disk", "tier:archive@bulk", "STANDARD"],
      hybridOn: true,
    };
    const next = prefilledForm(current, {
      catalog: "aws-us-east-1-2026",
      tiers: [
        { tier: "hot-disk", label: "hot-disk" },
        { storage_class: "STANDARD", label: "STANDARD" },
        { storage_class: "GLACIER", label: "GLACIER" },
      ],
      reads_per_month: 0.164,
      volume_gib: 204800,
    });
    expect(next.tiers).toEqual(["tier:archive@bulk", "tier:hot-disk", "STANDARD", "GLACIER"]);
    expect(next.readsPerMonth).toBe("0.164");
    expect([next.volume, next.volumeUnit]).toEqual(["200", "TiB"]);
    expect(next.hybridOn).toBe(false);
  });

  it("checks that hybrid shares add up", () => {
    const form = { ...DEFAULT_FORM, hybridOn: true };
    expect(toScenario(form).errors).toEqual({});
    const parts = form.hybrid.parts.map((p, i) => (i === 0 ? { ...p, dataPercent: "50" } : p));
    expect(toScenario({ ...form, hybrid: { ...form.hybrid, parts } }).errors).toEqual({
      "hybrid.data": "Data shares must add up to 100 %",
    });
  });

  it("round-trips a saved scenario and keeps keys it has no fields for", () => {
    const { body } = toScenario({ ...DEFAULT_FORM, lifecycleOn: true, hybridOn: true });
    if (!body) throw new Error("the default form must convert");
    const measured = { GLACIER: { requests: 0.029, restore: 8.365, retrieval: 0, restored_copy: 0 } };
    const again = fromScenario({ ...body, measured });
    expect(again.extra).toEqual({ measured });
    const back = toScenario(again).body;
    expect(back).toEqual({ ...body, measured });
  });
});

describe("the planner's first form", () => {
  const catalogs = [
    { id: "aws-us-east-1-2026", provider: "aws", region: "us-east-1", valid_from: "2026-07-28" },
    { id: "aws-ap-northeast-1-2018", provider: "aws", region: "ap-northeast-1", valid_from: "2018-07-01" },
    { id: "aws-ap-northeast-1-2026", provider: "aws", region: "ap-northeast-1", valid_from: "2026-07-28" },
  ] as unknown as CatalogSummary[];
  const mine = [
    { id: 1, name: "hot", ref: "tier:hot", priceable: true, catalog: "aws-ap-northeast-1-2018" },
    { id: 2, name: "tape", ref: "tier:tape", priceable: false, catalog: null },
  ] as unknown as InstallationTier[];

  it("opens on the installation's priceable tiers and the newest catalog of their region", () => {
    const form = installationStart(DEFAULT_FORM, mine, catalogs);
    expect(form.tiers).toEqual(["tier:hot"]);
    expect(form.catalog).toBe("aws-ap-northeast-1-2026");
  });

  it("names a catalog in a tier reference as the dropdown does", () => {
    expect(tierRefLabel("aws-us-east-1-2026:GLACIER@bulk", catalogs)).toBe(
      "GLACIER@bulk, AWS us-east-1 (2026-07-28)",
    );
    expect(tierRefLabel("STANDARD", catalogs)).toBe("STANDARD");
    expect(tierRefLabel("tier:hot", catalogs)).toBe("tier:hot");
  });
});
