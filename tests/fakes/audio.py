"""Loopback fake of an OpenAI-compatible audio server: `/v1/audio/transcriptions` and
`/v1/audio/speech` (D78), for the `openai` speech providers.

Transcriptions answer `{"text": transcript}` (what the test set) and record the uploaded file
and fields; speech answers a short WAV tone (what a real server's `response_format: wav` is)
and records the text and voice. `fail_next("transcriptions" | "speech", 500)` makes the next
call fail, so a chain's fallback can be shown. A bearer token is required when `api_key` is set.
"""

from __future__ import annotations

import io
import math
import struct
import wave
from typing import Any

from aiohttp import web

from tests.fakes.base import Call, EmulatorServer, json_response


def tone_wav(seconds: float = 0.6, hz: float = 440.0, rate: int = 16000) -> bytes:
    """A sine tone as a 16-bit mono WAV file."""
    frames = b"".join(
        struct.pack("<h", int(8000 * math.sin(2 * math.pi * hz * n / rate)))
        for n in range(int(seconds * rate))
    )
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(frames)
    return out.getvalue()


class FakeAudioServer(EmulatorServer):
    def __init__(self, *, transcript: str = "hello from the fake", api_key: str | None = None):
        self.transcript = transcript
        self.api_key = api_key
        self.speech_audio = tone_wav()
        super().__init__()

    @property
    def v1(self) -> str:
        return f"{self.base_url}/v1"

    def _setup_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/audio/transcriptions", self._transcriptions)
        app.router.add_post("/v1/audio/speech", self._speech)

    def _refused(self, request: web.Request, method: str) -> web.Response | None:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        failure = self._take_failure(method)
        if self.api_key is not None and token != self.api_key:
            self.record(Call(method, {}, token, request.path, status=401))
            return json_response({"error": {"message": "bad key"}}, 401)
        if failure is not None:
            self.record(Call(method, {}, token, request.path, status=failure.status))
            return json_response({"error": {"message": "injected failure"}}, failure.status)
        return None

    async def _transcriptions(self, request: web.Request) -> web.Response:
        refused = self._refused(request, "transcriptions")
        if refused is not None:
            return refused
        params: dict[str, Any] = {}
        for key, value in (await request.post()).items():
            if isinstance(value, web.FileField):
                params[key] = value.file.read()
                params["filename"] = value.filename
                params["content_type"] = value.content_type
            else:
                params[key] = value
        self.record(Call("transcriptions", params, path=request.path))
        return json_response({"text": self.transcript})

    async def _speech(self, request: web.Request) -> web.Response:
        refused = self._refused(request, "speech")
        if refused is not None:
            return refused
        body = await request.json()
        self.record(Call("speech", dict(body), path=request.path))
        return web.Response(body=self.speech_audio, content_type="audio/wav")
