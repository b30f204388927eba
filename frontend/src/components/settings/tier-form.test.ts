// @vitest-environment node
import { describe, expect, it } from "vitest";
import type { Tier } from "@/api/tiers";
import {
  emptyTierForm,
  tierToForm,
  toCheckBody,
  toCreateBody,
  toUpdateBody,
  validateTierForm,
} from "./tier-form";

const GIB = 1024 ** 3;

const archiveTier: Tier = {
  id: 3,
  name: "archive",
  driver: "posix",
  location: "/data/tiers/archive",
  config: { path: "/data/tiers/archive" },
  has_secret: false,
  storage_classes: ["GLACIER", "DEEP_ARCHIVE"],
  offline: true,
  restore_delays: { expedited: 5, standard: 30, bulk: 60 },
  price_ref: { catalog: "aws-us-east-1", storage_class: "GLACIER" },
  capacity_bytes: 1024 * GIB,
  min_storage_days: 90,
  created_at: "2026-11-22T10:00:00Z",
  used_bytes: 0,
  object_count: 0,
  bucket_count: 0,
};

describe("tier form", () => {
  it("round-trips a tier into the form and back into an update", () => {
    const body = toUpdateBody(tierToForm(archiveTier));
    expect(body).toEqual({
      name: "archive",
      config: { path: "/data/tiers/archive" },
      storage_classes: ["GLACIER", "DEEP_ARCHIVE"],
      offline: true,
      restore_delays: { expedited: 5, standard: 30, bulk: 60 },
      capacity_bytes: 1024 * GIB,
      min_storage_days: 90,
      price_ref: { catalog: "aws-us-east-1", storage_class: "GLACIER" },
    });
  });

  it("builds an s3 tier, capacity in GiB, classes normalised, no price reference", () => {
    const values = {
      ...emptyTierForm(),
      name: "cloud-ia",
      driver: "s3" as const,
      endpointUrl: "http://127.0.0.1:9000",
      bucket: "cold-data",
      accessKeyId: "AKIA1",
      secretAccessKey: "secret",
      s3StorageClass: "STANDARD_IA",
      storageClasses: "standard_ia, ONEZONE_IA",
      capacityGiB: "1.5",
    };
    expect(validateTierForm(values)).toEqual({});
    expect(toCreateBody(values)).toMatchObject({
      name: "cloud-ia",
      driver: "s3",
      config: {
        endpoint_url: "http://127.0.0.1:9000",
        bucket: "cold-data",
        access_key_id: "AKIA1",
        secret_access_key: "secret",
        storage_class: "STANDARD_IA",
        region: "us-east-1",
        prefix: "",
      },
      storage_classes: ["STANDARD_IA", "ONEZONE_IA"],
      capacity_bytes: 1.5 * GIB,
      restore_delays: null,
      price_ref: {},
    });
  });

  it("keeps a stored secret when the secret field is left empty on edit", () => {
    const values = {
      ...emptyTierForm(),
      name: "cloud",
      driver: "s3" as const,
      endpointUrl: "https://s3.example.org",
      bucket: "bkt",
      accessKeyId: "AKIA1",
    };
    expect(validateTierForm(values, { hasStoredSecret: true })).toEqual({});
    expect(validateTierForm(values)).toHaveProperty("secretAccessKey");
    expect(toUpdateBody(values).config).not.toHaveProperty("secret_access_key");
  });

  it("explains every bad field", () => {
    const errors = validateTierForm({
      ...emptyTierForm(),
      name: "../up",
      path: "",
      storageClasses: "standard-ia",
      offline: true,
      bulk: "-1",
      capacityGiB: "lots",
      minStorageDays: "1.5",
      priceCatalog: "aws-us-east-1",
    });
    expect(Object.keys(errors).sort()).toEqual(
      ["bulk", "capacityGiB", "minStorageDays", "name", "path", "priceClass", "storageClasses"].sort(),
    );
  });

  it("empty capacity means no limit", () => {
    expect(toCreateBody({ ...emptyTierForm(), name: "x", path: "x" }).capacity_bytes).toBeNull();
  });

  it("builds an azure tier with one credential and keeps a stored one when left empty", () => {
    const values = {
      ...emptyTierForm(),
      name: "az-cool",
      driver: "azure" as const,
      accountUrl: "https://acct.blob.core.windows.net",
      container: "cold-data",
      prefix: "t1/",
      accountKey: "a2V5",
      accessTier: "COOL",
      storageClasses: "COOL, standard_ia",
    };
    expect(validateTierForm(values)).toEqual({});
    expect(toCreateBody(values).config).toEqual({
      account_url: "https://acct.blob.core.windows.net",
      container: "cold-data",
      prefix: "t1/",
      account_key: "a2V5",
      access_tier: "COOL",
      rehydrate: "copy",
      rehydrate_tier: "HOT",
    });
    const stored: Tier = {
      ...archiveTier,
      driver: "azure",
      has_secret: true,
      config: toCreateBody(values).config,
    };
    const edit = tierToForm(stored);
    expect(edit.driver).toBe("azure");
    expect(validateTierForm(edit, { hasStoredSecret: true })).toEqual({});
    expect(toUpdateBody(edit).config).not.toHaveProperty("account_key");
    expect(validateTierForm({ ...values, accountKey: "" })).toHaveProperty("accountKey");
    expect(validateTierForm({ ...values, container: "Bad_Name", accountUrl: "ftp://x" })).toMatchObject({
      container: expect.any(String),
      accountUrl: expect.any(String),
    });
    const sas = { ...values, azureAuth: "sas" as const, accountKey: "", sasToken: "sv=1&sig=x" };
    expect(toCheckBody(sas, 7)).toMatchObject({
      driver: "azure",
      tier_id: 7,
      config: { sas_token: "sv=1&sig=x" },
    });
  });

  it("builds a gcs tier: a service-account key, or none on an emulator endpoint", () => {
    const key = JSON.stringify({ type: "service_account", client_email: "a@b", private_key: "k" });
    const values = {
      ...emptyTierForm(),
      name: "gcs-cold",
      driver: "gcs" as const,
      bucket: "cold_data",
      gcsStorageClass: "COLDLINE",
      serviceAccountKey: key,
      storageClasses: "COLDLINE",
    };
    expect(validateTierForm(values)).toEqual({});
    expect(toCreateBody(values).config).toEqual({
      bucket: "cold_data",
      prefix: "",
      storage_class: "COLDLINE",
      service_account_key: key,
    });
    expect(validateTierForm({ ...values, serviceAccountKey: "" })).toHaveProperty("serviceAccountKey");
    expect(validateTierForm({ ...values, serviceAccountKey: "{}" })).toHaveProperty("serviceAccountKey");
    expect(
      validateTierForm({ ...values, serviceAccountKey: "", endpointUrl: "http://127.0.0.1:4443" }),
    ).toEqual({});
  });
});
