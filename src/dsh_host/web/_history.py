"""History pages: one contiguous raw range per page, with views only where storage proves them.

A page ends just before ``beforeSeq`` (or at the tail) and reaches back until it holds
``maxMessages`` message events (``user/message`` and ``assistant/message``): it starts at the
earliest counted message, or at seq 0 when fewer exist; ``hasMore`` is ``start > 0``.

Which entries get a presented view (``{"for": "event", "view": ...}``):

* an *attached* (live) Session serves its live snapshot, and views only for seqs below the length
  of a stored prefix proven identical to it, as the persistence coordinator answers
  (``host.persistence.proven_prefix``: proven once, then reused per live Session object while no
  flush moved its durable length or while the proof covers the page): the stored header must
  match (absent ``delegationDepth`` counts as 0) and every stored event must equal the live
  event at its index.
  A stored log longer than the live one, any mismatch, no stored Session or a failed inspection
  means no views at all (the raw page is still served; the reason is logged). The durable length
  alone is deliberately not used here: history answers "what does storage hold", the stream
  answers "what has been committed since I watched";
* a *cold* Session is read from storage only (never resumed, no Agent published), and every
  stored event may get a view, since all of it is the stored log.

Presentation (:func:`~._present.present`, the same one the stream uses) always receives the
whole event list and the Session's ``seedLength``, so a dispatch on this page pairs with a create
on an earlier one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from dsh_hookspecs import Event, JSONValue

from ..core import LiveHost
from ..persistence import StoredSession
from ._present import present

#: The event types a page counts against ``maxMessages``.
MESSAGE_TYPES: Final = frozenset({"user/message", "assistant/message"})
DEFAULT_MAX_MESSAGES: Final = 50
MAX_MAX_MESSAGES: Final = 500


def page_range(events: Sequence[Event], before_seq: int | None, max_messages: int) -> range:
    """The seqs of one page (see the module docstring); ``before_seq`` is clipped to the log."""
    end = len(events) if before_seq is None else min(before_seq, len(events))
    count = 0
    for seq in range(end - 1, -1, -1):
        if events[seq].type in MESSAGE_TYPES:
            count += 1
            if count >= max_messages:
                return range(seq, end)
    return range(end)


async def history_page(
    host: LiveHost,
    session_id: str,
    before_seq: int | None,
    max_messages: int,
    *,
    stored: StoredSession | None = None,
) -> dict[str, JSONValue] | None:
    """One page of ``session_id``'s history, or ``None`` when no such Session exists.

    ``stored``: the cold Session, already read from storage by the caller (it is then served
    as is). Else a cold Session is read here, and whatever :meth:`LiveHost.inspect` raises (a
    storage failure) is raised. A live Session's stored-prefix proof is the coordinator's, reused
    across pages (see ``Coordinator.proven_prefix``).
    """
    live = None if stored is not None else host.sessions.get(session_id)
    events: Sequence[Event]
    if live is None:
        if stored is None:
            stored = await host.inspect(session_id)
            if stored is None:
                return None
        events = stored.events
        seed_length = stored.header.owned_from
        presented_through = len(events)
    else:
        # Inspect first, snapshot after: events appended meanwhile only make storage the
        # shorter side, which still proves its prefix.
        needed = len(live.events) if before_seq is None else min(before_seq, len(live.events))
        presented_through = await host.persistence.proven_prefix(live, needed=needed)
        events = live.events
        seed_length = live.header.owned_from
    entries: list[JSONValue] = []
    seqs = page_range(events, before_seq, max_messages)
    for seq in seqs:
        entry: dict[str, JSONValue] = {"event": events[seq].to_json()}
        if seq < presented_through:
            view = present(host.plugins, events, seq, seed_length, live)
            if view is not None:
                entry["view"] = view
        entries.append(entry)
    return {"entries": entries, "hasMore": seqs.start > 0}
