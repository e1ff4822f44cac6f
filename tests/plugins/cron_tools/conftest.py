"""The cron tests' clocked runtime (tests/core/features/cron/helpers.py) for the cron tool's
tests."""

from tests.core.features.cron.helpers import clock, clocked_runtime  # noqa: F401
