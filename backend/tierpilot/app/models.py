"""Every table, imported in one place so Alembic and tests see the whole metadata."""

from tierpilot.adoption.models import AdoptedBucket
from tierpilot.audit.models import AuditEvent
from tierpilot.auth.models import AccessKey, ApiToken, User
from tierpilot.benchmarks.models import BenchmarkRun
from tierpilot.catalog.models import Bucket, MultipartUpload, Object, ObjectVersion, UploadPart
from tierpilot.events.models import DeadLetter, EventConfiguration, EventDelivery, EventTarget, OutboxEvent  # noqa: F401
from tierpilot.integrity.models import FixityCheck, FixityCursor
from tierpilot.kit.counters import SharedCounter
from tierpilot.kit.db import Base
from tierpilot.lifecycle.models import LifecycleConfiguration, LifecycleMeter, LifecycleMove
from tierpilot.notifications.models import Notification
from tierpilot.planner.models import PriceCatalog, Scenario
from tierpilot.projects.models import Project, ProjectMember
from tierpilot.reservations.models import CapacityPool, Reservation, ReservationSample
from tierpilot.restores.models import RestoreBatch, RestoreBatchTier, RestoreItem, RestoreSchedule
from tierpilot.sharing.models import BucketSharing, ObjectAcl
from tierpilot.spend.models import SpendDaily, SpendPlan, SpendRollup, StorageHistory, UsageMeter
from tierpilot.tiers.models import Tier
from tierpilot.traces.models import RequestTrace

__all__ = [
    "AccessKey", "AdoptedBucket", "ApiToken", "AuditEvent", "Base", "BenchmarkRun", "Bucket", "BucketSharing",
    "CapacityPool", "FixityCheck", "FixityCursor", "LifecycleConfiguration", "LifecycleMeter", "LifecycleMove",
    "MultipartUpload", "Notification", "Object", "ObjectAcl", "ObjectVersion", "PriceCatalog", "Project",
    "ProjectMember", "RequestTrace", "Reservation", "ReservationSample", "RestoreBatch", "RestoreBatchTier",
    "RestoreItem", "RestoreSchedule", "Scenario", "SharedCounter", "SpendDaily", "SpendPlan", "SpendRollup",
    "StorageHistory", "Tier", "UploadPart", "UsageMeter", "User",
]
