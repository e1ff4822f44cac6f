"""The user turn a model sees: text, plus images where the model reads them.

Attachments arrive as stored content parts (core.model.attachments). An image goes to the model as
an image part when its model entry says ``input: ["text", "image"]`` and the file is within
``agents.defaults.media.maxImageBytes``; the bytes are fetched from the platform by the adapter
that received it. Everything else — voice, audio, video, files, oversized or unfetchable
images, models without image input — reaches the model as a placeholder naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.model.attachments import Attachment

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.engine.runs.contract import RunRequest
    from core.features.agent.env import TurnEnv


def accepts_images(config: CrosstalkConfig, ref: str) -> bool:
    provider_id, _, model_id = ref.partition("/")
    provider = config.models.providers.get(provider_id)
    if provider is None:
        return False
    entry = next((m for m in provider.models if m.id == model_id), None)
    return entry is not None and "image" in entry.input


async def user_prompt(rt: TurnEnv, request: RunRequest, ref: str) -> str | list[Any]:
    parts = request.meta.get("attachments") or []
    if not parts:
        return request.message
    from pydantic_ai.messages import BinaryContent

    lines = [request.message] if request.message.strip() else []
    images: list[Any] = []
    limit = rt.config.agents.defaults.media.max_image_bytes
    wants_images = accepts_images(rt.config, ref)
    for attachment in (Attachment.from_part(p) for p in parts):
        data = await _image_bytes(rt, request, attachment, limit) if wants_images else None
        if data is None:
            lines.append(attachment.placeholder(request.message))
        else:
            images.append(BinaryContent(data=data, media_type=attachment.mime or "image/jpeg"))
    text = "\n".join(lines)
    if not images:
        return text
    return [text, *images] if text else images


async def _image_bytes(
    rt: TurnEnv, request: RunRequest, attachment: Attachment, limit: int
) -> bytes | None:
    origin = request.context.origin
    if attachment.kind != "image" or origin is None or not origin.channel:
        return None
    return await rt.channels.fetch(origin.channel, origin.account_id, attachment, limit)
