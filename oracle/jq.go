package main

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo/normalizers"
)

// jqCase answers `jq`: one `jqPathExpressions` rule (every group and kind) through Argo CD's
// ignore normalizer (util/argo/normalizers: gojq compiles `del(E)`; a rule that does not
// compile fails the app's comparison, one that fails on an object is skipped for it): the
// compile error as `refused`, else the object normalized.
func jqCase(params json.RawMessage) (any, error) {
	var p struct {
		Object     map[string]any `json:"object"`
		Expression string         `json:"expression"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	n, err := normalizers.NewIgnoreNormalizer([]v1alpha1.ResourceIgnoreDifferences{{Group: "*", Kind: "*",
		JQPathExpressions: []string{p.Expression}}}, nil, normalizers.IgnoreNormalizerOpts{})
	if err != nil {
		return map[string]any{"refused": err.Error()}, nil
	}
	obj := &unstructured.Unstructured{Object: p.Object}
	if err := n.Normalize(obj); err != nil {
		return map[string]any{"error": err.Error()}, nil
	}
	return map[string]any{"object": obj.Object}, nil
}
