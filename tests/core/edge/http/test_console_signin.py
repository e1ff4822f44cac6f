"""Console sign-in (D79, D180) over real HTTP: the token for an HttpOnly session cookie, the
cookie standing for the token on the API only when the console itself asks, expiry with an
injected clock, sign-out, and never an error page; the sign-in rows on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy import select

from core.edge.http.console.pages import CSP
from core.edge.http.console.signin import CLOCK, COOKIE
from core.edge.http.server import build_app
from core.runtime import Runtime
from core.store import Store
from core.store.console import C
from tests.conftest import Client, RuntimeFactory
from tests.fakes.clock import ManualClock

CONSOLE = {"X-Crosstalk-Console": "1"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture
async def console(
    make_runtime: RuntimeFactory,
) -> AsyncIterator[tuple[Client, Runtime, ManualClock]]:
    rt = await make_runtime()
    app = build_app(rt, "test-token", [])
    clock = ManualClock()
    app[CLOCK] = clock
    async with TestClient(TestServer(app)) as c:
        yield c, rt, clock


async def sign_in(c: Client, token: str = "test-token") -> str:
    resp = await c.post(
        "/console/sign-in", data=f"token={token}", headers=FORM, allow_redirects=False
    )
    assert resp.status == 303, await resp.text()
    assert resp.headers["Location"] == "../console"
    return resp.cookies[COOKIE].value


async def test_the_sign_in_form_is_all_a_stranger_gets(
    console: tuple[Client, Runtime, ManualClock],
) -> None:
    c, _, _ = console
    for cookie in (None, "garbage", "x" * 500, "\u00e9t\u00e9"):
        c.session.cookie_jar.clear()
        headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie else {}
        resp = await c.get("/console", headers=headers)
        page = await resp.text()
        assert resp.status == 200
        assert '<form method="post" action="console/sign-in" id="signin">' in page
        assert "Traceback" not in page and "app.js" not in page
        assert resp.headers["Content-Security-Policy"] == CSP
        assert resp.headers["Cache-Control"] == "no-store"
        assert resp.headers["X-Frame-Options"] == "DENY"
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
    resp = await c.get("/console/", allow_redirects=False)
    assert (resp.status, resp.headers["Location"]) == (303, "../console")
    resp = await c.get("/console/static/../signin.py")
    assert resp.status == 404


async def test_wrong_or_malformed_sign_ins_say_why(
    console: tuple[Client, Runtime, ManualClock],
) -> None:
    c, rt, _ = console
    cases = [
        ("token=wrong", FORM, 401, "That token is not this gateway's token."),
        ("token=", FORM, 400, "Enter the gateway token."),
        ("other=1", FORM, 400, "Enter the gateway token."),
        (
            '{"token": "test-token"}',
            {"Content-Type": "application/json"},
            400,
            "Sign in with the form on this page.",
        ),
        ("token=" + "x" * 5000, FORM, 400, "That is not a gateway token (too long)."),
    ]
    for body, headers, status, problem in cases:
        resp = await c.post("/console/sign-in", data=body, headers=headers, allow_redirects=False)
        page = await resp.text()
        assert resp.status == status, (body[:20], page)
        assert f'id="problem" role="alert">{problem.replace(chr(39), "&#x27;")}</p>' in page
        assert COOKIE not in resp.cookies
        assert 'href="static/console.css"' in page  # relative to /console/sign-in
    resp = await c.post(
        "/console/sign-in",
        data="token=test-token",
        headers={**FORM, "Sec-Fetch-Site": "cross-site"},
        allow_redirects=False,
    )
    assert resp.status == 403 and COOKIE not in resp.cookies
    assert await rt.store.read(lambda conn: conn.execute(select(C)).all()) == []
    resp = await c.get("/console/sign-in", allow_redirects=False)  # a reload after a mistake
    assert (resp.status, resp.headers["Location"]) == (303, "../console")


async def test_the_right_token_gives_a_strict_http_only_cookie(
    console: tuple[Client, Runtime, ManualClock],
) -> None:
    c, rt, _ = console
    resp = await c.post(
        "/console/sign-in", data="token=test-token", headers=FORM, allow_redirects=False
    )
    morsel = resp.cookies[COOKIE]
    assert resp.status == 303 and "test-token" not in resp.headers["Location"]
    assert morsel["httponly"] and morsel["samesite"] == "Strict" and morsel["path"] == "/"
    assert morsel["max-age"] == str(12 * 3600)  # console.sessionHours defaults to 12
    assert not morsel["secure"]  # plain HTTP on loopback; HTTPS adds Secure
    rows = await rt.store.read(lambda conn: conn.execute(select(C)).all())
    keyed = hmac.new(b"test-token", morsel.value.encode(), hashlib.sha256).hexdigest()
    assert keyed in [r.digest for r in rows]  # D185: bound to the token
    assert morsel.value not in [r.digest for r in rows]
    page = await (await c.get("/console")).text()
    assert '<script type="module" src="console/static/js/app.js"></script>' in page
    assert "<script>" not in page and "style=" not in page  # nothing inline (the CSP)
    resp = await c.post(
        "/console/sign-in",
        data="token=test-token",
        allow_redirects=False,
        headers={**FORM, "X-Forwarded-Proto": "https"},
    )  # a TLS proxy in front
    assert resp.cookies[COOKIE]["secure"]


async def test_the_cookie_stands_for_the_token_only_when_the_console_asks(
    console: tuple[Client, Runtime, ManualClock],
) -> None:
    c, rt, _ = console
    await rt.services.ensure_session(rt.keys.main_session_key())
    await sign_in(c)
    assert (await c.get("/api/overview")).status == 200
    assert (await c.get("/api/pairing", headers={"Sec-Fetch-Site": "same-origin"})).status == 200
    # a change needs the console's header, which no cross-site form or script can send
    assert (await c.patch("/api/sessions/main", json={"sendPolicy": "deny"})).status == 401
    resp = await c.patch("/api/sessions/main", json={"sendPolicy": "deny"}, headers=CONSOLE)
    assert resp.status == 200 and (await resp.json())["entry"]["sendPolicy"] == "deny"
    for site in ("cross-site", "same-site"):
        resp = await c.get("/api/overview", headers={**CONSOLE, "Sec-Fetch-Site": site})
        assert resp.status == 401
    # a bearer token given is checked as always, cookie or not
    resp = await c.get("/api/overview", headers={"Authorization": "Bearer wrong"})
    assert resp.status == 401
    # only the API: not the OpenAI-compatible routes, not MCP, not the web chat's socket
    assert (await c.get("/v1/models", headers=CONSOLE)).status == 401
    resp = await c.post("/mcp", json={}, headers=CONSOLE)
    assert resp.status == 401


async def test_expired_and_signed_out_sessions_show_the_sign_in_form(
    make_runtime: RuntimeFactory,
) -> None:
    rt = await make_runtime({"console": {"sessionHours": 1}})
    app = build_app(rt, "test-token", [])
    clock = ManualClock()
    app[CLOCK] = clock
    async with TestClient(TestServer(app)) as c:
        resp = await c.post(
            "/console/sign-in", data="token=test-token", headers=FORM, allow_redirects=False
        )
        assert resp.cookies[COOKIE]["max-age"] == "3600"
        clock.advance(minutes=59)
        assert "app.js" in await (await c.get("/console")).text()
        clock.advance(minutes=1)
        resp = await c.get("/console")
        assert resp.status == 200 and 'id="signin"' in await resp.text()
        assert (await c.get("/api/overview")).status == 401

        cookie = await sign_in(c)
        assert (await c.get("/api/overview")).status == 200
        resp = await c.post("/console/sign-out", allow_redirects=False)
        assert resp.status == 303 and resp.cookies[COOKIE].value == ""
        # the old cookie, kept by someone, no longer works either
        c.session.cookie_jar.clear()
        resp = await c.get("/api/overview", headers={"Cookie": f"{COOKIE}={cookie}"})
        assert resp.status == 401
        resp = await c.get("/console", headers={"Cookie": f"{COOKIE}={cookie}"})
        assert 'id="signin"' in await resp.text()


async def test_rotating_the_token_ends_the_sign_ins_made_with_the_old_one(
    make_runtime: RuntimeFactory,
) -> None:
    """D185: THREAT_MODEL answers a leaked token with rotating it; a console sign-in made with
    the leaked token kept owner access through its cookie for `console.sessionHours` after the
    rotation. The same database behind a gateway restarted with a new token now refuses it."""
    rt = await make_runtime()
    async with TestClient(TestServer(build_app(rt, "leaked-token", []))) as old:
        cookie = await sign_in(old, "leaked-token")
        assert (await old.get("/api/overview")).status == 200
    async with TestClient(TestServer(build_app(rt, "rotated-token", []))) as new:
        jar = {"Cookie": f"{COOKIE}={cookie}"}
        assert (await new.get("/api/overview", headers=jar)).status == 401
        resp = await new.patch(
            "/api/sessions/main", json={"sendPolicy": "deny"}, headers={**jar, **CONSOLE}
        )
        assert resp.status == 401
        assert 'id="signin"' in await (await new.get("/console", headers=jar)).text()
        fresh = await sign_in(new, "rotated-token")  # a sign-in with the new token works
        resp = await new.get("/api/overview", headers={"Cookie": f"{COOKIE}={fresh}"})
        assert resp.status == 200


async def test_sign_in_rows_expire_and_end(store: Store) -> None:
    """On SQLite and PostgreSQL: valid until `expires_at`, gone on sign-out, and expired rows
    pruned when someone signs in."""
    await store.add_console_session("a" * 64, 1_000, 2_000)
    assert await store.console_session_expiry("a" * 64, 1_999) == 2_000
    assert await store.console_session_expiry("a" * 64, 2_000) is None
    assert await store.console_session_expiry("b" * 64, 1_500) is None
    await store.add_console_session("b" * 64, 3_000, 4_000)
    digests = await store.read(lambda c: [r.digest for r in c.execute(select(C))])
    assert digests == ["b" * 64]  # the expired one went with the new sign-in
    assert await store.end_console_session("b" * 64)
    assert not await store.end_console_session("b" * 64)
    assert await store.console_session_expiry("b" * 64, 3_500) is None
