import { useEffect, useState } from "react";
import { Button } from "./Button";

async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Clipboard API refused (plain http on a non-localhost host): fall back below.
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/** Copies a value and says so in a polite live region. */
export function CopyButton({
  value,
  label = "Copy",
  accessibleLabel,
}: {
  value: string;
  label?: string;
  /** Names what is copied when several copy buttons share one visible label. */
  accessibleLabel?: string;
}) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const t = window.setTimeout(() => setState("idle"), 2000);
    return () => window.clearTimeout(t);
  }, [state]);
  return (
    <span className="ui-copy">
      <Button
        size="sm"
        aria-label={accessibleLabel}
        onClick={async () => setState((await copyText(value)) ? "copied" : "failed")}
      >
        {state === "copied" ? "Copied" : label}
      </Button>
      <span className="visually-hidden" aria-live="polite">
        {state === "copied"
          ? "Copied to clipboard"
          : state === "failed"
            ? "Copy failed; select the text"
            : ""}
      </span>
    </span>
  );
}

/** A read-only value in monospace with a copy button beside it (keys, secrets, URLs). */
export function CopyField({
  label,
  value,
  secret = false,
}: {
  label: string;
  value: string;
  secret?: boolean;
}) {
  return (
    <div className="ui-copyfield">
      <span className="ui-field__label">{label}</span>
      <div className="ui-copyfield__row">
        <code className="ui-copyfield__value" data-secret={secret || undefined} data-field={label}>
          {value}
        </code>
        <CopyButton value={value} accessibleLabel={`Copy ${label.toLowerCase()}`} />
      </div>
    </div>
  );
}
