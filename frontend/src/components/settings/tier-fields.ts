// The tier form's fields as data, per driver: TierFormDialog renders them with the shared FieldList.
import type { FieldKey, FieldLayout, FieldSpec, SelectOption } from "@/components/ui";
import {
  AZURE_ACCESS_TIERS,
  EGRESS_DESTINATIONS,
  type EgressDestination,
  GCS_CLASSES,
  hasEgress,
  type TierFormValues,
} from "./tier-form";

type Name = FieldKey<TierFormValues>;
type Fields = Array<FieldLayout<Name> | false>;

const EGRESS_LABELS: Record<EgressDestination, string> = {
  internet: "the internet",
  "research-network": "a research network",
  "same-region": "the same region",
};

const text = (name: Name, label: string, more: Partial<FieldSpec<Name>> = {}): FieldSpec<Name> => ({
  name,
  label,
  kind: "text",
  ...more,
});
const secret = (name: Name, label: string, help: string): FieldSpec<Name> => ({
  name,
  label,
  kind: "password",
  autoComplete: "new-password",
  help,
});
const choices = (values: readonly string[]): SelectOption[] => values.map((v) => ({ value: v, label: v }));

export function identityFields(editing: boolean): Fields {
  return [
    [
      text("name", "Name", { autoComplete: "off", spellCheck: false }),
      {
        name: "driver",
        label: "Driver",
        kind: "select",
        disabled: editing,
        help: editing ? "The driver of a tier cannot change." : undefined,
        options: [
          { value: "posix", label: "posix — a directory on this machine" },
          { value: "s3", label: "s3 — an S3-compatible endpoint (AWS, Oracle, MinIO…)" },
          { value: "azure", label: "azure — an Azure Blob container" },
          { value: "gcs", label: "gcs — a Google Cloud Storage bucket" },
        ],
      },
    ],
  ];
}

export function posixFields(inUse: boolean): Fields {
  return [
    text("path", "Directory", {
      help: "Absolute, or relative to the data directory's tiers/ folder.",
      spellCheck: false,
      disabled: inUse,
    }),
  ];
}

function azureCredentials(values: TierFormValues, secretHint: string): Array<FieldSpec<Name>> {
  if (values.azureAuth === "key")
    return [
      text("accountName", "Account name", {
        help: "Optional when the URL names the account.",
        spellCheck: false,
      }),
      secret("accountKey", "Account key", secretHint),
    ];
  if (values.azureAuth === "sas") return [secret("sasToken", "SAS token", secretHint)];
  return [secret("connectionString", "Connection string", secretHint)];
}

/** The location's fields of a cloud driver, under their fieldset's legend. */
export function locationFields(
  values: TierFormValues,
  secretHint: string,
): { legend: string; fields: Fields } {
  if (values.driver === "azure")
    return {
      legend: "Azure Blob container",
      fields: [
        [
          {
            name: "azureAuth",
            label: "Credentials",
            kind: "select",
            options: [
              { value: "key", label: "Account URL and shared key" },
              { value: "sas", label: "Account URL and SAS token" },
              { value: "connection", label: "Connection string" },
            ],
          },
          text("accountUrl", "Account URL", {
            placeholder: "https://myaccount.blob.core.windows.net",
            help: values.azureAuth === "connection" ? "Optional: the connection string names it." : undefined,
            spellCheck: false,
          }),
          text("container", "Container", { spellCheck: false }),
          text("prefix", "Name prefix", { help: "Optional folder inside the container." }),
          ...azureCredentials(values, secretHint),
          {
            name: "accessTier",
            label: "Access tier of new blobs",
            kind: "select",
            help: "ARCHIVE makes the tier an offline archive (restores rehydrate).",
            options: choices(AZURE_ACCESS_TIERS),
          },
          {
            name: "rehydrate",
            label: "Rehydration",
            kind: "select",
            options: [
              { value: "copy", label: "Into a copy that expires (like S3 restores)" },
              { value: "in_place", label: "In place: the blob stays online" },
            ],
          },
          {
            name: "rehydrateTier",
            label: "Rehydrate to",
            kind: "select",
            options: choices(["HOT", "COOL", "COLD"]),
          },
        ],
      ],
    };
  if (values.driver === "gcs")
    return {
      legend: "Google Cloud Storage bucket",
      fields: [
        [
          text("bucket", "Bucket", { spellCheck: false }),
          text("prefix", "Name prefix", { help: "Optional folder inside the bucket." }),
          text("project", "Project", { help: "Optional: the key names it.", spellCheck: false }),
          text("endpointUrl", "Endpoint URL", {
            placeholder: "https://storage.googleapis.com",
            help: "Empty for Google Cloud; an emulator's URL goes without a key.",
            spellCheck: false,
          }),
          {
            name: "gcsStorageClass",
            label: "Class of new objects",
            kind: "select",
            help: "All classes are online; colder ones have minimum durations and retrieval fees.",
            options: choices(GCS_CLASSES),
          },
        ],
        {
          name: "serviceAccountKey",
          label: "Service-account key (JSON)",
          kind: "textarea",
          rows: 4,
          spellCheck: false,
          autoComplete: "off",
          help: secretHint,
        },
      ],
    };
  return {
    legend: "S3 endpoint",
    fields: [
      [
        text("endpointUrl", "Endpoint URL", { placeholder: "https://s3.us-east-1.amazonaws.com" }),
        text("region", "Region"),
        text("bucket", "Bucket", { spellCheck: false }),
        text("prefix", "Key prefix", { help: "Optional folder inside the bucket." }),
        text("accessKeyId", "Access key ID", { autoComplete: "off", spellCheck: false }),
        secret("secretAccessKey", "Secret access key", secretHint),
        text("s3StorageClass", "Storage class of new objects", {
          help: "GLACIER or DEEP_ARCHIVE make the tier an offline archive.",
        }),
      ],
    ],
  };
}

export function classFields(inUse: boolean): Fields {
  return [
    text("storageClasses", "Storage classes served", {
      help: "The x-amz-storage-class values that land on this tier, separated by commas.",
      spellCheck: false,
    }),
    {
      name: "offline",
      label: "Offline archive",
      kind: "checkbox",
      help: "Objects must be restored before they can be read.",
      disabled: inUse,
    },
  ];
}

export const DELAY_FIELDS: Fields = [
  [
    { name: "expedited", label: "Expedited", kind: "number" },
    { name: "standard", label: "Standard", kind: "number" },
    { name: "bulk", label: "Bulk", kind: "number" },
  ],
];

/** Capacity and the price reference; the catalog's classes come from the catalogs the API knows. */
export function pricingFields(
  values: TierFormValues,
  catalogs: { id: string; provider: string; region: string; classes: string[] }[] | undefined,
  catalogsFailed: boolean,
): Fields {
  const catalog = catalogs?.find((c) => c.id === values.priceCatalog);
  return [
    [
      {
        name: "capacityGiB",
        label: "Capacity (GiB)",
        kind: "number",
        help: "GiB = 2³⁰ bytes. Empty: no limit.",
      },
      {
        name: "minStorageDays",
        label: "Minimum storage (days)",
        kind: "number",
        step: 1,
        help: "Objects leaving earlier are charged the remaining days.",
      },
      {
        name: "priceCatalog",
        label: "Price catalog",
        kind: "select",
        help: catalogsFailed ? "Price catalogs could not be loaded." : undefined,
        options: [
          { value: "", label: "None" },
          ...(catalogs ?? []).map((c) => ({ value: c.id, label: `${c.id} (${c.provider}, ${c.region})` })),
        ],
      },
      {
        name: "priceClass",
        label: "Priced as class",
        kind: "select",
        disabled: !catalog,
        options: [
          { value: "", label: catalog ? "Choose a class" : "Choose a catalog first" },
          ...choices(catalog?.classes ?? []),
        ],
      },
      ...(hasEgress(values.driver)
        ? [
            {
              name: "priceEgress",
              label: "Reads leave the provider by",
              kind: "select",
              help: "Egress is billed where bytes leave the tier's provider: the internet, a research-network peering (e.g. SINET), or the same region as this gateway (free).",
              disabled: !catalog,
              options: EGRESS_DESTINATIONS.map((d) => ({ value: d, label: EGRESS_LABELS[d] })),
            } satisfies FieldSpec<Name>,
          ]
        : []),
    ],
  ];
}
