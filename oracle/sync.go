// The `sync` method: gitops-engine's sync package driven through its public API against a
// simulated cluster, recording the order in which `Sync()` acts on resources and hooks.
//
// The cluster is an in-memory object store behind an in-process HTTP server (discovery, the
// apiextensions CRD lookups and the dynamic client's GET/PUT/DELETE) and behind a kube.Kubectl
// of this program (apply, create, replace, update and prune deletes). A sync runs as the
// application controller runs it: each pass deduplicates the targets
// (controller.NormalizeTargetObjects, DeduplicateTargetObjects before 3.6), reconciles them with the live objects
// (sync.Reconcile), builds a new sync context with the results so far
// (sync.WithInitialState) and calls Sync() once, until the operation completes.
//
// The simulated cluster's rules (shared with gitops-core's side, oracle/syncsim.rs):
//   - an apply, create, replace or update stores the object (the namespace dropped for a
//     cluster-scoped kind); a dry run stores nothing;
//   - a delete removes the object, or marks it deleted (deletionTimestamp) while it still has
//     finalizers; removing the hook finalizer from a marked object removes it;
//   - the annotation `oracle.gitops-core/fail` lists what fails with "simulated failure":
//     `apply` (the wet apply, create, replace or update), `dry-run`, `delete` (a prune);
//   - health is `oracle.gitops-core/health` (Degraded) or Healthy;
//   - the app's live objects are the stored ones with a tracking annotation.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	gosync "sync"
	"time"

	gitopsdiff "github.com/argoproj/argo-cd/gitops-engine/v3/pkg/diff"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/common"
	kubeutil "github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/openapi"

	"github.com/argoproj/argo-cd/v3/controller"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
)

const (
	failAnnotation   = "oracle.gitops-core/fail"
	healthAnnotation = "oracle.gitops-core/health"
	simulatedFailure = "simulated failure"
	// The app's live objects are those with its tracking annotation (the generator sets it
	// on every desired object, as the controller does); the namespace the sync creates for
	// CreateNamespace=true has none, so it is not the app's.
	trackingAnnotation = "argocd.argoproj.io/tracking-id"
	// The most passes a case may take; a sync still running then is reported as such.
	maxPasses = 15
)

// servedKind is one kind the simulated API server serves.
type servedKind struct {
	group, version, kind, plural string
	namespaced                   bool
}

// The built-in kinds the simulated API server serves (the generator's kinds).
var builtinKinds = []servedKind{
	{"", "v1", "Namespace", "namespaces", false},
	{"", "v1", "ConfigMap", "configmaps", true},
	{"", "v1", "Secret", "secrets", true},
	{"", "v1", "Service", "services", true},
	{"", "v1", "ServiceAccount", "serviceaccounts", true},
	{"", "v1", "Pod", "pods", true},
	{"apps", "v1", "Deployment", "deployments", true},
	{"batch", "v1", "Job", "jobs", true},
	{"rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false},
	{"rbac.authorization.k8s.io", "v1", "Role", "roles", true},
	{"rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true},
	{"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false},
}

// op is one call the sync made on the cluster.
type op struct {
	Verb   string `json:"verb"`
	Key    string `json:"key"`
	DryRun bool   `json:"dryRun,omitempty"`
	Flags  string `json:"flags,omitempty"`
}

// cluster is the simulated cluster: its objects by key, and the calls made on it.
type cluster struct {
	mu      gosync.Mutex
	objects map[string]*unstructured.Unstructured
	ops     []op
	uids    int
}

func objKey(group, kind, namespace, name string) string {
	return group + "/" + kind + "/" + namespace + "/" + name
}

func keyOf(o *unstructured.Unstructured) string {
	return objKey(o.GroupVersionKind().Group, o.GetKind(), o.GetNamespace(), o.GetName())
}

func hasFailure(o *unstructured.Unstructured, what string) bool {
	if o == nil {
		return false
	}
	for _, item := range strings.Split(o.GetAnnotations()[failAnnotation], ",") {
		if strings.TrimSpace(item) == what {
			return true
		}
	}
	return false
}

// kinds is every kind served now: the built-in ones and those of the CRDs in the cluster.
// The caller holds the lock.
func (c *cluster) kinds() []servedKind {
	out := append([]servedKind{}, builtinKinds...)
	for _, o := range c.objects {
		if !kubeutil.IsCRD(o) {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
		scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
		versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
		for _, v := range versions {
			name, _, _ := unstructured.NestedString(v.(map[string]any), "name")
			out = append(out, servedKind{group, name, kind, plural, scope != "Cluster"})
		}
	}
	return out
}

// IsNamespaced answers as a cluster cache does: from what the cluster serves.
func (c *cluster) IsNamespaced(gk schema.GroupKind) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.kinds() {
		if k.group == gk.Group && k.kind == gk.Kind {
			return k.namespaced, nil
		}
	}
	return false, apierrors.NewNotFound(schema.GroupResource{Group: gk.Group, Resource: gk.Kind}, "")
}

// record notes a call, its key without a namespace for a cluster-scoped kind (the sync sets
// the app's namespace on every target). The caller holds the lock.
func (c *cluster) record(o op) {
	parts := strings.SplitN(o.Key, "/", 4)
	if len(parts) == 4 {
		for _, k := range c.kinds() {
			if k.group == parts[0] && k.kind == parts[1] && !k.namespaced {
				o.Key = objKey(parts[0], parts[1], "", parts[3])
			}
		}
	}
	c.ops = append(c.ops, o)
}

// store keeps an applied object, as the API server would: a uid, the namespace dropped for a
// cluster-scoped kind. The caller holds the lock.
func (c *cluster) store(obj *unstructured.Unstructured) {
	o := obj.DeepCopy()
	for _, k := range c.kinds() {
		if k.group == o.GroupVersionKind().Group && k.kind == o.GetKind() && !k.namespaced {
			o.SetNamespace("")
		}
	}
	key := keyOf(o)
	if old, ok := c.objects[key]; ok {
		o.SetUID(old.GetUID())
	} else {
		c.uids++
		o.SetUID(types.UID(fmt.Sprintf("uid-%d", c.uids)))
	}
	c.objects[key] = o
}

// remove deletes an object, or marks it deleted while it has finalizers. The caller holds the
// lock.
func (c *cluster) remove(key string) bool {
	o, ok := c.objects[key]
	if !ok {
		return false
	}
	if len(o.GetFinalizers()) > 0 {
		if o.GetDeletionTimestamp() == nil {
			ts := metav1.NewTime(time.Unix(1700000000, 0).UTC())
			o.SetDeletionTimestamp(&ts)
		}
		return true
	}
	delete(c.objects, key)
	return true
}

// find looks an object up by group, kind, namespace and name; a cluster-scoped object is found
// whatever namespace is asked for. The caller holds the lock.
func (c *cluster) find(group, kind, namespace, name string) (string, *unstructured.Unstructured) {
	if o, ok := c.objects[objKey(group, kind, namespace, name)]; ok {
		return objKey(group, kind, namespace, name), o
	}
	if o, ok := c.objects[objKey(group, kind, "", name)]; ok {
		return objKey(group, kind, "", name), o
	}
	return "", nil
}

// ServeHTTP answers discovery, the apiextensions CRD lookups and the dynamic client.
func (c *cluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	kinds := c.kinds()
	reply := func(code int, body any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(body)
	}
	notFound := func() {
		reply(http.StatusNotFound, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
			Message: "the server could not find the requested resource"})
	}
	var group, version string
	var rest []string
	switch {
	case len(parts) == 1 && parts[0] == "api":
		reply(http.StatusOK, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
		return
	case len(parts) == 1 && parts[0] == "apis":
		list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		seen := map[string]int{}
		for _, k := range kinds {
			if k.group == "" {
				continue
			}
			gv := metav1.GroupVersionForDiscovery{GroupVersion: k.group + "/" + k.version, Version: k.version}
			i, ok := seen[k.group]
			if !ok {
				seen[k.group] = len(list.Groups)
				list.Groups = append(list.Groups, metav1.APIGroup{Name: k.group, PreferredVersion: gv})
				i = len(list.Groups) - 1
			}
			dup := false
			for _, v := range list.Groups[i].Versions {
				dup = dup || v.Version == k.version
			}
			if !dup {
				list.Groups[i].Versions = append(list.Groups[i].Versions, gv)
			}
		}
		reply(http.StatusOK, list)
		return
	case len(parts) >= 2 && parts[0] == "api":
		group, version, rest = "", parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, version, rest = parts[1], parts[2], parts[3:]
	default:
		notFound()
		return
	}
	if len(rest) == 0 {
		list := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: strings.TrimPrefix(group+"/"+version, "/")}
		for _, k := range kinds {
			if k.group == group && k.version == version {
				list.APIResources = append(list.APIResources, metav1.APIResource{Name: k.plural, Kind: k.kind,
					Namespaced: k.namespaced, Verbs: metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}})
			}
		}
		if len(list.APIResources) == 0 {
			notFound()
			return
		}
		reply(http.StatusOK, list)
		return
	}
	namespace := ""
	if len(rest) >= 2 && rest[0] == "namespaces" && len(rest) != 2 {
		namespace, rest = rest[1], rest[2:]
	}
	if len(rest) != 2 {
		notFound()
		return
	}
	var kind *servedKind
	for i := range kinds {
		if kinds[i].group == group && kinds[i].version == version && kinds[i].plural == rest[0] {
			kind = &kinds[i]
		}
	}
	if kind == nil {
		notFound()
		return
	}
	name := rest[1]
	key, obj := c.find(group, kind.kind, namespace, name)
	crd := kind.kind == "CustomResourceDefinition" && group == "apiextensions.k8s.io"
	switch r.Method {
	case http.MethodGet:
		if !crd {
			c.record(op{Verb: "get", Key: objKey(group, kind.kind, namespace, name)})
		}
		if obj == nil {
			notFound()
			return
		}
		out := obj.DeepCopy()
		if crd {
			// The CRD is established as soon as it is stored.
			_ = unstructured.SetNestedSlice(out.Object, []any{map[string]any{"type": "Established", "status": "True"}},
				"status", "conditions")
		}
		reply(http.StatusOK, out.Object)
	case http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			reply(http.StatusBadRequest, nil)
			return
		}
		var updated unstructured.Unstructured
		if err := json.Unmarshal(body, &updated.Object); err != nil {
			reply(http.StatusBadRequest, nil)
			return
		}
		c.record(op{Verb: "unfinalize", Key: objKey(group, kind.kind, namespace, name)})
		if obj == nil {
			notFound()
			return
		}
		// The sync only updates to remove the hook finalizer.
		stored := obj.DeepCopy()
		stored.SetFinalizers(updated.GetFinalizers())
		if stored.GetDeletionTimestamp() != nil && len(stored.GetFinalizers()) == 0 {
			delete(c.objects, key)
		} else {
			c.objects[key] = stored
		}
		reply(http.StatusOK, stored.Object)
	case http.MethodDelete:
		c.record(op{Verb: "delete", Key: objKey(group, kind.kind, namespace, name)})
		if obj == nil || !c.remove(key) {
			notFound()
			return
		}
		reply(http.StatusOK, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
	default:
		reply(http.StatusMethodNotAllowed, nil)
	}
}

// kubectl is the kube.Kubectl the sync context gets: its ResourceOperations and its prune
// deletes act on the simulated cluster.
type kubectl struct{ c *cluster }

func (k *kubectl) ManageResources(*rest.Config) (kubeutil.ResourceOperations, func(), error) {
	return &resourceOps{k.c}, func() {}, nil
}

// ManageServerSideDiffDryRuns serves the controller's server-side diff, which a sync does
// not run.
func (k *kubectl) ManageServerSideDiffDryRuns(*rest.Config) (gitopsdiff.KubeApplier, func(), error) {
	return nil, nil, fmt.Errorf("the simulated cluster runs no server-side diff")
}

func (k *kubectl) LoadOpenAPISchema(*rest.Config) (openapi.Resources, *managedfields.GvkParser, error) {
	return nil, nil, nil
}

func (k *kubectl) ConvertToVersion(obj *unstructured.Unstructured, _, _ string) (*unstructured.Unstructured, error) {
	return obj, nil
}

func (k *kubectl) DeleteResource(_ context.Context, _ *rest.Config, gvk schema.GroupVersionKind, name, namespace string, _ metav1.DeleteOptions) error {
	k.c.mu.Lock()
	defer k.c.mu.Unlock()
	k.c.record(op{Verb: "delete", Key: objKey(gvk.Group, gvk.Kind, namespace, name)})
	key, obj := k.c.find(gvk.Group, gvk.Kind, namespace, name)
	if obj == nil {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, name)
	}
	if hasFailure(obj, "delete") {
		return fmt.Errorf("%s", simulatedFailure)
	}
	k.c.remove(key)
	return nil
}

func (k *kubectl) GetResource(_ context.Context, _ *rest.Config, gvk schema.GroupVersionKind, name, namespace string) (*unstructured.Unstructured, error) {
	k.c.mu.Lock()
	defer k.c.mu.Unlock()
	_, obj := k.c.find(gvk.Group, gvk.Kind, namespace, name)
	if obj == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, name)
	}
	return obj.DeepCopy(), nil
}

func (k *kubectl) CreateResource(context.Context, *rest.Config, schema.GroupVersionKind, string, string, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, fmt.Errorf("not simulated")
}

func (k *kubectl) PatchResource(context.Context, *rest.Config, schema.GroupVersionKind, string, string, types.PatchType, []byte, ...string) (*unstructured.Unstructured, error) {
	return nil, fmt.Errorf("not simulated")
}

func (k *kubectl) GetAPIResources(*rest.Config, bool, kubeutil.ResourceFilter) ([]kubeutil.APIResourceInfo, error) {
	return nil, fmt.Errorf("not simulated")
}

func (k *kubectl) GetServerVersion(*rest.Config) (string, error) { return "v1.37.0", nil }

func (k *kubectl) NewDynamicClient(config *rest.Config) (dynamic.Interface, error) {
	return dynamic.NewForConfig(config)
}

func (k *kubectl) SetOnKubectlRun(kubeutil.OnKubectlRunFunc) {}

// resourceOps records each apply, create, replace and update, and carries it out on the
// simulated cluster unless it is a dry run.
type resourceOps struct{ c *cluster }

func (r *resourceOps) run(verb string, obj *unstructured.Unstructured, dry util.DryRunStrategy, flags string) (string, error) {
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	dryRun := dry != util.DryRunNone
	r.c.record(op{Verb: verb, Key: keyOf(obj), DryRun: dryRun, Flags: flags})
	if (dryRun && hasFailure(obj, "dry-run")) || (!dryRun && hasFailure(obj, "apply")) {
		return "", fmt.Errorf("%s", simulatedFailure)
	}
	if !dryRun {
		r.c.store(obj)
	}
	return fmt.Sprintf("%s/%s %s", obj.GetKind(), obj.GetName(), verb), nil
}

func flagList(names ...string) string {
	var out []string
	for i := 0; i+1 < len(names); i += 2 {
		if names[i+1] == "true" {
			out = append(out, names[i])
		}
	}
	return strings.Join(out, ",")
}

func (r *resourceOps) ApplyResource(_ context.Context, obj *unstructured.Unstructured, dry util.DryRunStrategy, force, validate, serverSide bool, _ string) (string, error) {
	return r.run("apply", obj, dry, flagList("force", fmt.Sprint(force), "serverSide", fmt.Sprint(serverSide), "validate", fmt.Sprint(validate)))
}

func (r *resourceOps) ReplaceResource(_ context.Context, obj *unstructured.Unstructured, dry util.DryRunStrategy, force bool) (string, error) {
	return r.run("replace", obj, dry, flagList("force", fmt.Sprint(force)))
}

func (r *resourceOps) CreateResource(_ context.Context, obj *unstructured.Unstructured, dry util.DryRunStrategy, validate bool) (string, error) {
	return r.run("create", obj, dry, flagList("validate", fmt.Sprint(validate)))
}

func (r *resourceOps) UpdateResource(_ context.Context, obj *unstructured.Unstructured, dry util.DryRunStrategy) (*unstructured.Unstructured, error) {
	if _, err := r.run("update", obj, dry, ""); err != nil {
		return nil, err
	}
	return obj, nil
}

// healthOverride gives the simulated health: Degraded when the annotation says so, else
// Healthy.
type healthOverride struct{}

func (healthOverride) GetResourceHealth(obj *unstructured.Unstructured) (*health.HealthStatus, error) {
	if obj.GetAnnotations()[healthAnnotation] == "Degraded" {
		return &health.HealthStatus{Status: health.HealthStatusDegraded, Message: "simulated degradation"}, nil
	}
	return &health.HealthStatus{Status: health.HealthStatusHealthy}, nil
}

type passRecord struct {
	Ops     []op            `json:"ops"`
	Wave    *map[string]any `json:"wave"`
	Phase   string          `json:"phase"`
	Message string          `json:"message"`
}

type syncResult struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	HookPhase string `json:"hookPhase"`
	SyncPhase string `json:"syncPhase"`
	HookType  string `json:"hookType"`
	Message   string `json:"message"`
}

// dedupTargets prepares the targets as the controller's CompareAppState does before
// reconciling, with its exported NormalizeTargetObjects (3.6.2's name for
// DeduplicateTargetObjects, which did not compile at v3.2.12): a namespaced (or unknown) kind
// without a namespace gets the app's, a cluster-scoped one loses its namespace, and of several
// targets with one key (an unnamed one keyed by generateName and position) the last stays.
// The tracking it sets again on a moved object is left as the case has it (the sync cases
// compare operations, the tracking area the tracking). It returns the targets in Go's map
// order; they are put back in their order in the request, which the controller's
// reconciliation does not depend on.
func dedupTargets(namespace string, objs []*unstructured.Unstructured, info kubeutil.ResourceInfoProvider) ([]*unstructured.Unstructured, error) {
	index := map[*unstructured.Unstructured]int{}
	for i, o := range objs {
		index[o] = i
	}
	out, _, err := controller.NormalizeTargetObjects(namespace, objs, info, func(*unstructured.Unstructured) error { return nil })
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return index[out[i]] < index[out[j]] })
	return out, nil
}

// syncCase runs one sync operation to its end and reports every pass's calls.
func (s *server) syncCase(params json.RawMessage) (any, error) {
	var p struct {
		App       v1alpha1.Application `json:"app"`
		Desired   []map[string]any     `json:"desired"`
		Live      []map[string]any     `json:"live"`
		StartedAt int64                `json:"startedAt"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	if p.App.Operation == nil || p.App.Operation.Sync == nil {
		return nil, fmt.Errorf("the app has no sync operation")
	}
	syncOp := p.App.Operation.Sync
	// As the controller: the operation's sync options only.
	options := syncOp.SyncOptions
	namespace := p.App.Spec.Destination.Namespace
	c := &cluster{objects: map[string]*unstructured.Unstructured{}}
	for _, o := range objects(p.Live) {
		if o != nil {
			c.objects[keyOf(o)] = o
		}
	}
	srv := httptest.NewServer(c)
	defer srv.Close()
	config := &rest.Config{Host: srv.URL, QPS: 10000, Burst: 10000}
	started := metav1.NewTime(time.Unix(p.StartedAt, 0).UTC())
	propagation := metav1.DeletePropagationForeground
	switch {
	case options.HasOption("PrunePropagationPolicy=background"):
		propagation = metav1.DeletePropagationBackground
	case options.HasOption("PrunePropagationPolicy=orphan"):
		propagation = metav1.DeletePropagationOrphan
	}
	var phase common.OperationPhase = common.OperationRunning
	var message string
	var results []common.ResourceSyncResult
	passes := []passRecord{}
	for pass := 0; pass < maxPasses && !phase.Completed(); pass++ {
		c.mu.Lock()
		live := map[kubeutil.ResourceKey]*unstructured.Unstructured{}
		for _, o := range c.objects {
			if o.GetAnnotations()[trackingAnnotation] != "" {
				live[kubeutil.GetResourceKey(o)] = o.DeepCopy()
			}
		}
		c.ops = nil
		c.mu.Unlock()
		targets := objects(p.Desired)
		for i := range targets {
			if targets[i] != nil {
				targets[i] = targets[i].DeepCopy()
			}
		}
		targets, derr := dedupTargets(namespace, targets, c)
		if derr != nil {
			return nil, derr
		}
		reconciled := sync.Reconcile(targets, live, namespace, c)
		var wave *map[string]any
		initial := make([]common.ResourceSyncResult, len(results))
		for i, r := range results {
			r.Order = i + 1
			initial[i] = r
		}
		opts := []sync.SyncOpt{
			sync.WithLogr(logr.Discard()),
			sync.WithHealthOverride(healthOverride{}),
			sync.WithOperationSettings(syncOp.DryRun, syncOp.Prune, syncOp.SyncStrategy.Force(),
				syncOp.IsApplyStrategy() || len(syncOp.Resources) > 0),
			sync.WithInitialState(phase, message, initial, started),
			sync.WithResourcesFilter(func(key kubeutil.ResourceKey, _ *unstructured.Unstructured, _ *unstructured.Unstructured) bool {
				return len(syncOp.Resources) == 0 ||
					argo.ContainsSyncResource(key.Name, key.Namespace, schema.GroupVersionKind{Kind: key.Kind, Group: key.Group}, syncOp.Resources)
			}),
			sync.WithManifestValidation(!options.HasOption(common.SyncOptionsDisableValidation)),
			sync.WithSyncWaveHook(func(ph common.SyncPhase, w int, final bool) error {
				wave = &map[string]any{"phase": string(ph), "wave": w, "last": final}
				return nil
			}),
			sync.WithPruneLast(options.HasOption(common.SyncOptionPruneLast)),
			sync.WithPrunePropagationPolicy(&propagation),
			sync.WithReplace(options.HasOption(common.SyncOptionReplace)),
			sync.WithServerSideApply(options.HasOption(common.SyncOptionServerSideApply)),
			sync.WithServerSideApplyManager("argocd-controller"),
			sync.WithClientSideApplyMigration(!options.HasOption(common.SyncOptionDisableClientSideApplyMigration),
				common.DefaultClientSideApplyMigrationManager),
			sync.WithPruneConfirmed(false),
			sync.WithSkipDryRunOnMissingResource(options.HasOption(common.SyncOptionSkipDryRunOnMissingResource)),
		}
		if options.HasOption("CreateNamespace=true") {
			// As the controller's namespace modifier without managedNamespaceMetadata: the
			// namespace is synced only when it does not exist.
			opts = append(opts, sync.WithNamespaceModifier(func(managed, live *unstructured.Unstructured) (bool, error) {
				return managed != nil && live == nil, nil
			}))
		}
		revision := syncOp.Revision
		ctx, cleanup, err := sync.NewSyncContext(revision, reconciled, config, config, &kubectl{c}, namespace, opts...)
		if err != nil {
			return nil, err
		}
		ctx.Sync(context.Background())
		cleanup()
		phase, message, results = ctx.GetState()
		c.mu.Lock()
		ops := append([]op{}, c.ops...)
		c.mu.Unlock()
		passes = append(passes, passRecord{Ops: ops, Wave: wave, Phase: string(phase), Message: message})
	}
	out := []syncResult{}
	for _, r := range results {
		out = append(out, syncResult{Group: r.ResourceKey.Group, Kind: r.ResourceKey.Kind, Namespace: r.ResourceKey.Namespace,
			Name: r.ResourceKey.Name, Status: string(r.Status), HookPhase: string(r.HookPhase), SyncPhase: string(r.SyncPhase),
			HookType: string(r.HookType), Message: r.Message})
	}
	return map[string]any{"passes": passes, "phase": string(phase), "message": message, "results": out}, nil
}
