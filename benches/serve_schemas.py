#!/usr/bin/env python3
"""Resident memory of `gitops-core serve` over many `diff` requests, each bringing a different
OpenAPI document (run by hand, not by CI).

Each request is a server-side diff of one custom resource (`Widget<i>` in `example<i>.io`) with
its dry-run answer and an `openapi` document describing that kind alone, padded with
`--definitions` more definitions so that each document is a sizeable schema. The server compiles
each document for its request and drops it with it, so resident memory stays flat however many
distinct schemas pass through. Prints VmRSS after `hello` and every `--every` requests, then the
growth from the first checkpoint to the last.

    cargo build --release --bin gitops-core
    python3 benches/serve_schemas.py target/release/gitops-core --requests 1000
"""
import argparse
import json

from serve_memory import Serve


def widget_schema(i, padding):
    group, kind = f"example{i}.io", f"Widget{i}"
    name = f"io.example{i}.v1.{kind}"
    definitions = {
        name: {
            "type": "object",
            "x-kubernetes-group-version-kind": [{"group": group, "version": "v1", "kind": kind}],
            "properties": {"spec": {"$ref": f"#/definitions/{name}Spec"}},
        },
        f"{name}Spec": {
            "type": "object",
            "properties": {
                "routes": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"}, "host": {"type": "string"},
                        "weight": {"type": "integer"}}},
                },
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                             "additionalProperties": {"type": "string"}},
            },
        },
    }
    for d in range(padding):
        definitions[f"io.example{i}.v1.Extra{d}"] = {
            "type": "object",
            "properties": {f"field{f}": {"type": "string"} for f in range(20)},
        }
    return group, kind, {"definitions": definitions}


def request(i, padding):
    group, kind, openapi = widget_schema(i, padding)
    api_version = f"{group}/v1"
    tracking = f"app:{group}/{kind}:default/w"
    argo = {"manager": "argocd-controller", "operation": "Apply", "apiVersion": api_version,
            "fieldsType": "FieldsV1", "fieldsV1": {
                "f:metadata": {"f:annotations": {"f:argocd.argoproj.io/tracking-id": {}}},
                "f:spec": {"f:routes": {'k:{"name":"a"}': {".": {}, "f:name": {}, "f:host": {}}},
                           "f:selector": {}}}}
    webhook = {"manager": "mutator", "operation": "Update", "apiVersion": api_version,
               "fieldsType": "FieldsV1",
               "fieldsV1": {"f:spec": {"f:routes": {'k:{"name":"a"}': {"f:weight": {}}}}}}
    spec = {"routes": [{"name": "a", "host": f"a{i}.example.com"}], "selector": {"app": "w"}}
    meta = {"name": "w", "namespace": "default"}
    desired = {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec}
    live_meta = dict(meta, annotations={"argocd.argoproj.io/tracking-id": tracking})
    live = {"apiVersion": api_version, "kind": kind,
            "metadata": dict(live_meta, managedFields=[argo]), "spec": spec}
    dry_spec = {"routes": [{"name": "a", "host": f"a{i}.example.com", "weight": 100}],
                "selector": {"app": "w"}}
    dry_run = {"apiVersion": api_version, "kind": kind,
               "metadata": dict(live_meta, managedFields=[argo, webhook]), "spec": dry_spec}
    app = {"metadata": {"name": "app"}, "spec": {"destination": {"namespace": "default"}}}
    return {"id": i, "method": "diff", "params": {
        "app": app, "desired": [desired], "live": [live], "dryRuns": [dry_run],
        "openapi": openapi}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default="target/release/gitops-core")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--definitions", type=int, default=100,
                        help="definitions added to each document besides the kind's own")
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args()
    server = Serve(args.binary)
    call, status = server.call, server.status

    call({"id": 0, "method": "hello"})
    print(f"baseline: {status('VmRSS') / 1024:.1f} MB resident")
    size = len(json.dumps(request(0, args.definitions)["params"]["openapi"]))
    print(f"each openapi document: {size / 1024:.0f} KiB, {args.definitions + 2} definitions")
    checkpoints = []
    for i in range(1, args.requests + 1):
        response = call(request(i, args.definitions))
        assert response["result"]["syncStatus"] == "Synced", response
        if i % args.every == 0:
            rss = status("VmRSS")
            checkpoints.append(rss)
            print(f"after {i} requests ({i} distinct schemas): {rss / 1024:.1f} MB resident, "
                  f"peak so far {status('VmHWM') / 1024:.1f} MB")
    server.close()
    if len(checkpoints) > 1:
        growth = (checkpoints[-1] - checkpoints[0]) / 1024
        per = (checkpoints[-1] - checkpoints[0]) / (args.requests - args.every)
        print(f"growth from request {args.every} to {args.requests}: {growth:+.1f} MB "
              f"({per:+.2f} KiB per request)")


if __name__ == "__main__":
    main()
