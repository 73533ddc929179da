package main

import (
	"encoding/json"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/argoproj/argo-cd/v3/controller"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
)

// scopes is the cluster cache's answer to whether a kind is namespaced: the kinds listed
// are cluster-scoped, any other is namespaced.
type scopes map[schema.GroupKind]bool

func (s scopes) IsNamespaced(gk schema.GroupKind) (bool, error) {
	return !s[gk], nil
}

// NormalizeTargets runs the controller's NormalizeTargetObjects (3.6.2's name for
// DeduplicateTargetObjects) on one object.
func NormalizeTargets(namespace string, obj *unstructured.Unstructured, clusterScoped bool, set func(*unstructured.Unstructured) error) ([]*unstructured.Unstructured, []v1alpha1.ApplicationCondition, error) {
	s := scopes{}
	if clusterScoped {
		s[obj.GroupVersionKind().GroupKind()] = true
	}
	return controller.NormalizeTargetObjects(namespace, []*unstructured.Unstructured{obj}, s, set)
}

// normalizeCase answers `normalize`: the controller's NormalizeTargetObjects on an app's
// desired objects (namespaces given or cleared by scope, the tracking set again where the
// namespace changed, repeated objects dropped but the last with a RepeatedResourceWarning),
// as CompareAppState calls it (annotation tracking, the app's instance name). Go's map
// order makes the order of the objects and conditions random: both are sorted here.
func normalizeCase(params json.RawMessage) (any, error) {
	var p struct {
		App                 v1alpha1.Application `json:"app"`
		ControllerNamespace string               `json:"controllerNamespace"`
		ClusterScoped       []schema.GroupKind   `json:"clusterScoped"`
		Desired             []map[string]any     `json:"desired"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	s := scopes{}
	for _, gk := range p.ClusterScoped {
		s[gk] = true
	}
	rt := argo.NewResourceTracking()
	instance := p.App.InstanceName(p.ControllerNamespace)
	set := func(u *unstructured.Unstructured) error {
		return rt.SetAppInstance(u, appLabelKey, instance, p.App.Spec.Destination.Namespace, v1alpha1.TrackingMethodAnnotation, "")
	}
	desired := objects(p.Desired)
	// The repo server sets the tracking on every rendered object first.
	for _, d := range desired {
		if err := set(d); err != nil {
			return map[string]any{"error": err.Error()}, nil
		}
	}
	objs, conditions, err := controller.NormalizeTargetObjects(p.App.Spec.Destination.Namespace, desired, s, set)
	if err != nil {
		return map[string]any{"error": err.Error()}, nil
	}
	out := []map[string]any{}
	for _, o := range objs {
		out = append(out, o.Object)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	messages := []string{}
	for _, c := range conditions {
		messages = append(messages, c.Type+": "+c.Message)
	}
	sort.Strings(messages)
	return map[string]any{"objects": out, "conditions": messages}, nil
}

func key(o map[string]any) string {
	u := unstructured.Unstructured{Object: o}
	gk := u.GroupVersionKind().GroupKind()
	return gk.Group + "/" + gk.Kind + "/" + u.GetNamespace() + "/" + u.GetName()
}
