package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/managedfields/managedfieldstest"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
)

// newTypeConverter builds the API server's type converter (structured-merge-diff's schema of
// every built-in kind) from the same OpenAPI v2 document's definitions.
func newTypeConverter(path string) (managedfields.TypeConverter, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Definitions map[string]*spec.Schema `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The API server's schemas carry the defaults of list-map key fields (`+default="TCP"`
	// on the protocol of ContainerPort and ServicePort in k8s.io/api); the v2 document states
	// them only in words. Its field manager reads a port without a protocol as the TCP port
	// it is defaulted to.
	for _, name := range []string{"io.k8s.api.core.v1.ContainerPort", "io.k8s.api.core.v1.ServicePort"} {
		def, ok := doc.Definitions[name]
		if !ok {
			return nil, fmt.Errorf("%s: no definition %s", path, name)
		}
		p := def.Properties["protocol"]
		p.Default = "TCP"
		def.Properties["protocol"] = p
	}
	return managedfields.NewTypeConverter(doc.Definitions, false)
}

// dryRuns answers `dryruns`: for every paired desired and live object of a `diff` request,
// what a Kubernetes API server answers to a server-side apply dry run of the desired object
// (manager `argocd-controller`, conflicts forced: gitops-engine's kubectl apply options set
// --force-conflicts whenever it applies server-side, dry runs included): the
// API machinery's own field manager (server-side apply merge, managedFields, conflicts) over
// the live object, with the tracking annotation set as the controller sets it before the
// diff; and the live objects as a server stores them (`live`: port protocols defaulted),
// which the runner sends both sides instead. No admission, and of the server's defaulting
// only the ports' protocol (the field manager of the API machinery's tests, whose unstructured
// answer leaves out what a server's typed encoding keeps, such as an empty `metadata` of a
// template). An object the field manager refuses is
// answered as `errors[i]` and no dry run, which both sides then fail to compare.
func (s *server) dryRuns(params json.RawMessage) (any, error) {
	if s.typeConverter == nil {
		return nil, fmt.Errorf("dryruns needs the OpenAPI v2 document (first argument)")
	}
	var p diffParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	if len(p.Desired) != len(p.Live) {
		return nil, fmt.Errorf("desired and live must be paired (%d, %d)", len(p.Desired), len(p.Live))
	}
	// Decoded again, so the request's objects stay as they were.
	desired, live := objects(p.Desired), objects(p.Live)
	out := []map[string]any{}
	errs := map[string]string{}
	// The live objects as an API server stores them: its defaulter gives every port its
	// protocol (a stored object never lacks it; the generator's objects "as written" may).
	stored := make([]map[string]any, len(p.Live))
	for i, l := range live {
		if l == nil {
			continue
		}
		c := l.DeepCopy()
		defaultProtocols(c.Object, c.GetKind() == "Service")
		stored[i] = c.Object
		live[i] = c
	}
	tracking := argo.NewResourceTracking()
	for i := range desired {
		d, l := desired[i], live[i]
		if d == nil || l == nil {
			continue
		}
		d, l = d.DeepCopy(), l.DeepCopy()
		if p.App != nil {
			if err := tracking.SetAppInstance(d, appLabelKey, p.App.Metadata.Name, p.App.Spec.Destination.Namespace, v1alpha1.TrackingMethodAnnotation, ""); err != nil {
				return nil, err
			}
		}
		result, err := s.applyDryRun(d, l)
		if err != nil {
			errs[fmt.Sprint(i)] = err.Error()
			continue
		}
		out = append(out, result)
	}
	return map[string]any{"dryRuns": out, "errors": errs, "live": stored}, nil
}

func (s *server) applyDryRun(desired, live *unstructured.Unstructured) (result map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("field manager: %v", r)
		}
	}()
	gvk := live.GroupVersionKind()
	if desired.GroupVersionKind() != gvk {
		return nil, fmt.Errorf("desired %s and live %s differ in apiVersion", desired.GroupVersionKind(), gvk)
	}
	fm := managedfieldstest.NewFakeFieldManager(s.typeConverter, gvk)
	applied, err := fm.Apply(live, desired, "argocd-controller", true)
	if err != nil {
		return nil, err
	}
	u, ok := applied.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("field manager answered a %T", applied)
	}
	// The API server defaults the merged object before it answers; of its defaulters, the
	// one the generated objects reach in a list-map key: a port's protocol is TCP.
	defaultProtocols(u.Object, u.GetKind() == "Service")
	// The field manager stamps its entries with the clock: the stamp of the live object's
	// creation instead, so a case answers the same bytes on every run (Argo CD drops
	// managedFields before comparing).
	entries := u.GetManagedFields()
	for i := range entries {
		entries[i].Time = nil
		if t := live.GetCreationTimestamp(); !t.IsZero() {
			entries[i].Time = &t
		}
	}
	u.SetManagedFields(entries)
	return u.Object, nil
}

// defaultProtocols sets `protocol: TCP` on every port without one: the ports of containers
// (containers, initContainers, ephemeralContainers, at any depth: pod templates) and a
// Service's `spec.ports`.
func defaultProtocols(obj map[string]any, service bool) {
	setTCP := func(ports any) {
		list, _ := ports.([]any)
		for _, p := range list {
			if m, ok := p.(map[string]any); ok {
				if _, has := m["protocol"]; !has {
					m["protocol"] = "TCP"
				}
			}
		}
	}
	if service {
		if spec, ok := obj["spec"].(map[string]any); ok {
			setTCP(spec["ports"])
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, child := range t {
				if k == "containers" || k == "initContainers" || k == "ephemeralContainers" {
					list, _ := child.([]any)
					for _, c := range list {
						if m, ok := c.(map[string]any); ok {
							setTCP(m["ports"])
						}
					}
				}
				walk(child)
			}
		case []any:
			for _, child := range t {
				walk(child)
			}
		}
	}
	walk(obj)
}
