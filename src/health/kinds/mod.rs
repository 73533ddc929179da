//! The built-in health rules: one for every kind Argo CD 3.6.2 ships a Lua health script for
//! (`resource_customizations/<group>/<Kind>/health.lua`), written in Rust. They need no Lua and
//! no sandbox, and give the status and message the script gives on every input.
//!
//! [`CATALOG`] is the one list of the built-in kinds and the file each rule lives in: a
//! module per API group, named after the group (`cert-manager.io` in `cert_manager_io.rs`,
//! the wildcard folder `_.crossplane.io/_` in `any_crossplane_io.rs`). [`lua`] is the
//! vocabulary the rules are written in: the object as a script reads it, with Lua's rules for
//! absent fields, lists, truth and text.
//!
//! A rule is found by Argo CD's lookup of its built-in scripts ([`find`]): the exact group and
//! kind first, then the wildcard folders (`_` in a folder name matches any text), in the order
//! of their paths.

// The vocabulary is wider than the rules written so far use; the allowance goes when every
// rule is in.
#[allow(dead_code)]
pub(crate) mod lua;

mod cert_manager_io;
mod kafka_strimzi_io;
mod karpenter_k8s_aws;
mod karpenter_sh;
mod keda_sh;
mod kiali_io;
mod kro_run;
mod kubernetes_client_io;
mod kubevirt_io;
mod kustomize_toolkit_fluxcd_io;
mod kyverno_io;
mod lifecycle_keptn_sh;
mod logstash_k8s_elastic_co;
mod mariadb_mmontes_io;
mod medusa_k8ssandra_io;
mod metrics_keptn_sh;
mod microgateway_airlock_com;
mod minio_min_io;
mod monitoring_coreos_com;
mod networking_gke_io;
mod nmstate_io;
mod notification_toolkit_fluxcd_io;
mod numaflow_numaproj_io;
mod numaplane_numaproj_io;
mod objectbucket_io;
mod ocs_openshift_io;
mod onepassword_com;
mod openfaas_com;
mod opentelemetry_io;
mod operator_knative_dev;
mod operator_openshift_io;
mod operator_victoriametrics_com;
mod operators_coreos_com;
mod pkg_crossplane_io;
mod platform_confluent_io;
mod policies_kyverno_io;
mod policy;
mod shapes_c;

use serde_json::Value;

use crate::health::{HealthError, ScriptOutput};
use crate::object::ObjectRef;

pub(crate) use lua::{Fault, Hs, Lv};

/// What a rule reads: the object, as Lua sees it and as JSON, and the time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Env<'a> {
    /// `obj`, as a script sees it.
    pub(crate) obj: Lv<'a>,
    /// The object as JSON (for the rare rule that needs more than Lua's view).
    #[allow(dead_code)]
    pub(crate) json: &'a Value,
    /// `os.time()`: the host's time in unix seconds.
    #[allow(dead_code)]
    pub(crate) now: i64,
}

/// The health rule of one kind.
#[derive(Clone, Copy)]
pub(crate) struct Rule {
    /// The folder of Argo CD's script: the API group (`cert-manager.io`; `_` is a wildcard,
    /// as in `_.crossplane.io`).
    pub(crate) group: &'static str,
    /// The kind's folder (`Certificate`; `_` for any kind).
    pub(crate) kind: &'static str,
    /// The rule.
    pub(crate) check: fn(&Env<'_>) -> Result<Hs, Fault>,
}

impl Rule {
    /// `<group>/<Kind>`, the path of Argo CD's script folder.
    pub(crate) fn name(&self) -> String {
        format!("{}/{}", self.group, self.kind)
    }

    /// Whether the folder matches, `_` read as `*` (a folder without `_` only matches its
    /// own group and kind).
    fn matches(&self, group: &str, kind: &str) -> bool {
        folder_match(self.group.as_bytes(), group.as_bytes())
            && folder_match(self.kind.as_bytes(), kind.as_bytes())
    }

    /// The order of the folders' paths (`<group>/<Kind>`), byte by byte, as Argo CD sorts its
    /// wildcard folders.
    fn path_order(&self, other: &Rule) -> std::cmp::Ordering {
        let path = |r: &Rule| r.group.bytes().chain([b'/']).chain(r.kind.bytes());
        path(self).cmp(path(other))
    }
}

/// Whether a folder name matches one segment (the group or the kind) as Argo CD's doublestar
/// match of the folder path does, with `_` read as `*`: any run of bytes other than `/`.
/// (No folder of Argo CD's holds another glob character.)
fn folder_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'_', rest)) => {
            let run = text.iter().position(|&b| b == b'/').unwrap_or(text.len());
            (0..=run).any(|i| folder_match(rest, &text[i..]))
        }
        Some((c, rest)) => text.first() == Some(c) && folder_match(rest, &text[1..]),
    }
}

/// Every built-in rule, a list per API group module.
pub(crate) const CATALOG: &[&[Rule]] = &[
    cert_manager_io::RULES,
    kafka_strimzi_io::RULES,
    karpenter_k8s_aws::RULES,
    karpenter_sh::RULES,
    keda_sh::RULES,
    kiali_io::RULES,
    kro_run::RULES,
    kubernetes_client_io::RULES,
    kubevirt_io::RULES,
    kustomize_toolkit_fluxcd_io::RULES,
    kyverno_io::RULES,
    lifecycle_keptn_sh::RULES,
    logstash_k8s_elastic_co::RULES,
    mariadb_mmontes_io::RULES,
    medusa_k8ssandra_io::RULES,
    metrics_keptn_sh::RULES,
    microgateway_airlock_com::RULES,
    minio_min_io::RULES,
    monitoring_coreos_com::RULES,
    networking_gke_io::RULES,
    nmstate_io::RULES,
    notification_toolkit_fluxcd_io::RULES,
    numaflow_numaproj_io::RULES,
    numaplane_numaproj_io::RULES,
    objectbucket_io::RULES,
    ocs_openshift_io::RULES,
    onepassword_com::RULES,
    openfaas_com::RULES,
    opentelemetry_io::RULES,
    operator_knative_dev::RULES,
    operator_openshift_io::RULES,
    operator_victoriametrics_com::RULES,
    operators_coreos_com::RULES,
    pkg_crossplane_io::RULES,
    platform_confluent_io::RULES,
    policies_kyverno_io::RULES,
    policy::RULES,
];

/// The built-in rule for a group and kind, by Argo CD's lookup: exact first, then wildcard
/// folders in the order of their paths.
pub(crate) fn find(group: &str, kind: &str) -> Option<&'static Rule> {
    find_in(CATALOG, group, kind)
}

/// [`find`] in a catalog. It runs for every object assessed: no allocation, and the exact
/// pass compares names only (a folder spelled as the object's group and kind is the one
/// Argo CD reads first, `_` or not).
///
/// Each list of the catalog holds one group's rules (`one_group_per_list` checks it), so the
/// group is compared once per list.
fn find_in<'r>(catalog: &[&'r [Rule]], group: &str, kind: &str) -> Option<&'r Rule> {
    let lists = || catalog.iter().filter_map(|rules| Some((rules.first()?.group, *rules)));
    let mut exact = lists().filter(|(g, _)| *g == group).flat_map(|(_, rules)| rules);
    if let Some(r) = exact.find(|r| r.kind == kind) {
        return Some(r);
    }
    // A folder without `_` matches here only as itself, which the exact pass tried.
    lists()
        .filter(|(g, _)| folder_match(g.as_bytes(), group.as_bytes()))
        .flat_map(|(_, rules)| rules)
        .filter(|r| r.matches(group, kind))
        .min_by(|a, b| a.path_order(b))
}

/// Runs the built-in rule for `obj`'s kind: `None` when there is none; else what the script
/// would have returned, or its error (a [`HealthError::Script`] naming the rule).
pub(crate) fn evaluate(
    obj: &Value,
    object: &ObjectRef,
    now: i64,
) -> Option<Result<ScriptOutput, HealthError>> {
    let rule = find(&object.group, &object.kind)?;
    let env = Env { obj: Lv::of(obj), json: obj, now };
    Some(
        (rule.check)(&env)
            .map(Hs::finish)
            .map_err(|f| HealthError::script(object, format!("built-in {}", rule.name()), f.0)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stand_in(_: &Env<'_>) -> Result<Hs, Fault> {
        Ok(Hs::status("Healthy"))
    }

    const fn rule(group: &'static str, kind: &'static str) -> Rule {
        Rule { group, kind, check: stand_in }
    }

    /// The lookup compares a list's group once: every list of the catalog holds one group.
    #[test]
    fn one_group_per_list() {
        for rules in CATALOG {
            let groups: std::collections::BTreeSet<&str> = rules.iter().map(|r| r.group).collect();
            assert!(groups.len() == 1, "a catalog list with groups {groups:?}");
        }
    }

    /// Argo CD's lookup of its built-in scripts: the exact folder first, then the first
    /// wildcard folder in path order (`_.b.io/_` before `_.io/_`), `_` matching any text but
    /// `/`, within its segment only.
    #[test]
    fn lookup_is_exact_then_wildcards_in_path_order() {
        let catalog: &[&[Rule]] = &[
            &[rule("_.io", "_")],
            &[rule("_.b.io", "_")],
            &[rule("a.b.io", "Thing_"), rule("a.b.io", "Thing")],
            &[rule("_", "X")],
        ];
        let found = |g: &str, k: &str| find_in(catalog, g, k).map(Rule::name);
        assert_eq!(found("a.b.io", "Thing").as_deref(), Some("a.b.io/Thing"));
        assert_eq!(found("a.b.io", "Things").as_deref(), Some("_.b.io/_"));
        assert_eq!(found("c.io", "Thing").as_deref(), Some("_.io/_"));
        assert_eq!(found("b.io", "Thing").as_deref(), Some("_.io/_"));
        assert_eq!(found("io", "X").as_deref(), Some("_/X"));
        assert_eq!(found("io", "Y"), None);
        assert_eq!(found("x.io", "a/b"), None, "`_` does not cross `/`");
        assert_eq!(found("", "X").as_deref(), Some("_/X"), "`_` matches the empty text");
        // A folder spelled as the object's names is read first, as Argo CD's exact read does.
        assert_eq!(found("_.io", "_").as_deref(), Some("_.io/_"));
    }
}
