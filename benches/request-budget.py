#!/usr/bin/env python3
"""One request's Lua budget ends it in bounded time (issue 27; run by hand, not by CI).

N objects (default 50,000) of a kind whose health script is `while true do end`: the first
scripts spend the request's budget (200,000,000 units by default, about a second), and every
later object must fail at once with the request's limit. Times, as user+system CPU seconds
from GNU time (/usr/bin/time), the median of RUNS runs (default 3) of:

- `cli`: `gitops-core health --customizations DIR OBJECTS.json` (one request);
- `serve`: one `health` request of the same objects, the script passed as `customizations`.

    cargo build --release --bin gitops-core
    python3 benches/request-budget.py target/release/gitops-core [N] [RUNS]
"""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = "while true do end"


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/gitops-core"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 50000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    with tempfile.TemporaryDirectory() as tmp:
        objects = [{"apiVersion": "example.com/v1", "kind": "Widget",
                    "metadata": {"name": f"w-{i}", "namespace": "shop"},
                    "status": {"phase": "Running"}} for i in range(n)]
        with open(f"{tmp}/objects.json", "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": objects}, f)
        os.makedirs(f"{tmp}/custom/example.com/Widget")
        with open(f"{tmp}/custom/example.com/Widget/health.lua", "w") as f:
            f.write(SCRIPT)
        request = {"id": 1, "method": "health",
                   "params": {"objects": objects,
                              "customizations": {"example.com/Widget/health.lua": SCRIPT}}}
        with open(f"{tmp}/serve.jsonl", "w") as f:
            f.write(json.dumps(request, separators=(",", ":")) + "\n")
        size = os.path.getsize(f"{tmp}/serve.jsonl")
        cases = [
            ("cli", ["health", "--customizations", f"{tmp}/custom", "--output", "json",
                     f"{tmp}/objects.json"], None),
            ("serve", ["serve", "--max-request-bytes", str(1 << 30)], f"{tmp}/serve.jsonl"),
        ]
        print(f"{n} objects, `{SCRIPT}`; serve request {size / 1e6:.1f} MB")
        for name, args, stdin_path in cases:
            times = []
            for _ in range(runs):
                stdin = open(stdin_path) if stdin_path else subprocess.DEVNULL
                out = subprocess.run(["/usr/bin/time", "-f", "%U %S", "-o", f"{tmp}/time",
                                      binary, *args], stdin=stdin, capture_output=True,
                                     text=True)
                user, system = open(f"{tmp}/time").read().split()[-2:]
                times.append(float(user) + float(system))
            last = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr
            request_limited = out.stdout.count("request instruction limit")
            times.sort()
            print(f"{name:6} cpu {times[(len(times) - 1) // 2]:6.2f} s "
                  f"(runs: {' '.join(f'{t:.2f}' for t in times)}); "
                  f"{request_limited} objects stopped by the request's limit; "
                  f"exit {out.returncode}; output ends {last[-80:]!r}")


if __name__ == "__main__":
    main()
