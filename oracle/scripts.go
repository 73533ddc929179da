package main

// The `scripts` area: the health checks and resource actions Argo CD 3.6.2 ships as Lua scripts
// (its `resource_customizations` folder, embedded in util/lua), run through Argo CD's own code.

import (
	"encoding/json"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/argoproj/argo-cd/v3/pkg/apiclient/application"
	"github.com/argoproj/argo-cd/v3/resource_customizations"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// scriptFiles answers `scripts.files`: every file of Argo CD's embedded resource_customizations
// folder whose path ends with one of the given suffixes (`.lua`, `.yaml`), by its path.
func scriptFiles(params json.RawMessage) (any, error) {
	var p struct {
		Suffixes []string `json:"suffixes"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	files := map[string]string{}
	err := fs.WalkDir(resource_customizations.Embedded, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		for _, s := range p.Suffixes {
			if strings.HasSuffix(path, s) {
				raw, err := resource_customizations.Embedded.ReadFile(path)
				if err != nil {
					return err
				}
				files[path] = string(raw)
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"files": files}, nil
}

type scriptRun struct {
	Resources []impacted `json:"resources,omitempty"`
	Error     string     `json:"error,omitempty"`
}

type impacted struct {
	Operation string         `json:"operation"`
	Resource  map[string]any `json:"resource"`
}

type scriptsAnswer struct {
	// Now is the second every script of the answer read from the clock (unix seconds).
	Now int64 `json:"now"`
	// Health as the application controller computes it with no argocd-cm overrides:
	// gitops-engine's GetResourceHealth over Argo CD's built-in scripts; nil for none.
	Health *resourceHealth `json:"health"`
	// Scripted tells whether a built-in health script is in charge of the object's kind (else
	// its health comes from gitops-engine's Go checks, or there is none).
	Scripted bool `json:"scripted"`
	// Actions as the API server lists them (getAvailableActions with no overrides), sorted by
	// name; ActionsError when discovery fails.
	Actions      []map[string]any `json:"actions"`
	ActionsError string           `json:"actionsError,omitempty"`
	// Runs holds each listed action's result, as RunResourceActionV2 computes it before
	// patching (GetResourceAction, ExecuteResourceAction), by name.
	Runs map[string]scriptRun `json:"runs"`
}

// scriptsCase answers `scripts`: one object's health, its actions and each action's result,
// all from Argo CD's built-in scripts. The clock is read before and after; the work is done
// again until both fall in the same second, so `now` stands for every read of the clock.
func scriptsCase(params json.RawMessage) (any, error) {
	var p struct {
		Object     map[string]any    `json:"object"`
		Parameters map[string]string `json:"parameters"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	for {
		before := time.Now().Unix()
		answer := scriptsOnce(p.Object, p.Parameters)
		if time.Now().Unix() == before {
			answer.Now = before
			return answer, nil
		}
	}
}

func scriptsOnce(raw map[string]any, parameters map[string]string) scriptsAnswer {
	// Every run gets its own copy: an action must not see another one's changes.
	copyOf := func() *unstructured.Unstructured {
		b, _ := json.Marshal(raw)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return &unstructured.Unstructured{Object: m}
	}
	answer := scriptsAnswer{Runs: map[string]scriptRun{}}
	obj := copyOf()
	r := healthOf(obj, lua.ResourceHealthOverrides{})
	answer.Health = &r
	if script, _, err := (lua.VM{}).GetHealthScript(copyOf()); err == nil && script != "" {
		answer.Scripted = true
	}

	vm := lua.VM{}
	obj = copyOf()
	scripts, err := vm.GetResourceActionDiscovery(obj)
	if err != nil {
		answer.ActionsError = err.Error()
		return answer
	}
	if len(scripts) == 0 {
		answer.Actions = []map[string]any{}
		return answer
	}
	found, err := vm.ExecuteResourceActionDiscovery(obj, scripts)
	if err != nil {
		answer.ActionsError = err.Error()
		return answer
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Name < found[j].Name })
	var args []*application.ResourceActionParameters
	names := make([]string, 0, len(parameters))
	for k := range parameters {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		name, value := k, parameters[k]
		args = append(args, &application.ResourceActionParameters{Name: &name, Value: &value})
	}
	answer.Actions = []map[string]any{}
	for _, a := range found {
		ps := []map[string]any{}
		for _, p := range a.Params {
			ps = append(ps, map[string]any{"name": p.Name})
		}
		answer.Actions = append(answer.Actions, map[string]any{"name": a.Name, "disabled": a.Disabled,
			"iconClass": a.IconClass, "displayName": a.DisplayName, "params": ps})
		// As the API server: every listed action may be run, disabled or not.
		obj := copyOf()
		def, err := vm.GetResourceAction(obj, a.Name)
		if err != nil {
			answer.Runs[a.Name] = scriptRun{Error: err.Error()}
			continue
		}
		out, err := vm.ExecuteResourceAction(obj, def.ActionLua, args)
		if err != nil {
			answer.Runs[a.Name] = scriptRun{Error: err.Error()}
			continue
		}
		run := scriptRun{Resources: []impacted{}}
		for _, res := range out {
			var o map[string]any
			if res.UnstructuredObj != nil {
				o = res.UnstructuredObj.Object
			}
			run.Resources = append(run.Resources, impacted{Operation: string(res.K8SOperation), Resource: o})
		}
		answer.Runs[a.Name] = run
	}
	return answer
}
