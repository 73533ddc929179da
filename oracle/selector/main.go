// Command selector writes testdata/selector/cases.json: argocd-cm `resource.selectors` strings
// read by k8s.io/apimachinery's labels.Parse as Argo CD 3.6.2's settings loader calls it
// (util/settings/settings.go: `error parsing resource selector %q: %w`), with the error text a
// user sees or the label sets each selector matches.
//
// usage: cd oracle && GOTOOLCHAIN=go1.27.3 go run ./selector < ../testdata/selector/inputs.json \
//
//	> ../testdata/selector/cases.json
package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

type inputs struct {
	Labels    []map[string]string `json:"labels"`
	Selectors []string            `json:"selectors"`
	// Fragments are joined at random (Seed, Generated of them) into more selectors.
	Fragments []string `json:"fragments"`
	Seed      int64    `json:"seed"`
	Generated int      `json:"generated"`
}

type result struct {
	Selector string  `json:"selector"`
	Error    *string `json:"error,omitempty"`
	Matches  *[]int  `json:"matches,omitempty"`
}

type output struct {
	Labels []map[string]string `json:"labels"`
	Cases  []result            `json:"cases"`
}

func main() {
	var in inputs
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	selectors := append([]string{}, in.Selectors...)
	rng := rand.New(rand.NewSource(in.Seed))
	for i := 0; i < in.Generated; i++ {
		var b strings.Builder
		n := 1 + rng.Intn(7)
		for j := 0; j < n; j++ {
			b.WriteString(in.Fragments[rng.Intn(len(in.Fragments))])
		}
		selectors = append(selectors, b.String())
	}
	out := output{Labels: in.Labels, Cases: []result{}}
	seen := map[string]bool{}
	for _, s := range selectors {
		if seen[s] {
			continue
		}
		seen[s] = true
		r := result{Selector: s}
		sel, err := labels.Parse(s)
		if err != nil {
			msg := fmt.Errorf("error parsing resource selector %q: %w", s, err).Error()
			r.Error = &msg
		} else {
			matches := []int{}
			for i, l := range in.Labels {
				if sel.Matches(labels.Set(l)) {
					matches = append(matches, i)
				}
			}
			r.Matches = &matches
		}
		out.Cases = append(out.Cases, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
