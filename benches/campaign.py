#!/usr/bin/env python3
"""The hand checks of issue 27's hostile-input campaign, as one script (run by hand, not by CI).

Each check runs the CLI (or `serve`) on a made input under GNU time (/usr/bin/time) and prints
one line: `ok` or `FINDING`, the check's name, CPU seconds, peak resident MB and what it saw.
A finding is an answer other than the one Argo CD gives (or the one the README promises), a
run over its time or memory bound, or output that leaks what it must not.

    cargo build --release --bin gitops-core
    python3 benches/campaign.py target/release/gitops-core [NAME-SUBSTRING...]

The checks: the preview's Markdown with names made of Markdown and HTML (no tag, heading,
comment or table break survives; the whole comment under its byte budget with 10,000 added
objects); a Secret through `actions run` (values masked, `core/v1` too; a create without a
namespace takes the object's, a bad name is refused); symbolic link loops under
`--customizations`, `test-health`, `test-actions` and the preview's folders (an error naming
the link, at once); the same answer on six runs of a jq rule and a Lua script that hit their
budgets; duplicate JSON keys in a `serve` request (refused); alias bombs, deep nesting, huge
numbers, byte order marks, CRLF, tabs (each read or refused as go-yaml v2 does, quickly); and
inputs ten times larger (time and memory growing about tenfold, not a hundredfold).
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/gitops-core"
ONLY = sys.argv[2:]
ROWS = []


def run(args, stdin=None, timeout=60):
    """Runs BIN with args under GNU time: (exit, stdout, stderr, cpu seconds, peak MB)."""
    fmt = "%U %S %M"
    with tempfile.NamedTemporaryFile("r") as t:
        try:
            p = subprocess.run(["/usr/bin/time", "-o", t.name, "-f", fmt, BIN, *args],
                               input=stdin, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, b"", b"timeout", float(timeout), 0.0
        user, system, rss = t.read().split()[-3:]
    return p.returncode, p.stdout, p.stderr, float(user) + float(system), int(rss) / 1024


def report(name, ok, cpu, mb, saw):
    line = f"{'ok' if ok else 'FINDING':8} {name:58} {cpu:6.2f} s {mb:7.1f} MB  {saw}"
    ROWS.append(line)
    print(line, flush=True)


def check(name):
    def wrap(f):
        if not ONLY or any(o in name for o in ONLY):
            try:
                f(name)
            except Exception as e:  # a check that breaks is a finding too
                report(name, False, 0, 0, f"check failed: {e!r}")
        return f
    return wrap


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w" if isinstance(text, str) else "wb") as f:
        f.write(text)


def cm(name, ns="shop", data=None):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns}, "data": data or {"k": "v"}}


TMP = tempfile.mkdtemp(prefix="campaign-")


# --- the preview's Markdown -------------------------------------------------------------------

def outside_fences(markdown):
    """The lines of `markdown` outside its fenced code blocks (CommonMark: a run of three or
    more backticks opens one, indented up to three spaces; a run at least as long closes it)."""
    out, fence = [], None
    for line in markdown.splitlines():
        m = re.match(r" {0,3}(`{3,})(.*)$", line)
        if fence is None and m and "`" not in m.group(2):
            fence = len(m.group(1))
        elif fence is not None and m and len(m.group(1)) >= fence and not m.group(2).strip():
            fence = None
        elif fence is None:
            out.append(line)
    return "\n".join(out)


@check("preview: names made of Markdown and HTML stay text")
def _(name):
    d = os.path.join(TMP, "md")
    app = "x|y <img src=a onerror=b> `c` # h"
    evil = "<img src=x>"
    write(f"{d}/base/{app}/a.yaml", json.dumps(cm("kept")))
    objs = [cm("kept"),
            cm(evil, ns="# heading"),
            cm("</code></summary></details><!--", data={"k": "<a href=x>y</a>"}),
            {"apiVersion": "apps/v1", "kind": "StatefulSet",
             "metadata": {"name": "db\n# fake\n```", "namespace": "shop"}}]
    write(f"{d}/head/{app}/a.yaml", "\n---\n".join(json.dumps(o) for o in objs))
    code, out, err, cpu, mb = run(["preview", "--base", f"{d}/base", "--head", f"{d}/head"])
    text = outside_fences(out.decode())
    bad = [s for s in ["<img", "<a href", "<!--", "\n# heading", "\n# fake",
                       "</details><!--"] if s in text]
    # A `|` from input inside a table row must be escaped.
    rows = [line for line in text.splitlines() if line.startswith("|")]
    broken = [r for r in rows if re.search(r"(?<!\\)\|y ", r)]
    report(name, code in (0, 1, 3) and not bad and not broken, cpu, mb,
           f"exit {code}, {len(text)} bytes, raw: {bad or 'none'}, broken rows: {len(broken)}"
           + (f", stderr: {err.decode()[:200]}" if code not in (0, 1, 3) else ""))


@check("preview: 10,000 added objects stay under the byte budget")
def _(name):
    d = os.path.join(TMP, "big")
    write(f"{d}/base/app/a.yaml", json.dumps(cm("base")))
    items = [cm(f"cm-{i}") for i in range(10000)]
    write(f"{d}/head/app/a.yaml", json.dumps({"apiVersion": "v1", "kind": "List",
                                              "items": items}))
    sizes = []
    for extra in ([], ["--max-bytes", "1000"]):
        code, out, err, cpu, mb = run(["preview", "--base", f"{d}/base", "--head", f"{d}/head",
                                       *extra])
        sizes.append((extra, code, len(out)))
    ok = sizes[0][2] <= 65536 and sizes[1][2] <= 1000 + 400
    report(name, ok, cpu, mb, ", ".join(f"{' '.join(e) or 'default'}: exit {c}, {n} bytes"
                                        for e, c, n in sizes))


# --- secrets through actions ----------------------------------------------------------------

SECRET_VALUE = "c3VwZXItc2VjcmV0LXZhbHVl"  # base64 of super-secret-value


@check("actions run: a Secret's values masked (v1 and core/v1), create checked")
def _(name):
    d = os.path.join(TMP, "act")
    indent = "            "
    touch = ('obj.metadata.annotations = obj.metadata.annotations or {}\n'
             'obj.metadata.annotations["x"] = "y"\nreturn obj\n')
    spawn = ('local j = {apiVersion = "batch/v1", kind = "Job", metadata = {name = "j"},\n'
             '  spec = {template = {spec = {containers = {}}}}}\n'
             'return {{operation = "create", resource = j}}\n')
    badname = ('local j = {apiVersion = "batch/v1", kind = "Job", metadata = {name = "Bad_Name",\n'
               '  namespace = "shop"}, spec = {}}\nreturn {{operation = "create", resource = j}}\n')
    defs = "".join(f"    - name: {n}\n      action.lua: |\n"
                   + "".join(f"{indent}{line}\n" for line in body.splitlines())
                   for n, body in [("touch", touch), ("spawn", spawn), ("badname", badname)])
    # `core/v1` is the group `core` to Argo CD too (`core_Secret`).
    write(f"{d}/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\n"
          "data:\n  resource.customizations.actions.Secret: |\n    definitions:\n" + defs
          + "  resource.customizations.actions.core_Secret: |\n    definitions:\n" + defs)
    leaks, notes = [], []
    cpu_all, mb_all = 0.0, 0.0
    for api in ["v1", "core/v1"]:
        secret = {"apiVersion": api, "kind": "Secret",
                  "metadata": {"name": "s", "namespace": "shop", "annotations": {
                      "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                          {"data": {"password": SECRET_VALUE}})}},
                  "data": {"password": SECRET_VALUE}, "stringData": {"token": "plain-secret"}}
        path = f"{d}/secret-{api.replace('/', '-')}.json"
        write(path, json.dumps(secret))
        for fmt in ["yaml", "json"]:
            code, out, err, cpu, mb = run(["actions", "run", path, "touch", "--argocd-cm",
                                           f"{d}/cm.yaml", "--output", fmt])
            cpu_all, mb_all = max(cpu_all, cpu), max(mb_all, mb)
            for s in [SECRET_VALUE, "super-secret-value", "plain-secret"]:
                if s.encode() in out or s.encode() in err:
                    leaks.append(f"{api} {fmt}: {s}")
            if code != 0:
                notes.append(f"{api} {fmt} exit {code}: {err.decode()[:120]}")
        code, out, err, cpu, mb = run(["actions", "run", path, "spawn", "--argocd-cm",
                                       f"{d}/cm.yaml", "--output", "json"])
        if code != 0 or b'"namespace": "shop"' not in out:
            notes.append(f"{api} create without namespace: exit {code} {err.decode()[:120]}")
        code, out, err, cpu, mb = run(["actions", "run", path, "badname", "--argocd-cm",
                                       f"{d}/cm.yaml"])
        if code == 0:
            notes.append(f"{api} a create named Bad_Name was accepted")
    report(name, not leaks and not notes, cpu_all, mb_all,
           f"leaks: {leaks or 'none'}; {'; '.join(notes) or 'create: namespace taken, bad name refused'}")


# --- symbolic link loops -------------------------------------------------------------------

@check("symlink loops: an error naming the link, at once")
def _(name):
    d = os.path.join(TMP, "loop")
    os.makedirs(f"{d}/scripts", exist_ok=True)
    for link in ["a", "b"]:
        if not os.path.lexists(f"{d}/scripts/{link}"):
            os.symlink(".", f"{d}/scripts/{link}")
    write(f"{d}/obj.json", json.dumps(cm("a")))
    os.makedirs(f"{d}/base/app", exist_ok=True)
    write(f"{d}/base/app/a.yaml", json.dumps(cm("a")))
    if not os.path.lexists(f"{d}/base/app/up"):
        os.symlink("..", f"{d}/base/app/up")
    runs = [["health", "--customizations", f"{d}/scripts", f"{d}/obj.json"],
            ["test-health", f"{d}/scripts"],
            ["test-actions", f"{d}/scripts"],
            ["preview", "--base", f"{d}/base", "--head", f"{d}/base"]]
    seen, ok, worst = [], True, (0.0, 0.0)
    for args in runs:
        code, out, err, cpu, mb = run(args, timeout=20)
        worst = (max(worst[0], cpu), max(worst[1], mb))
        first = err.decode().strip().splitlines()[:1]
        # A link inside the preview's folder is not followed, with a note naming it.
        good = first and "symbolic link" in first[0] and (
            code == 2 or (args[0] == "preview" and "not followed" in first[0]))
        ok &= bool(good)
        seen.append(f"{args[0]}: exit {code} {first[0][:90] if first else ''}")
    report(name, ok, *worst, "; ".join(seen))


# --- the same answer on every run ----------------------------------------------------------

@check("clock: a jq rule at its budget gives the same answer six times")
def _(name):
    d = os.path.join(TMP, "clock")
    data = {f"k{i}": "x" * 300 for i in range(150000)}
    write(f"{d}/desired.json", json.dumps(cm("a", data=data)))
    live = cm("a", data=dict(data, extra="drift"))
    write(f"{d}/live.json", json.dumps(live))
    rule = '.. | select(type == "string" and test("[a-z]{200}{20}"))'
    app = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
           "metadata": {"name": "app", "namespace": "argocd"},
           "spec": {"destination": {"namespace": "shop"},
                    "ignoreDifferences": [{"kind": "ConfigMap", "jqPathExpressions": [rule]}]}}
    write(f"{d}/app.json", json.dumps(app))
    answers, cpu_max, mb_max = set(), 0.0, 0.0
    for _ in range(6):
        code, out, err, cpu, mb = run(["diff", "--desired", f"{d}/desired.json", "--live",
                                       f"{d}/live.json", "--app", f"{d}/app.json"])
        answers.add((code, out, err))
        cpu_max, mb_max = max(cpu_max, cpu), max(mb_max, mb)
    stops = sorted({"the host's backstop (retry)" if b"backstop" in a[2] else
                    "the cost limit" if b"cost limit" in a[2] else a[2].decode()[:80]
                    for a in answers})
    report(name, len(answers) == 1, cpu_max, mb_max,
           f"{len(answers)} distinct answer(s), stopped by {', '.join(stops)}")


@check("clock: a Lua script at its budget gives the same answer six times")
def _(name):
    d = os.path.join(TMP, "clocklua")
    write(f"{d}/scripts/example.com/Widget/health.lua",
          "local s = 0\nfor i = 1, 2000000000 do s = s + i end\n"
          "return {status = 'Healthy', message = tostring(s)}\n")
    objs = [{"apiVersion": "example.com/v1", "kind": "Widget",
             "metadata": {"name": f"w{i}", "namespace": "shop"}} for i in range(40)]
    write(f"{d}/objs.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    answers, cpu_max, mb_max = set(), 0.0, 0.0
    for _ in range(6):
        code, out, err, cpu, mb = run(["health", "--customizations", f"{d}/scripts",
                                       f"{d}/objs.json", "--output", "json"])
        answers.add((code, out, err))
        cpu_max, mb_max = max(cpu_max, cpu), max(mb_max, mb)
    kinds = set()
    for code, out, err in answers:
        messages = [r["message"] for r in json.loads(out)["resources"]] if out else [err.decode()]
        kinds.add(", ".join(f"{n} {m}" for m, n in sorted(collections.Counter(
            "backstop" if "backstop" in m else "request limit" if "request instruction" in m
            else "script limit" if "instruction limit" in m else m[:60] for m in messages
        ).items())))
    report(name, len(answers) == 1, cpu_max, mb_max,
           f"{len(answers)} distinct: {' / '.join(sorted(kinds))}")


# --- serve ---------------------------------------------------------------------------------

@check("serve: a request with a duplicate JSON key is refused")
def _(name):
    line = ('{"id": 1, "method": "health", "params": {"objects": [], "objects": '
            + json.dumps([cm("a")]) + "}}\n")
    code, out, err, cpu, mb = run(["serve"], stdin=line.encode())
    resp = json.loads(out.decode().splitlines()[0]) if out else {}
    ok = "error" in resp and "duplicate key" in json.dumps(resp)
    report(name, ok, cpu, mb, json.dumps(resp)[:160])


# --- YAML and JSON text --------------------------------------------------------------------

def parse_check(name, text, want, limit_cpu=1.0, limit_mb=200):
    """`health` on text: want is 'read' (exit 0), 'refused' (exit 2) or a substring of stdout."""
    d = os.path.join(TMP, "parse")
    path = f"{d}/{abs(hash(name))}.yaml"
    write(path, text)
    code, out, err, cpu, mb = run(["health", path, "--output", "json"], timeout=30)
    if want == "read":
        good = code == 0
    elif want == "refused":
        good = code == 2 and b"panicked" not in err
    else:
        good = code == 0 and want.encode() in out
    good &= cpu <= limit_cpu and mb <= limit_mb and b"panicked" not in err
    report(name, good, cpu, mb, f"exit {code} {err.decode().strip()[:110]}")


HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: shop}\n"


@check("yaml: billion laughs")
def _(name):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 10) + "]")
    parse_check(name, HEAD + "data:\n" + "".join(f"  {l}\n" for l in lines), "refused")


@check("yaml: merge-key bomb")
def _(name):
    lines = ["b0: &b0 {k0: 1, k1: 2, k2: 3, k3: 4, k4: 5, k5: 6, k6: 7, k7: 8}"]
    for i in range(1, 9):
        lines.append(f"b{i}: &b{i} {{<<: [" + ", ".join([f"*b{i-1}"] * 8) + f"], z{i}: 1}}")
    parse_check(name, HEAD + "data:\n" + "".join(f"  {l}\n" for l in lines), "refused")


@check("yaml: 200 block levels refused at 128")
def _(name):
    body = "".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "v\n"
    parse_check(name, HEAD + "spec:\n" + "".join("  " + l + "\n" for l in body.splitlines()),
                "refused")


@check("yaml: 100,000 flow levels refused before parsing")
def _(name):
    parse_check(name, HEAD + "spec: " + "[" * 100000 + "]" * 100000 + "\n", "refused")


@check("json: 100,000 levels refused")
def _(name):
    parse_check(name, '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, '
                '"spec": ' + "[" * 100000 + "]" * 100000 + "}", "refused")


@check("yaml: a 100,000-digit integer is a string")
def _(name):
    parse_check(name, HEAD + "data: {k: " + "9" * 100000 + "}\n", "read")


@check("json: -1e400 in a stream of documents without ---")
def _(name):
    parse_check(name, json.dumps(dict(cm("a"), spec={"n": 1})).replace("1}", "-1e400}")
                + json.dumps(cm("b")), "read")


@check("yaml: byte order marks (leading, after ---, inside)")
def _(name):
    parse_check(name, "\ufeff" + HEAD + "---\n\ufeff" + HEAD.replace("name: a", "name: b")
                + "data:\n\ufeff  k: v\n", "read")


@check("yaml: CRLF and CR-only line ends")
def _(name):
    parse_check(name, (HEAD + "data:\n  k: |\n    a\n    b\n").replace("\n", "\r\n")
                + "---\r" + HEAD.replace("name: a", "name: b").replace("\n", "\r"), "read")


@check("yaml: tabs as indentation are refused")
def _(name):
    parse_check(name, HEAD + "data:\n\tk: v\n", "refused")


@check("yaml: a \\' escape in a double-quoted scalar")
def _(name):
    parse_check(name, HEAD + 'data: {k: "it\\\'s", l: \'C:\\\'}\n', "read")


@check("yaml: --- then a document of only ... is refused")
def _(name):
    parse_check(name, HEAD + "---\n...\n", "refused")


@check("files: UTF-16 and ill-formed UTF-8 read as the repo-server reads them")
def _(name):
    d = os.path.join(TMP, "enc")
    text = HEAD + 'data: {k: "caf\u00e9"}\n'
    write(f"{d}/u16.yaml", b"\xff\xfe" + text.encode("utf-16-le"))
    write(f"{d}/l1.yaml", text.encode("latin-1"))
    seen, ok = [], True
    for f in ["u16.yaml", "l1.yaml"]:
        code, out, err, cpu, mb = run(["health", f"{d}/{f}"])
        ok &= code == 0
        seen.append(f"{f}: exit {code} {err.decode().strip()[:80]}")
    report(name, ok, cpu, mb, "; ".join(seen))


# --- ten times larger ----------------------------------------------------------------------

@check("10x: health on 5,000 and 50,000 Deployments")
def _(name):
    d = os.path.join(TMP, "tenx")
    res = []
    for n in [5000, 50000]:
        docs = "".join(
            f"---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{i}, namespace: s}}\n"
            f"spec: {{replicas: 2}}\nstatus: {{replicas: 2, readyReplicas: 2, updatedReplicas: 2,"
            f" availableReplicas: 2, observedGeneration: 1}}\n" for i in range(n))
        write(f"{d}/{n}.yaml", docs)
        code, out, err, cpu, mb = run(["health", f"{d}/{n}.yaml", "--output", "json"],
                                      timeout=300)
        res.append((n, code, cpu, mb))
    ratio_t = res[1][2] / max(res[0][2], 0.01)
    ratio_m = res[1][3] / max(res[0][3], 1)
    report(name, ratio_t <= 13 and ratio_m <= 13, res[1][2], res[1][3],
           f"5k: {res[0][2]:.2f} s {res[0][3]:.0f} MB; 50k: {res[1][2]:.2f} s {res[1][3]:.0f} MB;"
           f" {ratio_t:.1f}x time, {ratio_m:.1f}x memory")


@check("10x: diff of a 1 MB and a 10 MB value")
def _(name):
    d = os.path.join(TMP, "tenxv")
    res = []
    for mbytes in [1, 10]:
        v = "ab" * (mbytes * 512 * 1024)
        write(f"{d}/d{mbytes}.json", json.dumps(cm("a", data={"k": v})))
        write(f"{d}/l{mbytes}.json", json.dumps(cm("a", data={"k": v[::-1]})))
        code, out, err, cpu, mb = run(["diff", "--desired", f"{d}/d{mbytes}.json", "--live",
                                       f"{d}/l{mbytes}.json"], timeout=300)
        res.append((mbytes, code, cpu, mb))
    ratio_t = res[1][2] / max(res[0][2], 0.01)
    report(name, ratio_t <= 13 and res[1][1] in (0, 1), res[1][2], res[1][3],
           f"1 MB: exit {res[0][1]} {res[0][2]:.2f} s {res[0][3]:.0f} MB; 10 MB: exit {res[1][1]} "
           f"{res[1][2]:.2f} s {res[1][3]:.0f} MB; {ratio_t:.1f}x time")


print(f"\n{sum(r.startswith('FINDING') for r in ROWS)} finding(s) of {len(ROWS)} checks")
