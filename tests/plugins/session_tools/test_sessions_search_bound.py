"""`sessions_search`'s speed decisions keep its meaning (D115, D116) on SQLite and PostgreSQL:
only the newest 1,000 in-scope matches are ranked, the scope still applies before that bound,
and one session's search (FTS5's rowid range on SQLite) finds no other session's message stored
between its first and last.
"""

from __future__ import annotations

from core.store import TranscriptMessage
from core.store.search import CANDIDATES
from tests.conftest import RuntimeFactory
from tests.plugins.session_tools.search_helpers import MAIN, ctx_for, found, say, search

BUSY = "agent:main:dm:busy"


async def test_a_very_common_word_ranks_its_newest_matches_only(start: RuntimeFactory) -> None:
    rt = await start()
    ctx = await ctx_for(rt)
    await say(rt, MAIN, ("user", "zeta zeta zeta zeta"), at=1)  # the best bm25 match, oldest
    entry = await rt.services.ensure_session(BUSY)
    filler = [
        TranscriptMessage.text("user", f"zeta and a long filler sentence number {i}", 10 + i)
        for i in range(CANDIDATES)
    ]
    await rt.store.append_messages(entry, filler)
    top = found(await search(rt, ctx, query="zeta", limit=1))
    assert top[0][0] == BUSY  # the old best match is beyond the newest 1,000 (D115)
    # a narrower query is under the bound again and ranks every match
    assert found(await search(rt, ctx, query='"zeta zeta"')) == [("main", "zeta zeta zeta zeta")]
    # the scope applies before the bound: the busy session's matches do not push it out
    only = await search(rt, ctx, query="zeta", sessionKey=MAIN)
    assert found(only) == [("main", "zeta zeta zeta zeta")]


async def test_one_session_ignores_other_sessions_stored_in_between(
    start: RuntimeFactory,
) -> None:
    rt = await start()
    ctx = await ctx_for(rt)
    await say(rt, MAIN, ("user", "omega first"))
    for i in range(5):
        await say(rt, f"agent:main:dm:o{i}", ("user", f"omega elsewhere {i}"))
    await say(rt, MAIN, ("assistant", "omega last"))
    one = await search(rt, ctx, query="omega", sessionKey=MAIN)
    assert sorted(found(one)) == [("main", "omega first"), ("main", "omega last")]
    assert (await search(rt, ctx, query="omega", sessionKey="agent:main:dm:o3"))["count"] == 1
    assert (await search(rt, ctx, query="omega"))["count"] == 7
