"""
Client ID metadata documents over real HTTPS on 127.0.0.1, for the doctor's CIMD probe: a
throwaway self-signed certificate made at test time (with ``cryptography``, else the ``openssl``
command), and Python's ``http.server`` behind ``ssl`` in a thread, serving fixed documents.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self


HOST = "127.0.0.1"


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, valid for a day: (certificate, key) files."""
    certificate, key = folder / "cimd-cert.pem", folder / "cimd-key.pem"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        if not shutil.which("openssl"):
            raise RuntimeError("neither the cryptography package nor the openssl command is available") from None
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-days", "1", "-subj", f"/CN={HOST}", "-addext", f"subjectAltName=IP:{HOST},DNS:localhost",
                        "-keyout", str(key), "-out", str(certificate)], check=True, capture_output=True)
        return certificate, key
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.timezone.utc)
    public = private.public_key()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(HOST)),
                                                        x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(private, hashes.SHA256()))
    certificate.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return certificate, key


class DocumentServer:
    """
    ``https://127.0.0.1:PORT/<name>.json`` for each document given to :meth:`publish`; any other
    path answers 404. Use as a context manager.
    """

    def __init__(self, certificate: Path, key: Path) -> None:
        self.certificate = certificate
        self.documents: dict[str, dict[str, Any]] = {}
        documents = self.documents

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                document = documents.get(self.path)
                body = json.dumps(document).encode() if document is not None else b"Not found"
                self.send_response(200 if document is not None else 404)
                self.send_header("Content-Type", "application/json" if document is not None else "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer((HOST, 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return f"https://{HOST}:{self.server.server_address[1]}"

    def url(self, name: str) -> str:
        return f"{self.origin}/{name}.json"

    def publish(self, name: str, **changes: Any) -> str:
        """Serve a public MCP client's document at ``name``, with ``changes``; its URL."""
        url = self.url(name)
        self.documents[f"/{name}.json"] = {
            "client_id": url, "client_name": f"Doctor's test client {name}",
            "redirect_uris": ["http://127.0.0.1:33418/callback"],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none", **changes}
        return url

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()
