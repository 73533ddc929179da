//! Kubernetes schema tables generated from the OpenAPI v2 document (merge keys, patch
//! strategies, list types, int-or-string and quantity fields), plus the newer keys of
//! spec diff.md §6.2.
