"""`/openapi.json` declares what the routes really do (D12): the `key` path parameter, every
status a route answers, JSON 404/405, `tool` non-empty, `messages` an array, `dryRun` accepted.
The schemathesis run in tests/e2e checks the document against the live gateway."""

from __future__ import annotations

import re

from core.config import validate_config
from core.edge.http.openapi import openapi_spec


def test_the_document_declares_parameters_statuses_and_shapes() -> None:
    spec = openapi_spec()
    paths = spec["paths"]
    session = paths["/api/sessions/{key}"]
    key = session["parameters"][0]
    assert key["name"] == "key" and key["in"] == "path" and key["required"] is True
    assert key["schema"]["maxLength"] == 256 - len("agent:main:")
    for method in ("get", "patch"):
        assert {"200", "400", "401", "404"} <= set(session[method]["responses"])
    invoke = paths["/tools/invoke"]["post"]
    assert {"200", "400", "401", "404", "405"} <= set(invoke["responses"])
    body = invoke["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["tool"]["minLength"] == 1
    assert "dryRun" in body["properties"] and "type" not in body["properties"]["dryRun"]
    chat = paths["/v1/chat/completions"]["post"]
    assert {"200", "400", "401", "403", "502"} <= set(chat["responses"])
    chat_body = chat["requestBody"]["content"]["application/json"]["schema"]
    assert chat_body["properties"]["messages"]["type"] == "array"
    for item in paths.values():
        for op in item.values():
            if isinstance(op, dict) and "security" in op:
                assert "401" in op["responses"]


def test_key_limits_follow_the_default_agent() -> None:
    config = validate_config({"agents": {"list": [{"id": "support-bot", "default": True}]}})
    schema = openapi_spec(config)["paths"]["/api/sessions/{key}"]["parameters"][0]["schema"]
    assert schema["maxLength"] == 256 - len("agent:support-bot:")
    pattern = re.compile(schema["pattern"])
    assert pattern.search("discord:group:1") and not pattern.search(": :\x1c:")


def test_the_tool_list_names_the_new_session_tools() -> None:
    """Issue 22: every tool of today's surface (D66-D70) is in the document's tool list."""
    invoke = openapi_spec()["paths"]["/tools/invoke"]["post"]
    tool = invoke["requestBody"]["content"]["application/json"]["schema"]["properties"]["tool"]
    want = {"sessions_search", "session_status", "subagents", "sessions_yield", "sessions_send"}
    assert want <= set(tool["examples"])
