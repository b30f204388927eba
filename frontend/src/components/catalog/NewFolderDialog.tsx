import { useState } from "react";
import { useCreateFolder } from "@/api/catalog";
import { Button, Dialog, ErrorBanner, Input } from "@/components/ui";

const MAX_KEY_BYTES = 1024;

/** Why a folder name (one or more `/`-separated levels below `prefix`) cannot be used, or undefined. */
export function folderNameError(prefix: string, name: string): string | undefined {
  const trimmed = name.replace(/\/+$/, "");
  if (trimmed === "") return undefined;
  const parts = trimmed.split("/");
  if (parts.some((p) => p === "")) return "no empty levels: the name must not start with / or contain //";
  if (parts.some((p) => p === "." || p === "..")) return "“.” and “..” cannot be folder names";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) return "no control characters (tabs, line breaks…)";
  if (new TextEncoder().encode(`${prefix}${trimmed}/`).length > MAX_KEY_BYTES) {
    return `the folder's full path must stay within ${MAX_KEY_BYTES} bytes`;
  }
  return undefined;
}

/** Ask for a folder name and create it below `prefix`; S3 has no folders, so this writes `name/` as an empty object. */
export function NewFolderDialog({
  bucket,
  prefix,
  open,
  onClose,
  onCreated,
}: {
  bucket: string;
  prefix: string;
  open: boolean;
  onClose: () => void;
  onCreated: (prefix: string) => void;
}) {
  const create = useCreateFolder();
  const [name, setName] = useState("");
  const error = folderNameError(prefix, name);
  const trimmed = name.replace(/\/+$/, "");
  const close = () => {
    setName("");
    create.reset();
    onClose();
  };
  const submit = () =>
    create.mutate(
      { bucket, prefix: `${prefix}${trimmed}/` },
      {
        onSuccess: (created) => {
          setName("");
          onCreated(created.key);
        },
      },
    );
  return (
    <Dialog
      open={open}
      onClose={close}
      title="New folder"
      description={`In ${bucket}/${prefix}. S3 has no real folders: this stores an empty object named “folder/”, as S3 consoles do, so the folder shows while it is empty.`}
      footer={
        <>
          <Button onClick={close}>Cancel</Button>
          <Button
            variant="primary"
            loading={create.isPending}
            disabled={!trimmed || !!error}
            onClick={submit}
          >
            Create folder
          </Button>
        </>
      }
    >
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          if (trimmed && !error) submit();
        }}
      >
        <Input
          label="Folder name"
          hint="Use / for levels below, e.g. 2026/raw"
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={error}
          data-autofocus
          autoComplete="off"
        />
        {create.isError ? <ErrorBanner title="Could not create the folder" error={create.error} /> : null}
      </form>
    </Dialog>
  );
}
