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

export function ErrorBanner({ title = "Something went wrong", error, onRetry }: ErrorBannerProps) {
  return (
    <div className="ui-error" role="alert">
      <div className="ui-error__text">
        <p className="ui-error__title">{title}</p>
        <p className="ui-error__message">{errorText(error)}</p>
      </div>
      {onRetry ? (
        <Button size="sm" onClick={onRetry}>
          Try again
        </Button>
      ) : null}
    </div>
  );
}
