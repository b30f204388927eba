from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.notifications.receiver import Receiver, running_receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as box:
        yield box
