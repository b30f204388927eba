"""The one place where the edges plug domains into the layers below them.

Lower layers never import the domains above them; where they need one (the data path needs tier rows,
the gateway serves S3 operations other domains define) they expose a hook, and this module, imported
only by the edges (API, gateway, worker, CLI), fills it:

- ``install()``: the tier directory of the data path (``drivers.registry.tiers``) reads tiers through
  the tiers domain's repository. Every process calls it at start.
- ``install()`` also tells auth what blocks deleting a user (``auth.accounts.install_ownership_check``):
  the buckets and uploads the catalog holds for them.
- ``install()`` also lets the catalog's API serve buckets shared with the caller as the sharing domain decides
  (``catalog.service.install_shared_access``: the gateway's decision for the same S3 action, and whether the
  bucket's sharing names the caller at all: the API then shows it to them, else answers as for a missing one).
- ``install()`` also lets the tiers domain check a tier's price reference against the planner's price catalogs
  (``tiers.service.install_catalogs``).
- ``install()`` also lets the catalog place new buckets in their owner's default project and move a project's
  quota counter with every change of a bucket's totals (``catalog.projects.install``).
- ``install()`` also lets the catalog record bucket events in the transaction of each change
  (``catalog.events.install``: the events domain's outbox listener, which knows the buckets with configurations).
- ``install()`` also lets auth check passwords of names without a local one against the LDAP directory
  (``auth.service.install_password_backend``: the identity domain maps the directory's groups to projects).
- ``GATEWAY_EXTENSIONS``: the domains' gateway modules. Importing one registers its S3 operations
  (``gateway.ext.route``); the gateway calls their optional ``startup``/``shutdown``/``health`` hooks
  (reservations installs its flow policy in ``startup``) and ``finished(req, op, status)`` after each
  request (spend counts the requests that moved no object data).
"""

from __future__ import annotations

from types import ModuleType

from tierpilot.auth import accounts
from tierpilot.auth import service as auth_service
from tierpilot.catalog import events as catalog_events
from tierpilot.catalog import projects as catalog_projects
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.drivers import registry
from tierpilot.events import outbox as events_outbox
from tierpilot.events import s3api as events_s3api
from tierpilot.identity import ldap as identity_ldap
from tierpilot.identity import sts as identity_sts
from tierpilot.lifecycle import s3api as lifecycle_s3api
from tierpilot.planner import service as planner_service
from tierpilot.projects import gateway as projects_gateway
from tierpilot.projects import service as projects_service
from tierpilot.reservations import gateway as reservations_gateway
from tierpilot.restores import s3api as restores_s3api
from tierpilot.sharing import s3api as sharing_s3api
from tierpilot.sharing import visibility as sharing_visibility
from tierpilot.spend import gateway as spend_gateway
from tierpilot.tiers import repository as tiers_repository
from tierpilot.tiers import service as tiers_service

# spend after reservations: it meters the flows of the policy reservations installs; projects' quota check
# wraps them all, so a refused write opens no reservation flow
GATEWAY_EXTENSIONS: tuple[ModuleType, ...] = (lifecycle_s3api, restores_s3api, reservations_gateway, spend_gateway,
                                              sharing_s3api, projects_gateway, events_s3api, identity_sts)


def install() -> None:
    """Fill the lower layers' hooks for this process (idempotent)."""
    registry.tiers.install(tiers_repository.load_specs)
    accounts.install_ownership_check(catalog_repository.owned_by)
    auth_service.install_password_backend(identity_ldap.sign_in)
    tiers_service.install_catalogs(planner_service.get_catalog)
    catalog_service.install_shared_access(sharing_visibility.allows, sharing_visibility.names,
                                         sharing_visibility.sharing_buckets)
    catalog_projects.install(projects_service.Directory())
    catalog_events.install(events_outbox.directory)
