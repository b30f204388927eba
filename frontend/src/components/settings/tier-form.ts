// The tier form as plain data: what the inputs hold, how they are checked, and the API bodies they
// become. Kept apart from the dialog so every rule is unit-tested without a browser.
import type { Tier, TierCreate, TierUpdate } from "@/api/tiers";

const GIB = 1024 ** 3;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const STORAGE_CLASS = /^[A-Z][A-Z0-9_]{0,31}$/;
const ENDPOINT = /^https?:\/\/[^\s/]+(\/\S*)?$/;
const S3_BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const AZURE_CONTAINER = /^[a-z0-9]([a-z0-9]|-[a-z0-9]){1,62}$/;
const GCS_BUCKET = /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/;
export const AZURE_ACCESS_TIERS = ["HOT", "COOL", "COLD", "ARCHIVE"] as const;
export const GCS_CLASSES = ["STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE"] as const;
const SPEEDS = ["expedited", "standard", "bulk"] as const;

export type Driver = "posix" | "s3" | "azure" | "gcs";
export type AzureAuth = "key" | "sas" | "connection";

export interface TierFormValues {
  name: string;
  driver: Driver;
  path: string;
  endpointUrl: string;
  region: string;
  bucket: string;
  prefix: string;
  accessKeyId: string;
  /** Write-only: empty on edit keeps the stored secret. */
  secretAccessKey: string;
  s3StorageClass: string;
  /** Azure: account URL (or taken from the connection string), container, one kind of credential. */
  accountUrl: string;
  container: string;
  azureAuth: AzureAuth;
  accountName: string;
  /** Write-only like the S3 secret: empty on edit keeps the stored credential. */
  accountKey: string;
  sasToken: string;
  connectionString: string;
  accessTier: string;
  rehydrate: "copy" | "in_place";
  rehydrateTier: string;
  /** GCS: bucket and prefix share the S3 fields; the endpoint is optional (emulators). */
  project: string;
  serviceAccountKey: string;
  gcsStorageClass: string;
  /** Classes this tier serves, separated by commas or spaces. */
  storageClasses: string;
  offline: boolean;
  expedited: string;
  standard: string;
  bulk: string;
  /** GiB (2^30 bytes); empty means no limit. */
  capacityGiB: string;
  minStorageDays: string;
  priceCatalog: string;
  priceClass: string;
  /** Where the tier's reads leave its provider (egress is billed there); a posix tier has none to choose. */
  priceEgress: EgressDestination;
}

/** The destinations every price catalog prices (pricing's `DESTINATIONS`). */
export const EGRESS_DESTINATIONS = ["internet", "research-network", "same-region"] as const;
export type EgressDestination = (typeof EGRESS_DESTINATIONS)[number];

export function hasEgress(driver: Driver): boolean {
  return driver !== "posix";
}

export type TierFormErrors = Partial<Record<keyof TierFormValues, string>>;

export function emptyTierForm(): TierFormValues {
  return {
    name: "",
    driver: "posix",
    path: "",
    endpointUrl: "",
    region: "us-east-1",
    bucket: "",
    prefix: "",
    accessKeyId: "",
    secretAccessKey: "",
    s3StorageClass: "STANDARD",
    accountUrl: "",
    container: "",
    azureAuth: "key",
    accountName: "",
    accountKey: "",
    sasToken: "",
    connectionString: "",
    accessTier: "HOT",
    rehydrate: "copy",
    rehydrateTier: "HOT",
    project: "",
    serviceAccountKey: "",
    gcsStorageClass: "STANDARD",
    storageClasses: "STANDARD",
    offline: false,
    expedited: "5",
    standard: "30",
    bulk: "60",
    capacityGiB: "",
    minStorageDays: "0",
    priceCatalog: "",
    priceClass: "",
    priceEgress: "internet",
  };
}

function str(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : value == null ? fallback : String(value);
}

/** The form filled from an existing tier (secrets never come back from the API). */
export function tierToForm(tier: Tier): TierFormValues {
  const config = tier.config ?? {};
  const base = emptyTierForm();
  return {
    ...base,
    name: tier.name,
    driver: (["s3", "azure", "gcs"] as const).find((d) => d === tier.driver) ?? "posix",
    path: str(config.path),
    endpointUrl: str(config.endpoint_url),
    region: str(config.region, base.region),
    bucket: str(config.bucket),
    prefix: str(config.prefix),
    accessKeyId: str(config.access_key_id),
    s3StorageClass: str(config.storage_class, base.s3StorageClass),
    accountUrl: str(config.account_url),
    container: str(config.container),
    accountName: str(config.account_name),
    accessTier: str(config.access_tier, base.accessTier),
    rehydrate: config.rehydrate === "in_place" ? "in_place" : "copy",
    rehydrateTier: str(config.rehydrate_tier, base.rehydrateTier),
    project: str(config.project),
    gcsStorageClass: str(config.storage_class, base.gcsStorageClass),
    storageClasses: tier.storage_classes.join(", "),
    offline: tier.offline,
    expedited: str(tier.restore_delays.expedited, base.expedited),
    standard: str(tier.restore_delays.standard, base.standard),
    bulk: str(tier.restore_delays.bulk, base.bulk),
    capacityGiB: tier.capacity_bytes == null ? "" : String(Number((tier.capacity_bytes / GIB).toFixed(3))),
    minStorageDays: String(tier.min_storage_days),
    priceCatalog: tier.price_ref.catalog ?? "",
    priceClass: tier.price_ref.storage_class ?? "",
    priceEgress: EGRESS_DESTINATIONS.find((d) => d === tier.price_ref.egress) ?? "internet",
  };
}

export function parseStorageClasses(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
}

function nonNegative(text: string): boolean {
  const n = Number(text);
  return text.trim() !== "" && Number.isFinite(n) && n >= 0;
}

/** Field errors in the words a person needs; an empty object means the form can be sent. */
export function validateTierForm(
  v: TierFormValues,
  opts: { hasStoredSecret?: boolean } = {},
): TierFormErrors {
  const errors: TierFormErrors = {};
  const name = v.name.trim();
  if (!name) errors.name = "Enter a name.";
  else if (name.length > 64 || !NAME.test(name))
    errors.name = "Letters, digits, '.', '_' or '-', starting with a letter or digit.";

  if (v.driver === "posix") {
    if (!v.path.trim()) errors.path = "Enter a directory.";
  } else if (v.driver === "azure") {
    if (!AZURE_CONTAINER.test(v.container.trim()))
      errors.container = "3–63 lower-case letters, digits or single '-'.";
    if (v.prefix.trim().startsWith("/")) errors.prefix = "A prefix does not start with '/'.";
    const viaConnection = v.azureAuth === "connection";
    if (!viaConnection && !ENDPOINT.test(v.accountUrl.trim()))
      errors.accountUrl = "An http:// or https:// URL, e.g. https://myaccount.blob.core.windows.net.";
    const secret = { key: v.accountKey, sas: v.sasToken, connection: v.connectionString }[v.azureAuth];
    if (!secret && !opts.hasStoredSecret) {
      const field = { key: "accountKey", sas: "sasToken", connection: "connectionString" } as const;
      errors[field[v.azureAuth]] = "Required: the tier signs its requests with it.";
    }
  } else if (v.driver === "gcs") {
    if (!GCS_BUCKET.test(v.bucket.trim()))
      errors.bucket = "3–63 lower-case letters, digits, '.', '_' or '-'.";
    if (v.prefix.trim().startsWith("/")) errors.prefix = "A prefix does not start with '/'.";
    if (v.endpointUrl.trim() && !ENDPOINT.test(v.endpointUrl.trim()))
      errors.endpointUrl = "An http:// or https:// URL, or empty for Google Cloud.";
    if (v.serviceAccountKey.trim()) {
      try {
        const key = JSON.parse(v.serviceAccountKey) as Record<string, unknown>;
        if (key.type !== "service_account" || !key.client_email || !key.private_key)
          errors.serviceAccountKey = "A service-account key file (type service_account).";
      } catch {
        errors.serviceAccountKey = "Paste the key file's JSON.";
      }
    } else if (!v.endpointUrl.trim() && !opts.hasStoredSecret) {
      errors.serviceAccountKey = "Required for Google Cloud (only an emulator endpoint goes without).";
    }
  } else {
    if (!ENDPOINT.test(v.endpointUrl.trim())) errors.endpointUrl = "An http:// or https:// URL.";
    if (!S3_BUCKET.test(v.bucket.trim())) errors.bucket = "3–63 lower-case letters, digits, '.' or '-'.";
    if (!STORAGE_CLASS.test(v.s3StorageClass.trim()))
      errors.s3StorageClass = "An upper-case class such as STANDARD.";
    if (v.prefix.trim().startsWith("/")) errors.prefix = "A prefix does not start with '/'.";
    const hasKey = v.accessKeyId.trim() !== "";
    const hasSecret = v.secretAccessKey !== "" || (hasKey && !!opts.hasStoredSecret);
    if (hasKey !== hasSecret)
      errors[hasKey ? "secretAccessKey" : "accessKeyId"] = "Give both the key ID and the secret, or neither.";
  }

  const classes = parseStorageClasses(v.storageClasses);
  if (classes.length === 0) errors.storageClasses = "At least one storage class, e.g. STANDARD.";
  else if (classes.some((c) => !STORAGE_CLASS.test(c)))
    errors.storageClasses = "Upper-case letters, digits or '_', e.g. STANDARD_IA.";
  else if (new Set(classes).size !== classes.length) errors.storageClasses = "Each class once.";

  if (v.offline) {
    for (const speed of SPEEDS) {
      if (!nonNegative(v[speed])) errors[speed] = "Seconds, 0 or more.";
    }
  }
  if (v.capacityGiB.trim() !== "" && !nonNegative(v.capacityGiB)) errors.capacityGiB = "GiB, 0 or more.";
  if (!nonNegative(v.minStorageDays) || !Number.isInteger(Number(v.minStorageDays)))
    errors.minStorageDays = "Whole days, 0 or more.";
  if (!!v.priceCatalog !== !!v.priceClass)
    errors.priceClass = "Choose a catalog and one of its classes, or neither.";
  return errors;
}

function driverConfig(v: TierFormValues): Record<string, unknown> {
  if (v.driver === "posix") return { path: v.path.trim() };
  if (v.driver === "azure") {
    const config: Record<string, unknown> = {
      container: v.container.trim(),
      prefix: v.prefix.trim(),
      access_tier: v.accessTier,
      rehydrate: v.rehydrate,
      rehydrate_tier: v.rehydrateTier,
    };
    if (v.accountUrl.trim()) config.account_url = v.accountUrl.trim();
    if (v.azureAuth === "key" && v.accountName.trim()) config.account_name = v.accountName.trim();
    // Only the credential typed in is sent: empty keeps the stored one.
    if (v.azureAuth === "key" && v.accountKey) config.account_key = v.accountKey.trim();
    if (v.azureAuth === "sas" && v.sasToken) config.sas_token = v.sasToken.trim();
    if (v.azureAuth === "connection" && v.connectionString)
      config.connection_string = v.connectionString.trim();
    return config;
  }
  if (v.driver === "gcs") {
    const config: Record<string, unknown> = {
      bucket: v.bucket.trim(),
      prefix: v.prefix.trim(),
      storage_class: v.gcsStorageClass,
    };
    if (v.project.trim()) config.project = v.project.trim();
    if (v.endpointUrl.trim()) config.endpoint_url = v.endpointUrl.trim();
    if (v.serviceAccountKey.trim()) config.service_account_key = v.serviceAccountKey.trim();
    return config;
  }
  const config: Record<string, unknown> = {
    endpoint_url: v.endpointUrl.trim(),
    region: v.region.trim() || "us-east-1",
    bucket: v.bucket.trim(),
    prefix: v.prefix.trim(),
    storage_class: v.s3StorageClass.trim(),
  };
  if (v.accessKeyId.trim()) config.access_key_id = v.accessKeyId.trim();
  // An empty secret is left out, so an edit keeps the stored one.
  if (v.secretAccessKey) config.secret_access_key = v.secretAccessKey;
  return config;
}

function common(v: TierFormValues) {
  const priceRef: Record<string, string> = v.priceCatalog
    ? { catalog: v.priceCatalog, storage_class: v.priceClass }
    : {};
  // the internet is the server's default: a reference without the key means it
  if (v.priceCatalog && hasEgress(v.driver) && v.priceEgress !== "internet") priceRef.egress = v.priceEgress;
  return {
    storage_classes: parseStorageClasses(v.storageClasses),
    offline: v.offline,
    restore_delays: v.offline
      ? { expedited: Number(v.expedited), standard: Number(v.standard), bulk: Number(v.bulk) }
      : null,
    capacity_bytes: v.capacityGiB.trim() === "" ? null : Math.round(Number(v.capacityGiB) * GIB),
    min_storage_days: Number(v.minStorageDays),
    price_ref: priceRef,
  };
}

export function toCreateBody(v: TierFormValues): TierCreate {
  return { name: v.name.trim(), driver: v.driver, config: driverConfig(v), ...common(v) };
}

/** The whole form as a change; the server keeps what is equal and refuses what a full tier forbids. */
export function toUpdateBody(v: TierFormValues): TierUpdate {
  return { name: v.name.trim(), config: driverConfig(v), ...common(v) };
}

/** The body of the connection test: the driver settings as they would be saved (a saved tier's secrets are
 * filled in by the server). */
export function toCheckBody(v: TierFormValues, tierId?: number) {
  return { driver: v.driver, config: driverConfig(v), tier_id: tierId ?? null };
}
