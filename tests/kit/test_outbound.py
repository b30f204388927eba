"""kit.outbound against real sockets on 127.0.0.1: every spelling of an inside address is refused before
any connection, the address checked is the one connected to (Host and TLS name kept), redirects are not
followed, and the allow-list is the only way in. Resolvers are injected, the network is not patched."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.notifications.receiver import running_receiver
from tierpilot.kit.outbound import (
    AllowEntry,
    OutboundError,
    Policy,
    Refused,
    parse_allow_hosts,
    parse_ipv4_number,
)
from tierpilot.kit.settings import Settings

# (URL host part, why it is refused): each one reaches this machine or its networks
INSIDE = [
    ("127.0.0.1", "loopback address"),
    ("127.1", "loopback address"),
    ("2130706433", "loopback address"),
    ("0x7f.1", "loopback address"),
    ("0x7f000001", "loopback address"),
    ("017700000001", "loopback address"),
    ("127.0.0.1.", "loopback address"),
    ("[::1]", "loopback address"),
    ("[::ffff:127.0.0.1]", "loopback address"),
    ("[::ffff:7f00:1]", "loopback address"),
    ("[::127.0.0.1]", "loopback address"),
    ("[2002:7f00:1::]", "loopback address"),
    ("[64:ff9b::7f00:1]", "loopback address"),
    ("localhost", "loopback address"),
    ("LocalHost.", "loopback address"),
    ("hooks.localhost", "loopback address"),
    ("0", "unspecified address"),
    ("0.0.0.0", "unspecified address"),
    ("[::]", "unspecified address"),
    ("10.0.0.7", "private address"),
    ("172.16.1.1", "private address"),
    ("192.168.1.1", "private address"),
    ("0xc0.0xa8.1.1", "private address"),
    ("100.64.0.1", "private address"),
    ("[fd00::1]", "private address"),
    ("[::ffff:10.0.0.1]", "private address"),
    ("169.254.169.254", "link-local address"),
    ("[fe80::1]", "link-local address"),
    ("224.0.0.1", "multicast address"),
    ("[ff02::1]", "multicast address"),
    ("255.255.255.255", "private address"),
    ("[2001:db8::1]", "private address"),
]


class CountingResolver:
    """Answers from a script, one list per call (the last one repeated), counting the calls."""

    def __init__(self, *answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.calls: list[str] = []

    def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        return self.answers[min(len(self.calls), len(self.answers)) - 1]


@contextmanager
def listening() -> Iterator[socket.socket]:
    """A bare listening socket: whether anyone connected is read from its backlog, not from a handler."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    try:
        yield sock
    finally:
        sock.close()


def nobody_connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


@pytest.mark.parametrize(("host", "reason"), INSIDE)
def test_every_spelling_of_an_inside_address_is_refused_without_asking_dns(host: str, reason: str) -> None:
    resolver = CountingResolver(["93.184.215.14"])
    with pytest.raises(Refused) as refused:
        Policy(resolver=resolver).check(f"http://{host}:6379/hook")
    assert refused.value.summary == f"refused: {reason}"
    assert resolver.calls == []  # literals and localhost are never looked up: no name can override them


@pytest.mark.parametrize(("host", "number"), [
    ("127.1", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("0x7f.1", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"),
    ("10.1.258", "10.1.1.2"), ("0x0A.0", "10.0.0.0"), ("1.2.3.4", "1.2.3.4"), ("0", "0.0.0.0"),
    ("0x", "0.0.0.0"),  # a browser's reading (WHATWG URL); inet_aton refuses it: the wider reading wins
])
def test_numeric_hosts_read_as_inet_aton_reads_them(host: str, number: str) -> None:
    assert parse_ipv4_number(host) == ipaddress.IPv4Address(number)


@pytest.mark.parametrize("host", ["1.2.3.256", "256.1", "1.2.3.4.5", "08", "1..2", "example.org", ""])
def test_what_is_not_an_ipv4_number_is_not_read_as_one(host: str) -> None:
    assert parse_ipv4_number(host) is None


@pytest.mark.parametrize(("url", "summary"), [
    ("ftp://example.org/x", "refused: only http:// and https:// URLs"),
    ("http://example.org:99999/x", "refused: port outside 1-65535"),
    ("http:///x", "refused: invalid host"),
    ("http://exa%6dple.org/", "refused: invalid host"),
    ("http://1.2.3.4.5/", "refused: invalid host"),
    ("http://[fe80::1%25eth0]/", "refused: scoped address"),
])
def test_urls_that_are_not_plain_http_to_a_host_are_refused(url: str, summary: str) -> None:
    with pytest.raises(Refused) as refused:
        Policy(resolver=CountingResolver(["93.184.215.14"])).check(url)
    assert refused.value.summary == summary


def test_a_name_is_refused_when_any_of_its_addresses_is_inside() -> None:
    resolver = CountingResolver(["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "10.0.0.1"])
    with pytest.raises(Refused, match="private address"):
        Policy(resolver=resolver).check("https://hooks.example.org/x")
    public = Policy(resolver=CountingResolver(["93.184.215.14"])).check("https://Hooks.Example.org./x")
    assert (public.host, public.port, public.addresses, public.allowed) == (
        "hooks.example.org", 443, ("93.184.215.14",), False)


def test_a_name_that_does_not_resolve_is_reported_as_such() -> None:
    with pytest.raises(OutboundError, match="host not found"):
        Policy(resolver=CountingResolver([])).check("https://hooks.example.org/x")


def test_allow_list_entries_name_a_host_or_an_address_and_optionally_a_port() -> None:
    assert parse_allow_hosts(" hooks.internal, 127.0.0.1:8080 [::1]:99,2130706433 ") == (
        AllowEntry("hooks.internal"), AllowEntry("127.0.0.1", 8080), AllowEntry("::1", 99), AllowEntry("127.0.0.1"))
    policy = Policy(parse_allow_hosts("127.0.0.1:8080, hooks.internal"), CountingResolver(["10.1.2.3"]))
    assert policy.check("http://127.1:8080/x").allowed  # any spelling of the allowed address
    assert policy.check("http://hooks.internal:1234/x").addresses == ("10.1.2.3",)
    with pytest.raises(Refused, match="loopback"):
        policy.check("http://127.0.0.1:8081/x")  # another port of the same address is not allowed
    with pytest.raises(Refused, match="private"):
        policy.check("http://other.internal/x")


@pytest.mark.parametrize("entry", ["http://hooks.internal", "host:0", "host:70000", "[::1", "a b%c", "fe80::1%eth0"])
def test_a_malformed_allow_list_entry_stops_the_settings_from_loading(entry: str) -> None:
    with pytest.raises(ValidationError, match="webhook_allow_hosts"):
        Settings(webhook_allow_hosts=entry)


def test_a_refused_address_is_never_connected_to_so_its_ports_cannot_be_scanned() -> None:
    with listening() as open_port:
        port = open_port.getsockname()[1]
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            closed_port = closed.getsockname()[1]
        summaries = []
        for target in (port, closed_port):
            with pytest.raises(Refused) as refused:
                Policy().post(f"http://127.0.0.1:{target}/x", b"{}", {}, 1.0)
            summaries.append(refused.value.summary)
        assert summaries == ["refused: loopback address"] * 2  # an open and a closed port look the same
        assert nobody_connected(open_port)


def test_an_allow_listed_receiver_gets_the_post_with_its_own_host_name() -> None:
    with running_receiver(allow=False) as receiver:
        resolver = CountingResolver(["127.0.0.1"])
        policy = Policy(parse_allow_hosts("hooks.internal"), resolver)
        status = policy.post(f"http://hooks.internal:{receiver.port}/hook", b'{"a": 1}',
                             {"content-type": "application/json"}, 5.0)
        assert status == 200 and receiver.received == [{"a": 1}]
        assert receiver.headers[0]["host"] == f"hooks.internal:{receiver.port}"
        assert resolver.calls == ["hooks.internal"]
        with pytest.raises(Refused, match="loopback"):
            Policy(resolver=resolver).post(f"http://hooks.internal:{receiver.port}/hook", b"{}", {}, 5.0)
        assert len(receiver.received) == 1


def test_a_send_connects_to_the_address_it_checked_not_to_a_second_dns_answer() -> None:
    """DNS rebinding inside one send: the resolver would answer differently a second time; the send asks
    once and connects to that checked answer."""
    with running_receiver(allow=False) as receiver, listening() as inside:
        resolver = CountingResolver(["127.0.0.1"], ["127.0.0.2"])
        policy = Policy(parse_allow_hosts(f"127.0.0.1:{receiver.port}"), resolver)
        assert policy.post(f"http://rebind.example:{receiver.port}/hook", b"{}", {}, 5.0) == 200
        assert resolver.calls == ["rebind.example"] and len(receiver.received) == 1
        # the next send sees the new answer, which is not allowed: refused before connecting
        with pytest.raises(Refused, match="loopback"):
            policy.post(f"http://rebind.example:{receiver.port}/hook", b"{}", {}, 5.0)
        assert len(receiver.received) == 1 and nobody_connected(inside)


def test_a_redirect_is_answered_not_followed() -> None:
    with running_receiver(allow=False) as target, running_receiver(allow=False) as redirector:
        redirector.answers = [307]
        redirector.reply_headers = {"location": target.url}
        policy = Policy(parse_allow_hosts(f"127.0.0.1:{redirector.port} 127.0.0.1:{target.port}"))
        assert policy.post(redirector.url, b"{}", {}, 5.0) == 307
        assert len(redirector.received) == 1 and target.received == []


def test_a_receiver_that_never_answers_is_a_time_out() -> None:
    with listening() as silent:  # accepts (backlog) and never answers
        policy = Policy(parse_allow_hosts(f"127.0.0.1:{silent.getsockname()[1]}"))
        with pytest.raises(OutboundError) as error:
            policy.post(f"http://127.0.0.1:{silent.getsockname()[1]}/x", b"{}", {}, 0.3)
    assert error.value.summary == "timed out"


def test_https_verifies_the_certificate_of_the_url_host_while_connecting_to_the_checked_address(
        tmp_path: Path) -> None:
    ca, server_context = _certificates(tmp_path, "hooks.internal")
    seen_names: list[str | None] = []
    server_context.sni_callback = lambda _sock, name, _ctx: seen_names.append(name)  # type: ignore[assignment]
    with _tls_receiver(server_context) as (port, received):
        resolver = CountingResolver(["127.0.0.1"])
        policy = Policy(parse_allow_hosts("hooks.internal"), resolver, ca)
        assert policy.post(f"https://hooks.internal:{port}/hook", b"{}", {}, 5.0) == 204
        assert seen_names == ["hooks.internal"] and received == [f"hooks.internal:{port}"]
        other = Policy(parse_allow_hosts("other.internal"), resolver, ca)
        with pytest.raises(OutboundError, match="connection failed"):  # certificate is for another name
            other.post(f"https://other.internal:{port}/hook", b"{}", {}, 5.0)


def _certificates(tmp_path: Path, name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A throwaway CA and a server certificate for ``name``: (client context trusting the CA, server context)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    client = ssl.create_default_context(cafile=str(cert_file))
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    return client, server


@contextmanager
def _tls_receiver(context: ssl.SSLContext) -> Iterator[tuple[int, list[str]]]:
    """A one-thread HTTPS receiver answering 204 to each request; yields its port and the Host headers."""
    received: list[str] = []
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    sock.settimeout(0.1)  # the loop sees `stop` between accepts
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(5)
            with conn:
                try:
                    with context.wrap_socket(conn, server_side=True) as tls:
                        fields = _read_request(tls)
                        received.append(fields.get("host", ""))
                        tls.sendall(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")
                except (ssl.SSLError, OSError):
                    continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1], received
    finally:
        stop.set()
        thread.join(timeout=5)
        sock.close()


def _read_request(sock: ssl.SSLSocket) -> dict[str, str]:
    """Read a whole request (head and content-length body: closing with unread bytes would reset the
    connection before the answer arrives); its header fields, lower-case names."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    fields = dict(line.split(":", 1) for line in head.decode("latin-1").split("\r\n")[1:] if ":" in line)
    fields = {name.strip().lower(): value.strip() for name, value in fields.items()}
    while len(body) < int(fields.get("content-length", "0")):
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return fields
