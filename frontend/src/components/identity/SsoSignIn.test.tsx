import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { SignInProviders } from "@/api/identity";
import { passwordIsPrimary, SsoSignIn } from "./SsoSignIn";

const none: SignInProviders = { oidc: false, oidc_name: "", ldap: false, local_passwords: true };

describe("SsoSignIn", () => {
  it("offers the provider's sign-in, keeping where the user was going", () => {
    render(<SsoSignIn providers={{ ...none, oidc: true, oidc_name: "Uni Login" }} next="/planner?x=1" />);
    const link = screen.getByRole("link", { name: "Sign in with Uni Login" });
    expect(link).toHaveAttribute("href", "/api/auth/oidc/login?next=%2Fplanner%3Fx%3D1");
    expect(passwordIsPrimary({ ...none, oidc: true })).toBe(false);
  });

  it("links to the provider without a next when the user lands on the overview", () => {
    render(<SsoSignIn providers={{ ...none, oidc: true, oidc_name: "Uni Login" }} next="/" />);
    expect(screen.getByRole("link", { name: "Sign in with Uni Login" })).toHaveAttribute(
      "href",
      "/api/auth/oidc/login",
    );
  });

  it("offers nothing extra when only local passwords are set up", () => {
    render(<SsoSignIn providers={none} next="/" />);
    expect(screen.queryByRole("link")).not.toBeInTheDocument();
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    expect(passwordIsPrimary(none)).toBe(true);
    expect(passwordIsPrimary(undefined)).toBe(true);
  });

  it("shows why the provider's sign-in failed", () => {
    render(
      <SsoSignIn providers={none} next="/" ssoError="the identity provider refused the sign-in: denied" />,
    );
    const alert = screen.getByRole("alert");
    expect(alert).toHaveTextContent("Sign-in through your institution failed");
    expect(alert).toHaveTextContent("the identity provider refused the sign-in: denied");
  });

  it("says the password form takes directory accounts", () => {
    render(<SsoSignIn providers={{ ...none, ldap: true, local_passwords: false }} next="/" />);
    expect(screen.getByText("Sign in with your directory (LDAP) username and password.")).toBeInTheDocument();
  });

  it("says when passwords are only for break-glass admins", () => {
    render(
      <SsoSignIn providers={{ ...none, oidc: true, oidc_name: "Uni", local_passwords: false }} next="/" />,
    );
    expect(
      screen.getByText("Passwords are for administrators' break-glass accounts only."),
    ).toBeInTheDocument();
  });
});
