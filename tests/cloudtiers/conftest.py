"""The cloud tier tests run Azurite and fake-gcs-server for the session (tests/emulators.py)."""

from tests.emulators import azurite, fake_gcs  # noqa: F401
