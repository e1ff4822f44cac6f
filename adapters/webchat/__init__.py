"""The built-in web chat channel."""

from adapters.webchat.adapter import WebchatAdapter

__all__ = ["WebchatAdapter"]
