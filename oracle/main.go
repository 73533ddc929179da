// Command oracle answers a subset of the gitops-core `serve` JSON-lines protocol
// (configure, diff, health; sync, autosync, yaml and scripts of its own) with Argo CD's own Go packages, for differential testing.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	gitopsdiff "github.com/argoproj/argo-cd/gitops-engine/v3/pkg/diff"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/util/proto"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
	argodiff "github.com/argoproj/argo-cd/v3/util/argo/diff"
	"github.com/argoproj/argo-cd/v3/util/argo/normalizers"
	"github.com/argoproj/argo-cd/v3/util/lua"
)

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type errorObject struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type response struct {
	ID     json.RawMessage `json:"id"`
	Result any             `json:"result,omitempty"`
	Error  *errorObject    `json:"error,omitempty"`
}

// server keeps what `configure` set: health scripts by "<group>/<Kind>"; and the GVK parser
// structured-merge diff needs, when the program was given an OpenAPI v2 document.
type server struct {
	customizations map[string]string
	gvkParser      *managedfields.GvkParser
	typeConverter  managedfields.TypeConverter
}

// newGVKParser builds what the controller's cluster cache builds from the cluster's OpenAPI
// v2 document: the proto models and apimachinery's GVK parser over them.
func newGVKParser(path string) (*managedfields.GvkParser, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// testdata's copy keeps only the definitions; the parser wants a whole document.
	var whole map[string]any
	if err := json.Unmarshal(raw, &whole); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for key, value := range map[string]any{"swagger": "2.0", "paths": map[string]any{},
		"info": map[string]any{"title": "Kubernetes", "version": "v1.37.0"}} {
		if _, ok := whole[key]; !ok {
			whole[key] = value
		}
	}
	if raw, err = json.Marshal(whole); err != nil {
		return nil, err
	}
	doc, err := openapiv2.ParseDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return managedfields.NewGVKParser(models, false)
}

func main() {
	s := &server{customizations: map[string]string{}}
	// usage: oracle [OPENAPI_V2_JSON]
	if len(os.Args) > 1 {
		parser, err := newGVKParser(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(2)
		}
		s.gvkParser = parser
		converter, err := newTypeConverter(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(2)
		}
		s.typeConverter = converter
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var req request
			var resp response
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				resp.Error = &errorObject{Code: "parse_error", Message: jerr.Error()}
			} else {
				resp.ID = req.ID
				result, herr := s.handle(req.Method, req.Params)
				if herr != nil {
					resp.Error = &errorObject{Code: "engine_error", Message: herr.Error()}
				} else {
					resp.Result = result
				}
			}
			if resp.ID == nil {
				resp.ID = json.RawMessage("null")
			}
			if eerr := enc.Encode(resp); eerr != nil {
				os.Exit(1)
			}
			if ferr := out.Flush(); ferr != nil {
				os.Exit(1)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(1)
		}
	}
}

func (s *server) handle(method string, params json.RawMessage) (any, error) {
	switch method {
	case "configure":
		var p struct {
			Customizations map[string]string `json:"customizations"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		for k, v := range p.Customizations {
			s.customizations[k] = v
		}
		return map[string]any{"protocolVersion": 1, "methods": []string{"configure", "diff", "health", "sync", "autosync", "yaml", "scripts", "scripts.files", "dryruns", "tracking", "normalize", "jq", "deletion"}}, nil
	case "health":
		return s.health(params)
	case "diff":
		return s.diff(params)
	case "dryruns":
		return s.dryRuns(params)
	case "tracking":
		return trackingCase(params)
	case "normalize":
		return normalizeCase(params)
	case "jq":
		return jqCase(params)
	case "deletion":
		return deletionCase(params)
	case "sync":
		return s.syncCase(params)
	case "autosync":
		return s.autosync(params)
	case "yaml":
		return readYAML(params)
	case "scripts":
		return scriptsCase(params)
	case "scripts.files":
		return scriptFiles(params)
	default:
		return nil, fmt.Errorf("unknown method `%s`", method)
	}
}

func objects(raw []map[string]any) []*unstructured.Unstructured {
	objs := make([]*unstructured.Unstructured, len(raw))
	for i, o := range raw {
		if o != nil {
			objs[i] = &unstructured.Unstructured{Object: o}
		}
	}
	return objs
}

type resourceHealth struct {
	Group     string  `json:"group"`
	Kind      string  `json:"kind"`
	Name      string  `json:"name"`
	Namespace string  `json:"namespace"`
	Status    *string `json:"status"`
	Message   string  `json:"message"`
}

// health assesses each object as the application controller does: gitops-engine's
// GetResourceHealth with Argo CD's Lua overrides, and the app health as the worst
// status of the resources (gitops-engine's IsWorse).
func (s *server) health(params json.RawMessage) (any, error) {
	var p struct {
		Objects        []map[string]any  `json:"objects"`
		Customizations map[string]string `json:"customizations"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	overrides := map[string]v1alpha1.ResourceOverride{}
	for k, v := range s.customizations {
		overrides[k] = v1alpha1.ResourceOverride{HealthLua: v}
	}
	for k, v := range p.Customizations {
		overrides[trimHealthLua(k)] = v1alpha1.ResourceOverride{HealthLua: v}
	}
	appStatus := health.HealthStatusHealthy
	resources := []resourceHealth{}
	for _, obj := range objects(p.Objects) {
		r := healthOf(obj, lua.ResourceHealthOverrides(overrides))
		if r.Status != nil && health.IsWorse(appStatus, health.HealthStatusCode(*r.Status)) {
			appStatus = health.HealthStatusCode(*r.Status)
		}
		resources = append(resources, r)
	}
	return map[string]any{"status": string(appStatus), "resources": resources}, nil
}

// healthOf is one resource's health as the controller's setApplicationHealth keeps it:
// gitops-engine's GetResourceHealth; on an error the resource keeps the health that comes with
// it (Unknown, the unwrapped text; the wrapped error is the app's condition).
func healthOf(obj *unstructured.Unstructured, overrides health.HealthOverride) resourceHealth {
	gvk := obj.GroupVersionKind()
	r := resourceHealth{Group: gvk.Group, Kind: gvk.Kind, Name: obj.GetName(), Namespace: obj.GetNamespace()}
	h, err := health.GetResourceHealth(obj, overrides)
	if h != nil {
		st := string(h.Status)
		r.Status, r.Message = &st, h.Message
	} else if err != nil {
		st := string(health.HealthStatusUnknown)
		r.Status, r.Message = &st, err.Error()
	}
	return r
}

func trimHealthLua(key string) string {
	const suffix = "/health.lua"
	if len(key) > len(suffix) && key[len(key)-len(suffix):] == suffix {
		return key[:len(key)-len(suffix)]
	}
	return key
}

const appLabelKey = "app.kubernetes.io/instance"

type resourceDiff struct {
	Group          string          `json:"group"`
	Kind           string          `json:"kind"`
	Name           string          `json:"name"`
	Namespace      string          `json:"namespace"`
	Modified       bool            `json:"modified"`
	Status         string          `json:"status"`
	NormalizedLive json.RawMessage `json:"normalizedLive"`
	PredictedLive  json.RawMessage `json:"predictedLive"`
}

// diffParams are the params of `diff` (and of `dryruns`, which reads the same request).
type diffParams struct {
	Desired []map[string]any `json:"desired"`
	Live    []map[string]any `json:"live"`
	App     *struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Destination struct {
				Namespace string `json:"namespace"`
			} `json:"destination"`
			IgnoreDifferences []v1alpha1.ResourceIgnoreDifferences `json:"ignoreDifferences"`
			SyncPolicy        *v1alpha1.SyncPolicy                 `json:"syncPolicy"`
		} `json:"spec"`
	} `json:"app"`
	DryRuns []map[string]any `json:"dryRuns"`
}

// diff pairs desired[i] with live[i] (the runner sends them paired) and runs Argo CD's
// StateDiffs: tracking normalization, managedFields managers, ignoreDifferences by
// JSON pointer and jq, known types, then gitops-engine's three-way or two-way diff.
func (s *server) diff(params json.RawMessage) (any, error) {
	var p diffParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	if len(p.Desired) != len(p.Live) {
		return nil, fmt.Errorf("desired and live must be paired (%d, %d)", len(p.Desired), len(p.Live))
	}
	ignores := []v1alpha1.ResourceIgnoreDifferences{}
	if p.App != nil && p.App.Spec.IgnoreDifferences != nil {
		ignores = p.App.Spec.IgnoreDifferences
	}
	// A default argocd-cm: no overrides but the status rule that GetResourceOverrides adds
	// for every kind (ignoreResourceStatusField unset means `all`).
	overrides := map[string]v1alpha1.ResourceOverride{
		"*/*": {IgnoreDifferences: v1alpha1.OverrideIgnoreDiff{JSONPointers: []string{"/status"}}},
	}
	// As the controller's CompareAppState: its manager and the cluster's GVK parser, and
	// structured-merge diff when the app syncs with ServerSideApply=true.
	builder := argodiff.NewDiffConfigBuilder().
		WithDiffSettings(ignores, overrides, false, normalizers.IgnoreNormalizerOpts{}).
		WithTracking(appLabelKey, string(v1alpha1.TrackingMethodAnnotation)).
		WithNoCache().
		WithManager("argocd-controller")
	if s.gvkParser != nil {
		builder = builder.WithGVKParser(s.gvkParser)
	}
	if p.App != nil && p.App.Spec.SyncPolicy != nil && p.App.Spec.SyncPolicy.SyncOptions.HasOption("ServerSideApply=true") {
		if s.gvkParser == nil {
			return nil, fmt.Errorf("ServerSideApply=true needs the OpenAPI v2 document (first argument)")
		}
		// Argo CD 3.6 compares an app that syncs with server-side apply by server-side
		// diff (structured-merge diff is gone): the server's dry-run apply answers with the
		// predicted live object. The request's `dryRuns` stand for the server's answers.
		builder = builder.WithServerSideDiff(true).WithServerSideDryRunner(dryRunner(p.DryRuns))
	}
	cfg, err := builder.Build()
	if err != nil {
		return nil, err
	}
	desired, live := objects(p.Desired), objects(p.Live)
	// As the controller does before comparing: every desired object carries the app's
	// tracking annotation (the default annotation tracking, app.kubernetes.io/instance key).
	if p.App != nil {
		tracking := argo.NewResourceTracking()
		for _, d := range desired {
			if d == nil {
				continue
			}
			if err := tracking.SetAppInstance(d, appLabelKey, p.App.Metadata.Name, p.App.Spec.Destination.Namespace, v1alpha1.TrackingMethodAnnotation, ""); err != nil {
				return nil, err
			}
		}
	}
	results, err := argodiff.StateDiffs(context.Background(), live, desired, cfg)
	if err != nil {
		return nil, err
	}
	sync := "Synced"
	resources := []resourceDiff{}
	for i, d := range results.Diffs {
		obj := desired[i]
		if obj == nil {
			obj = live[i]
		}
		gvk := obj.GroupVersionKind()
		st := "Synced"
		if d.Modified || desired[i] == nil || live[i] == nil {
			st, sync = "OutOfSync", "OutOfSync"
		}
		shown := d
		if gvk.Group == "" && gvk.Kind == "Secret" && cfg.ServerSideDiff() && desired[i] != nil && live[i] != nil {
			// As the controller's managedResources under server-side diff: the diff's
			// predicted and normalized live objects masked as a pair by HideSecretData
			// (comparing again would bring back the webhook drift server-side diff removed).
			var predicted, normalized *unstructured.Unstructured
			if err := unmarshalObject(d.PredictedLive, &predicted); err != nil {
				return nil, err
			}
			if err := unmarshalObject(d.NormalizedLive, &normalized); err != nil {
				return nil, err
			}
			predicted, normalized, err := gitopsdiff.HideSecretData(predicted, normalized, map[string]bool{})
			if err != nil {
				return nil, err
			}
			if predicted != nil {
				if shown.PredictedLive, err = json.Marshal(predicted); err != nil {
					return nil, err
				}
			}
			if normalized != nil {
				if shown.NormalizedLive, err = json.Marshal(normalized); err != nil {
					return nil, err
				}
			}
		} else if gvk.Group == "" && gvk.Kind == "Secret" {
			// As the controller's managedResources: the Secret pair masked by
			// HideSecretData, then compared again for display (modified stays unmasked).
			t, l, err := gitopsdiff.HideSecretData(desired[i], live[i], map[string]bool{})
			if err != nil {
				return nil, err
			}
			if shown, err = argodiff.StateDiff(context.Background(), l, t, cfg); err != nil {
				return nil, err
			}
		}
		resources = append(resources, resourceDiff{
			Group: gvk.Group, Kind: gvk.Kind, Name: obj.GetName(), Namespace: obj.GetNamespace(),
			Modified: d.Modified, Status: st,
			NormalizedLive: rawOrNull(shown.NormalizedLive), PredictedLive: rawOrNull(shown.PredictedLive),
		})
	}
	return map[string]any{"syncStatus": sync, "resources": resources}, nil
}

// unmarshalObject reads a diff result's object; `null` or nothing leaves it nil.
func unmarshalObject(raw []byte, into **unstructured.Unstructured) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	*into = &unstructured.Unstructured{}
	return json.Unmarshal(raw, *into)
}

func rawOrNull(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(b)
}

// dryRunner answers a server-side dry-run apply with the given object of the same group,
// kind, namespace and name (the server's predicted live object), or fails naming the object.
type dryRunner []map[string]any

func (d dryRunner) Run(_ context.Context, obj *unstructured.Unstructured, _ string) (string, error) {
	for _, r := range d {
		u := unstructured.Unstructured{Object: r}
		if u.GroupVersionKind().GroupKind() == obj.GroupVersionKind().GroupKind() &&
			u.GetNamespace() == obj.GetNamespace() && u.GetName() == obj.GetName() {
			raw, err := json.Marshal(r)
			return string(raw), err
		}
	}
	return "", fmt.Errorf("no dry-run result for %s %s/%s", obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName())
}
