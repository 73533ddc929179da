// Command gofacts rewrites the Go facts of testdata/k8s/overlay.json: what the Kubernetes
// OpenAPI document does not say about the Go types of k8s.io/api and k8s.io/apimachinery
// (pointer fields, omitempty, omitzero), and the group/versions client-go's scheme registers.
// It also checks that the document's merge keys and patch strategies equal the Go struct tags,
// and that the document and the Go types have the same fields; it fails when they do not.
//
//	go run . GOMODCACHE OPENAPI OVERLAY VERSION
//
// reads k8s.io/api@VERSION, k8s.io/apimachinery@VERSION and k8s.io/client-go@VERSION from
// the module cache GOMODCACHE (source only, parsed with go/ast: nothing is compiled) and
// rewrites OVERLAY in place, keeping its comment and version fallbacks. See ../README.md.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// field is one JSON field of a Go struct, embedded structs flattened.
type field struct {
	json      string
	ptr       bool
	omitempty bool
	omitzero  bool
	strategy  string
	mergeKey  string
}

// typeRef names a struct type: the OpenAPI prefix of its package and its name.
type typeRef struct{ prefix, name string }

var (
	structs = map[typeRef]*ast.StructType{}
	// The import name → path table of the file that declares each struct.
	fileImports = map[typeRef]map[string]string{}
	// Types declared as another package's type (`type T = v1.T` or `type T v1.T`).
	redirects = map[typeRef]typeRef{}
)

// prefixOf gives the OpenAPI definition prefix of a Go package path.
func prefixOf(importPath string) string {
	for _, root := range []string{"k8s.io/api/", "k8s.io/apimachinery/"} {
		if rest, ok := strings.CutPrefix(importPath, root); ok {
			return "io.k8s." + strings.TrimSuffix(root[len("k8s.io/"):], "/") + "." +
				strings.ReplaceAll(rest, "/", ".")
		}
	}
	return ""
}

func load(dir, importPath string) error {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		return err
	}
	prefix := prefixOf(importPath)
	for _, p := range pkgs {
		for _, f := range p.Files {
			imports := map[string]string{}
			for _, is := range f.Imports {
				path := strings.Trim(is.Path.Value, `"`)
				name := filepath.Base(path)
				if is.Name != nil {
					name = is.Name.Name
				}
				imports[name] = path
			}
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, s := range gd.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok {
						continue
					}
					ref := typeRef{prefix, ts.Name.Name}
					switch t := ts.Type.(type) {
					case *ast.StructType:
						structs[ref] = t
						fileImports[ref] = imports
					case *ast.SelectorExpr:
						if x, ok := t.X.(*ast.Ident); ok {
							redirects[ref] = typeRef{prefixOf(imports[x.Name]), t.Sel.Name}
						}
					}
				}
			}
		}
	}
	return nil
}

func resolve(ref typeRef) (typeRef, *ast.StructType) {
	for i := 0; i < 4; i++ {
		if st, ok := structs[ref]; ok {
			return ref, st
		}
		next, ok := redirects[ref]
		if !ok {
			break
		}
		ref = next
	}
	return ref, nil
}

// fields lists the JSON fields of a struct, flattening `json:",inline"` embedded structs.
func fields(ref typeRef) ([]field, error) {
	ref, st := resolve(ref)
	if st == nil {
		return nil, fmt.Errorf("no struct %s.%s", ref.prefix, ref.name)
	}
	var out []field
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			tag = strings.Trim(f.Tag.Value, "`")
		}
		st := reflect.StructTag(tag)
		parts := strings.Split(st.Get("json"), ",")
		name := parts[0]
		if name == "-" {
			continue
		}
		if len(f.Names) == 0 && name == "" {
			te := f.Type
			if s, ok := te.(*ast.StarExpr); ok {
				te = s.X
			}
			var embedded typeRef
			switch t := te.(type) {
			case *ast.Ident:
				embedded = typeRef{ref.prefix, t.Name}
			case *ast.SelectorExpr:
				x, _ := t.X.(*ast.Ident)
				if x == nil {
					continue
				}
				embedded = typeRef{prefixOf(fileImports[ref][x.Name]), t.Sel.Name}
			}
			if embedded.name == "TypeMeta" {
				out = append(out, field{json: "apiVersion", omitempty: true},
					field{json: "kind", omitempty: true})
				continue
			}
			inner, err := fields(embedded)
			if err != nil {
				return nil, fmt.Errorf("%s.%s embeds: %w", ref.prefix, ref.name, err)
			}
			out = append(out, inner...)
			continue
		}
		if name == "" {
			continue
		}
		fd := field{json: name, strategy: st.Get("patchStrategy"), mergeKey: st.Get("patchMergeKey")}
		_, fd.ptr = f.Type.(*ast.StarExpr)
		for _, p := range parts[1:] {
			fd.omitempty = fd.omitempty || p == "omitempty"
			fd.omitzero = fd.omitzero || p == "omitzero"
		}
		out = append(out, fd)
	}
	return out, nil
}

type overlay struct {
	Comment              string          `json:"_comment"`
	BuiltinGroupVersions []string        `json:"builtinGroupVersions"`
	VersionFallbacks     json.RawMessage `json:"versionFallbacks"`
	Pointers             []string        `json:"pointers"`
	NotOmitempty         []string        `json:"notOmitempty"`
	Omitempty            []string        `json:"omitempty"`
	Omitzero             []string        `json:"omitzero"`
}

type definition struct {
	Properties map[string]struct {
		MergeKey string `json:"x-kubernetes-patch-merge-key"`
		Strategy string `json:"x-kubernetes-patch-strategy"`
	} `json:"properties"`
	Required []string `json:"required"`
}

var (
	groupName     = regexp.MustCompile(`(?m)^const GroupName = "([^"]*)"`)
	schemeVersion = regexp.MustCompile(`SchemeGroupVersion = schema\.GroupVersion\{Group: GroupName, Version: "([^"]+)"\}`)
	apiImport     = regexp.MustCompile(`"k8s.io/api/([^"]+)"`)
)

// registered lists the group/versions client-go's scheme registers, in its import order.
func registered(clientGo, api string) ([]string, error) {
	src, err := os.ReadFile(filepath.Join(clientGo, "kubernetes/scheme/register.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range apiImport.FindAllStringSubmatch(string(src), -1) {
		reg, err := os.ReadFile(filepath.Join(api, m[1], "register.go"))
		if err != nil {
			return nil, err
		}
		g, v := groupName.FindSubmatch(reg), schemeVersion.FindSubmatch(reg)
		if g == nil || v == nil {
			return nil, fmt.Errorf("k8s.io/api/%s/register.go: no GroupName or version", m[1])
		}
		gv := string(v[1])
		if len(g[1]) > 0 {
			gv = string(g[1]) + "/" + gv
		}
		out = append(out, gv)
	}
	return out, nil
}

func run(modcache, openapiPath, overlayPath, version string) error {
	api := filepath.Join(modcache, "k8s.io/api@"+version)
	machinery := filepath.Join(modcache, "k8s.io/apimachinery@"+version)
	clientGo := filepath.Join(modcache, "k8s.io/client-go@"+version)
	err := filepath.Walk(api, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.IsDir() {
			return err
		}
		if _, err := os.Stat(filepath.Join(p, "register.go")); err == nil {
			rel, _ := filepath.Rel(api, p)
			return load(p, "k8s.io/api/"+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, rel := range []string{"pkg/apis/meta/v1", "pkg/runtime", "pkg/api/resource", "pkg/util/intstr", "pkg/version"} {
		if err := load(filepath.Join(machinery, rel), "k8s.io/apimachinery/"+rel); err != nil {
			return err
		}
	}
	var doc struct {
		Definitions map[string]definition `json:"definitions"`
	}
	text, err := os.ReadFile(openapiPath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(text, &doc); err != nil {
		return err
	}
	var o overlay
	text, err = os.ReadFile(overlayPath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(text, &o); err != nil {
		return err
	}
	o.Pointers, o.NotOmitempty, o.Omitempty, o.Omitzero = nil, nil, nil, nil
	names := make([]string, 0, len(doc.Definitions))
	for name := range doc.Definitions {
		if strings.HasPrefix(name, "io.k8s.api.") || strings.HasPrefix(name, "io.k8s.apimachinery.") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var problems []string
	for _, name := range names {
		d := doc.Definitions[name]
		if d.Properties == nil {
			continue
		}
		i := strings.LastIndex(name, ".")
		gofields, err := fields(typeRef{name[:i], name[i+1:]})
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		byName := map[string]field{}
		for _, f := range gofields {
			byName[f.json] = f
		}
		required := map[string]bool{}
		for _, r := range d.Required {
			required[r] = true
		}
		props := make([]string, 0, len(d.Properties))
		for p := range d.Properties {
			props = append(props, p)
		}
		sort.Strings(props)
		for _, p := range props {
			f, ok := byName[p]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s.%s: not a field of the Go type", name, p))
				continue
			}
			delete(byName, p)
			if v := d.Properties[p]; v.MergeKey != f.mergeKey || v.Strategy != f.strategy {
				problems = append(problems, fmt.Sprintf("%s.%s: document %q/%q, Go tags %q/%q",
					name, p, v.MergeKey, v.Strategy, f.mergeKey, f.strategy))
			}
			full := name + "." + p
			if f.ptr {
				o.Pointers = append(o.Pointers, full)
			}
			omitted := f.omitempty || f.omitzero
			if !omitted && !required[p] {
				o.NotOmitempty = append(o.NotOmitempty, full)
			}
			if omitted && required[p] {
				o.Omitempty = append(o.Omitempty, full)
			}
			if f.omitzero {
				o.Omitzero = append(o.Omitzero, full)
			}
		}
		for p := range byName {
			problems = append(problems, fmt.Sprintf("%s.%s: a Go field the document lacks", name, p))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("the document and the Go types differ:\n%s", strings.Join(problems, "\n"))
	}
	if o.BuiltinGroupVersions, err = registered(clientGo, api); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(o); err != nil {
		return err
	}
	return os.WriteFile(overlayPath, buf.Bytes(), 0o644)
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: gofacts GOMODCACHE OPENAPI OVERLAY VERSION")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3], os.Args[4]); err != nil {
		fmt.Fprintln(os.Stderr, "gofacts:", err)
		os.Exit(1)
	}
}
