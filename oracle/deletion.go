package main

import (
	"encoding/json"
	"sort"

	"github.com/argoproj/argo-cd/v3/controller"
)

// deletionCase answers `deletion`: the controller's FilterObjectsForDeletion (argo-cd/v3
// controller/sort_delete.go, exported at 3.6.2) on the live objects a cascade deletion is
// about to delete: those of the highest wave (`argocd.argoproj.io/sync-wave`, else
// `helm.sh/hook-weight`, else 0). Which objects reach it (the controller's shouldBeDeleted,
// the deletion timestamps and confirmations before it in finalizeApplicationDeletion) is
// unexported and not reached. The answer is sorted: sort.Sort is not stable, and the
// controller deletes the filtered objects concurrently.
func deletionCase(params json.RawMessage) (any, error) {
	var p struct {
		Objects []map[string]any `json:"objects"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	keys := []string{}
	for _, o := range controller.FilterObjectsForDeletion(objects(p.Objects)) {
		keys = append(keys, key(o.Object))
	}
	sort.Strings(keys)
	return map[string]any{"delete": keys}, nil
}
