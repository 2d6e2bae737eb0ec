"""JSON webhooks on the pooled client: apprise's request byte for byte, fewer connections, the
same outcomes, and never toward a local or private address unless allowed."""

from __future__ import annotations

import asyncio

import pytest

from dsh_host.notify import Message, parse_channel, send
from dsh_host.notify._guard import AddressPolicy
from dsh_host.notify._webhook import Webhooks, prepare

from .receivers import WebhookReceiver, free_port

AT_MS = 1_767_322_800_123
ALLOW = AddressPolicy.of(["127.0.0.1"])


def message(key: str = "s1/schedule/r1/n-1", **changes: object) -> Message:
    fields: dict[str, object] = {
        "title": "Tea is ready",
        "body": 'Steep for 3 minutes "now" — 茶',
        "key": key,
        "at_ms": AT_MS,
        "link": "http://127.0.0.1:8000/?session=s1",
        "data": {"session": "s1", "reminder": "r1"},
    }
    fields.update(changes)
    return Message(**fields)  # type: ignore[arg-type]


#: What a receiver can tell apart (the transport's own headers, such as Accept-Encoding or
#: Connection, are the client library's and are not compared).
COMPARED = ("Content-Type", "User-Agent", "Authorization", "X-Idempotency-Key", "X-Team", "Host")


def seen(request):
    return (
        request.method,
        request.path,
        {name: request.header(name) for name in COMPARED},
        request.body,
    )


@pytest.mark.parametrize(
    "tail",
    [
        "/hook",
        "/hook/deep/path",
        "/hook?+X-Team=blue&-q=a%20b",
        "/hook?:extra=1&:title=subject",
        "/hook?:message=&method=PUT",
    ],
)
@pytest.mark.parametrize("auth", ["", "user:Pa55@"])
async def test_the_pooled_request_is_the_one_apprise_sends(tail: str, auth: str) -> None:
    with WebhookReceiver() as hook:
        channel = parse_channel(f"json://{auth}127.0.0.1:{hook.port}{tail}")
        prepared = prepare(channel)
        assert prepared is not None
        assert (await asyncio.to_thread(send, channel, message(), timeout=5)).status == "delivered"
        webhooks = Webhooks(ALLOW)
        try:
            outcome = await webhooks.send(prepared, channel, message(), timeout=5)
        finally:
            await webhooks.aclose()
        assert outcome.status == "delivered"
        theirs, ours = hook.taken()
    assert seen(ours) == seen(theirs)


async def test_many_messages_share_a_few_connections_where_apprise_opens_one_each() -> None:
    with WebhookReceiver() as hook:
        channel = parse_channel(hook.url())
        prepared = prepare(channel)
        assert prepared is not None
        webhooks = Webhooks(ALLOW)
        try:
            for i in range(20):
                outcome = await webhooks.send(prepared, channel, message(f"k{i}"), timeout=5)
                assert outcome.status == "delivered"
        finally:
            await webhooks.aclose()
        ours = hook.taken()
        for i in range(3):
            await asyncio.to_thread(send, channel, message(f"a{i}"), timeout=5)
        theirs = hook.taken()[20:]
    assert [r.header("X-Idempotency-Key") for r in ours] == [f"k{i}" for i in range(20)]
    assert len({r.peer for r in ours}) == 1
    assert len({r.peer for r in theirs}) == 3


@pytest.mark.parametrize(
    ("status", "expected"),
    [(503, "retry"), (429, "retry"), (404, "failed"), (401, "failed"), (302, "failed")],
)
async def test_a_receivers_answer_reads_as_it_does_through_apprise(status, expected) -> None:
    with WebhookReceiver() as hook:
        hook.answer(status, Location="http://169.254.169.254/latest/meta-data")
        channel = parse_channel(hook.url())
        prepared = prepare(channel)
        assert prepared is not None
        webhooks = Webhooks(ALLOW)
        try:
            outcome = await webhooks.send(prepared, channel, message(), timeout=5)
        finally:
            await webhooks.aclose()
        assert len(hook.taken()) == 1  # a redirect is not followed
    assert outcome.status == expected
    assert outcome.reason is not None
    assert str(status) in outcome.reason


async def test_nothing_listening_is_retry_and_a_silent_receiver_is_unknown() -> None:
    channel = parse_channel(f"json://127.0.0.1:{free_port()}/hook")
    prepared = prepare(channel)
    assert prepared is not None
    webhooks = Webhooks(ALLOW)
    try:
        refused = await webhooks.send(prepared, channel, message(), timeout=2)
        with WebhookReceiver() as hook:
            hook.hang()
            channel = parse_channel(hook.url())
            hung = prepare(channel)
            assert hung is not None
            silent = await webhooks.send(hung, channel, message(), timeout=0.3)
    finally:
        await webhooks.aclose()
    assert (refused.status, refused.reason) == ("retry", "could not connect")
    assert (silent.status, silent.reason) == ("unknown", "timed out after the request was sent")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
async def test_a_local_receiver_is_refused_unless_the_owner_allows_it(host: str) -> None:
    with WebhookReceiver() as hook:
        channel = parse_channel(f"json://{host}:{hook.port}/hook")
        prepared = prepare(channel)
        assert prepared is not None
        webhooks = Webhooks()
        try:
            outcome = await webhooks.send(prepared, channel, message(), timeout=2)
            with pytest.raises(ValueError, match="timeout above zero"):
                await webhooks.send(prepared, channel, message(), timeout=0)
        finally:
            await webhooks.aclose()
        assert hook.taken() == []
    assert outcome.status == "failed"
    assert (
        outcome.reason == "not sent: the address is loopback (allow it with --notify-allow-private)"
    )
    assert str(hook.port) not in outcome.reason


async def test_a_name_that_does_not_resolve_is_retry() -> None:
    channel = parse_channel("json://no-such-host.invalid/hook")
    prepared = prepare(channel)
    assert prepared is not None
    webhooks = Webhooks()
    try:
        outcome = await webhooks.send(prepared, channel, message(), timeout=2)
    finally:
        await webhooks.aclose()
    assert (outcome.status, outcome.reason) == ("retry", "could not connect")


@pytest.mark.parametrize(
    "url",
    [
        "form://127.0.0.1:9/hook",
        "xml://127.0.0.1:9/hook",
        "ntfy://127.0.0.1:9/topic",
        "json://127.0.0.1:9/hook?format=markdown",
        "json://user@127.0.0.1:9/hook",
    ],
)
def test_what_the_pool_does_not_shape_like_apprise_stays_with_apprise(url: str) -> None:
    assert prepare(parse_channel(url)) is None


def _self_signed(folder) -> tuple[str, str]:
    """A certificate for ``localhost`` and its key, as PEM files in ``folder``."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_path), str(key_path)


async def test_an_https_webhook_pinned_to_its_address_keeps_its_name_for_tls_and_host(
    tmp_path,
) -> None:
    import ssl

    cert, key = _self_signed(tmp_path)
    names: list[str | None] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: names.append(name)  # type: ignore[assignment,misc,return-value]

    class TlsReceiver(WebhookReceiver):
        def _start_server(self) -> None:
            super()._start_server()
            assert self._server is not None
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)

    with TlsReceiver() as hook:
        channel = parse_channel(f"jsons://localhost:{hook.port}/hook?verify=no")
        prepared = prepare(channel)
        assert prepared is not None
        checked = parse_channel(f"jsons://localhost:{hook.port}/hook")
        verified = prepare(checked)
        assert verified is not None
        webhooks = Webhooks(AddressPolicy.of(["localhost"]))
        try:
            outcome = await webhooks.send(prepared, channel, message(), timeout=5)
            untrusted = await webhooks.send(verified, checked, message(), timeout=5)
        finally:
            await webhooks.aclose()
        (request,) = hook.taken()  # the certificate nobody vouches for stopped the second
    assert (untrusted.status, untrusted.reason) == ("retry", "could not connect")
    assert outcome.status == "delivered"
    assert names[0] == "localhost"  # the TLS server name is the URL's, not the pinned address
    assert request.header("Host") == f"localhost:{hook.port}"
