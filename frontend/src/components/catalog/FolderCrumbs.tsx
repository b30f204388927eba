import { crumbs } from "./browser-path";
import "./browser.css";

/** The bucket and the folders down to this one; each but the last opens its folder. */
export function FolderCrumbs({
  bucket,
  prefix,
  openFolder,
}: {
  bucket: string;
  prefix: string;
  openFolder: (prefix: string) => void;
}) {
  return (
    <nav aria-label="Folder path" className="browser-crumbs">
      {crumbs(bucket, prefix).map((c, i, all) =>
        i === all.length - 1 ? (
          <span key={c.prefix} aria-current="page">
            {c.label}
          </span>
        ) : (
          <span key={c.prefix}>
            <button type="button" className="browser-link" onClick={() => openFolder(c.prefix)}>
              {c.label}
            </button>
            <span aria-hidden="true"> / </span>
          </span>
        ),
      )}
    </nav>
  );
}
