#!/usr/bin/env python3
"""Wall time of every hostile Lua case at the default limits, as a whole process.

    python3 benches/hostile-lua.py [BIN] [NAME-SUBSTRING...]

Runs each case of testdata/health/lua/cases.yaml whose name starts with `hostile` and that runs
at the default limits (no `limits`, no countdown interrupt, an object that can be written as a
file) as `BIN health --customizations DIR OBJECT.json` (default BIN: target/release/gitops-core),
the script as DIR/example.com/Widget/health.lua and the case's object (with its 16 MB string
where it has `objBigString`) as the file. Prints one line per case, slowest first: seconds of
wall clock from process start to exit, and the first line of the health message. Needs PyYAML.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import yaml

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "target/release/gitops-core")
only = sys.argv[2:]
with open(os.path.join(root, "testdata/health/lua/cases.yaml")) as f:
    doc = yaml.safe_load(f)
default = doc["defaultObject"]
rows = []
with tempfile.TemporaryDirectory() as tmp:
    for case in doc["cases"]:
        name = case["name"]
        if not name.startswith("hostile") or any(
            k in case for k in ("limits", "interruptAfterChecks", "objNesting")
        ):
            continue
        if only and not any(o in name for o in only):
            continue
        d = os.path.join(tmp, name)
        os.makedirs(os.path.join(d, "example.com", "Widget"))
        with open(os.path.join(d, "example.com", "Widget", "health.lua"), "w") as f:
            f.write(case["script"])
        obj = json.loads(json.dumps(case.get("obj", default)))
        if "objBigString" in case:
            obj["spec"]["big"] = "a" * case["objBigString"]
        obj.setdefault("apiVersion", "example.com/v1")
        obj.setdefault("kind", "Widget")
        path = os.path.join(d, "obj.json")
        with open(path, "w") as f:
            json.dump(obj, f)
        start = time.monotonic()
        out = subprocess.run(
            [binary, "health", "--customizations", d, "--output", "json", path],
            capture_output=True,
            text=True,
        )
        secs = time.monotonic() - start
        try:
            message = json.loads(out.stdout)["resources"][0]["message"]
        except (ValueError, KeyError, IndexError):
            message = (out.stdout + out.stderr).strip()
        rows.append((secs, name, message.splitlines()[0] if message else ""))
        os.remove(path)
for secs, name, message in sorted(rows, reverse=True):
    print(f"{secs:6.2f} s  {name}: {message}")
print(f"{len(rows)} cases")
