import { useRef, useState } from "react";
import { type UploadProgress, uploadFile, useUploadInvalidation } from "@/api/catalog";
import { errorText, ProgressBar } from "@/components/ui";
import { formatBytes } from "@/lib/format";
import "./browser.css";

interface UploadState {
  name: string;
  loaded: number;
  total: number;
  error?: string;
  done?: boolean;
}

/** Uploads files into a folder one after the other, each with its progress; the folder is read again after. */
export function useUploads(bucket: string, prefix: string) {
  const [uploads, setUploads] = useState<UploadState[]>([]);
  const fileInput = useRef<HTMLInputElement>(null);
  const invalidate = useUploadInvalidation();
  const startUploads = async (files: FileList | null) => {
    if (!files || files.length === 0) return;
    const list = Array.from(files);
    setUploads(list.map((f) => ({ name: f.name, loaded: 0, total: f.size })));
    for (const [i, file] of list.entries()) {
      const update = (patch: Partial<UploadState>) =>
        setUploads((all) => all.map((u, j) => (j === i ? { ...u, ...patch } : u)));
      try {
        await uploadFile(bucket, prefix, file, (p: UploadProgress) =>
          update({ loaded: p.loaded, total: p.total }),
        );
        update({ done: true, loaded: file.size });
      } catch (err) {
        update({ error: errorText(err) });
      }
    }
    await invalidate(bucket);
    if (fileInput.current) fileInput.current.value = "";
  };
  return { uploads, fileInput, startUploads };
}

export function UploadList({ uploads }: { uploads: UploadState[] }) {
  if (!uploads.length) return null;
  return (
    <ul className="browser-uploads" aria-label="Uploads">
      {uploads.map((u) => (
        <li key={u.name}>
          <ProgressBar
            label={`Uploading ${u.name}`}
            value={u.loaded}
            max={u.total || 1}
            thresholds={null}
            valueText={`${formatBytes(u.loaded)} of ${formatBytes(u.total)}`}
            caption={
              u.error ? (
                <span className="browser-error">
                  {u.name}: {u.error}
                </span>
              ) : (
                `${u.name}: ${u.done ? "uploaded" : `${formatBytes(u.loaded)} of ${formatBytes(u.total)}`}`
              )
            }
          />
        </li>
      ))}
    </ul>
  );
}
