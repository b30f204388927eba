"""The tier admin tests reuse the driver tests' moto server."""

from tests.drivers.conftest import moto_url, s3_driver  # noqa: F401
