"""D193: the OpenAI-compatible model clients share one TLS context, the one the SDK's transport
would have built, and the model-stack warm-up builds it in a thread beside its imports."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

from core.config import CrosstalkConfig
from core.features.models import tls
from core.features.models.providers import build_model
from tests.conftest import ConfigFactory
from tests.fresh_python import run_python


def _transport_context(client: Any) -> ssl.SSLContext:
    context = client._client._transport.ssl_context  # the SDK's aiohttp transport (D51)
    assert isinstance(context, ssl.SSLContext)
    return context


def test_every_openai_compatible_client_uses_the_one_context(make_config: ConfigFactory) -> None:
    config: CrosstalkConfig = make_config(
        {
            "models": {
                "providers": {
                    "resp": {"baseUrl": "https://example.invalid/v1", "api": "openai-responses"},
                    "olla": {"baseUrl": "http://127.0.0.1:9", "api": "ollama"},
                }
            }
        }
    )
    clients: list[Any] = []
    for ref in ("fake/m", "resp/m", "olla/m"):
        provider, _, model = ref.partition("/")
        build_model(model, config.models.providers[provider], "k", clients=clients)
    assert len(clients) == 3
    assert all(_transport_context(c) is tls.client_context() for c in clients)


def test_the_context_trusts_what_the_sdk_default_trusts() -> None:
    import httpx2

    ours, theirs = tls.client_context(), httpx2.create_ssl_context()
    assert ours.verify_mode == theirs.verify_mode == ssl.CERT_REQUIRED
    assert ours.check_hostname and theirs.check_hostname
    assert ours.get_ca_certs() == theirs.get_ca_certs()
    assert ours.minimum_version == theirs.minimum_version


def _after_warm_up(tmp_path: Path, providers: str) -> dict[str, Any]:
    config = tmp_path / "crosstalk.yaml"
    config.write_text(
        f"models:\n  providers:\n{providers}agents:\n  defaults:\n    model: p/m\n",
        encoding="utf-8",
    )
    code = (
        "import json, threading\n"
        "from core.config import load_config\n"
        "from core.features.models import tls\n"
        "from core.features.models.resolver import warm_up_imports\n"
        "before = tls.built()\n"
        "names = []\n"
        "threading.setprofile(lambda *a: names.append(threading.current_thread().name))\n"
        f"warm_up_imports(load_config({str(config)!r}))\n"
        "threading.setprofile(None)\n"
        "print(json.dumps({'before': before, 'after': tls.built(),\n"
        "                  'beside': 'crosstalk-model-tls' in names}))\n"
    )
    out = run_python(code)
    result: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    return result


def test_the_warm_up_builds_the_context_in_a_thread_of_its_own(tmp_path: Path) -> None:
    got = _after_warm_up(tmp_path, "    p:\n      baseUrl: http://127.0.0.1:9/v1\n")
    assert got == {"before": False, "after": True, "beside": True}


def test_no_context_is_built_when_no_model_talks_through_the_openai_client(
    tmp_path: Path,
) -> None:
    got = _after_warm_up(
        tmp_path, "    p:\n      baseUrl: http://127.0.0.1:9\n      api: anthropic-messages\n"
    )
    assert got == {"before": False, "after": False, "beside": False}


def test_a_context_that_cannot_be_built_fails_the_model_not_the_warm_up(tmp_path: Path) -> None:
    """A CA bundle that cannot be read failed the client's construction on the turn's path;
    it still does, and the warm-up that tried it first ends as usual."""
    config = tmp_path / "crosstalk.yaml"
    config.write_text(
        "models:\n  providers:\n    p:\n      baseUrl: http://127.0.0.1:9/v1\n"
        "agents:\n  defaults:\n    model: p/m\n",
        encoding="utf-8",
    )
    code = (
        "import json\n"
        "from core.config import load_config\n"
        "from core.features.models import tls\n"
        "from core.features.models.providers import build_model\n"
        "from core.features.models.resolver import warm_up_imports\n"
        f"config = load_config({str(config)!r})\n"
        "warm_up_imports(config)\n"
        "try:\n"
        "    build_model('m', config.models.providers['p'], 'k')\n"
        "    failed = None\n"
        "except OSError as exc:\n"
        "    failed = type(exc).__name__\n"
        "print(json.dumps([tls.built(), failed]))\n"
    )
    out = run_python(code, env={"SSL_CERT_FILE": str(tmp_path / "missing.pem")})
    assert json.loads(out.stdout.splitlines()[-1]) == [False, "FileNotFoundError"], out.stderr
    assert "Traceback" not in out.stderr
