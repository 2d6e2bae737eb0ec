"""The ``openai`` model adapter: any OpenAI-compatible chat-completions server (OpenAI, DeepSeek,
vLLM, Ollama, llama.cpp's server, LiteLLM) through the official ``openai`` SDK, streaming.

``dsh serve --model openai --model-name ID [--base-url URL]``. The key is read from the
environment the host was given (``DSH_MODEL_API_KEY``, else ``OPENAI_API_KEY``), never from a
flag; a keyless local server (Ollama, llama.cpp) needs none, and then a fixed placeholder is sent
as the bearer token, which such servers ignore. Without ``--base-url`` the SDK's default applies.

Each turn makes at most ``max_steps`` model requests. A request is rebuilt from the transcript
(:mod:`._openai_messages`) with the turn's time context in the system message and the Agent's
tools as functions. The reply streams: each text piece goes to :meth:`Turn.stream` at once; once
the step's stream is complete its text is said (durable) and its tool calls run one after
another through the Agent's pipeline. A step without tool calls ends the turn.

Bounds. Each network read waits at most ``timeout_seconds``; a whole step (its request, the
retries and their waits, and the whole streamed reply) at most ``step_timeout_seconds``, past
which the turn ends with a plain error and nothing of the step is said. A reply's text is kept up
to ``max_reply_chars``: once it passes that the stream is closed, the kept text is said with a
note that it was cut, none of the step's tool calls run and the turn ends; a tool call whose
arguments (or the reply's text and calls together) pass ``max_reply_chars`` closes the stream
the same way, with a note naming the tool that was not run. Nothing past the limit is kept.

Failures end the turn with a plain error (``turn/end``, shown in the browser): 429 and 5xx are
retried (at most :data:`TRIES` requests, exponential back-off honouring ``Retry-After``, each
wait capped); any other status, a time-out or a broken stream ends the turn at once, and a broken
stream leaves nothing of its reply in the log. :meth:`OpenAIModel.redact` takes the key (whole,
and any run of at least :data:`FRAGMENT_CHARS` of its characters, as a cut made elsewhere leaves
it) and any ``Authorization`` value out of every error text and log line this module produces,
before any quote is shortened; request bodies are never logged.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
import openai
import structlog
from openai.types.chat import ChatCompletionChunk

from dsh_hookspecs import JSONValue, ModelSettings, Turn

from .. import _json
from ._openai_messages import SYSTEM_PROMPT, chat_messages, function_tools

__all__ = ["FRAGMENT_CHARS", "NO_KEY", "TRIES", "ModelServerError", "OpenAIModel", "retry_wait"]

log = structlog.get_logger(__name__)

#: The bearer token sent when the environment holds no key (keyless local servers ignore it).
NO_KEY = "dsh-no-key"
#: Requests made for one model step at most (the first and its retries on 429 and 5xx).
TRIES = 4
#: The first back-off (seconds) without ``Retry-After``; it doubles per retry up to the cap.
FIRST_BACKOFF = 0.5
#: The longest wait before a retry, whatever ``Retry-After`` asks.
MAX_WAIT = 20.0
#: The longest slice of a refusal's text quoted in an error (cut after redaction).
QUOTE_CHARS = 300
#: The shortest run of a key's characters redacted wherever it appears (what is left of a key
#: that a server, the SDK or a quote cut); a shorter key is redacted only where it is whole.
FRAGMENT_CHARS = 8

#: An ``Authorization`` value (header, dict repr or ``key=value``) or a bearer token, to redact.
_AUTHORIZATION = re.compile(
    r"""(?i)\b(authorization['"]?\s*[:=]\s*['"]?(?:bearer\s+)?|bearer\s+)[^\s'",]+"""
)


class ModelServerError(RuntimeError):
    """The model server could not answer a step; the text is plain and carries no secret."""


def retry_wait(headers: Mapping[str, str], attempt: int, now: float) -> float:
    """Seconds to wait before retry ``attempt`` (1 for the first): the server's
    ``retry-after-ms`` or ``Retry-After`` (seconds, or an HTTP date against the epoch second
    ``now``) when it gives one, else exponential back-off; never more than :data:`MAX_WAIT`."""
    asked: float | None = None
    millis = headers.get("retry-after-ms")
    value = headers.get("retry-after")
    if millis is not None:
        try:
            asked = float(millis) / 1000
        except ValueError:
            asked = None
    if asked is None and value is not None:
        try:
            asked = float(value)
        except ValueError:
            try:
                asked = email.utils.parsedate_to_datetime(value).timestamp() - now
            except (TypeError, ValueError):
                asked = None
    if asked is None or math.isnan(asked):  # absent or unreadable: back off on our own
        asked = FIRST_BACKOFF * 2 ** (attempt - 1)
    return min(max(asked, 0.0), MAX_WAIT)


@dataclass(slots=True)
class _Call:
    """One tool call of a streamed reply, put together from its pieces."""

    id: str = ""
    name: str = ""
    pieces: list[str] = field(default_factory=list)
    #: Characters held: the name and the argument pieces.
    size: int = 0

    def add(self, id_: str | None, name: str | None, arguments: str | None) -> None:
        if id_ and not self.id:
            self.id = id_
        if name and name != self.name:
            self.name += name
            self.size += len(name)
        if arguments:
            self.pieces.append(arguments)
            self.size += len(arguments)

    def arguments(self) -> JSONValue:
        """The parsed arguments; text that is not JSON is passed on as it came, so the pipeline
        records it and answers ``invalid_arguments`` the model can read."""
        raw = "".join(self.pieces)
        if not raw.strip():
            return {}
        try:
            return _json.loads(raw)
        except _json.JSONError:
            return raw


@dataclass(slots=True)
class _Step:
    """What one model reply said and asked for; ``note`` says why it was cut (then no call
    runs and the turn ends)."""

    text: str
    calls: list[_Call]
    note: str | None = None


class OpenAIModel:
    """The ``openai`` adapter (see the module docstring)."""

    name = "openai"

    def __init__(self, settings: ModelSettings) -> None:
        if not settings.model_name:
            raise ValueError("--model-name is required for the openai adapter")
        environ = settings.environ
        key = environ.get("DSH_MODEL_API_KEY") or environ.get("OPENAI_API_KEY") or ""
        self._settings = settings
        self._model_name = settings.model_name
        secrets = {key.strip(), key} if key.strip() else set()
        # What marks a secret in a text: its runs of FRAGMENT_CHARS (they cover it whole), or
        # the whole of a shorter one; a lookahead, so that overlapping runs are all found.
        marks = {
            secret[start : start + FRAGMENT_CHARS]
            for secret in secrets
            for start in range(max(len(secret) - FRAGMENT_CHARS, 0) + 1)
        }
        alternatives = "|".join(map(re.escape, sorted(marks, key=len, reverse=True)))
        self._secret = re.compile(f"(?=({alternatives}))") if marks else None
        timeout = settings.timeout_seconds
        self._client = openai.AsyncOpenAI(
            api_key=key or NO_KEY,
            base_url=settings.base_url,
            timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
            max_retries=0,  # retries are this module's own (see _request)
        )

    async def aclose(self) -> None:
        """Close the SDK client's connections (the host calls it when it closes)."""
        await self._client.close()

    def redact(self, text: str) -> str:
        """``text`` without the key, any run of at least :data:`FRAGMENT_CHARS` characters that
        also occurs inside it (a key shorter than that: only where it is whole), or any
        ``Authorization`` value; each such stretch becomes ``[redacted]``. Cut a text only after
        this (a cut can split ``[redacted]``, never leave a fragment of the key)."""
        if self._secret is not None:
            kept: list[str] = []
            start = end = 0  # the stretch being hidden so far: text[start:end]
            for match in self._secret.finditer(text):
                at = match.start()
                if at > end:  # apart from the stretch: close it, keep what lies between
                    kept += ["[redacted]"] if end > start else []
                    kept.append(text[end:at])
                    start = at
                end = max(end, at + len(match.group(1)))
            kept += ["[redacted]"] if end > start else []
            kept.append(text[end:])
            text = "".join(kept)
        return _AUTHORIZATION.sub(r"\1[redacted]", text)

    async def run_turn(self, turn: Turn) -> None:
        steps = self._settings.max_steps
        for _ in range(steps):
            step = await self._step(turn)
            if step.note is not None:  # cut short: say what was kept, run nothing
                turn.say(f"{step.text}\n\n{step.note}" if step.text else step.note)
                return
            if step.text:
                turn.say(step.text)
            for call in step.calls:
                await turn.call_tool(call.name, call.arguments(), call_id=call.id or None)
            if not step.calls:
                return
        turn.say(f"I stopped after {steps} model steps without finishing; ask me to continue.")

    async def _step(self, turn: Turn) -> _Step:
        """One model step under the step deadline: the request (with its retries and their
        waits) and the whole streamed reply."""
        seconds = self._settings.step_timeout_seconds
        try:
            async with asyncio.timeout(seconds):
                system = f"{SYSTEM_PROMPT}\n{turn.time.describe()}"
                messages = chat_messages(system, turn.transcript(), self._settings.context_chars)
                tools = function_tools(turn.tools())
                stream = await self._request(messages, tools)
                try:
                    return await self._read(turn, stream)
                finally:
                    await stream.close()
        except TimeoutError:  # the deadline's own: httpx and the SDK raise their own time-outs
            raise ModelServerError(
                f"the model server did not finish its reply within {seconds:g} s "
                "(step deadline); nothing of it was kept"
            ) from None
        except ModelServerError:
            raise
        except Exception as exc:  # anything else the SDK raised: its text is redacted too
            raise ModelServerError(self.redact(str(exc) or type(exc).__name__)) from None

    async def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> openai.AsyncStream[ChatCompletionChunk]:
        """Open the step's stream, retrying 429 and 5xx; any other failure ends the turn."""
        attempt = 1
        while True:
            try:
                return await self._client.chat.completions.create(
                    model=self._model_name,
                    messages=cast(Any, messages),
                    tools=cast(Any, tools) if tools else openai.omit,
                    stream=True,
                )
            except openai.APIStatusError as exc:
                status = exc.status_code
                retryable = status == 429 or status >= 500
                if not retryable or attempt >= TRIES:
                    raise self._refusal(exc, attempt) from None
                wait = retry_wait(exc.response.headers, attempt, time.time())
                log.info("model.retry", status=status, attempt=attempt, wait_seconds=wait)
                await asyncio.sleep(wait)
                attempt += 1
            except openai.APITimeoutError:
                raise self._timed_out("did not answer") from None
            except openai.APIConnectionError as exc:
                cause = exc.__cause__ or exc
                raise ModelServerError(
                    self.redact(f"could not reach the model server: {cause}")
                ) from None

    async def _read(self, turn: Turn, stream: openai.AsyncStream[ChatCompletionChunk]) -> _Step:
        """One streamed reply: text pieces stream at once; a reply broken off raises. A text or
        a call's arguments passing ``max_reply_chars`` stops the reading there (the caller
        closes the stream) and returns the kept text with a note."""
        limit = self._settings.max_reply_chars
        parts: list[str] = []
        size = 0
        calls: dict[int, _Call] = {}
        finished = False
        try:
            async for chunk in stream:
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    delta = choice.delta
                    if delta.content:
                        kept = delta.content[: limit - size]
                        if kept:
                            turn.stream(kept)
                            parts.append(kept)
                            size += len(kept)
                        if len(kept) < len(delta.content):
                            note = f"[This reply was cut at {limit:,} characters.]"
                            return _Step(text="".join(parts), calls=[], note=note)
                    for piece in delta.tool_calls or ():
                        function = piece.function
                        call = calls.setdefault(piece.index, _Call())
                        call.add(
                            piece.id,
                            function.name if function else None,
                            function.arguments if function else None,
                        )
                        held = size + sum(each.size for each in calls.values())
                        if held > limit:  # one reply holds at most the limit, calls included
                            what = "its arguments" if call.size > limit else "the reply"
                            note = (
                                f"The model's call of {call.name or 'a tool'} was not run: "
                                f"{what} passed {limit:,} characters."
                            )
                            return _Step(text="".join(parts), calls=[], note=note)
                    finished = finished or choice.finish_reason is not None
        except httpx.TimeoutException:
            raise self._timed_out("stopped sending") from None
        except (httpx.HTTPError, openai.APIError) as exc:
            raise ModelServerError(
                self.redact(f"the model server's reply broke off ({exc}); nothing of it was kept")
            ) from None
        if not finished:
            raise ModelServerError(
                "the model server's reply ended before it was complete; nothing of it was kept"
            )
        return _Step(text="".join(parts), calls=[calls[index] for index in sorted(calls)])

    def _timed_out(self, what: str) -> ModelServerError:
        seconds = self._settings.timeout_seconds
        return ModelServerError(f"the model server {what} within {seconds:g} s (time-out)")

    def _refusal(self, exc: openai.APIStatusError, tries: int) -> ModelServerError:
        status = exc.status_code
        body = exc.body
        message = body.get("message") if isinstance(body, Mapping) else None
        if not isinstance(message, str) or not message:
            # The SDK reads an error response's body before it raises.
            message = exc.response.text or exc.message
        quoted = self.redact(" ".join(message.split()))[:QUOTE_CHARS]  # redacted before the cut
        if status == 429 or status >= 500:
            return ModelServerError(
                f"the model server failed the request ({status}) {tries} times: {quoted}"
            )
        return ModelServerError(f"the model server refused the request ({status}): {quoted}")
