"""Audio conversion through Debian's ffmpeg (D78): whatever arrives → 16 kHz mono PCM for the
local recogniser; whatever a speech engine makes → OGG/Opus, the voice note format of Telegram
and WhatsApp, which every browser plays too.

ffmpeg runs as a subprocess with the audio on its stdin and stdout (no temporary files).
"""

from __future__ import annotations

import asyncio
import shutil

from core.model.errors import CrosstalkError


class AudioError(CrosstalkError):
    """ffmpeg is missing or could not read the audio."""


async def ffmpeg(data: bytes, *args: str, timeout: float = 60.0) -> bytes:
    """Run ``ffmpeg -i pipe:0 <args> pipe:1`` on `data`."""
    exe = shutil.which("ffmpeg")
    if exe is None:
        raise AudioError("ffmpeg is not installed (apt-get install ffmpeg)")
    proc = await asyncio.create_subprocess_exec(
        exe,
        "-hide_banner",
        "-loglevel",
        "error",
        "-i",
        "pipe:0",
        *args,
        "pipe:1",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise AudioError(f"ffmpeg took longer than {timeout:g}s") from None
    if proc.returncode != 0:
        raise AudioError(f"ffmpeg failed: {err.decode('utf-8', 'replace').strip()[:300]}")
    return out


async def to_pcm16k(data: bytes) -> bytes:
    """Signed 16-bit little-endian mono samples at 16 kHz (what pocketsphinx decodes)."""
    return await ffmpeg(data, "-ar", "16000", "-ac", "1", "-f", "s16le")


async def to_ogg_opus(data: bytes) -> bytes:
    """An OGG/Opus voice note (48 kHz mono, 32 kbit/s)."""
    return await ffmpeg(
        data, "-ar", "48000", "-ac", "1", "-c:a", "libopus", "-b:a", "32k", "-f", "ogg"
    )
