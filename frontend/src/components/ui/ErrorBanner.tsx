import type { ReactNode } from "react";
import { Button } from "./Button";

export interface ErrorBannerProps {
  title?: ReactNode;
  /** An Error, an ApiError (its server message is shown) or text. */
  error: unknown;
  onRetry?: () => void;
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  return "Something went wrong.";
}

/** The HTTP status of an ApiError (read without importing the API client), else undefined. */
function statusOf(error: unknown): number | undefined {
  const status = error instanceof Error ? (error as { status?: unknown }).status : undefined;
  return typeof status === "number" ? status : undefined;
}

// The API answers 404 alike for what does not exist and for what the caller may not see, and 403 (naming what is
// missing) for what they see but may not do: asking again cannot change either, so neither offers a retry.
const FINAL: Record<number, string> = { 403: "Not allowed", 404: "Not found" };

export function ErrorBanner({ title, error, onRetry }: ErrorBannerProps) {
  const status = statusOf(error);
  const final = status !== undefined ? FINAL[status] : undefined;
  return (
    <div className="ui-error" role="alert">
      <div className="ui-error__text">
        <p className="ui-error__title">{title ?? final ?? "Something went wrong"}</p>
        <p className="ui-error__message">{errorText(error)}</p>
      </div>
      {onRetry && !final ? (
        <Button size="sm" onClick={onRetry}>
          Try again
        </Button>
      ) : null}
    </div>
  );
}
