#!/usr/bin/env python3
"""Resident memory of `gitops-core serve` around large requests (run by hand, not by CI).

Starts the server, sends `hello`, then for each method named on the command line one request
of N objects (half desired, half live ConfigMaps, every other one drifted; `health` gets all
of them as `objects`), then a `hello`, and prints VmRSS (now) and VmHWM (peak) from
/proc/PID/status after each. A long-running server should come back to near its baseline.

    cargo build --release --bin gitops-core
    python3 benches/serve_memory.py target/release/gitops-core 50000 diff,diff,plan,health
"""
import json
import subprocess
import sys


class Serve:
    """A `gitops-core serve` process: requests in, responses out, its memory from /proc."""

    def __init__(self, binary, *args):
        self.process = subprocess.Popen([binary, "serve", *args],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def call(self, request):
        self.process.stdin.write((json.dumps(request, separators=(",", ":")) + "\n").encode())
        self.process.stdin.flush()
        response = json.loads(self.process.stdout.readline())
        assert "result" in response, response
        return response

    def status(self, key):
        """A line of /proc/PID/status in KiB (VmRSS now, VmHWM the peak)."""
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
        return -1

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/gitops-core"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 50000
    methods = (sys.argv[3] if len(sys.argv) > 3 else "diff,diff,plan,health").split(",")
    server = Serve(binary, "--max-request-bytes", str(256 << 20))
    call = server.call

    def status(key):
        return server.status(key) // 1024

    def config_map(i, value):
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "namespace": "shop",
                             "labels": {"app": "shop", "tier": "web"}},
                "data": {"key": value, "other": "x" * 40}}

    call({"id": 0, "method": "hello"})
    print(f"baseline: {status('VmRSS')} MB resident")
    half = n // 2
    desired = [config_map(i, "a") for i in range(half)]
    live = [config_map(i, "a" if i % 2 else "b") for i in range(half)]
    for method in methods:
        if method == "health":
            params = {"objects": desired + live}
        else:
            params = {"desired": desired, "live": live}
        call({"id": 1, "method": method, "params": params})
        call({"id": 2, "method": "hello"})
        print(f"after {method} of {n} objects: {status('VmRSS')} MB resident, "
              f"peak so far {status('VmHWM')} MB")
    server.close()


if __name__ == "__main__":
    main()
