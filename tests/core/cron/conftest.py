from tests.core.cron.helpers import clock, clocked_runtime  # noqa: F401
