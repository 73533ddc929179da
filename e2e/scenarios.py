#!/usr/bin/env python3
"""The end-to-end scenarios of e2e/run against a real Kubernetes 1.37 API server.

Run by `e2e/run` inside `e2e/cluster/up` (KUBECONFIG set). Needs E2E_BIN (kubectl's folder),
GITOPS_CORE (the CLI) and GITOPS_HOST (the reference host). Every case prints one PASS or FAIL
line; the run ends with `N passed, M failed`. `E2E_ONLY=1,3` runs some scenarios only.
Standard library only.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = os.path.join(HERE, "kinds")
KUBECTL = os.path.join(os.environ["E2E_BIN"], "kubectl")
GITOPS_CORE = os.environ["GITOPS_CORE"]
GITOPS_HOST = os.environ["GITOPS_HOST"]
WORK = tempfile.mkdtemp(prefix="gitops-core-e2e-cases.")
ONLY = [s for s in os.environ.get("E2E_ONLY", "").split(",") if s]

passed, failed, timings = [], [], {}


class Failure(Exception):
    pass


def run(cmd, check=True, stdin=None):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise Failure(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip() or p.stdout.strip()}")
    return p


def kubectl(*args, check=True, stdin=None):
    return run([KUBECTL, *args], check=check, stdin=stdin)


def expect(cond, message):
    if not cond:
        raise Failure(message)


def case(name, fn, *args):
    start = time.time()
    try:
        fn(*args)
        passed.append(name)
        print(f"PASS {name} ({time.time() - start:.1f} s)", flush=True)
    except Exception as e:  # a case that breaks in any way is a failed case, the run goes on
        failed.append(name)
        text = str(e).strip().replace("\n", "\n     ")
        print(f"FAIL {name} ({time.time() - start:.1f} s): {text}", flush=True)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def render(kind_file, method, folder):
    """A file of e2e/kinds/ with ${M} replaced by the apply method."""
    with open(os.path.join(KINDS, kind_file)) as f:
        text = f.read().replace("${M}", method)
    return write(os.path.join(WORK, folder, kind_file), text)


def wait_until(what, seconds, fn):
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            last = fn()
            if last:
                return last
        except Failure as e:
            last = e
        time.sleep(0.5)
    raise Failure(f"{what}: not after {seconds} s (last: {last})")


def get_json(path, namespace):
    """The live objects of a manifest file, as `kubectl get -f -o json` gives them with their
    managedFields."""
    out = kubectl("get", "-f", path, "-n", namespace, "-o", "json", "--show-managed-fields").stdout
    return out


def diff(desired, live_json, namespace, *extra, folder):
    live = write(os.path.join(WORK, folder, "live.json"), live_json)
    args = [GITOPS_CORE, "diff", "-n", namespace, "--live", live, *extra]
    for d in desired:
        args += ["--desired", d]
    return run(args, check=False)


def ensure_namespace(ns):
    if kubectl("get", "namespace", ns, check=False).returncode != 0:
        kubectl("create", "namespace", ns)
    wait_until(f"service account default in {ns}", 30,
               lambda: kubectl("get", "serviceaccount", "default", "-n", ns, check=False).returncode == 0)


# ---------------------------------------------------------------------------------------------
# 1. Apply, then diff, for every kind an app carries, three ways.

APPLY_KINDS = [
    ("Deployment", ["deployment.yaml"]),
    ("StatefulSet", ["statefulset.yaml"]),
    ("DaemonSet", ["daemonset.yaml"]),
    ("Job", ["job.yaml"]),
    ("CronJob", ["cronjob.yaml"]),
    ("Service ClusterIP", ["service-clusterip.yaml"]),
    ("Service NodePort", ["service-nodeport.yaml"]),
    ("Service LoadBalancer", ["service-loadbalancer.yaml"]),
    ("Ingress", ["ingress.yaml"]),
    ("ConfigMap", ["configmap.yaml"]),
    ("Secret", ["secret.yaml"]),
    ("PersistentVolumeClaim", ["pvc.yaml"]),
    ("ServiceAccount", ["serviceaccount.yaml"]),
    ("RBAC (Role, RoleBinding, ClusterRole, ClusterRoleBinding)", ["rbac.yaml"]),
    ("NetworkPolicy", ["networkpolicy.yaml"]),
    ("PodDisruptionBudget", ["pdb.yaml"]),
    ("HorizontalPodAutoscaler", ["hpa.yaml"]),
    ("CustomResourceDefinition and a Widget", ["crd.yaml", "widget.yaml"]),
    ("ValidatingWebhookConfiguration", ["webhook.yaml"]),
    ("Namespace", ["namespace.yaml"]),
]
METHODS = {
    "csa": ["apply"],
    "ssa": ["apply", "--server-side"],
    "create": ["create"],
}


def apply_then_diff(method, files):
    ns = f"e2e-{method}"
    ensure_namespace(ns)
    folder = f"s1-{method}-{files[0]}"
    paths = [render(f, method, folder) for f in files]
    for p in paths:
        kubectl(*METHODS[method], "-n", ns, "-f", p)
        if p.endswith("crd.yaml"):
            kubectl("wait", "--for", "condition=Established", "-f", p, "--timeout", "60s")
    live = "\n---\n".join(get_json(p, ns) for p in paths)
    d = diff(paths, live, ns, folder=folder)
    expect(d.returncode == 0, f"diff said {d.returncode} (not Synced):\n{d.stdout}{d.stderr}")


def scenario_1():
    for method in METHODS:
        for name, files in APPLY_KINDS:
            case(f"1 apply then diff: {name}, {method}", apply_then_diff, method, files)


# ---------------------------------------------------------------------------------------------
# 2. Drift as people make it, on a Deployment applied with kubectl apply.

def drift_setup():
    ns = "e2e-drift"
    ensure_namespace(ns)
    path = render("deployment.yaml", "drift", "s2")
    kubectl("apply", "-n", ns, "-f", path)
    # The deployment controller writes its annotation and status: fields a controller adds.
    wait_until("the Deployment's rollout", 60, lambda: json.loads(
        kubectl("get", "deployment", "web", "-n", ns, "-o", "json").stdout)
        .get("status", {}).get("availableReplicas") == 2)
    return ns, path


def drift_diff(ns, path, *extra):
    return diff([path], get_json(path, ns), ns, *extra, folder="s2")


def drift_controller_fields(ns, path):
    live = json.loads(kubectl("get", "deployment", "web", "-n", ns, "-o", "json").stdout)
    expect("deployment.kubernetes.io/revision" in live["metadata"].get("annotations", {}),
           "the deployment controller wrote no revision annotation")
    d = drift_diff(ns, path, "--unmanaged")
    expect(d.returncode == 0, f"a controller's fields made a diff:\n{d.stdout}")
    expect("none" in d.stdout.split("Unmanaged additions")[1].splitlines()[1],
           f"a controller's fields listed as unmanaged additions:\n{d.stdout}")


def drift_scale(ns, path):
    kubectl("scale", "deployment", "web", "-n", ns, "--replicas", "5")
    try:
        d = drift_diff(ns, path, "--explain")
    finally:
        kubectl("scale", "deployment", "web", "-n", ns, "--replicas", "2")
    expect(d.returncode == 1, f"diff after kubectl scale said {d.returncode}:\n{d.stdout}")
    expect("-  replicas: 5" in d.stdout and "+  replicas: 2" in d.stdout, f"no replicas in the diff:\n{d.stdout}")
    # The API server records no time for a write through the scale subresource.
    expect("spec.replicas: desired 2, live 5, written by kubectl (Update, scale)\n" in d.stdout,
           f"--explain does not name kubectl's scale:\n{d.stdout}")


def drift_set_env(ns, path):
    kubectl("set", "env", "deployment/web", "-n", ns, "FEATURE_FLAGS=fast-checkout")
    d = drift_diff(ns, path, "--unmanaged")
    expect(d.returncode == 0, f"kubectl set env made a diff (Argo CD's three-way diff keeps it):\n{d.stdout}")
    expect(re.search(r"spec\.template\.spec\.containers\[name=web\]\.env\[name=FEATURE_FLAGS\]: "
                     r"\{\"name\":\"FEATURE_FLAGS\",\"value\":\"fast-checkout\"\}, written by kubectl-set \(Update, ",
                     d.stdout), f"--unmanaged does not list the variable:\n{d.stdout}")


def drift_label(ns, path):
    kubectl("label", "deployment", "web", "-n", ns, "owner=ops")
    d = drift_diff(ns, path, "--unmanaged")
    expect(d.returncode == 0, f"kubectl label made a diff:\n{d.stdout}")
    expect(re.search(r"metadata\.labels\.owner: ops, written by kubectl-label \(Update, ", d.stdout),
           f"--unmanaged does not list the label:\n{d.stdout}")


def drift_edit(ns, path):
    kubectl("patch", "deployment", "web", "-n", ns, "-p",
            json.dumps({"spec": {"template": {"spec": {"containers": [
                {"name": "web", "image": "registry.example/web:hotfix"}]}}}}))
    d = drift_diff(ns, path, "--explain")
    expect(d.returncode == 1, f"an edit of a declared field made no diff:\n{d.stdout}")
    expect("image: registry.example/web:hotfix" in d.stdout, f"no image in the diff:\n{d.stdout}")
    expect(re.search(r"spec\.template\.spec\.containers\[name=web\]\.image: desired registry\.example/web:1\.0, "
                     r"live registry\.example/web:hotfix, written by kubectl-patch \(Update, ", d.stdout), f"--explain does not name kubectl-patch:\n{d.stdout}")


def scenario_2():
    try:
        ns, path = drift_setup()
    except Failure as e:
        case("2 drift: setup", lambda: (_ for _ in ()).throw(e))
        return
    case("2 drift: fields a controller adds are no diff", drift_controller_fields, ns, path)
    case("2 drift: kubectl scale is a diff, written by kubectl (scale)", drift_scale, ns, path)
    case("2 drift: kubectl set env is no diff, an unmanaged addition", drift_set_env, ns, path)
    case("2 drift: kubectl label is no diff, an unmanaged addition", drift_label, ns, path)
    case("2 drift: an edit of a field Git declares is a diff, written by kubectl-patch", drift_edit, ns, path)


# ---------------------------------------------------------------------------------------------
# 5. Health from real controllers (kube-controller-manager, kwok).

def health_of(kind, name, ns):
    live = write(os.path.join(WORK, "s5", f"{kind}-{name}.json"),
                 kubectl("get", kind, name, "-n", ns, "-o", "json").stdout)
    out = run([GITOPS_CORE, "health", live, "--output", "json"]).stdout
    r = json.loads(out)["resources"][0]
    return r.get("status", ""), r.get("message", "")


def health_deployment_progressing_to_healthy():
    ns = "e2e-health"
    ensure_namespace(ns)
    path = write(os.path.join(WORK, "s5", "rollout.yaml"), """
apiVersion: apps/v1
kind: Deployment
metadata: {name: rollout}
spec:
  replicas: 2
  minReadySeconds: 3
  selector: {matchLabels: {app: rollout}}
  template:
    metadata: {labels: {app: rollout}}
    spec: {containers: [{name: app, image: registry.example/app:1}]}
""")
    kubectl("apply", "-n", ns, "-f", path)
    seen = []
    def healthy():
        status, message = health_of("deployment", "rollout", ns)
        if not seen or seen[-1] != (status, message):
            seen.append((status, message))
        return status == "Healthy"
    wait_until("Healthy", 90, healthy)
    statuses = [s for s, _ in seen]
    expect("Progressing" in statuses, f"never Progressing on the way: {seen}")
    expect(statuses[-1] == "Healthy", f"{seen}")


def health_job_completes():
    ns = "e2e-health"
    ensure_namespace(ns)
    path = render("job.yaml", "health", "s5")
    kubectl("apply", "-n", ns, "-f", path)
    seen = []
    def done():
        status, message = health_of("job", "once", ns)
        seen.append(status)
        return status == "Healthy"
    wait_until("the Job's completion", 90, done)
    expect(seen[0] == "Progressing", f"a Job just created is not Progressing: {seen}")


def health_deployment_degraded():
    ns = "e2e-health"
    ensure_namespace(ns)
    path = write(os.path.join(WORK, "s5", "stuck.yaml"), """
apiVersion: apps/v1
kind: Deployment
metadata: {name: stuck}
spec:
  replicas: 1
  progressDeadlineSeconds: 10
  selector: {matchLabels: {app: stuck}}
  template:
    metadata: {labels: {app: stuck, e2e-never-ready: "true"}}
    spec: {containers: [{name: app, image: registry.example/app:broken}]}
""")
    kubectl("apply", "-n", ns, "-f", path)
    status, _ = health_of("deployment", "stuck", ns)
    expect(status == "Progressing", f"a new Deployment whose pods are not ready is {status}")
    status, message = wait_until("Degraded", 90, lambda: (lambda h: h if h[0] == "Degraded" else None)(
        health_of("deployment", "stuck", ns)))
    expect(message == 'Deployment "stuck" exceeded its progress deadline', f"message: {message}")


def scenario_5():
    case("5 health: a Deployment goes from Progressing to Healthy", health_deployment_progressing_to_healthy)
    case("5 health: a Job completes (Healthy)", health_job_completes)
    case("5 health: pods never ready leave the Deployment Degraded after its progress deadline",
         health_deployment_degraded)


# ---------------------------------------------------------------------------------------------
# 3. The incidents of Argo CD's documentation, through the reference host.

ARGOCD_CRDS = os.path.join(HERE, "cluster", "argocd-crds.yaml")
argocd_kinds_installed = []


def install_argocd_kinds():
    """Argo CD's Application and AppProject kinds (e2e/cluster/argocd-crds.yaml) and the argocd
    namespace, once: the host keeps each app's status on its Application object there."""
    if argocd_kinds_installed:
        return
    kubectl("apply", "-f", ARGOCD_CRDS)
    kubectl("wait", "--for", "condition=Established", "-f", ARGOCD_CRDS, "--timeout", "60s")
    if kubectl("get", "namespace", "argocd", check=False).returncode != 0:
        kubectl("create", "namespace", "argocd")
    argocd_kinds_installed.append(True)


class App:
    """An Application in its own namespace, with its manifests folder; the host keeps it (spec,
    status, operation) in the cluster's argocd namespace."""

    def __init__(self, name, spec_extra=None, annotations=None, project="default"):
        install_argocd_kinds()
        self.name = name
        self.ns = f"e2e-app-{name}"
        self.dir = os.path.join(WORK, "s3", name)
        self.manifests = os.path.join(self.dir, "manifests")
        os.makedirs(self.manifests, exist_ok=True)
        spec = {"project": project, "destination": {"namespace": self.ns,
                "server": "https://kubernetes.default.svc"},
                "source": {"repoURL": "https://git.example/apps.git", "path": name}}
        spec.update(spec_extra or {})
        self.app = write(os.path.join(self.dir, "app.json"), json.dumps({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": "argocd", "annotations": annotations or {}},
            "spec": spec}))
        ensure_namespace(self.ns)

    def manifest(self, file, text):
        write(os.path.join(self.manifests, file), text)

    def remove(self, file):
        os.remove(os.path.join(self.manifests, file))

    def host(self, command, *extra, revision="r1", ok=(0,)):
        p = run([GITOPS_HOST, command, "--app", self.app, "--manifests", self.manifests,
                 "--revision", revision, "--timeout", "120", *extra], check=False)
        if p.returncode not in ok:
            raise Failure(f"gitops-host {command} exited {p.returncode}:\n{p.stdout}{p.stderr}")
        return p.stdout

    def application(self):
        """The Application object as the cluster holds it."""
        return json.loads(kubectl("get", "applications.argoproj.io", self.name, "-n", "argocd",
                                  "-o", "json").stdout)

    def get(self, kind, name, check=True):
        p = kubectl("get", kind, name, "-n", self.ns, "-o", "json", "--show-managed-fields", check=check)
        return json.loads(p.stdout) if p.returncode == 0 else None


DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}{meta}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: app, image: "{image}"}}]}}
"""


def deploy(name="web", replicas=2, image="registry.example/web:1", meta=""):
    return DEPLOY.format(name=name, replicas=replicas, image=image, meta=meta)


AUTOMATED = {"syncPolicy": {"automated": {"prune": True, "selfHeal": True}}}


def incident_self_heal():
    a = App("selfheal", AUTOMATED)
    a.manifest("web.yaml", deploy())
    out = a.host("reconcile")
    expect("Initiated automated sync" in out and "Phase:              Succeeded" in out, out)
    expect(a.host("get").count("Synced") >= 2, "not Synced after the first sync")
    kubectl("scale", "deployment", "web", "-n", a.ns, "--replicas", "5")
    def healed():
        out = a.host("reconcile", ok=(0, 1))
        return out if a.get("deployment", "web")["spec"]["replicas"] == 2 else None
    out = wait_until("self-heal", 60, healed)
    expect("Phase:              Succeeded" in out, out)


def incident_set_env_then_replace():
    a = App("setenv", AUTOMATED)
    a.manifest("web.yaml", deploy())
    a.host("reconcile")
    kubectl("set", "env", "deployment/web", "-n", a.ns, "FEATURE_FLAGS=fast-checkout")
    out = a.host("reconcile")
    expect("Decision:           no sync" in out and "not OutOfSync" in out, f"self-heal acted on kubectl set env:\n{out}")
    env = a.get("deployment", "web")["spec"]["template"]["spec"]["containers"][0].get("env", [])
    expect(any(e["name"] == "FEATURE_FLAGS" for e in env), "the variable is gone without a sync")
    out = a.host("sync", "--sync-option", "Replace=true")
    env = a.get("deployment", "web")["spec"]["template"]["spec"]["containers"][0].get("env", [])
    expect(env == [], f"a Replace sync kept {env}:\n{out}")


def incident_prune_statefulset_claim_survives():
    a = App("prune")
    a.manifest("db.yaml", open(os.path.join(KINDS, "statefulset.yaml")).read())
    a.manifest("web.yaml", deploy())
    a.host("sync")
    wait_until("the claim of db-0", 60, lambda: a.get("pvc", "data-db-0", check=False))
    a.remove("db.yaml")
    out = a.host("sync", "--prune")
    expect(re.search(r"StatefulSet\s+e2e-app-prune\s+db\s+Pruned", out), f"the StatefulSet was not pruned:\n{out}")
    wait_until("the StatefulSet's deletion", 60, lambda: a.get("statefulset", "db", check=False) is None)
    expect(a.get("pvc", "data-db-0", check=False) is not None, "the claim data-db-0 was deleted")


def incident_prune_false():
    a = App("noprune")
    a.manifest("keep.yaml", """apiVersion: v1
kind: ConfigMap
metadata:
  name: keep
  annotations: {argocd.argoproj.io/sync-options: Prune=false}
data: {a: "1"}
""")
    a.manifest("web.yaml", deploy())
    a.host("sync")
    a.remove("keep.yaml")
    out = a.host("sync", "--prune")
    expect(re.search(r"ConfigMap\s+e2e-app-noprune\s+keep\s+PruneSkipped\s+.*ignored \(no prune\)", out),
           f"no 'ignored (no prune)':\n{out}")
    expect(a.get("configmap", "keep", check=False) is not None, "the ConfigMap was deleted")


def incident_allow_empty():
    a = App("empty", {"syncPolicy": {"automated": {"prune": True, "allowEmpty": False}}})
    a.manifest("web.yaml", deploy())
    a.host("reconcile")
    a.remove("web.yaml")
    out = a.host("reconcile", revision="r2", ok=(1,))
    expect("Skipping sync attempt to [r2]: auto-sync will wipe out all resources" in out, out)
    expect(a.get("deployment", "web", check=False) is not None, "the Deployment was pruned")


def incident_respect_ignore_differences():
    a = App("respect", {
        "ignoreDifferences": [{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}],
        "syncPolicy": {"syncOptions": ["RespectIgnoreDifferences=true"]}})
    a.manifest("web.yaml", deploy(replicas=1))
    a.host("sync")
    # What an HPA does to the replica count.
    kubectl("scale", "deployment", "web", "-n", a.ns, "--replicas", "4")
    a.manifest("web.yaml", deploy(replicas=1, image="registry.example/web:2"))
    out = a.host("sync", revision="r2")
    live = a.get("deployment", "web")
    expect(live["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/web:2", out)
    expect(live["spec"]["replicas"] == 4, f"the sync set replicas to {live['spec']['replicas']}:\n{out}")


JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  annotations: {{argocd.argoproj.io/hook: {hook}, argocd.argoproj.io/hook-delete-policy: BeforeHookCreation}}
spec:
  backoffLimit: 0
  template:
    metadata: {{labels: {labels}}}
    spec:
      restartPolicy: Never
      containers: [{{name: job, image: registry.example/job:1}}]
"""


def incident_presync_before_deployment():
    a = App("presync")
    a.manifest("migrate.yaml", JOB.format(name="migrate", hook="PreSync", labels="{app: migrate}"))
    a.manifest("web.yaml", deploy())
    out = a.host("sync")
    expect("Phase:              Succeeded" in out, out)
    job = a.get("job", "migrate")
    web = a.get("deployment", "web")
    done = job["status"].get("completionTime")
    expect(done is not None, f"the migration did not complete: {job['status']}")
    expect(done <= web["metadata"]["creationTimestamp"],
           f"the Deployment ({web['metadata']['creationTimestamp']}) came before the migration ended ({done})")
    rows = [l for l in out.splitlines() if re.search(r"\b(migrate|web)\b", l)]
    expect(len(rows) == 2 and "migrate" in rows[0] and "PreSync" in rows[0], f"results order:\n{out}")


def incident_sync_fail_hook():
    a = App("syncfail")
    a.manifest("migrate.yaml", JOB.format(name="migrate", hook="PreSync", labels="{app: migrate, e2e-fail: \"true\"}"))
    a.manifest("cleanup.yaml", JOB.format(name="cleanup", hook="SyncFail", labels="{app: cleanup}"))
    a.manifest("web.yaml", deploy())
    out = a.host("sync", ok=(1,))
    expect("Phase:              Failed" in out, out)
    expect(re.search(r"Job\s+e2e-app-syncfail\s+cleanup\s+Synced\s+SyncFail\s+Reached expected number of succeeded pods", out),
           f"no SyncFail hook run:\n{out}")
    expect(a.get("job", "cleanup")["status"].get("succeeded") == 1, "the SyncFail Job did not succeed")
    expect(a.get("deployment", "web", check=False) is None, "the Deployment was applied after the failed PreSync hook")


def incident_waves_wait_for_health():
    a = App("waves")
    a.manifest("web.yaml", deploy(meta=", annotations: {argocd.argoproj.io/sync-wave: '0'}").replace(
        "spec:\n  replicas", "spec:\n  minReadySeconds: 4\n  replicas"))
    a.manifest("after.yaml", """apiVersion: v1
kind: ConfigMap
metadata:
  name: after
  annotations: {argocd.argoproj.io/sync-wave: "1"}
data: {a: "1"}
""")
    out = a.host("sync")
    expect("Phase:              Succeeded" in out, out)
    web = a.get("deployment", "web")
    cm = a.get("configmap", "after")
    available = [c for c in web["status"]["conditions"] if c["type"] == "Available"][0]
    expect(cm["metadata"]["creationTimestamp"] >= available["lastTransitionTime"],
           f"wave 1 ({cm['metadata']['creationTimestamp']}) before wave 0 was healthy ({available['lastTransitionTime']})")


def incident_generate_name_hook_deleted():
    a = App("postsync")
    a.manifest("web.yaml", deploy())
    a.manifest("smoke.yaml", """apiVersion: batch/v1
kind: Job
metadata:
  generateName: smoke-
  annotations: {argocd.argoproj.io/hook: PostSync, argocd.argoproj.io/hook-delete-policy: HookSucceeded}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: smoke, image: registry.example/smoke:1}]
""")
    out = a.host("sync")
    expect("Phase:              Succeeded" in out, out)
    row = re.search(r"Job\s+e2e-app-postsync\s+(smoke-\S+)\s+Synced\s+PostSync", out)
    expect(row, f"no PostSync hook named from generateName:\n{out}")
    jobs = json.loads(kubectl("get", "jobs", "-n", a.ns, "-o", "json").stdout)["items"]
    expect(jobs == [], f"HookSucceeded left {[j['metadata']['name'] for j in jobs]} (hook {row.group(1)})")


def managers(obj):
    return sorted((m["manager"], m["operation"]) for m in obj["metadata"].get("managedFields", []))


def csa_migration(name, sync_options, apply_args, annotations=None):
    """A Deployment first applied by hand with `kubectl apply` (client side) and a label Git no
    longer declares, then synced by an app with ServerSideApply=true. Returns the live object
    and the sync's output."""
    a = App(name, {"syncPolicy": {"syncOptions": ["ServerSideApply=true", *sync_options]}},
            annotations=annotations)
    by_hand = write(os.path.join(a.dir, "by-hand.yaml"), deploy(meta=", labels: {legacy: 'yes'}"))
    kubectl("apply", *apply_args, "-n", a.ns, "-f", by_hand)
    a.manifest("web.yaml", deploy(image="registry.example/web:2"))
    out = a.host("sync")
    expect("Phase:              Succeeded" in out and "serverside-applied" in out, out)
    live = a.get("deployment", "web")
    expect(live["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/web:2", out)
    return live, out


def csa_migration_default():
    live, out = csa_migration("csamigrate", [], [])
    labels = live["metadata"].get("labels", {})
    expect("legacy" not in labels, f"the label kubectl apply set survived the sync: {labels}\n{out}")
    m = managers(live)
    expect(("kubectl-client-side-apply", "Update") not in m and ("argocd-controller", "Apply") in m,
           f"managers after the migration: {m}")


def csa_migration_disabled():
    live, out = csa_migration("csakeep", ["ClientSideApplyMigration=false"], [])
    labels = live["metadata"].get("labels", {})
    expect(labels.get("legacy") == "yes", f"ClientSideApplyMigration=false lost the label: {labels}\n{out}")
    expect(("kubectl-client-side-apply", "Update") in managers(live), f"managers: {managers(live)}")


def csa_migration_annotation():
    live, out = csa_migration(
        "csamanager", [], ["--field-manager", "legacy-deployer"],
        annotations={"argocd.argoproj.io/client-side-apply-migration-manager": "legacy-deployer"})
    labels = live["metadata"].get("labels", {})
    expect("legacy" not in labels, f"the label legacy-deployer set survived the sync: {labels}\n{out}")
    m = managers(live)
    expect(not any(name == "legacy-deployer" for name, _ in m), f"managers after the migration: {m}")


def status_in_cluster():
    a = App("status", {"syncPolicy": {"automated": {"prune": True}}})
    a.manifest("web.yaml", deploy())
    out = a.host("reconcile")
    expect("Initiated automated sync" in out and "Phase:              Succeeded" in out, out)
    app = a.application()
    st = app.get("status", {})
    expect(st.get("sync", {}).get("status") == "Synced" and st["sync"].get("revision") == "r1",
           f"status.sync: {st.get('sync')}")
    expect(st["sync"]["comparedTo"]["destination"]["namespace"] == a.ns, f"status.sync: {st['sync']}")
    expect(st.get("health", {}).get("status") in ("Healthy", "Progressing"), f"status.health: {st.get('health')}")
    rows = [r for r in st.get("resources", []) if r["kind"] == "Deployment" and r["name"] == "web"]
    expect(len(rows) == 1 and rows[0]["status"] == "Synced" and rows[0]["group"] == "apps"
           and rows[0]["version"] == "v1" and rows[0]["namespace"] == a.ns and "health" in rows[0],
           f"status.resources: {st.get('resources')}")
    op = st.get("operationState", {})
    expect(op.get("phase") == "Succeeded" and op["syncResult"]["revision"] == "r1"
           and op["operation"]["initiatedBy"] == {"automated": True}, f"status.operationState: {op}")
    expect("operation" not in app, f"the operation was left on the Application: {app.get('operation')}")
    # Read back: the next pass finds the last sync in the cluster and does not sync again.
    kubectl("scale", "deployment", "web", "-n", a.ns, "--replicas", "3")
    out = a.host("reconcile", ok=(1,))
    expect("Decision:           no sync" in out and "most recent sync already to [r1]" in out, out)
    st = a.application()["status"]
    expect(st["sync"]["status"] == "OutOfSync", f"status.sync after a scale: {st['sync']}")
    expect(st["operationState"]["phase"] == "Succeeded", f"operationState lost: {st.get('operationState')}")
    # An operation set on the Application (as `argocd app sync` sets it) is run by the next pass.
    kubectl("patch", "applications.argoproj.io", a.name, "-n", "argocd", "--type", "merge", "-p",
            json.dumps({"operation": {"sync": {"revision": "r1"}, "initiatedBy": {"username": "e2e"}}}))
    out = a.host("reconcile")
    expect("run the requested operation" in out and "Phase:              Succeeded" in out, out)
    expect(a.get("deployment", "web")["spec"]["replicas"] == 2, "the requested sync did not restore replicas")
    app = a.application()
    expect("operation" not in app, f"the operation was left on the Application: {app.get('operation')}")
    st = app["status"]
    expect(st["sync"]["status"] == "Synced"
           and st["operationState"]["operation"]["initiatedBy"] == {"username": "e2e"},
           f"status after the requested sync: {st['sync']}, {st['operationState']}")
    out = kubectl("get", "applications.argoproj.io", a.name, "-n", "argocd").stdout
    expect(re.search(r"status\s+Synced\s+(Healthy|Progressing)", out), f"kubectl get application:\n{out}")


def project(name, manual_sync, app):
    install_argocd_kinds()
    path = write(os.path.join(WORK, "s3", f"project-{name}.json"), json.dumps({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                 "syncWindows": [{"kind": "deny", "schedule": "* * * * *", "duration": "1h",
                                  "applications": [app], "manualSync": manual_sync}]}}))
    kubectl("apply", "-f", path)


def sync_window_deny():
    project("frozen", True, "windowed")
    a = App("windowed", AUTOMATED, project="frozen")
    a.manifest("web.yaml", deploy())
    out = a.host("reconcile", ok=(1,))
    expect("Decision:           no sync" in out and "Reason:             Sync prevented by sync window" in out, out)
    expect(a.get("deployment", "web", check=False) is None, "the deny window let the automated sync create web")
    expect(a.application()["status"]["sync"]["status"] == "OutOfSync", "status not written")
    out = a.host("sync")
    expect("Phase:              Succeeded" in out, f"a manual sync (manualSync: true) did not go through:\n{out}")
    expect(a.get("deployment", "web", check=False) is not None, "no Deployment after the manual sync")


def sync_window_deny_manual():
    project("frozen-hard", False, "windowed-hard")
    a = App("windowed-hard", AUTOMATED, project="frozen-hard")
    a.manifest("web.yaml", deploy())
    p = run([GITOPS_HOST, "sync", "--app", a.app, "--manifests", a.manifests, "--revision", "r1"], check=False)
    expect(p.returncode == 2 and p.stderr.strip() == "gitops-host: cannot sync: blocked by sync window",
           f"exit {p.returncode}:\n{p.stdout}{p.stderr}")
    expect(a.get("deployment", "web", check=False) is None, "the blocked manual sync created web")


def kubeconfig_context():
    """The README's way to point the host at a cluster: KUBECONFIG names the file, --context the
    context when it is not the current one. This kubeconfig's current context is a server
    nobody listens on."""
    a = App("kubeconfig")
    a.manifest("web.yaml", deploy())
    a.host("sync")
    cfg = write(os.path.join(a.dir, "kubeconfig"), kubectl("config", "view", "--raw", "--flatten").stdout)
    context = kubectl("config", "current-context").stdout.strip()
    for args in (["set-cluster", "elsewhere", "--server", "https://127.0.0.1:1"],
                 ["set-context", "elsewhere", "--cluster", "elsewhere", "--user", "admin"],
                 ["use-context", "elsewhere"]):
        kubectl("--kubeconfig", cfg, "config", *args)
    env = dict(os.environ, KUBECONFIG=cfg)
    cmd = [GITOPS_HOST, "get", "--app", a.app, "--manifests", a.manifests]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    expect(p.returncode == 2, f"the current context (nobody there) answered {p.returncode}:\n{p.stdout}{p.stderr}")
    p = subprocess.run(cmd + ["--context", context], capture_output=True, text=True, timeout=120, env=env)
    expect(p.returncode == 0 and re.search(r"Deployment\s+e2e-app-kubeconfig\s+web\s+Synced", p.stdout),
           f"--context {context}: exit {p.returncode}:\n{p.stdout}{p.stderr}")


def scenario_3():
    case("3 incident: self-heal undoes a scale", incident_self_heal)
    case("3 incident: kubectl set env is never undone, a Replace sync removes it", incident_set_env_then_replace)
    case("3 incident: prune deletes a StatefulSet, its claim survives", incident_prune_statefulset_claim_survives)
    case("3 incident: Prune=false keeps it, ignored (no prune)", incident_prune_false)
    case("3 incident: allowEmpty false refuses an empty render", incident_allow_empty)
    case("3 incident: RespectIgnoreDifferences keeps the replicas an HPA owns", incident_respect_ignore_differences)
    case("3 incident: a PreSync migration Job runs before the Deployment", incident_presync_before_deployment)
    case("3 incident: a failed hook runs the SyncFail hook", incident_sync_fail_hook)
    case("3 incident: sync waves wait for health", incident_waves_wait_for_health)
    case("3 hooks: a PostSync hook named by generateName runs, HookSucceeded deletes it",
         incident_generate_name_hook_deleted)
    case("3 ClientSideApplyMigration: kubectl apply's fields move to argocd-controller, a label Git dropped goes",
         csa_migration_default)
    case("3 ClientSideApplyMigration=false: the label kubectl apply set stays", csa_migration_disabled)
    case("3 ClientSideApplyMigration: the app's migration-manager annotation names the manager",
         csa_migration_annotation)
    case("3 status: sync, health, resources and operationState on the Application in the cluster, read back",
         status_in_cluster)
    case("3 sync windows: a deny window blocks automated sync, a manual sync (manualSync: true) goes through",
         sync_window_deny)
    case("3 sync windows: without manualSync the manual sync is refused", sync_window_deny_manual)
    case("3 kubeconfig: the host follows KUBECONFIG and --context", kubeconfig_context)


# ---------------------------------------------------------------------------------------------
# 4. Server-side diff with the server's own dry-run apply.

def server_side_diff(method, files):
    ns = f"e2e-{method}"
    folder = f"s4-{method}-{files[0]}"
    paths = [render(f, method, folder) for f in files]
    dry = []
    for p in paths:
        dry.append(kubectl("apply", "--server-side", "--dry-run=server", "--field-manager=argocd-controller",
                       "--force-conflicts", "-n", ns, "-f", p, "-o", "json", "--show-managed-fields").stdout)
    dry_path = write(os.path.join(WORK, folder, "dry-run.json"), "\n---\n".join(dry))
    live = "\n---\n".join(get_json(p, ns) for p in paths)
    d = diff(paths, live, ns, "--dry-run", dry_path, folder=folder)
    if files == ["serviceaccount.yaml"]:
        # A ServiceAccount with nothing but a name gives the field manager no field, so the dry
        # run records no managedFields entry for it; Argo CD 3.6.2's server-side diff then fails
        # the comparison (removeWebhookMutation: "no managed fields found for manager" or
        # "must have the managedFields"), and so does gitops-core. In an app the tracking
        # annotation is a field: see "4 server-side diff through the host".
        expect(d.returncode == 2 and re.search(r"invalid dry-run result at /metadata/managedFields: "
                                               r"(no managed fields|no fields are managed by `argocd-controller`)",
                                               d.stderr), f"server-side diff said {d.returncode}:\n{d.stdout}{d.stderr}")
        return
    expect(d.returncode == 0, f"server-side diff said {d.returncode}:\n{d.stdout}{d.stderr}")


def server_side_diff_drift():
    ns, path = "e2e-drift", os.path.join(WORK, "s2", "deployment.yaml")
    expect(os.path.exists(path), "scenario 2 did not run")
    kubectl("scale", "deployment", "web", "-n", ns, "--replicas", "7")
    dry = kubectl("apply", "--server-side", "--dry-run=server", "--field-manager=argocd-controller",
                  "--force-conflicts", "-n", ns, "-f", path, "-o", "json", "--show-managed-fields").stdout
    dry_path = write(os.path.join(WORK, "s4", "drift-dry-run.json"), dry)
    d = diff([path], get_json(path, ns), ns, "--dry-run", dry_path, folder="s4")
    expect(d.returncode == 1 and "replicas: 7" in d.stdout, f"server-side diff after a scale:\n{d.stdout}{d.stderr}")


def server_side_diff_through_host():
    a = App("ssd", {"syncPolicy": {"syncOptions": ["ServerSideApply=true"]}})
    a.manifest("sa.yaml", open(os.path.join(KINDS, "serviceaccount.yaml")).read())
    a.manifest("web.yaml", deploy())
    out = a.host("sync")
    expect("Phase:              Succeeded" in out and "serverside-applied" in out, out)
    managers = {m["manager"] for m in a.get("deployment", "web")["metadata"]["managedFields"]}
    expect("argocd-controller" in managers, f"applied by {managers}")
    out = a.host("get")
    expect(re.search(r"ServiceAccount\s+e2e-app-ssd\s+web\s+Synced", out) and
           re.search(r"Deployment\s+e2e-app-ssd\s+web\s+Synced", out), out)
    kubectl("scale", "deployment", "web", "-n", a.ns, "--replicas", "3")
    out = a.host("get", ok=(1,))
    expect(re.search(r"Deployment\s+e2e-app-ssd\s+web\s+OutOfSync", out), out)


def scenario_4():
    for method in METHODS:
        for name, files in APPLY_KINDS:
            label = name if files != ["serviceaccount.yaml"] else \
                "ServiceAccount with only a name is a ComparisonError, as in Argo CD 3.6.2"
            case(f"4 server-side diff: {label}, {method}", server_side_diff, method, files)
    case("4 server-side diff: a scale is a diff", server_side_diff_drift)
    case("4 server-side diff through the host: ServerSideApply=true syncs, Synced, then a scale is OutOfSync",
         server_side_diff_through_host)


def main():
    scenarios = [("1", scenario_1), ("2", scenario_2), ("5", scenario_5), ("3", scenario_3), ("4", scenario_4)]
    for key, fn in scenarios:
        if ONLY and key not in ONLY:
            continue
        start = time.time()
        fn()
        timings[key] = time.time() - start
    print("scenario times: " + ", ".join(f"{k}: {v:.0f} s" for k, v in timings.items()))
    if not os.environ.get("E2E_KEEP_CASES"):
        shutil.rmtree(WORK, ignore_errors=True)
    else:
        print(f"case files kept in {WORK}")
    print(f"{len(passed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
