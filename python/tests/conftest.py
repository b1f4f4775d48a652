"""Shared fixtures: LUBM-1 in Quiver (generated in process), the same data in pyoxigraph
(through `quiver gen lubm`), and a store directory made by `quiver load` for comparing with
`quiver query`.

The `quiver` binary is found through QUIVER_BIN or at target/release/quiver of the checkout;
a missing binary or module fails the tests that need it with the command that provides it.
"""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
QUERIES = ROOT / "queries"


def lubm_queries():
    """(name, text) of LUBM q1–q12 and the SPARQL 1.1 queries of queries/lubm-sparql11."""
    basic = sorted((QUERIES / "lubm-basic").glob("q*.rq"), key=lambda p: int(p.stem[1:]))
    extra = sorted((QUERIES / "lubm-sparql11").glob("*.rq"))
    found = [(p.stem, p.read_text()) for p in basic + extra]
    assert len(basic) == 12 and extra, f"the LUBM queries are missing from {QUERIES}"
    return found


def require(module, package=None):
    try:
        return __import__(module)
    except ImportError:
        pytest.fail(
            f"the test needs the Python package {package or module}: "
            f"pip install {package or module} (scripts/test installs it)"
        )


@pytest.fixture(scope="session")
def quiver_bin():
    path = pathlib.Path(os.environ.get("QUIVER_BIN", ROOT / "target" / "release" / "quiver"))
    if not path.is_file():
        pytest.fail(f"{path} is missing: build it with cargo build --release --bin quiver")
    return path


@pytest.fixture(scope="session")
def lubm1():
    import quiver

    store = quiver.Store()
    store.load_lubm(1)
    return store


@pytest.fixture(scope="session")
def lubm1_nt(quiver_bin, tmp_path_factory):
    path = tmp_path_factory.mktemp("lubm") / "lubm1.nt"
    subprocess.run(
        [quiver_bin, "gen", "lubm", "--universities", "1", "--output", path], check=True
    )
    return path


@pytest.fixture(scope="session")
def lubm1_oxigraph(lubm1_nt):
    pyoxigraph = require("pyoxigraph")
    store = pyoxigraph.Store()
    store.bulk_load(path=str(lubm1_nt), format=pyoxigraph.RdfFormat.N_TRIPLES)
    return store


@pytest.fixture(scope="session")
def lubm1_dir(quiver_bin, tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "lubm1"
    subprocess.run(
        [quiver_bin, "load", "--location", path, "--lubm", "1"],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    return path
