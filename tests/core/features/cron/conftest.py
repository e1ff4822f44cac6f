from tests.core.features.cron.helpers import clock, clocked_runtime  # noqa: F401
