"""Spoken test audio, made offline: Debian's espeak-ng says a sentence, a little noise is added
(as a microphone would: perfect digital silence makes a fresh pocketsphinx decoder hear words
that were not said), and ffmpeg encodes it as an OGG/Opus voice note (D78)."""

from __future__ import annotations

import array
import random
import subprocess

SENTENCE = "please call my mother tomorrow"
KEY_WORDS = ("mother", "tomorrow")


def _ffmpeg(data: bytes, *args: str) -> bytes:
    cmd = ["ffmpeg", "-hide_banner", "-loglevel", "error", *args]
    return subprocess.run(cmd, input=data, capture_output=True, check=True).stdout


def spoken_pcm(text: str = SENTENCE, *, seed: int = 7) -> bytes:
    """16 kHz mono 16-bit samples: half a second of noise, the sentence with noise, noise."""
    wav = subprocess.run(
        ["espeak-ng", "-s", "150", "--stdout", text], capture_output=True, check=True
    ).stdout
    pcm = _ffmpeg(wav, "-i", "pipe:0", "-ar", "16000", "-ac", "1", "-f", "s16le", "pipe:1")
    samples = array.array("h")
    samples.frombytes(pcm)
    rnd = random.Random(seed)
    pad = [0] * 8000
    noisy = [max(-32768, min(32767, s + rnd.randint(-200, 200))) for s in [*pad, *samples, *pad]]
    return array.array("h", noisy).tobytes()


def spoken_ogg(text: str = SENTENCE) -> bytes:
    """The sentence as an OGG/Opus voice note."""
    return _ffmpeg(
        spoken_pcm(text),
        *("-f", "s16le", "-ar", "16000", "-ac", "1", "-i", "pipe:0"),
        *("-c:a", "libopus", "-b:a", "24k", "-f", "ogg", "pipe:1"),
    )
