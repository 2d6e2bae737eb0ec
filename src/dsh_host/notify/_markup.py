"""Session text sent to a chat service stays text: no mention pings, no markup.

A reminder's title and body come from a Session, so they are data. Chat services read some
characters as commands: ``@everyone``, ``@here``, ``@channel``, ``@room`` and ``<@123>`` ping
people; ``*bold*``, ``[text](link)``, ``# heading`` and ``> quote`` format. :func:`neutralise`
defuses them per service:

* every ``@`` gets a zero-width joiner (U+200D) after it in all the services below, so no
  mention keyword or id is recognised (the text looks the same);
* Discord and Mattermost read Markdown, which has backslash escapes: inline markup characters are
  escaped everywhere, and block markers (``#``, ``>``, ``-``, ``+``, ``1.``) at a line's start;
* Slack's mrkdwn has no escapes: a zero-width joiner goes before each ``*``, ``_``, ``~`` and
  backtick, so none opens a span, and before a ``>`` that starts a line. (apprise already turns
  ``&``, ``<`` and ``>`` into entities for Slack, which defuses ``<!channel>`` and ``<@U1>``.)
* Telegram and Matrix get the text as plain text (or HTML that apprise escapes), so only the
  mentions need defusing.

Other services get the text unchanged.
"""

from __future__ import annotations

import re

ZWJ = "\u200d"

#: apprise service names (``NotifyBase.service_name``) whose text :func:`neutralise` changes.
CHAT_SERVICES = frozenset({"Discord", "Slack", "Telegram", "Matrix", "Mattermost"})

_MARKDOWN_SERVICES = frozenset({"Discord", "Mattermost"})

# Inline Markdown (and Discord's <@id>, <#id>, <t:...>, ||spoiler||) anywhere in a line.
_MARKDOWN_INLINE = re.compile(r"([\\`*_~|\[\]()<>])")
# Block markers at the start of a line: a heading (or its "===" underline), a bullet, and an
# ordered item's number ("1."). A quote's ">" is escaped as inline markup.
_MARKDOWN_BLOCK = re.compile(r"^([ \t]*)([#+=-])", re.MULTILINE)
_ORDERED_MARK = re.compile(r"^([ \t]*\d+)([.)])", re.MULTILINE)
_SLACK_INLINE = re.compile(r"([*_~`])")
_SLACK_QUOTE = re.compile(r"^([ \t]*)(>)", re.MULTILINE)


def _markdown(text: str) -> str:
    text = _MARKDOWN_INLINE.sub(r"\\\1", text)
    text = _ORDERED_MARK.sub(r"\1\\\2", text)
    return _MARKDOWN_BLOCK.sub(r"\1\\\2", text)


def _slack(text: str) -> str:
    text = _SLACK_INLINE.sub(ZWJ + r"\1", text)
    return _SLACK_QUOTE.sub(r"\1" + ZWJ + r"\2", text)


def neutralise(text: str, service: str) -> str:
    """``text`` made inert for the apprise service named ``service`` (see the module doc)."""
    if service not in CHAT_SERVICES:
        return text
    if service in _MARKDOWN_SERVICES:
        text = _markdown(text)
    elif service == "Slack":
        text = _slack(text)
    return text.replace("@", "@" + ZWJ)
