"""Outbound media (D78): one aggregate of the store.

Items are written before their delivery opens (a tool's media when its turn ends, a voice note
when it is synthesised) and read back by id when a chunk is sent or resent after a restart.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Connection, insert, select

from core.model.media import MediaItem
from core.store.database import Database, now_ms
from core.store.media_tables import MediaRow

M = MediaRow.__table__  # type: ignore[attr-defined]
_COLS = (M.c.id, M.c.data, M.c.mime, M.c.name, M.c.caption, M.c.voice)


def _item(row: Sequence[object]) -> MediaItem:
    media_id, data, mime, name, caption, voice = row
    return MediaItem(
        data=bytes(data),  # type: ignore[call-overload]
        mime=str(mime),
        name=str(name),
        caption=None if caption is None else str(caption),
        voice=bool(voice),
        id=str(media_id),
    )


class MediaStore(Database):
    async def save_media(
        self, items: Sequence[MediaItem], *, run_id: str | None, session_key: str | None
    ) -> list[MediaItem]:
        """Store `items` (with the run whose reply carries them); returns them with their ids."""
        now = now_ms()  # ids sort in the order the items were made
        stored = [
            item.stored(item.id or f"m{now}-{n:03d}-{uuid.uuid4().hex[:12]}")
            for n, item in enumerate(items)
        ]
        if not stored:
            return []

        def op(c: Connection) -> None:
            for item in stored:
                c.execute(
                    insert(M).values(
                        id=item.id,
                        run_id=run_id,
                        session_key=session_key,
                        name=item.name[:255],
                        mime=item.mime[:127],
                        caption=item.caption,
                        voice=item.voice,
                        size=item.size,
                        data=item.data,
                        created_at=now,
                    )
                )

        await self.write(op)
        return stored

    async def media_by_id(self, ids: Sequence[str]) -> dict[str, MediaItem]:
        if not ids:
            return {}
        q = select(*_COLS).where(M.c.id.in_(list(ids)))
        rows = await self.read(lambda c: c.execute(q).all())
        return {str(r[0]): _item(r) for r in rows}

    async def media_of_run(self, run_id: str) -> list[MediaItem]:
        """The media a run's reply carries, in the order they were made."""
        q = select(*_COLS).where(M.c.run_id == run_id).order_by(M.c.id)
        return [_item(r) for r in await self.read(lambda c: c.execute(q).all())]
