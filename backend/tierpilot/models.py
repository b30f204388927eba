"""Every table, imported in one place so Alembic and tests see the whole metadata."""

from tierpilot.audit.models import AuditEvent
from tierpilot.auth.models import AccessKey, ApiToken, User
from tierpilot.catalog.models import Bucket, MultipartUpload, Object, ObjectVersion, UploadPart
from tierpilot.kit.counters import SharedCounter
from tierpilot.kit.db import Base
from tierpilot.lifecycle.models import LifecycleConfiguration, LifecycleMeter, LifecycleMove
from tierpilot.notifications.models import Notification
from tierpilot.observability.models import BenchmarkRun, RequestTrace
from tierpilot.pricing.models import PriceCatalog, Scenario
from tierpilot.reservations.models import CapacityPool, Reservation, ReservationSample
from tierpilot.restores.models import RestoreBatch, RestoreBatchTier, RestoreItem, RestoreSchedule
from tierpilot.sharing.models import BucketSharing, ObjectAcl
from tierpilot.spend.models import SpendDaily, SpendPlan, SpendRollup, StorageHistory, UsageMeter
from tierpilot.tiers.adoptions import AdoptedBucket
from tierpilot.tiers.models import Tier

__all__ = ["AccessKey", "ApiToken", "AuditEvent", "Base", "Bucket", "CapacityPool", "LifecycleConfiguration",
           "LifecycleMeter", "LifecycleMove", "MultipartUpload", "Notification", "Object", "PriceCatalog",
           "Reservation", "ReservationSample", "RestoreBatch", "RestoreBatchTier", "RestoreItem", "RestoreSchedule",
           "Scenario", "SharedCounter", "Tier", "UploadPart", "User"]
__all__ += ["ObjectVersion"]
__all__ += ["BenchmarkRun", "RequestTrace"]
__all__ += ["UsageMeter"]
__all__ += ["StorageHistory"]
__all__ += ["SpendDaily", "SpendRollup"]
__all__ += ["SpendPlan"]
__all__ += ["AdoptedBucket"]
__all__ += ["BucketSharing", "ObjectAcl"]
