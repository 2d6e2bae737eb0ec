"""The English phrases this plugin teaches a host's keyless ``scripted`` demo model.

Offered through ``dsh_scripted_phrases``: "remind me in N seconds|minutes|hours to TEXT",
"list reminders" and "delete schedule-N" call the three tools and word their results; a
reminder follow-up (its first line is :data:`~._views.REMINDER_HEADER`) is presented to the user
as the reminder. The texts are the demo's (the README and the browser tests quote them).
"""

from __future__ import annotations

import re
from typing import Final

from dsh_hookspecs import JSONValue, hookspecs

from ._views import PROMPT_PREFIX, REMINDER_HEADER, read_json_string

__all__ = ["PHRASES"]

_REMIND: Final = re.compile(
    r"^\s*remind me in\s+(?P<n>\d{1,9})\s*(?P<unit>seconds?|secs?|s|minutes?|mins?|m|hours?|h)"
    r"\s+(?:to\s+)?(?P<text>.+?)\s*$",
    re.IGNORECASE | re.DOTALL,
)
_LIST: Final = re.compile(r"^\s*(?:list|show)\s+(?:my\s+)?reminders?\s*[.!?]?\s*$", re.IGNORECASE)
_DELETE: Final = re.compile(
    r"^\s*(?:delete|cancel|remove)\s+(?:reminder\s+)?(?P<id>\S+?)\s*[.!?]?\s*$", re.IGNORECASE
)
_REMINDER: Final = re.compile(re.escape(REMINDER_HEADER))
_UNIT_SECONDS: Final = {"s": 1, "m": 60, "h": 3600}


def _create_arguments(match: re.Match[str]) -> JSONValue:
    seconds = int(match["n"]) * _UNIT_SECONDS[match["unit"].lower()[0]]
    return {"prompt": match["text"], "after_seconds": seconds}


def _error(value: JSONValue) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("code"), str) and "deleted" not in value:
        message = value.get("message")
        return f"{value['code']}: {message}" if isinstance(message, str) else str(value["code"])
    return None


def _describe_create(match: re.Match[str], value: JSONValue) -> str:
    del match
    problem = _error(value)
    if problem or not isinstance(value, dict):
        return f"I could not create that reminder ({problem})."
    return (
        f"Done: reminder {value.get('id')} is due at {value.get('scheduledAt')} "
        f'("{value.get("prompt")}"). It is delivered in this session only.'
    )


def _describe_list(match: re.Match[str], value: JSONValue) -> str:
    del match
    problem = _error(value)
    if problem or not isinstance(value, list):
        return f"I could not list reminders ({problem})."
    if not value:
        return "You have no active reminders in this session."
    lines = [
        f'- {item.get("id")}: "{item.get("prompt")}" at {item.get("scheduledAt")} '
        f"({item.get('state')})"
        for item in value
        if isinstance(item, dict)
    ]
    return "\n".join(["Active reminders in this session:", *lines])


def _describe_delete(match: re.Match[str], value: JSONValue) -> str:
    del match
    problem = _error(value)
    if problem or not isinstance(value, dict):
        return f"I could not delete that reminder ({problem})."
    if value.get("deleted") is True:
        return f"Deleted reminder {value.get('id')}."
    return f"There is no active reminder {value.get('id')}."


def _present_reminder(match: re.Match[str], value: JSONValue) -> str:
    del value
    prompt: str | None = None
    for line in match.string.split("\n"):
        if line.startswith(PROMPT_PREFIX):
            prompt = read_json_string(line, PROMPT_PREFIX)  # the last such line counts
    if prompt is None or not _is_unicode(prompt):
        return "A reminder is due, but its text could not be read."
    return f"Reminder: {prompt}"


def _is_unicode(text: str) -> bool:
    """No lone surrogate (JSON can escape one; it is not text a Session can store)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: What the plugin offers the scripted model, in the order it tries them.
PHRASES: Final = (
    hookspecs.ScriptedPhrase(pattern=_REMINDER, reply=_present_reminder),
    hookspecs.ScriptedPhrase(
        pattern=_REMIND,
        tool="schedule_create",
        arguments=_create_arguments,
        reply=_describe_create,
        example="remind me in 10 seconds to stretch",
    ),
    hookspecs.ScriptedPhrase(
        pattern=_LIST, tool="schedule_list", reply=_describe_list, example="list reminders"
    ),
    hookspecs.ScriptedPhrase(
        pattern=_DELETE,
        tool="schedule_delete",
        arguments=lambda match: {"id": match["id"]},
        reply=_describe_delete,
        example="delete schedule-1",
    ),
)
