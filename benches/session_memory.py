#!/usr/bin/env python3
"""Resident memory of `gitops-core serve`: sessions, closing them, and a large request.

1. Opens one session of N objects (N/2 desired and N/2 live ConfigMaps, tracked by the app)
   and sends U `app.update` requests of one MODIFIED event each, cycling over the live objects
   with a new value each time; prints VmRSS every U/10 updates. A session's memory stays flat:
   the last event for an object replaces the one before.
2. Closes it, then opens S sessions of N objects, closes them all, and does that C times;
   prints VmRSS with the sessions open, right after the close, and after an idle second and
   one `hello`. Closing gives the memory back to the operating system.
3. Sends one `plan` of L objects (half desired, half live, every other one drifted), then idles
   a second and sends a `hello`; prints VmRSS and the peak (VmHWM). The server comes back near
   its start value.

Requests are pipelined in batches of 1,000 (the responses come back in order).

    cargo build --release --bin gitops-core
    python3 benches/session_memory.py target/release/gitops-core 2000 100000 20 3 50000

With `--check` (first argument), it exits 1 unless memory is flat over the updates (the last
sample at most 2 MB over the first) and every "idle" reading of steps 2 and 3 is near the
start value: at most the baseline after `hello` plus NEAR_MB (default 16). CI runs a small
form of it against the debug binary (.ci/run).
"""
import json
import os
import subprocess
import sys
import threading
import time

NEAR_MB = int(os.environ.get("NEAR_MB", "16"))
FLAT_MB = 2
IDLE_SECONDS = 1.0


def main():
    args = sys.argv[1:]
    check = bool(args) and args[0] == "--check"
    if check:
        args = args[1:]
    binary = args[0] if len(args) > 0 else "target/release/gitops-core"
    n = int(args[1]) if len(args) > 1 else 2000
    updates = int(args[2]) if len(args) > 2 else 100000
    sessions = int(args[3]) if len(args) > 3 else 20
    cycles = int(args[4]) if len(args) > 4 else 3
    large = int(args[5]) if len(args) > 5 else 50000
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

    def status(key):
        """A line of /proc/PID/status in MB (VmRSS now, VmHWM the peak)."""
        with open(f"/proc/{server.pid}/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) // 1024
        return -1

    def rss():
        return status("VmRSS")

    def cpu():
        """The server's user and system CPU seconds so far."""
        with open(f"/proc/{server.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def idle():
        """The resident size after an idle second and one `hello`."""
        time.sleep(IDLE_SECONDS)
        send([{"id": 0, "method": "hello"}])
        return rss()

    app = {"metadata": {"name": "shop"}, "spec": {"destination": {"namespace": "shop"}}}

    def config_map(i, value, tracked=True):
        cm = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": f"cm-{i}", "namespace": "shop",
                           "labels": {"app": "shop", "tier": "web"}},
              "data": {"key": value, "other": "x" * 40}}
        if tracked:
            cm["metadata"]["annotations"] = {"argocd.argoproj.io/tracking-id":
                                             f"shop:/ConfigMap:shop/cm-{i}"}
        return cm

    half = n // 2
    desired = [config_map(i, "a") for i in range(half)]
    live = [config_map(i, "a" if i % 2 else "b") for i in range(half)]

    def open_session():
        params = {"desired": desired, "live": live, "app": app}
        return send([{"id": 0, "method": "app.open", "params": params}])[0]["session"]

    failures = []
    send([{"id": 0, "method": "hello"}])
    baseline = rss()
    print(f"baseline: {baseline} MB resident")

    def near(what, value):
        if value > baseline + NEAR_MB:
            failures.append(f"{what}: {value} MB resident, over the baseline {baseline} MB "
                            f"+ {NEAR_MB} MB")

    session = open_session()
    print(f"one session of {n} objects open: {rss()} MB resident")
    step = max(updates // 10, 1)
    start = time.perf_counter()
    start_cpu = cpu()
    done = 0
    samples = []
    while done < updates:
        batch = []
        for k in range(min(1000, updates - done)):
            u = done + k
            obj = config_map(u % half, f"v{u:08d}")
            batch.append({"id": u, "method": "app.update",
                          "params": {"session": session,
                                     "events": [{"type": "MODIFIED", "object": obj}]}})
        send(batch)
        done += len(batch)
        if done % step == 0 or done == updates:
            samples.append(rss())
            print(f"after {done} updates: {samples[-1]} MB resident")
    elapsed = time.perf_counter() - start
    if updates:
        print(f"{updates} updates in {elapsed:.1f} s ({updates / elapsed:.0f} per second, "
              f"client included; the server's CPU {cpu() - start_cpu:.1f} s)")
    if samples and samples[-1] > samples[0] + FLAT_MB:
        failures.append(f"updates: {samples[0]} MB after the first tenth, {samples[-1]} MB "
                        f"after the last (more than {FLAT_MB} MB of growth)")
    send([{"id": 0, "method": "app.close", "params": {"session": session}}])
    closed = rss()
    idled = idle()
    print(f"closed: {closed} MB resident, idle: {idled} MB")
    near("the session closed, idle", idled)
    for c in range(cycles):
        handles = [open_session() for _ in range(sessions)]
        opened = rss()
        send([{"id": 0, "method": "app.close", "params": {"session": h}} for h in handles])
        closed = rss()
        idled = idle()
        print(f"cycle {c + 1}: {sessions} sessions of {n} objects open: {opened} MB resident, "
              f"all closed: {closed} MB, idle: {idled} MB")
        near(f"cycle {c + 1}, all closed, idle", idled)
    if large:
        # Not tracked: `plan` compares them as an app's own resources by name.
        big_desired = [config_map(i, "a", False) for i in range(large // 2)]
        big_live = [config_map(i, "a" if i % 2 else "b", False) for i in range(large // 2)]
        params = {"desired": big_desired, "live": big_live}
        send([{"id": 0, "method": "plan", "params": params}])
        answered = rss()
        idled = idle()
        print(f"after a plan of {large} objects: {answered} MB resident, idle: {idled} MB, "
              f"peak {status('VmHWM')} MB")
        near(f"a plan of {large} objects, idle", idled)
    server.stdin.close()
    server.wait()
    if check:
        for failure in failures:
            print(f"FAIL {failure}", file=sys.stderr)
        if failures:
            sys.exit(1)
        print("memory comes back: ok")


if __name__ == "__main__":
    main()
