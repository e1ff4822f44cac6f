"""`cron` and `hooks` config sections: every mistake is refused at load with its dotted path."""

from __future__ import annotations

from typing import Any

import pytest

from core.config import ConfigError, dump_masked, validate_config


def _hook(**fields: Any) -> dict[str, Any]:
    return {"hooks": {"mappings": [{"id": "ci", "path": "ci", "token": "secret-token", **fields}]}}


def _job(**fields: Any) -> dict[str, Any]:
    return {"cron": {"jobs": [{"id": "j", "every": "1h", "message": "m", **fields}]}}


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (_job(id="J"), "cron.jobs.0.id: invalid id"),
        (_job(id="a" * 65), "cron.jobs.0.id: invalid id"),
        (_job(every="1h", tz="Europe/Paris"), "tz applies to schedule and at"),
        (_job(message="  "), "message must not be empty"),
        (_job(deliver="somewhere"), "cron.jobs.0.deliver"),
        ({"cron": {"jobs": [_job()["cron"]["jobs"][0]] * 2}}, "duplicate job id: j"),
        (_hook(token="short"), "token must be at least 8 characters"),
        (_hook(path="../etc"), "invalid path"),
        (_hook(messageTemplate="{{ body.x "), "invalid messageTemplate"),
        (_hook(sessionKey=":::"), "invalid session key"),
        ({"hooks": {"mappings": [_hook()["hooks"]["mappings"][0]] * 2}}, "duplicate hook id"),
    ],
)
def test_bad_cron_and_hook_config_is_refused(raw: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate_config(raw)
    assert needle in str(info.value)


def test_good_config_and_masked_hook_token() -> None:
    config = validate_config(
        {
            **_job(
                schedule="*/5 * * * *",
                every=None,
                tz="UTC",
                deliver={"channel": "Telegram", "to": " 42 "},
            ),
            **_hook(path="/ci/github/"),
        }
    )
    job = config.cron.jobs[0]
    assert job.deliver != "none" and job.deliver.channel == "telegram"
    assert job.deliver.to == "42"
    assert config.hooks.mappings[0].path == "ci/github"
    dumped = dump_masked(config)
    assert dumped["hooks"]["mappings"][0]["token"] == "***"
    assert "secret-token" not in str(dumped)
