package main

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
)

// trackingCase answers `tracking`: one app's resource tracking through argo-cd/v3's
// util/argo resource tracking (3.6.2), for a desired object and a live object:
//
//   - instanceName: the Application's InstanceName (`<namespace>_<name>` outside the
//     controller's namespace);
//   - desired: the desired object's labels and annotations after the controller's
//     NormalizeTargetObjects (controller package, exported) with SetAppInstance (the
//     repo server's call, which sets the tracking whatever the namespace, then the
//     controller's, when the namespace changes), or its error;
//   - live: GetAppName and GetAppInstance of the live object; `managed`, whether the
//     controller's cluster cache gives it to the app (a live copy of a desired object, or a
//     root object, no ownerReferences, whose GetAppName is the instance name:
//     controller/cache's isRootAppNode and GetManagedLiveObjs); `selfReferenced`, the
//     controller's isSelfReferencedObj (unexported in controller/state.go, composed here of
//     the exported UnstructuredToAppInstanceValue and GetAppInstance as it composes them:
//     the desired object's id when there is one, else the live object's own tracking id).
func trackingCase(params json.RawMessage) (any, error) {
	var p struct {
		App                 v1alpha1.Application `json:"app"`
		ControllerNamespace string               `json:"controllerNamespace"`
		Method              string               `json:"method"`
		InstallationID      string               `json:"installationID"`
		LabelKey            string               `json:"labelKey"`
		ClusterScoped       bool                 `json:"clusterScoped"`
		Desired             map[string]any       `json:"desired"`
		Live                map[string]any       `json:"live"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	rt := argo.NewResourceTracking()
	// The settings manager's GetTrackingMethod: unset is annotation tracking.
	method := v1alpha1.TrackingMethod(p.Method)
	if method == "" {
		method = v1alpha1.TrackingMethodAnnotation
	}
	instance := p.App.InstanceName(p.ControllerNamespace)
	out := map[string]any{"instanceName": instance}

	var desired *unstructured.Unstructured
	if p.Desired != nil {
		desired = &unstructured.Unstructured{Object: p.Desired}
		set := func(u *unstructured.Unstructured) error {
			return rt.SetAppInstance(u, p.LabelKey, instance, p.App.Spec.Destination.Namespace, method, p.InstallationID)
		}
		// The repo server's SetAppInstance on the rendered manifest, then the controller's.
		err := set(desired)
		if err == nil {
			var objs []*unstructured.Unstructured
			objs, _, err = NormalizeTargets(p.App.Spec.Destination.Namespace, desired, p.ClusterScoped, set)
			if err == nil && len(objs) == 1 {
				desired = objs[0]
			}
		}
		if err != nil {
			out["desired"] = map[string]any{"error": err.Error()}
			desired = nil
		} else {
			out["desired"] = map[string]any{"namespace": desired.GetNamespace(),
				"labels": desired.GetLabels(), "annotations": desired.GetAnnotations()}
		}
	}
	if p.Live != nil {
		live := &unstructured.Unstructured{Object: p.Live}
		l := map[string]any{"appName": rt.GetAppName(live, p.LabelKey, method, p.InstallationID)}
		var id *argo.AppInstanceValue
		if v := rt.GetAppInstance(live, method, p.InstallationID); v != nil {
			id = v
			l["appInstance"] = rt.BuildAppInstanceValue(*v)
		}
		paired := desired != nil && sameObject(desired, live)
		l["managed"] = paired || (len(live.GetOwnerReferences()) == 0 && l["appName"] == instance && instance != "")
		switch {
		case method == v1alpha1.TrackingMethodLabel:
			l["selfReferenced"] = true
		case paired:
			l["selfReferenced"] = selfReferenced(live, argo.UnstructuredToAppInstanceValue(desired, instance, ""))
		case id != nil:
			l["selfReferenced"] = selfReferenced(live, *id)
		default:
			l["selfReferenced"] = true
		}
		out["live"] = l
	}
	return out, nil
}

// selfReferenced: the live object is the one a tracking id names (a cluster-scoped object
// has no namespace, and any id's namespace names it).
func selfReferenced(obj *unstructured.Unstructured, id argo.AppInstanceValue) bool {
	gvk := obj.GroupVersionKind()
	return (obj.GetNamespace() == id.Namespace || obj.GetNamespace() == "") &&
		obj.GetName() == id.Name && gvk.Group == id.Group && gvk.Kind == id.Kind
}

// sameObject: the cluster cache pairs a live object with a desired one by group, kind,
// namespace and name.
func sameObject(a, b *unstructured.Unstructured) bool {
	return a.GroupVersionKind().GroupKind() == b.GroupVersionKind().GroupKind() &&
		a.GetNamespace() == b.GetNamespace() && a.GetName() == b.GetName()
}
