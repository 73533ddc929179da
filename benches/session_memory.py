#!/usr/bin/env python3
"""Resident memory of `gitops-core serve` sessions (run by hand, not by CI).

1. Opens one session of N objects (N/2 desired and N/2 live ConfigMaps, tracked by the app)
   and sends U `app.update` requests of one MODIFIED event each, cycling over the live objects
   with a new value each time; prints VmRSS every U/10 updates. A session's memory stays flat:
   the last event for an object replaces the one before.
2. Closes it, then opens S sessions of N objects, closes them all, and does that C times;
   prints VmRSS with the sessions open and after each close. Closing gives the memory back
   to the process (the next sessions reuse it: the resident size does not grow cycle after
   cycle).

Requests are pipelined in batches of 1,000 (the responses come back in order).

    cargo build --release --bin gitops-core
    python3 benches/session_memory.py target/release/gitops-core 2000 100000 20 3
"""
import json
import subprocess
import sys
import threading
import time


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/gitops-core"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    updates = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    sessions = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    cycles = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    server = subprocess.Popen([binary, "serve", "--max-request-bytes", str(256 << 20)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(requests):
        data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests)

        def write():
            server.stdin.write(data.encode())
            server.stdin.flush()

        # Written on a thread while the responses are read, so that neither pipe fills up.
        writer = threading.Thread(target=write)
        writer.start()
        out = []
        for _ in requests:
            response = json.loads(server.stdout.readline())
            assert "result" in response, response
            out.append(response["result"])
        writer.join()
        return out

    def rss():
        with open(f"/proc/{server.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) // 1024
        return -1

    app = {"metadata": {"name": "shop"}, "spec": {"destination": {"namespace": "shop"}}}

    def config_map(i, value):
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "namespace": "shop",
                             "labels": {"app": "shop", "tier": "web"},
                             "annotations": {"argocd.argoproj.io/tracking-id":
                                             f"shop:/ConfigMap:shop/cm-{i}"}},
                "data": {"key": value, "other": "x" * 40}}

    half = n // 2
    desired = [config_map(i, "a") for i in range(half)]
    live = [config_map(i, "a" if i % 2 else "b") for i in range(half)]

    def open_session():
        params = {"desired": desired, "live": live, "app": app}
        return send([{"id": 0, "method": "app.open", "params": params}])[0]["session"]

    send([{"id": 0, "method": "hello"}])
    print(f"baseline: {rss()} MB resident")
    session = open_session()
    print(f"one session of {n} objects open: {rss()} MB resident")
    step = max(updates // 10, 1)
    start = time.perf_counter()
    done = 0
    while done < updates:
        batch = []
        for k in range(min(1000, updates - done)):
            u = done + k
            obj = config_map(u % half, f"v{u}")
            batch.append({"id": u, "method": "app.update",
                          "params": {"session": session,
                                     "events": [{"type": "MODIFIED", "object": obj}]}})
        send(batch)
        done += len(batch)
        if done % step == 0:
            print(f"after {done} updates: {rss()} MB resident")
    elapsed = time.perf_counter() - start
    print(f"{updates} updates in {elapsed:.1f} s ({updates / elapsed:.0f} per second, "
          f"client included)")
    send([{"id": 0, "method": "app.close", "params": {"session": session}}])
    print(f"closed: {rss()} MB resident")
    for c in range(cycles):
        handles = [open_session() for _ in range(sessions)]
        opened = rss()
        send([{"id": 0, "method": "app.close", "params": {"session": h}} for h in handles])
        print(f"cycle {c + 1}: {sessions} sessions of {n} objects open: {opened} MB resident, "
              f"all closed: {rss()} MB resident")
    server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()
