"""Full-text search from Python: `Store.build_text_index`, `quiver:matches` and
`quiver:score` in queries, literals added and removed afterwards, and the index found
again when a store in a directory is reopened."""

import pytest

import quiver

E = "http://example.org/"
PREFIXES = f"PREFIX e: <{E}> PREFIX quiver: <https://quiver-rdf.github.io/ns#> "

DATA = f"""
@prefix e: <{E}> .
e:a e:label "The quick brown fox" .
e:b e:label "A quick red car" .
e:c e:label "running shoes"@en .
"""


def subjects(store, words):
    solutions = store.query(
        PREFIXES + f'SELECT ?s {{ ?s e:label ?l . ?l quiver:matches "{words}" }}'
    )
    return sorted(str(row[0]) for row in solutions)


def test_search_follows_updates():
    store = quiver.Store()
    store.load(DATA, "text/turtle")
    with pytest.raises(Exception, match="text-index build"):
        subjects(store, "quick")
    store.build_text_index()
    assert subjects(store, "quick") == [f"<{E}a>", f"<{E}b>"]
    assert subjects(store, "run") == [f"<{E}c>"]
    store.update(PREFIXES + 'INSERT DATA { e:d e:label "quick thinking" }')
    store.update(PREFIXES + 'DELETE DATA { e:b e:label "A quick red car" }')
    assert subjects(store, "quick") == [f"<{E}a>", f"<{E}d>"]
    scores = store.query(
        PREFIXES
        + 'SELECT ?score { ?s e:label ?l . ?l quiver:matches "quick" . ?l quiver:score ?score }'
    )
    assert all(float(row[0].value) > 0 for row in scores)


def test_index_reopens_with_the_store(tmp_path):
    store = quiver.Store(str(tmp_path / "store"))
    store.load(DATA, "text/turtle")
    store.build_text_index()
    store.update(PREFIXES + 'INSERT DATA { e:d e:label "quick thinking" }')
    del store
    reopened = quiver.Store(str(tmp_path / "store"))
    assert subjects(reopened, "quick") == [f"<{E}a>", f"<{E}b>", f"<{E}d>"]
