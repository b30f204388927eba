import createClient, { type Middleware } from "openapi-fetch";
import { readCookie } from "@/lib/cookies";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];

export const CSRF_COOKIE = "tierpilot_csrf";
export const CSRF_HEADER = "X-CSRF-Token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
// A wrong password answers 401 too; that must show an error on the login form, not redirect.
const LOGIN_PATH = "/api/auth/login";

/** An API answer other than 2xx, with the server's message. */
export class ApiError extends Error {
  readonly status: number;
  readonly body: unknown;

  constructor(status: number, message: string, body: unknown) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.body = body;
  }
}

/** The human-readable message of an error body: FastAPI's `detail` (string or list) or a fallback. */
export function errorMessage(body: unknown, fallback: string): string {
  if (body && typeof body === "object" && "detail" in body) {
    const detail = (body as { detail: unknown }).detail;
    if (typeof detail === "string" && detail) return detail;
    if (Array.isArray(detail)) {
      const msgs = detail
        .map((d) => (d && typeof d === "object" && "msg" in d ? String((d as { msg: unknown }).msg) : ""))
        .filter(Boolean);
      if (msgs.length) return msgs.join("; ");
    }
  }
  if (typeof body === "string" && body.trim()) return body.trim().slice(0, 300);
  return fallback;
}

type UnauthorizedHandler = () => void;
let unauthorizedHandler: UnauthorizedHandler | null = null;

/** Registers what happens when any call answers 401 (the app sends the user to the login page). */
export function setUnauthorizedHandler(handler: UnauthorizedHandler | null): void {
  unauthorizedHandler = handler;
}

/** Double-submit CSRF: mutating requests echo the readable cookie in a header. */
export const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    if (SAFE_METHODS.has(request.method.toUpperCase())) return undefined;
    const token = readCookie(CSRF_COOKIE);
    if (token) request.headers.set(CSRF_HEADER, token);
    return request;
  },
};

export const unauthorizedMiddleware: Middleware = {
  onResponse({ request, response }) {
    if (response.status === 401 && new URL(request.url).pathname !== LOGIN_PATH) {
      unauthorizedHandler?.();
    }
    return undefined;
  },
};

/** A typed client for the tierpilot API; `fetchImpl` lets tests stand in for the network. */
export function createApiClient(options: { baseUrl?: string; fetch?: typeof fetch } = {}) {
  const client = createClient<paths>({
    baseUrl: options.baseUrl ?? globalThis.location?.origin ?? "",
    credentials: "same-origin",
    // Looked up per call (not captured once) so tests can stand in for the network.
    fetch: options.fetch ?? ((request: Request) => globalThis.fetch(request)),
  });
  client.use(csrfMiddleware, unauthorizedMiddleware);
  return client;
}

export const api = createApiClient();

type FetchResult<T> = { data?: T; error?: unknown; response: Response };

/** The data of a successful call; throws ApiError with the server's message otherwise. */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) {
    throw new ApiError(
      response.status,
      errorMessage(error, `${response.status} ${response.statusText || "request failed"}`),
      error,
    );
  }
  return data as T;
}
