"""The cron tests' clocked runtime (tests/core/cron/helpers.py) for the cron tool's tests."""

from tests.core.cron.helpers import clock, clocked_runtime  # noqa: F401
