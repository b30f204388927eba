"""The cloud tier tests run Azurite and fake-gcs-server for the session (tests/emulators.py), and the driver
tests' moto server for the s3 examples; the drivers' fixtures (a fresh container or bucket each) come from there too."""

from tests.drivers.conftest import azure_driver, gcs_driver, moto_url  # noqa: F401
from tests.emulators import azurite, fake_gcs  # noqa: F401
