module gitops-core/testdata/k8s/gofacts

go 1.26
