// The what-if form's fields as data: ScenarioForm renders them with the shared FieldList.
import type { FieldKey, FieldLayout, FieldSpec } from "@/components/ui";
import type { FixedCostRow, FormState, HybridRow, RuleRow } from "./scenario-form";

type Key<T> = FieldKey<T>;
type Fields<T> = Array<FieldLayout<Key<T>>>;

const decimal = <K extends string>(name: K, label: string, help?: string): FieldSpec<K> => ({
  name,
  label,
  kind: "number",
  help,
});
const whole = <K extends string>(name: K, label: string): FieldSpec<K> => ({
  name,
  label,
  kind: "number",
  step: 1,
});

const EGRESS_OPTIONS = [
  { value: "same-region", label: "Same region (free)" },
  { value: "internet", label: "Internet" },
  { value: "research-network", label: "Research network link" },
  { value: "inter-region", label: "Another region (same provider)" },
  { value: "other-cloud", label: "Another cloud (internet rates)" },
];

const PER_OPTIONS = [
  { value: "hour", label: "per hour" },
  { value: "day", label: "per day" },
  { value: "month", label: "per month" },
];

const VOLUME_UNIT_OPTIONS = [
  { value: "GiB", label: "GiB" },
  { value: "TiB", label: "TiB" },
  { value: "PiB", label: "PiB" },
];

/** The volume beside its unit (binary units, as cloud bills count them). */
export const VOLUME_FIELDS: Fields<FormState> = [
  [
    decimal("volume", "Stored volume"),
    { name: "volumeUnit", label: "Unit", kind: "select", options: VOLUME_UNIT_OPTIONS },
  ],
];

export const OBJECT_FIELDS: Fields<FormState> = [whole("objects", "Objects")];

export const ACCESS_FIELDS: Fields<FormState> = [
  [
    decimal("readsPerMonth", "Full reads per month", "of the whole data set"),
    decimal("readPercent", "Share read each time (%)"),
  ],
  [
    { name: "egress", label: "Downloads go to", kind: "select", options: EGRESS_OPTIONS },
    decimal("egressPercent", "Share downloaded (%)"),
  ],
  decimal(
    "readAmplification",
    "Read amplification (×)",
    "bytes a client transfers per byte it needs (read-ahead of a FUSE client: above 1)",
  ),
  decimal("restoredCopyDays", "Restored copy kept (days)"),
];

export const RANGE_FIELDS: Fields<FormState> = [
  [decimal("freqMin", "Frequency from"), decimal("freqMax", "Frequency to")],
];

export const REQUEST_FIELDS: Fields<FormState> = [
  { name: "requestsPer", label: "Counted", kind: "select", options: PER_OPTIONS },
  [whole("requestsGet", "GET"), whole("requestsHead", "HEAD")],
  [whole("requestsPut", "PUT"), whole("requestsList", "LIST")],
];

export const ONE_OFF_FIELDS: Fields<FormState["oneOff"]> = [
  { name: "initialUpload", label: "Initial upload (one PUT per object)", kind: "checkbox" },
  { name: "transitionIn", label: "Lifecycle transition into the class (fee per object)", kind: "checkbox" },
  { name: "deleteAtEnd", label: "Deleted when the plan ends (early deletion fees)", kind: "checkbox" },
];

export const PLAN_END_FIELDS: Fields<FormState> = [
  {
    name: "planEnd",
    label: "Plan ends on (total cost of ownership to that day)",
    kind: "date",
    help: "empty: the months below set the period; the plan starts today",
  },
];

export const PERIOD_FIELDS: Fields<FormState> = [
  [whole("months", "Months"), decimal("writesPerMonth", "Full overwrites per month")],
  [
    decimal("earlyDeletionPercent", "Deleted early (% per month)"),
    decimal("earlyDeletionAgeDays", "…at an age of (days)"),
  ],
];

export const FIXED_COST_FIELDS: Array<FieldSpec<Key<FixedCostRow>>> = [
  { name: "name", label: "Item", kind: "text" },
  decimal("monthly", "USD per month"),
];

export const LIFECYCLE_ON_FIELDS: Fields<FormState> = [
  { name: "lifecycleOn", label: "Simulate moving data down the tiers with age", kind: "checkbox" },
];

/** The policy's fields before its transitions; `tiers` are the choices where new data lands. */
export function lifecycleFields(tiers: FieldSpec["options"]): Fields<FormState["lifecycle"]> {
  return [
    [whole("horizonMonths", "Horizon (months)"), decimal("ingestGibPerMonth", "New data (GiB per month)")],
    [
      decimal("initialGib", "Data at the start (GiB)"),
      { name: "start", label: "New data lands in", kind: "select", options: tiers },
    ],
  ];
}

export const DECAY_FIELDS: Fields<FormState["lifecycle"]> = [
  [
    decimal("initialReads", "Reads per month when new"),
    decimal("halfLifeMonths", "Reads halve every (months)"),
  ],
  [
    whole("expireAfterDays", "Delete after (days, optional)"),
    { name: "search", label: "Search the cheapest transition days", kind: "checkbox" },
  ],
];

export function ruleFields(tiers: FieldSpec["options"]): Array<FieldSpec<Key<RuleRow>>> {
  return [
    whole("afterDays", "Move after (days)"),
    { name: "to", label: "to", kind: "select", options: tiers },
  ];
}

export const HYBRID_ON_FIELDS: Fields<FormState> = [
  { name: "hybridOn", label: "Split the data across tiers", kind: "checkbox" },
];

export function hybridPartFields(
  index: number,
  tiers: FieldSpec["options"],
): Array<FieldSpec<Key<HybridRow>>> {
  return [
    { name: "tier", label: `Part ${index + 1}`, kind: "select", options: tiers },
    decimal("dataPercent", "Data (%)"),
    decimal("readPercent", "Downloads (%)"),
  ];
}
