"""Make the platform-fake fixtures available to the fake self-tests."""

from tests.fakes.fixtures import fake_discord, fake_slack, fake_telegram

__all__ = ["fake_discord", "fake_slack", "fake_telegram"]
