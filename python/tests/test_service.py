"""SERVICE from the Python package: a bind join with an endpoint served by Python's own HTTP
server (which checks that the bindings arrive in a VALUES block), the empty solution of
SERVICE SILENT over a closed port, and the error that names the endpoint without SILENT."""

import json
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import quiver

LOCAL = b"""<http://e/a> <http://e/knows> <http://e/p1> .
<http://e/b> <http://e/knows> <http://e/p2> .
"""
NAMES = {"http://e/p1": "one", "http://e/p2": "two", "http://e/p3": "three"}


class Endpoint(BaseHTTPRequestHandler):
    """Answers `?p <name> ?n` for the ?p values of the query's VALUES block."""

    queries = []

    def do_POST(self):
        length = int(self.headers["Content-Length"])
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        query = form["query"][0]
        Endpoint.queries.append(query)
        bindings = [
            {"p": {"type": "uri", "value": p}, "n": {"type": "literal", "value": n}}
            for p, n in NAMES.items()
            if f"<{p}>" in query
        ]
        body = json.dumps({"head": {"vars": ["p", "n"]}, "results": {"bindings": bindings}})
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Endpoint.queries = []
    yield f"http://127.0.0.1:{server.server_address[1]}/sparql"
    server.shutdown()


@pytest.fixture
def store():
    store = quiver.Store()
    store.load(LOCAL, "nt")
    return store


def federated(endpoint, silent=False):
    return (
        "SELECT ?s ?n { ?s <http://e/knows> ?p "
        f"SERVICE {'SILENT ' if silent else ''}<{endpoint}> {{ ?p <http://e/name> ?n }} }}"
    )


def test_a_bind_join_sends_the_bindings_and_joins_the_answers(store, endpoint):
    rows = sorted((str(r["s"]), str(r["n"])) for r in store.query(federated(endpoint)))
    assert rows == [("<http://e/a>", '"one"'), ("<http://e/b>", '"two"')]
    assert len(Endpoint.queries) == 1
    assert "VALUES" in Endpoint.queries[0]
    assert "<http://e/p3>" not in Endpoint.queries[0]


def test_a_closed_endpoint_is_an_error_unless_silent(store):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    closed = f"http://127.0.0.1:{probe.getsockname()[1]}/sparql"
    probe.close()
    assert len(list(store.query(federated(closed, silent=True)))) == 2
    with pytest.raises(Exception, match=r"SERVICE <" + closed.replace(".", r"\.")):
        store.query(federated(closed))
