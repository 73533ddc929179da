package main

import (
	"encoding/json"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
)

// readYAML answers `yaml`: the text of a manifest file read as Argo CD reads the manifests of a
// directory application (kube.SplitYAML: sigs.k8s.io/yaml over go-yaml v2, then the API
// machinery's JSON reading), as {"objects": [...]}, or {"error": "..."} when Argo CD refuses it.
func readYAML(params json.RawMessage) (any, error) {
	var p struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	objs, err := kube.SplitYAML([]byte(p.Text))
	if err != nil {
		return map[string]any{"error": err.Error()}, nil
	}
	out := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Object)
	}
	return map[string]any{"objects": out}, nil
}
