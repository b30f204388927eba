import type { ReactNode } from "react";
import { ErrorBanner } from "./ErrorBanner";
import { LoadingState } from "./Spinner";

/** What QueryState reads of a TanStack query (or of several combined). */
export interface QueryLike<T> {
  isPending: boolean;
  isError: boolean;
  error: unknown;
  data: T | undefined;
  refetch?: () => unknown;
}

export interface QueryStateProps<T> {
  query: QueryLike<T>;
  /** Said while the data is on its way; `false` shows nothing (a query that has not started). */
  loading?: string | false;
  errorTitle?: ReactNode;
  /** Offer "Try again" on an error (the query is fetched again). */
  retry?: boolean;
  /** Inset the error from the edges of a flush card. */
  inset?: boolean;
  /** When the data is there but holds nothing to show, `empty` is shown instead of the children. */
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children?: (data: T) => ReactNode;
}

/**
 * A query's region: a spinner while it loads, the error (with a retry) when it fails, the empty state or
 * the data once it is in. Data kept from before a failed refetch stays shown under the error.
 */
export function QueryState<T>({
  query,
  loading = "Loading…",
  errorTitle,
  retry = true,
  inset = false,
  isEmpty,
  empty = null,
  children,
}: QueryStateProps<T>) {
  const { data } = query;
  const error = query.isError ? (
    <ErrorBanner
      title={errorTitle}
      error={query.error}
      onRetry={retry && query.refetch ? () => query.refetch?.() : undefined}
    />
  ) : null;
  return (
    <>
      {query.isPending && loading !== false ? <LoadingState label={loading} /> : null}
      {error && inset ? <div className="card-inset">{error}</div> : error}
      {data === undefined ? null : isEmpty?.(data) ? empty : children?.(data)}
    </>
  );
}
