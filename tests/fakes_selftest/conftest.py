"""Make the platform-fake fixtures available to the fake self-tests."""

from tests.fakes.fixtures import (
    fake_discord,
    fake_signal,
    fake_slack,
    fake_telegram,
    fake_whatsapp,
)

__all__ = ["fake_discord", "fake_signal", "fake_slack", "fake_telegram", "fake_whatsapp"]
