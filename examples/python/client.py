#!/usr/bin/env python3
"""A small client of `gitops-core serve`, standard library only.

Starts the server, shakes hands (`hello`), configures an ignore rule, asks for a diff and a
plan, and checks each answer. Exits non-zero on any surprise, so CI can run it:

    python3 examples/python/client.py target/debug/gitops-core
"""

import itertools
import json
import subprocess
import sys


class ServeError(Exception):
    """An error response: its code, message, object and path."""

    def __init__(self, error):
        super().__init__(f"{error['code']}: {error['message']}")
        self.error = error


class Client:
    """One `gitops-core serve` process, spoken to one JSON line at a time."""

    def __init__(self, binary):
        self.proc = subprocess.Popen(
            [binary, "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.ids = itertools.count(1)

    def call(self, method, params=None):
        request = {"id": next(self.ids), "method": method}
        if params is not None:
            request["params"] = params
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        response = json.loads(line)
        if response["id"] != request["id"]:
            raise RuntimeError(f"response to {response['id']!r}, expected {request['id']!r}")
        if "error" in response:
            raise ServeError(response["error"])
        return response["result"]

    def close(self):
        self.proc.stdin.close()
        code = self.proc.wait()
        if code != 0:
            raise RuntimeError(f"the server exited with {code}")


def deployment(replicas, image):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "shop"},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "api", "image": image}]}},
        },
    }


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/debug/gitops-core"
    client = Client(binary)

    hello = client.call("hello")
    assert hello["protocolVersion"] == 2, hello
    assert "diff" in hello["methods"], hello
    print(f"server {hello['engineVersion']}, protocol {hello['protocolVersion']}, "
          f"features {hello['features']}")

    # An HPA owns the replica count: ignore it, as an Application's ignoreDifferences does.
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "shop", "namespace": "argocd"},
        "spec": {
            "destination": {"namespace": "shop"},
            "ignoreDifferences": [
                {"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}
            ],
        },
    }
    client.call("configure", {"app": app})
    # A configure without params reports and keeps the configuration.
    client.call("configure")

    desired = [deployment(1, "shop/api:1.1")]
    live = [deployment(5, "shop/api:1.0")]
    diff = client.call("diff", {"desired": desired, "live": live})
    assert diff["syncStatus"] == "OutOfSync", diff
    paths = [op["path"] for r in diff["resources"] for op in r["diff"]]
    assert "/spec/replicas" not in paths, paths
    print(f"diff: {diff['syncStatus']}, changed {paths}")

    plan = client.call("plan", {"desired": desired, "live": live})
    assert [t["action"] for t in plan["tasks"]] == ["Apply"], plan
    print(f"plan: {len(plan['tasks'])} task(s)")

    # Drive a sync with `step` until it is done, reporting every action as carried out.
    request = {"appNamespace": "shop", "targets": desired, "revision": "abc123"}
    state, observations, passes = None, {}, 0
    while True:
        params = {"request": request, "observations": observations,
                  "now": "2024-01-01T00:00:00Z"}
        if state is not None:
            params["state"] = state
        step = client.call("step", params)
        passes += 1
        state = step["state"]
        if step["done"]:
            break
        assert passes < 20, step
        applied = [a["object"] for a in step["actions"] if a["kind"] == "Apply" and not a["dryRun"]]
        live_now = [{"object": o, "health": {"status": "Healthy"}} for o in applied]
        observations = {
            "live": live_now or observations.get("live", []),
            "outcomes": [{"id": a["id"], "status": "Succeeded"} for a in step["actions"]],
        }
    assert state["phase"] == "Succeeded", state
    print(f"step: {state['phase']} after {passes} passes")

    # Enum values are PascalCase everywhere; a near miss names the spelling meant.
    try:
        client.call("step", {"request": request, "now": "2024-01-01T00:00:00Z",
                             "observations": {"outcomes": [{"id": "x", "status": "succeeded"}]}})
        raise AssertionError("a lowercase outcome was accepted")
    except ServeError as e:
        assert e.error["path"] == "/params/observations/outcomes/0/status", e.error
        assert "did you mean `Succeeded`?" in e.error["message"], e.error

    try:
        client.call("diff", {"desired": "not a list", "live": []})
        raise AssertionError("a bad param was accepted")
    except ServeError as e:
        assert e.error["code"] == "invalid_params", e.error
        assert e.error["path"] == "/params/desired", e.error
        print(f"bad params: {e}")

    client.close()


if __name__ == "__main__":
    main()
