"""The GIL is released while a query runs (other Python threads run, queries run side by
side), and Ctrl-C (SIGINT) interrupts a long query promptly with KeyboardInterrupt."""

import _thread
import os
import signal
import threading
import time

import pytest

import quiver

# A cross product of every triple with every triple: billions of rows on LUBM-1, which the
# engine materialises at several hundred MB a second, so the calls below are kept short.
ENDLESS = "SELECT (COUNT(*) AS ?n) { ?a ?p ?b . ?c ?q ?d }"


def run_until_timeout(store, seconds):
    """Runs the endless query for `seconds`; returns its (start, end) on perf_counter."""
    started = time.perf_counter()
    with pytest.raises(quiver.QueryTimeout):
        store.query(ENDLESS, timeout=seconds, threads=1)
    return started, time.perf_counter()


def test_other_threads_run_while_a_query_runs(lubm1):
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        started, ended = run_until_timeout(lubm1, 0.6)
    finally:
        stop.set()
        counter.join()
    # With the GIL held through the call, the counter could not tick inside it at all.
    inside = [t for t in ticks if started + 0.1 < t < ended - 0.1]
    assert len(inside) > 30, f"{len(inside)} ticks of another thread during the query"


def test_queries_run_concurrently_in_threads(lubm1):
    workers = 3
    barrier = threading.Barrier(workers)
    spans = [None] * workers
    rows = [None] * workers
    errors = []
    query = (
        "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> "
        "SELECT ?x ?y { ?x a ub:GraduateStudent ; ub:takesCourse ?y }"
    )
    expected = sorted((str(r.x), str(r.y)) for r in lubm1.query(query))

    def work(i):
        try:
            barrier.wait()
            spans[i] = run_until_timeout(lubm1, 0.6)
            rows[i] = sorted((str(r.x), str(r.y)) for r in lubm1.query(query, threads=1))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    # Every query was running at one instant: the latest start precedes the first end
    # (run one after another, each 0.6 s call would start after the previous ended).
    latest_start = max(start for start, _ in spans)
    first_end = min(end for _, end in spans)
    assert latest_start < first_end - 0.3, spans
    assert all(r == expected for r in rows) and expected


@pytest.mark.parametrize(
    "interrupt",
    [_thread.interrupt_main, lambda: os.kill(os.getpid(), signal.SIGINT)],
    ids=["interrupt_main", "sigint"],
)
def test_ctrl_c_interrupts_a_long_query(lubm1, interrupt):
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    timer = threading.Timer(0.3, interrupt)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # The timeout only ends the test should the interruption fail.
            lubm1.query(ENDLESS, timeout=30, threads=1)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - started
    assert elapsed < 3, f"interrupted after {elapsed:.1f} s"
    # The store answers after the interruption.
    assert lubm1.query("ASK { ?s ?p ?o }") is True


def test_ctrl_c_abandons_a_long_load_and_keeps_the_store():
    store = quiver.Store()
    store.load(b"<http://e/a> <http://e/p> <http://e/b> .", "nt")
    timer = threading.Timer(0.2, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # LUBM-30 takes seconds to generate and build, longer than the interruption.
            store.load_lubm(30)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - started
    assert elapsed < 1.5, f"interrupted after {elapsed:.1f} s"
    assert len(store) == 1


def test_loads_from_threads_all_land():
    store = quiver.Store()
    documents = [f"<http://e/s{i}> <http://e/p> {i} .".encode() for i in range(8)]
    threads = [
        threading.Thread(target=store.load, args=(document, "ttl")) for document in documents
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store) == len(documents)


def test_queries_run_in_a_child_process_after_fork(lubm1):
    # The main thread hands queries to a long-lived worker thread, which `fork` does not
    # copy: the child must start its own rather than wait on one that is not there.
    assert lubm1.query("ASK { ?s ?p ?o }") is True
    pid = os.fork()
    if pid == 0:
        try:
            rows = len(lubm1.query("SELECT ?s { ?s ?p ?o } LIMIT 5"))
            os._exit(0 if rows == 5 else 1)
        finally:
            os._exit(2)
    deadline = time.monotonic() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the child's query hung")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0
