"""What the concurrent-client benchmarks (clients.py, socket_clients.py)
share: C client threads run to their end, and percentiles of answer
times."""
import threading, time


def run_clients(n, client):
    """client(k) for k in 0..n-1, each in a thread of its own, all started
    before any is waited for; the seconds from the first start to the last
    end."""
    ts = [threading.Thread(target=client, args=(k,)) for k in range(n)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.monotonic() - t0


def percentile(ordered, q):
    """The q-quantile (0.5, 0.99) of a non-empty sorted list: the value at
    rank q * n, the last for q = 1."""
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
