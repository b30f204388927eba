import { useState } from "react";
import { type Project, ROLES, useAddMember, useCreateProject, useSetQuota } from "@/api/projects";
import type { FieldLayout } from "@/components/ui";
import { FormDialog } from "./FormDialog";
import {
  QUOTA_ALIASES,
  type QuotaValues,
  quotaBody,
  quotaValues,
  refusedFields,
  validateQuota,
} from "./project-form";

const QUOTA_FIELDS: Array<FieldLayout<keyof QuotaValues>> = [
  [
    {
      name: "quota_gib",
      label: "Quota (GiB)",
      kind: "number",
      help: "Every stored version counts. Empty: none.",
    },
    { name: "quota_objects", label: "Quota (objects)", kind: "number", step: 1, help: "Empty: none." },
  ],
];

/** Admins: a new shared project, with optional quotas. */
export function CreateProjectDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const create = useCreateProject();
  const [values, setValues] = useState({ name: "", ...quotaValues(null) });
  const [local, setLocal] = useState<Record<string, string>>({});
  const close = () => {
    setValues({ name: "", ...quotaValues(null) });
    setLocal({});
    create.reset();
    onClose();
  };
  const submit = () => {
    const errors = validateQuota(values);
    setLocal(errors);
    if (Object.keys(errors).length) return;
    create.mutate({ name: values.name.trim(), ...quotaBody(values) }, { onSuccess: close });
  };
  const fields: Array<FieldLayout<keyof typeof values>> = [
    {
      name: "name",
      label: "Name",
      kind: "text",
      spellCheck: false,
      help: "Lower-case letters, digits, '.', '_', '-'.",
    },
    ...QUOTA_FIELDS,
  ];
  return (
    <FormDialog
      open={open}
      title="New project"
      description="A project groups buckets under one quota; its members reach its buckets by their role."
      submitLabel="Create project"
      fields={fields}
      values={values}
      errors={{
        ...refusedFields(create.error, ["name", "quota_gib", "quota_objects"], QUOTA_ALIASES),
        ...local,
      }}
      error={create.error}
      pending={create.isPending}
      onChange={(name, value) => setValues((v) => ({ ...v, [name]: value }))}
      onSubmit={submit}
      onClose={close}
    />
  );
}

/** Managers and admins: add a user to the project with a role. */
export function AddMemberDialog({ project, onClose }: { project: Project | null; onClose: () => void }) {
  const add = useAddMember();
  const [values, setValues] = useState({ username: "", role: "member" });
  const close = () => {
    setValues({ username: "", role: "member" });
    add.reset();
    onClose();
  };
  const fields: Array<FieldLayout<keyof typeof values>> = [
    { name: "username", label: "Username", kind: "text", spellCheck: false, autoComplete: "off" },
    {
      name: "role",
      label: "Role",
      kind: "select",
      options: ROLES.map((r) => ({ value: r, label: r })),
      help: "Viewers read, members also write, managers also manage members and the quota.",
    },
  ];
  return (
    <FormDialog
      open={project !== null}
      title={`Add a member to ${project?.name ?? ""}`}
      submitLabel="Add member"
      fields={fields}
      values={values}
      errors={refusedFields(add.error, ["username", "role"], { user: "username" })}
      error={add.error}
      pending={add.isPending}
      onChange={(name, value) => setValues((v) => ({ ...v, [name]: String(value) }))}
      onSubmit={() =>
        project &&
        add.mutate(
          {
            project: project.name,
            body: { username: values.username.trim(), role: values.role, default: false },
          },
          { onSuccess: close },
        )
      }
      onClose={close}
    />
  );
}

/** Managers and admins: set or lift the project's hard quotas. */
export function QuotaDialog({ project, onClose }: { project: Project | null; onClose: () => void }) {
  const setQuota = useSetQuota();
  const [values, setValues] = useState<QuotaValues | null>(null);
  const [local, setLocal] = useState<Record<string, string>>({});
  const shown = values ?? quotaValues(project);
  const close = () => {
    setValues(null);
    setLocal({});
    setQuota.reset();
    onClose();
  };
  const submit = () => {
    const errors = validateQuota(shown);
    setLocal(errors);
    if (Object.keys(errors).length || !project) return;
    setQuota.mutate({ project: project.name, body: quotaBody(shown) }, { onSuccess: close });
  };
  return (
    <FormDialog
      open={project !== null}
      title={`Quota of ${project?.name ?? ""}`}
      description="Writes that would pass a quota are refused; its managers are told at 80 % and 95 %."
      submitLabel="Save quota"
      fields={QUOTA_FIELDS}
      values={shown}
      errors={{ ...refusedFields(setQuota.error, ["quota_gib", "quota_objects"], QUOTA_ALIASES), ...local }}
      error={setQuota.error}
      pending={setQuota.isPending}
      onChange={(name, value) => setValues({ ...shown, [name]: String(value) })}
      onSubmit={submit}
      onClose={close}
    />
  );
}
