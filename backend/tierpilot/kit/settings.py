"""The one settings object: every knob is a TIERPILOT_* environment variable."""

from __future__ import annotations

import secrets
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from tierpilot.kit.groups import parse_group_mapping
from tierpilot.kit.outbound import parse_allow_hosts
from tierpilot.kit.proxies import parse_networks

_DEV_SECRET = "dev-insecure-secret-change-me"
MIN_SECRET_KEY_CHARS = 32


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TIERPILOT_", env_file=".env", extra="ignore")

    # installation: what it is and where its state lives
    environment: Literal["local", "production"] = Field(
        "local", description="local | production; production refuses default secrets, seeds no demo data and "
        "marks session cookies Secure unless told otherwise")
    data_dir: Path = Field(Path("data"), description="embedded data: SQLite file, tier directories, redis")
    tier_roots: str = Field("", description="absolute folders (comma-separated) posix tiers may live in, at or "
                            "below them; empty = the data directory's tiers/")
    database_url: str = Field("", description="SQLAlchemy URL; empty = SQLite under data_dir")
    redis_url: str = Field("", description="Redis URL for Celery and gateway token buckets; empty = embedded")
    secret_key: str = Field(_DEV_SECRET,
                            description="signs sessions and encrypts S3 secrets at rest; required in production")
    bootstrap_admin: str = Field("", description="name:password of an admin created at start when missing")
    seed_demo: bool = Field(True, description="create the demo admin (demo / demo-password), tiers, buckets and "
                            "objects on an empty database; default: off in production, on otherwise")
    frontend_dist: Path = Field(Path(__file__).resolve().parents[3] / "frontend" / "dist",
                                description="built dashboard served at /")
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "warning", description="what the API, gateway, worker and beat log to the terminal: warnings and errors by "
        "default; 'info' adds startup lines, every request and every periodic task")

    # the dashboard and API
    api_host: str = Field("127.0.0.1", description="address the dashboard and API listen on")
    api_port: int = Field(8000, description="port of the dashboard and API")
    api_header_timeout_s: float = Field(20.0, gt=0, description="an API connection that has not sent a request's "
                                        "whole header section this long after it began is closed")
    api_max_pending_connections: int = Field(256, ge=1, description="connections per API process that are still "
                                             "sending a header section; a new one closes the oldest")
    api_send_timeout_s: float = Field(60.0, gt=0, description="an API response its client does not read this long "
                                      "is cut")
    api_max_body_bytes: int = Field(1 << 20, ge=1024, description="largest request body the API reads (413 past "
                                    "it); file uploads (multipart forms) are bounded by their own routes")
    cookie_secure: bool = Field(False, description="set the session cookie's Secure flag (behind HTTPS); "
                                "default: on in production, off otherwise")
    session_max_age_s: int = Field(12 * 3600, description="dashboard session lifetime, seconds")
    trusted_proxies: str = Field("", description="addresses or CIDR networks (comma-separated) of reverse proxies "
                                 "whose X-Forwarded-For is believed: the client is its right-most address that is not "
                                 "one of them; empty = none, the header is ignored")

    # sign-in: the limits are shared by every API process (Redis, else the database: kit/counters.py)
    login_window_s: float = Field(900.0, gt=0, description="the period the login limits below count failures in, "
                                  "seconds")
    login_free_attempts: int = Field(5, ge=1, description="failed logins of one account from one address before "
                                     "each further try waits (1 s, doubled per failure)")
    login_backoff_max_s: float = Field(300.0, gt=0, description="longest wait between failed logins of one account "
                                       "from one address, seconds")
    login_address_failures: int = Field(50, ge=1, description="failed logins from one address (IPv6: one /64), "
                                        "any accounts, in a window; then that address waits for the next window")
    login_account_failures: int = Field(100, ge=1, description="failed logins of one account from all addresses in "
                                        "a window; past it an address the account never signed in from gets one try, "
                                        "then waits (longer per further multiple); addresses it did sign in from "
                                        "are not slowed")

    # institutional sign-in: an OpenID Connect provider and/or an LDAP directory (README: "Institutional sign-in")
    local_passwords: bool = Field(True, description="local passwords sign in; off: only the break-glass admins "
                                  "below do, everyone else signs in through the identity provider or LDAP")
    break_glass_admins: str = Field("", description="admins (comma-separated usernames) whose local password "
                                    "still signs in when local_passwords is off")
    oidc_discovery_url: str = Field("", description="the provider's /.well-known/openid-configuration URL; empty = "
                                    "no OpenID Connect sign-in")
    oidc_client_id: str = Field("", description="the client id registered at the provider")
    oidc_client_secret: str = Field("", description="the client's secret (token endpoint, HTTP Basic)")
    oidc_scopes: str = Field("openid profile email", description="scopes asked for (space-separated; 'openid' is "
                             "always asked)")
    oidc_provider_name: str = Field("your institution", description="shown on the login page's button "
                                    "('Sign in with …')")
    oidc_username_claim: str = Field("preferred_username", description="ID token claim that names the user here")
    oidc_groups_claim: str = Field("groups", description="ID token claim listing the user's groups")
    oidc_redirect_url: str = Field("", description="the callback URL registered at the provider; empty = "
                                   "<this API's URL>/api/auth/oidc/callback")
    oidc_timeout_s: float = Field(5.0, gt=0, description="time-out of one request to the provider, seconds")
    group_mapping: str = Field("", description="JSON object: group -> {\"project\": name, \"role\": viewer|member|"
                               "manager}; the projects it names get their members from the groups at each sign-in")
    ldap_url: str = Field("", description="ldaps://host or ldap://host (with ldap_start_tls; plain ldap:// only to "
                          "a loopback address); empty = no LDAP sign-in")
    ldap_start_tls: bool = Field(False, description="upgrade an ldap:// connection with StartTLS before binding")
    ldap_ca_file: str = Field("", description="CA certificates (PEM) the directory's certificate is checked against; "
                              "empty = the system's")
    ldap_bind_dn_template: str = Field("", description="the user's DN with {username}, e.g. "
                                       "uid={username},ou=people,dc=example,dc=org; empty = search for it")
    ldap_service_dn: str = Field("", description="DN that searches users and groups (empty = anonymous search)")
    ldap_service_password: str = Field("", description="password of ldap_service_dn")
    ldap_user_base: str = Field("", description="where users are searched")
    ldap_user_filter: str = Field("(uid={username})", description="filter finding a user; {username} is escaped")
    ldap_group_base: str = Field("", description="where groups are searched; empty = no groups")
    ldap_group_filter: str = Field("(|(member={dn})(uniqueMember={dn})(memberUid={username}))",
                                   description="filter finding a user's groups; {dn} and {username} are escaped")
    ldap_group_name_attr: str = Field("cn", description="attribute of a group entry that is its name in "
                                      "group_mapping")
    sts_min_duration_s: int = Field(900, ge=1, le=43200, description="shortest lifetime of temporary S3 keys "
                                    "(AssumeRoleWithWebIdentity's DurationSeconds; AWS: 900)")

    # the S3 gateway
    gateway_host: str = Field("127.0.0.1", description="address the S3 gateway listens on")
    gateway_port: int = Field(9000, description="port of the S3 gateway")
    public_gateway_url: str = Field("", description="URL clients use for the gateway; empty = http://host:port")
    gateway_domain: str = Field("", description="base domain of virtual-hosted-style bucket URLs (bucket.domain)")
    gateway_region: str = Field("us-east-1", description="region the gateway reports (GetBucketLocation)")
    default_tier: str = Field("hot-disk", description="tier of new buckets when none is asked for")
    gateway_threads: int = Field(128, description="worker threads per gateway process for DB and tier I/O")
    gateway_cache_s: float = Field(2.0, description="how long a gateway reuses S3 keys, buckets and tiers it read, "
                                   "and (PostgreSQL with Redis) object rows under an unchanged objects generation")
    gateway_db_readers: int = Field(4, ge=1, le=64, description="PostgreSQL connections per gateway process that "
                                    "read GET/HEAD's object rows from its event loop (in autocommit, one prepared "
                                    "statement each); beyond them a read waits for one to be free")
    gateway_max_inflight: int = Field(64, ge=1, description="S3 requests one gateway process serves at once; "
                                      "more wait for a slot")
    gateway_queue_wait_s: float = Field(2.0, ge=0, description="how long a request waits for a gateway slot before "
                                        "it is answered 503 SlowDown with Retry-After (clients retry); 0 = no wait")

    # the gateway's connections: slow or stalled clients
    gateway_header_timeout_s: float = Field(20.0, gt=0, description="a gateway connection that has not sent a "
                                            "request's whole header section this long after it began is closed")
    gateway_body_timeout_s: float = Field(20.0, gt=0, description="a request body that sends nothing this long is "
                                          "answered 400 RequestTimeout and its connection closed")
    gateway_max_pending_connections: int = Field(256, ge=1, description="connections per gateway process that are "
                                                 "still sending a header section; a new one closes the oldest")
    gateway_send_timeout_s: float = Field(20.0, gt=0, description="a gateway response its client does not read "
                                          "(the socket's buffers stay full) this long is cut and its stream ended")
    gateway_body_min_rate_bps: float = Field(1000.0, ge=0, description="a request body bringing fewer bytes/s than "
                                             "this, counted over gateway_body_rate_window_s of the time the gateway "
                                             "waits for it, is answered 400 RequestTimeout; 0 = no minimum")
    gateway_body_rate_window_s: float = Field(60.0, gt=0, description="the period the minimum body rate is counted "
                                              "over, seconds of waiting for the client")

    # remote tiers: read-ahead of sequential and strided readers (drivers/readahead.py)
    readahead_enabled: bool = Field(True, description="gateway reads remote tiers ahead of sequential and strided "
                                    "clients")
    readahead_request_mb: int = Field(64, ge=8, le=4096, description="MiB one read (or one reader's pattern) may "
                                      "hold fetched ahead")
    readahead_total_mb: int = Field(512, ge=8, le=65536, description="MiB of read-ahead one gateway process holds "
                                    "at most; past it reads go to the tier as asked")

    # restores: the beat sweep's period bounds how late a finished recall is seen (one period at most)
    restore_sweep_s: float = Field(2.0, gt=0, description="period of the restores.poll_due sweep, seconds")
    restore_concurrency: int = Field(32, ge=1, le=512, description="tier requests in flight per sweep")
    restore_chunk: int = Field(1000, ge=1, le=100_000, description="due restore items claimed at a time")
    restore_lease_s: float = Field(300.0, gt=0, description="a claimed item is retried after this (worker died)")
    restore_max_attempts: int = Field(8, ge=1, description="tier submissions before an item is failed")
    restore_max_objects: int = Field(1_000_000, ge=1, description="objects in one restore batch at most")

    # lifecycle: moves are best-effort traffic; the rate caps what all workers together copy between tiers
    lifecycle_sweep_s: float = Field(300.0, gt=0, description="period of the lifecycle.sweep beat task, seconds")
    lifecycle_move_rate_mbps: float = Field(200.0, ge=0, description="MB/s all lifecycle copies share; 0 = unbounded")
    lifecycle_batch: int = Field(10_000, ge=1, le=1_000_000, description="objects queued per bucket and sweep")
    lifecycle_lease_s: float = Field(300.0, gt=0, description="a move's worker counts as gone after this (plus the "
                                     "time its copy takes at the move rate)")
    lifecycle_delete_grace_s: float = Field(5.0, ge=0, description="a moved object's old copy stays this long, so "
                                            "reads that looked it up just before the switch still find it")
    lifecycle_max_attempts: int = Field(5, ge=1, description="tries of a failing move before it waits for a person")

    # adopted buckets
    adopt_rescan_s: float = Field(3600.0, gt=0, description="adopted buckets are listed again this long after their "
                                  "last scan: new remote keys are added, keys gone from the remote deleted")

    # fixity audits: re-reading every blob to prove it is still the bytes that were written
    fixity_bytes_per_s: int = Field(32 << 20, ge=0, description="bytes/s one fixity audit reads at most (`tierpilot "
                                    "fixity run` and beat's integrity.audit_due); 0 = unbounded")
    fixity_objects_per_s: float = Field(100.0, ge=0, description="objects/s one fixity audit checks at most; "
                                        "0 = unbounded")
    fixity_posix_days: float = Field(90.0, gt=0, description="every object on a posix tier is re-read and hashed "
                                     "once in this many days, the work spread over the period")
    fixity_cloud_days: float = Field(365.0, gt=0, description="the same for S3, Azure and GCS tiers (their "
                                     "readable classes; archived objects are left for their recall)")
    fixity_sweep_s: float = Field(3600.0, gt=0, description="period of beat's integrity.audit_due, which checks "
                                  "each tier's share of objects due since the last sweep")

    # bucket events (S3 notifications)
    events_outbox_max: int = Field(100_000, ge=1, description="events waiting in the outbox at most; once full, new "
                                   "events are dropped (counted) and admins get an in-app alert")
    events_max_attempts: int = Field(10, ge=1, description="deliveries of one event before it becomes a dead letter")
    events_drain_s: float = Field(1.0, gt=0, description="period of beat's events.deliver, which drains the outbox")
    # webhooks
    webhook_timeout_s: float = Field(5.0, gt=0, description="time-out of one webhook delivery, seconds")
    webhook_max_attempts: int = Field(8, ge=1, description="webhook deliveries before giving up")
    webhook_allow_hosts: str = Field("", description="host or host:port entries (comma-separated) webhooks may "
                                     "reach although they resolve to loopback, private or other inside addresses")

    # records kept: audit log and spend history
    audit_retention_days: int = Field(365, ge=1, le=36500, description="audit events older than this many days "
                                      "are deleted (hourly, by beat's audit.prune)")
    # the triggers read a version's last move from it: a move older than the longest minimum storage duration of
    # the shipped catalogs (365 days) no longer changes what leaving early owes
    spend_history_retention_days: int = Field(400, ge=366, le=36500, description="storage history rows (deleted, "
                                              "overwritten and moved bytes) are kept this many days, and at least "
                                              "until beat's spend.roll_up has closed their day")

    # supervisor: `tierpilot up` restarts a child that died, backoff doubling from supervisor_backoff_s per death
    supervisor_backoff_s: float = Field(1.0, gt=0, description="`tierpilot up`: wait before restarting a child that "
                                        "died, doubled per death in a row up to supervisor_backoff_max_s")
    supervisor_backoff_max_s: float = Field(30.0, gt=0, description="`tierpilot up`: longest wait before a restart")
    supervisor_restarts_per_minute: int = Field(6, ge=1, description="`tierpilot up`: restarts of one child in any "
                                                "60 s at most; more wait until the minute allows them")
    supervisor_status_file: str = Field("", description="set by `tierpilot up` for its children: the file where "
                                        "/api/health reads the supervisor's children (empty = not supervised)")

    # metrics and sampled request traces
    metrics_token: str = Field("", description="bearer token that lets non-loopback clients read /metrics on the "
                               "API and gateway ports (empty = loopback clients only)")
    tracing: bool = Field(True, description="gateway keeps full phase records of sampled requests (phase "
                          "histograms are recorded either way)")
    trace_sample_rate: float = Field(0.01, ge=0, le=1, description="share of gateway requests traced at random "
                                     "(besides the slowest of each minute and those sent with X-Tierpilot-Trace: 1)")
    trace_slowest_per_minute: int = Field(5, ge=0, le=1000, description="slowest requests per gateway process and "
                                          "minute whose traces are kept")
    trace_keep: int = Field(20_000, ge=100, le=10_000_000, description="request traces kept; older ones are pruned")
    otel_endpoint: str = Field("", description="OTLP/HTTP collector base URL (e.g. http://127.0.0.1:4318) the gateway "
                               "sends sampled request traces to; empty = OTEL_EXPORTER_OTLP_ENDPOINT, else none")

    # benchmark runs users start from the dashboard
    bench_max_run_s: float = Field(600.0, gt=0, description="longest benchmark run users may start from the "
                                   "dashboard (points x seconds per point)")
    bench_max_concurrency: int = Field(64, ge=1, le=1024, description="most concurrent requests of a benchmark point")
    bench_max_object_bytes: int = Field(64 << 20, ge=1, description="largest object size of a benchmark run")

    @field_validator("tier_roots")
    @classmethod
    def _absolute_tier_roots(cls, value: str) -> str:
        relative = [p.strip() for p in value.split(",") if p.strip() and not Path(p.strip()).is_absolute()]
        if relative:
            raise ValueError(f"tier roots must be absolute paths: {', '.join(relative)}")
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _parse_trusted_proxies(cls, value: str) -> str:
        parse_networks(value)
        return value

    @field_validator("group_mapping")
    @classmethod
    def _parse_group_mapping(cls, value: str) -> str:
        parse_group_mapping(value)  # a malformed mapping stops the process at start, not each sign-in
        return value

    @field_validator("webhook_allow_hosts")
    @classmethod
    def _parse_webhook_allow_hosts(cls, value: str) -> str:
        parse_allow_hosts(value)  # a malformed entry stops the process at start, not each delivery
        return value

    @model_validator(mode="after")
    def _production_defaults(self) -> Settings:
        """Production refuses the default secret; demo seed and plain cookies only when asked for explicitly."""
        if self.environment != "production":
            return self
        if self.secret_key == _DEV_SECRET:
            raise ValueError("TIERPILOT_SECRET_KEY must be set in production")
        if len(self.secret_key) < MIN_SECRET_KEY_CHARS:
            # the key signs sessions and encrypts S3 secrets: a short one is guessed offline from either
            raise ValueError(f"TIERPILOT_SECRET_KEY must be at least {MIN_SECRET_KEY_CHARS} characters in production "
                             "(e.g. `openssl rand -base64 32`)")
        if "seed_demo" not in self.model_fields_set:
            self.seed_demo = False
        if "cookie_secure" not in self.model_fields_set:
            self.cookie_secure = True
        return self

    @property
    def sqlalchemy_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'tierpilot.db').resolve()}"

    @property
    def tiers_dir(self) -> Path:
        return (self.data_dir / "tiers").resolve()

    @property
    def tier_root_paths(self) -> list[Path]:
        """The folders posix tiers may live in, symlinks resolved."""
        named = [Path(p.strip()) for p in self.tier_roots.split(",") if p.strip()]
        return [p.resolve() for p in named] or [self.tiers_dir]

    @property
    def gateway_url(self) -> str:
        return self.public_gateway_url or f"http://{self.gateway_host}:{self.gateway_port}"

    @property
    def celery_broker_url(self) -> str:
        return self.redis_url or f"sqla+sqlite:///{(self.data_dir / 'celery-broker.db').resolve()}"

    @property
    def celery_result_backend(self) -> str:
        return self.redis_url or f"db+sqlite:///{(self.data_dir / 'celery-results.db').resolve()}"


@lru_cache
def get_settings() -> Settings:
    return Settings()


def new_secret(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)
