import { afterEach, describe, expect, it, vi } from "vitest";
import { installFakeApi } from "@/test/fake-api";
import { ApiError, api, errorMessage, setUnauthorizedHandler, unwrap } from "./client";

afterEach(() => {
  setUnauthorizedHandler(null);
  vi.unstubAllGlobals();
});

describe("CSRF", () => {
  it("echoes the csrf cookie on mutating requests only", async () => {
    // biome-ignore lint/suspicious/noDocumentCookie: the client reads this cookie.
    document.cookie = "tierpilot_csrf=token-123; path=/";
    const { requests } = installFakeApi({
      "GET /api/keys": () => ({ body: [] }),
      "POST /api/keys": () => ({
        status: 201,
        body: { access_key_id: "K", secret_access_key: "S", gateway_url: "u" },
      }),
      "DELETE /api/keys/K": () => ({ status: 204 }),
    });
    await unwrap(api.GET("/api/keys"));
    await unwrap(api.POST("/api/keys"));
    await unwrap(api.DELETE("/api/keys/{access_key_id}", { params: { path: { access_key_id: "K" } } }));
    expect(requests.map((r) => [r.method, r.headers.get("X-CSRF-Token")])).toEqual([
      ["GET", null],
      ["POST", "token-123"],
      ["DELETE", "token-123"],
    ]);
  });
});

describe("401", () => {
  it("calls the unauthorized handler for any call but login", async () => {
    const onUnauthorized = vi.fn();
    setUnauthorizedHandler(onUnauthorized);
    installFakeApi({
      "GET /api/overview": () => ({ status: 401, body: { detail: "not signed in" } }),
      "POST /api/auth/login": () => ({ status: 401, body: { detail: "invalid username or password" } }),
    });
    await expect(
      unwrap(api.POST("/api/auth/login", { body: { username: "a", password: "b" } })),
    ).rejects.toThrow("invalid username or password");
    expect(onUnauthorized).not.toHaveBeenCalled();
    await expect(unwrap(api.GET("/api/overview"))).rejects.toBeInstanceOf(ApiError);
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
  });
});

describe("unwrap", () => {
  it("throws the server's message with the status", async () => {
    installFakeApi({
      "POST /api/users": () => ({ status: 409, body: { detail: "user 'x' already exists" } }),
    });
    const err = await unwrap(
      api.POST("/api/users", { body: { username: "x", password: "long-enough", is_admin: false } }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(409);
    expect((err as ApiError).message).toBe("user 'x' already exists");
  });
});

describe("errorMessage", () => {
  it("joins FastAPI's validation list and falls back for unknown bodies", () => {
    expect(errorMessage({ detail: [{ msg: "too short" }, { msg: "missing" }] }, "x")).toBe(
      "too short; missing",
    );
    expect(errorMessage({ nothing: true }, "fallback")).toBe("fallback");
    expect(errorMessage("Bad Gateway", "fallback")).toBe("Bad Gateway");
  });
});
