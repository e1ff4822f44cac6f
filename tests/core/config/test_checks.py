"""`crosstalk config check` and the gateway's start refuse, as one `path: reason` line and a
non-zero exit, what would otherwise fail later: a model naming no configured provider, an
unsupported database URL scheme, a recursive YAML alias (D12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.edge.cli.main import main

FAKE = "models:\n  providers:\n    fake:\n      baseUrl: http://127.0.0.1:9/v1\n"
CASES = [
    (
        FAKE + "agents:\n  defaults:\n    model: nope/some-model\n",
        "agents.defaults.model: unknown provider 'nope' in 'nope/some-model'",
    ),
    (
        FAKE + "agents:\n  list:\n    - id: main\n      model:\n        primary: fake/x\n"
        "        fallbacks: [ghost/y]\n",
        "agents.list.0.model.fallbacks.0: unknown provider 'ghost'",
    ),
    (
        "agents:\n  defaults:\n    model: local/llama3.2\n",
        "agents.defaults.model: unknown provider 'local' in 'local/llama3.2' "
        "(models.providers has: none)",
    ),
    (
        FAKE.replace("baseUrl", "models: [{id: a}]\n      baseUrl")
        + "agents:\n  defaults:\n    subagents:\n      model: fake/b\n",
        "agents.defaults.subagents.model: provider 'fake' lists no model 'b'",
    ),
    (
        "gateway:\n  database:\n    url: mysql://root@localhost/crosstalk\n",
        "gateway.database.url: unsupported database URL scheme 'mysql'",
    ),
    ("a: &loop\n  b: *loop\n", "a.b: recursive YAML alias"),
    ("agents: &x\n  list: [*x]\n", "agents.list.0: recursive YAML alias"),
]


@pytest.mark.parametrize("command", [["config", "check"], ["gateway"]])
@pytest.mark.parametrize(("text", "line"), CASES)
def test_bad_configs_are_one_line_and_a_non_zero_exit(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
    text: str,
    line: str,
) -> None:
    monkeypatch.setenv("CROSSTALK_STATE_DIR", str(tmp_path / "state"))
    path = tmp_path / "crosstalk.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main(["--config", str(path), *command])
    assert exited.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "crosstalk: invalid configuration"
    assert len(err) == 2 and err[1].startswith(line), err
    assert not (tmp_path / "state").exists()  # refused before anything started


def test_the_database_url_from_the_environment_is_checked_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROSSTALK_DATABASE_URL", "mysql://x@y/z")
    path = tmp_path / "crosstalk.yaml"
    path.write_text(FAKE, encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["--config", str(path), "config", "check"])
    assert capsys.readouterr().err.splitlines()[1] == (
        "gateway.database.url: unsupported database URL scheme 'mysql' (use sqlite:///PATH or "
        "postgresql://USER@HOST/DB) (from environment variable CROSSTALK_DATABASE_URL)"
    )


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///tmp/x.db",
        "sqlite+aiosqlite:///x.db",
        "postgresql://u@127.0.0.1/db",
        "postgres://u@h/db",
        "postgresql+asyncpg://u@h/db",
    ],
)
def test_supported_database_urls_and_known_models_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    path = tmp_path / "crosstalk.yaml"
    path.write_text(
        FAKE + f"gateway:\n  database:\n    url: {url}\n"
        "agents:\n  defaults:\n    model: fake/anything\n",
        encoding="utf-8",
    )
    assert main(["--config", str(path), "config", "check"]) == 0
    assert '"model": "fake/anything"' in capsys.readouterr().out
