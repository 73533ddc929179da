#!/usr/bin/env python3
"""How every command's CPU time grows with the object count (run by hand, not by CI).

Generates, for each size N, an application of N ConfigMaps (`generate`), then runs each
command on it under GNU time (/usr/bin/time) and prints the median user+system CPU seconds
of RUNS runs, and the ratio of each size to the one before it. Linear work grows about as
the size does (5x from 10,000 to 50,000); a quadratic path grows about as its square (25x).

    cargo build --release --bin gitops-core
    python3 benches/scaling.py target/release/gitops-core [SIZES] [RUNS] [TIMEOUT] [COMMANDS]
    python3 benches/scaling.py target/release/gitops-core 1000,10000,50000 3 120

The input of size N (`generate`): `desired.json`, a `List` of N ConfigMaps `cm-<i>` in
namespace `scale`; `live.json`, the same objects as the cluster holds them (tracking
annotation, `managedFields` of `argocd-controller`), but one in ten drifted by `kubectl-edit`
(a changed value and a label of its own), one in twenty missing, and N/20 more that Git no
longer has (`old-<i>`, to prune): N live objects in all, so 50,000 stays under the CLI's
default `--max-objects`. `dry-run.json` is the desired objects as a server-side dry run
returns them (tracking annotation, `argocd-controller`'s `managedFields`). `base/scale/` and `head/scale/` are a pull request's two renderings: the head
changes one object in ten, drops one in twenty and adds N/20. `app.json` is the Application
(`scale`, destination namespace `scale`).

The commands: `diff`, `diff --explain`, `diff --unmanaged`, `diff --dry-run`, `status`,
`plan`, `plan --prune --guard`, `preview --live` and `serve` (one `diff` and one `plan`
request of the same objects). A run that uses more than TIMEOUT seconds (default 120) of CPU
is stopped (RLIMIT_CPU) and shown as `>TIMEOUT`; the larger sizes of that command are then
skipped. COMMANDS (comma-separated names, e.g. `serve,status`) runs only those.
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile

TRACKING = "argocd.argoproj.io/tracking-id"


def config_map(name, value, extra_label=None, live=False):
    labels = {"app": "scale", "tier": "web"}
    if extra_label:
        labels["owner"] = extra_label
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "scale", "labels": labels},
           "data": {"key": value, "other": "x" * 40}}
    if live:
        obj["metadata"]["annotations"] = {TRACKING: f"scale:/ConfigMap:scale/{name}"}
        fields = {"f:data": {"f:key": {}, "f:other": {}},
                  "f:metadata": {"f:labels": {"f:app": {}, "f:tier": {}}}}
        managed = [{"manager": "argocd-controller", "operation": "Apply", "apiVersion": "v1",
                    "time": "2026-12-01T10:00:00Z", "fieldsType": "FieldsV1",
                    "fieldsV1": fields}]
        if extra_label:
            managed.append({"manager": "kubectl-edit", "operation": "Update",
                            "apiVersion": "v1", "time": "2026-12-02T10:00:00Z",
                            "fieldsType": "FieldsV1",
                            "fieldsV1": {"f:data": {"f:key": {}},
                                         "f:metadata": {"f:labels": {"f:owner": {}}}}})
        obj["metadata"]["managedFields"] = managed
    return obj


def generate(n, root):
    def write(path, items):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f,
                      separators=(",", ":"))

    desired = [config_map(f"cm-{i}", "v") for i in range(n)]
    live = []
    for i in range(n):
        if i % 20 == 19:
            continue
        drifted = i % 10 == 3
        live.append(config_map(f"cm-{i}", "drift" if drifted else "v",
                               "someone" if drifted else None, live=True))
    live += [config_map(f"old-{i}", "v", live=True) for i in range(n // 20)]
    head = [config_map(f"cm-{i}", "w" if i % 10 == 5 else "v")
            for i in range(n) if i % 20 != 7]
    head += [config_map(f"new-{i}", "v") for i in range(n // 20)]
    write(f"{root}/desired.json", desired)
    write(f"{root}/live.json", live)
    write(f"{root}/dry-run.json", [config_map(f"cm-{i}", "v", live=True) for i in range(n)])
    write(f"{root}/base/scale/objects.json", desired)
    write(f"{root}/head/scale/objects.json", head)
    write(f"{root}/live/scale/objects.json", live)
    with open(f"{root}/app.json", "w") as f:
        json.dump({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                   "metadata": {"name": "scale", "namespace": "argocd"},
                   "spec": {"project": "default",
                            "destination": {"server": "https://kubernetes.default.svc",
                                            "namespace": "scale"}}}, f)
    with open(f"{root}/serve.jsonl", "w") as f:
        params = {"app": json.load(open(f"{root}/app.json")), "desired": desired,
                  "live": live}
        for i, method in enumerate(["diff", "plan"]):
            f.write(json.dumps({"id": i, "method": method, "params": params},
                               separators=(",", ":")) + "\n")


def commands(d):
    common = ["--desired", f"{d}/desired.json", "--live", f"{d}/live.json",
              "--app", f"{d}/app.json"]
    return [
        ("diff", ["diff", *common]),
        ("diff --explain", ["diff", *common, "--explain"]),
        ("diff --unmanaged", ["diff", *common, "--unmanaged"]),
        ("diff --dry-run", ["diff", *common, "--dry-run", f"{d}/dry-run.json"]),
        ("status", ["status", *common]),
        ("plan", ["plan", *common]),
        ("plan --guard", ["plan", *common, "--prune", "--guard"]),
        ("preview", ["preview", "--base", f"{d}/base", "--head", f"{d}/head", "--live",
                     f"{d}/live", "--app", f"{d}/app.json", "--output", "json"]),
        ("serve", ["serve", "--max-request-bytes", str(1 << 30)]),
    ]


def cpu_seconds(binary, args, stdin_path, timeout, tmp):
    """User+system CPU seconds of one run, or None when it used more than `timeout` seconds
    of CPU (RLIMIT_CPU: on a loaded machine a wall-clock cap would stop a run early)."""
    stdin = open(stdin_path) if stdin_path else subprocess.DEVNULL
    cap = int(timeout)
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "%U %S", "-o", f"{tmp}/time",
                            "nice", "-n", "0", binary, *args],
                           stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=50 * timeout,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (cap, cap)))
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0 and b"Command terminated by signal" in open(f"{tmp}/time", "rb").read():
        return None
    if p.returncode not in (0, 1, 3):
        sys.exit(f"{binary} {' '.join(args)}: exit {p.returncode}\n{p.stderr.decode()}")
    user, system = open(f"{tmp}/time").read().split()[-2:]
    return float(user) + float(system)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/gitops-core"
    sizes = [int(s) for s in (sys.argv[2] if len(sys.argv) > 2 else "1000,10000,50000").split(",")]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 120
    only = sys.argv[5].split(",") if len(sys.argv) > 5 else None
    tmp = tempfile.mkdtemp(prefix="scaling-")
    try:
        results = {}
        stopped = set()
        for n in sizes:
            d = f"{tmp}/{n}"
            generate(n, d)
            for name, args in commands(d):
                if only and name not in only:
                    continue
                if name in stopped:
                    results[(name, n)] = None
                    continue
                stdin = f"{d}/serve.jsonl" if name == "serve" else None
                times = []
                for _ in range(runs):
                    t = cpu_seconds(binary, args, stdin, timeout, tmp)
                    if t is None:
                        stopped.add(name)
                        break
                    times.append(t)
                median = sorted(times)[(len(times) - 1) // 2] if name not in stopped else None
                results[(name, n)] = median
                shown = f"{median:.2f} s" if median is not None else f">{timeout:.0f} s"
                print(f"{name:18} {n:>7}: {shown:>9}  (runs: {' '.join(f'{t:.2f}' for t in times)})",
                      flush=True)
            shutil.rmtree(d)
        print()
        header = " | ".join(f"{n:,}" for n in sizes)
        print(f"| Command | {header} | " + " | ".join(
            f"{b:,} / {a:,}" for a, b in zip(sizes, sizes[1:])) + " |")
        print("|---|" + "---:|" * (2 * len(sizes) - 1))
        for name, _ in commands(tmp):
            if only and name not in only:
                continue
            cells = []
            for n in sizes:
                v = results.get((name, n), "")
                cells.append(v if v == "" else f"{v:.2f} s" if v is not None else f">{timeout:.0f} s")
            ratios = []
            for a, b in zip(sizes, sizes[1:]):
                va, vb = results.get((name, a)), results.get((name, b))
                ratios.append(f"{vb / va:.1f}x" if va and vb else "")
            print(f"| `{name}` | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
