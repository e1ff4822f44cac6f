"""One error root: every deliberate error is a CrosstalkError, importable where it lives."""

from __future__ import annotations

import pytest

from core.config.loader import ConfigError
from core.edge.http.edge import HttpError
from core.features.cron.service import CronError
from core.features.extension.discovery import PluginError
from core.features.models.providers import MissingExtra
from core.features.models.resolver import ModelNotAvailable
from core.model.errors import CrosstalkError, LifecycleError
from core.store.inbound import DuplicateInbound
from core.store.store import StoreError


@pytest.mark.parametrize(
    "error",
    [
        ConfigError,
        StoreError,
        DuplicateInbound,
        ModelNotAvailable,
        MissingExtra,
        HttpError,
        CronError,
        PluginError,
        LifecycleError,
    ],
)
def test_deliberate_errors_share_the_root(error: type[Exception]) -> None:
    assert issubclass(error, CrosstalkError)


def test_the_cli_catches_a_config_error_through_the_root() -> None:
    with pytest.raises(CrosstalkError, match=r"gateway\.port: bad"):
        raise ConfigError(["gateway.port: bad"])
