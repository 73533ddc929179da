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

pub(crate) mod lua;

mod acid_zalan_do;
mod acme_cert_manager_io;
mod addons_cluster_x_k8s_io;
mod addons_projectcapsule_dev;
mod any_cnrm_cloud_google_com;
mod any_crossplane_io;
mod any_services_k8s_aws;
mod any_upbound_io;
mod apiextensions_k8s_io;
mod apps_3scale_net;
mod apps_kruise_io;
mod apps_openshift_io;
mod argoproj_io;
mod astra_netapp_io;
mod batch;
mod beat_k8s_elastic_co;
mod bitnami_com;
mod camel_apache_org;
mod capabilities_3scale_net;
mod capsule_clastix_io;
mod cassandra_rook_io;
mod cdi_kubevirt_io;
mod ceph_rook_io;
mod cert_manager_io;
mod certmanager_k8s_io;
mod clickhouse_altinity_com;
mod clickhouse_keeper_altinity_com;
mod cloudfront_aws_crossplane_io;
mod cluster_x_k8s_io;
mod controlplane_cluster_x_k8s_io;
mod coralogix_com;
mod core_gardener_cloud;
mod core_humio_com;
mod core_spinkube_dev;
mod datadoghq_com;
mod db_atlasgo_io;
mod elasticsearch_k8s_elastic_co;
mod external_secrets_io;
mod flagger_app;
mod flink_apache_org;
mod game_kruise_io;
mod gateway_envoyproxy_io;
mod gateway_networking_k8s_io;
mod gateway_solo_io;
mod gloo_solo_io;
mod grafana_integreatly_org;
mod grafana_org_operator_kubitus_project_gitlab_io;
mod helm_toolkit_fluxcd_io;
mod iam_aws_crossplane_io;
mod iammanager_keikoproj_io;
mod image_toolkit_fluxcd_io;
mod install_istio_io;
mod jaegertracing_io;
mod k8s_keycloak_org;
mod k8s_mariadb_com;
mod kafka_banzaicloud_io;
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
mod policy_open_cluster_management_io;
mod postgresql_cnpg_io;
mod proclaim_dogmatiq_io;
mod projectcontour_io;
mod promoter_argoproj_io;
mod psmdb_percona_com;
mod pulumi_com;
mod pxc_percona_com;
mod rabbitmq_com;
mod rds_aws_crossplane_io;
mod rollouts_kruise_io;
mod route53_aws_crossplane_io;
mod route_openshift_io;
mod s3_aws_crossplane_io;
mod services_cloud_sap_com;
mod serving_knative_dev;
mod serving_kserve_io;
mod shapes_a;
mod shapes_b;
mod shapes_c;
mod shapes_d;
mod snapshot_storage_k8s_io;
mod solr_apache_org;
mod source_toolkit_fluxcd_io;
mod sparkoperator_k8s_io;
mod spot_io;
mod stacks_crossplane_io;
mod tekton_dev;
mod tower_ansible_com;
mod trident_netapp_io;
mod trust_cert_manager_io;
mod velero_io;
mod work_karmada_io;
mod zookeeper_pravega_io;

use serde_json::Value;

use crate::health::{HealthError, parts::ScriptOutput};
use crate::object::ObjectRef;

pub(crate) use lua::{Fault, Hs, Lv};

/// What a rule reads: the object, as Lua sees it. No rule reads the clock: the one script of
/// Argo CD 3.6.2 that calls `os.time` (`apps.kruise.io/AdvancedCronJob`) passes it a date.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Env<'a> {
    /// `obj`, as a script sees it.
    pub(crate) obj: Lv<'a>,
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
        // `_` and then literal text: the text ends with it, and what `_` takes has no `/`.
        Some((b'_', rest)) if !rest.contains(&b'_') => {
            text.len() >= rest.len()
                && text.ends_with(rest)
                && !text[..text.len() - rest.len()].contains(&b'/')
        }
        Some((b'_', rest)) => {
            let run = text.iter().position(|&b| b == b'/').unwrap_or(text.len());
            (0..=run).any(|i| folder_match(rest, &text[i..]))
        }
        // Literal text up to the next `_` (or the end): compared at once.
        Some(_) => {
            let lit = pattern.iter().position(|&b| b == b'_').unwrap_or(pattern.len());
            text.starts_with(&pattern[..lit]) && folder_match(&pattern[lit..], &text[lit..])
        }
    }
}

/// Every built-in rule, a list per API group module.
pub(crate) const CATALOG: &[&[Rule]] = &[
    any_cnrm_cloud_google_com::RULES,
    any_crossplane_io::RULES,
    any_services_k8s_aws::RULES,
    any_upbound_io::RULES,
    acid_zalan_do::RULES,
    acme_cert_manager_io::RULES,
    addons_cluster_x_k8s_io::RULES,
    addons_projectcapsule_dev::RULES,
    apiextensions_k8s_io::RULES,
    apps_3scale_net::RULES,
    apps_kruise_io::RULES,
    apps_openshift_io::RULES,
    argoproj_io::RULES,
    astra_netapp_io::RULES,
    batch::RULES,
    beat_k8s_elastic_co::RULES,
    bitnami_com::RULES,
    camel_apache_org::RULES,
    capabilities_3scale_net::RULES,
    capsule_clastix_io::RULES,
    cassandra_rook_io::RULES,
    cdi_kubevirt_io::RULES,
    ceph_rook_io::RULES,
    cert_manager_io::RULES,
    certmanager_k8s_io::RULES,
    clickhouse_keeper_altinity_com::RULES,
    clickhouse_altinity_com::RULES,
    cloudfront_aws_crossplane_io::RULES,
    cluster_x_k8s_io::RULES,
    controlplane_cluster_x_k8s_io::RULES,
    coralogix_com::RULES,
    core_gardener_cloud::RULES,
    core_humio_com::RULES,
    core_spinkube_dev::RULES,
    datadoghq_com::RULES,
    db_atlasgo_io::RULES,
    elasticsearch_k8s_elastic_co::RULES,
    external_secrets_io::RULES,
    flagger_app::RULES,
    flink_apache_org::RULES,
    game_kruise_io::RULES,
    gateway_envoyproxy_io::RULES,
    gateway_networking_k8s_io::RULES,
    gateway_solo_io::RULES,
    gloo_solo_io::RULES,
    grafana_org_operator_kubitus_project_gitlab_io::RULES,
    grafana_integreatly_org::RULES,
    helm_toolkit_fluxcd_io::RULES,
    iam_aws_crossplane_io::RULES,
    iammanager_keikoproj_io::RULES,
    image_toolkit_fluxcd_io::RULES,
    install_istio_io::RULES,
    jaegertracing_io::RULES,
    k8s_keycloak_org::RULES,
    k8s_mariadb_com::RULES,
    kafka_banzaicloud_io::RULES,
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
    policy_open_cluster_management_io::RULES,
    postgresql_cnpg_io::RULES,
    proclaim_dogmatiq_io::RULES,
    projectcontour_io::RULES,
    promoter_argoproj_io::RULES,
    psmdb_percona_com::RULES,
    pulumi_com::RULES,
    pxc_percona_com::RULES,
    rabbitmq_com::RULES,
    rds_aws_crossplane_io::RULES,
    rollouts_kruise_io::RULES,
    route_openshift_io::RULES,
    route53_aws_crossplane_io::RULES,
    s3_aws_crossplane_io::RULES,
    services_cloud_sap_com::RULES,
    serving_knative_dev::RULES,
    serving_kserve_io::RULES,
    snapshot_storage_k8s_io::RULES,
    solr_apache_org::RULES,
    source_toolkit_fluxcd_io::RULES,
    sparkoperator_k8s_io::RULES,
    spot_io::RULES,
    stacks_crossplane_io::RULES,
    tekton_dev::RULES,
    tower_ansible_com::RULES,
    trident_netapp_io::RULES,
    trust_cert_manager_io::RULES,
    velero_io::RULES,
    work_karmada_io::RULES,
    zookeeper_pravega_io::RULES,
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
/// The catalog is sorted by group, one group per list, and a group holding `_` starts with it
/// (`catalog_is_sorted_by_group` checks all three): the exact group is found by a binary
/// search, and the wildcard groups are the lists before the first group that does not start
/// with `_` (`_` sorts before every lowercase letter). A wildcard folder then matches from
/// those lists or, with `_` in its kind, from the exact group's list.
fn find_in<'r>(catalog: &[&'r [Rule]], group: &str, kind: &str) -> Option<&'r Rule> {
    let list_group = |rules: &[Rule]| rules.first().map_or("", |r| r.group);
    let exact = catalog
        .binary_search_by(|rules| list_group(rules).cmp(group))
        .ok()
        .map_or(&[][..], |i| catalog[i]);
    if let Some(r) = exact.iter().find(|r| r.kind == kind) {
        return Some(r);
    }
    // A folder without `_` matches here only as itself, which the exact pass tried.
    catalog
        .iter()
        .take_while(|rules| list_group(rules).starts_with('_'))
        .filter(|rules| folder_match(list_group(rules).as_bytes(), group.as_bytes()))
        .flat_map(|rules| rules.iter())
        .chain(exact.iter().filter(|r| r.kind.contains('_')))
        .filter(|r| r.matches(group, kind))
        .min_by(|a, b| a.path_order(b))
}

/// Runs the built-in rule for `obj`'s kind: `None` when there is none; else what the script
/// would have returned, or its error (a [`HealthError::Script`] naming the rule).
pub(crate) fn evaluate(
    obj: &Value,
    object: &ObjectRef,
) -> Option<Result<ScriptOutput, HealthError>> {
    run(obj, &object.group, &object.kind, || object.clone())
}

/// [`evaluate`] for an object whose identity is read only when its rule fails (the lookup
/// borrows the group and kind).
pub(crate) fn evaluate_object(obj: &Value) -> Option<Result<ScriptOutput, HealthError>> {
    let (group, kind) = crate::object::RefParts::group_kind_of(obj);
    run(obj, group, kind, || ObjectRef::from_object_lossy(obj))
}

fn run(
    obj: &Value,
    group: &str,
    kind: &str,
    object: impl FnOnce() -> ObjectRef,
) -> Option<Result<ScriptOutput, HealthError>> {
    let rule = find(group, kind)?;
    let env = Env { obj: Lv::of(obj) };
    Some(
        (rule.check)(&env)
            .map(Hs::finish)
            .map_err(|f| HealthError::script(&object(), format!("built-in {}", rule.name()), f.0)),
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

    #[test]
    fn folder_names_match_as_globs() {
        let m = |p: &str, t: &str| folder_match(p.as_bytes(), t.as_bytes());
        assert!(m("_.crossplane.io", "pkg.crossplane.io"));
        assert!(m("_.crossplane.io", "a.b.crossplane.io"));
        assert!(!m("_.crossplane.io", "crossplane.io"));
        assert!(!m("_.crossplane.io", "pkg.crossplane.io.x"));
        assert!(m("_", ""));
        assert!(m("a_b_c", "abc") && m("a_b_c", "axxbyyc"));
        assert!(!m("a_b_c", "acb"));
        assert!(m("apps", "apps") && !m("apps", "apps2"));
        assert!(!m("_", "a/b"), "`_` does not cross `/`, as doublestar's `*`");
    }

    /// The lookup compares a list's group once: every list of the catalog holds one group.
    #[test]
    fn one_group_per_list() {
        for rules in CATALOG {
            let groups: std::collections::BTreeSet<&str> = rules.iter().map(|r| r.group).collect();
            assert!(groups.len() == 1, "a catalog list with groups {groups:?}");
        }
    }

    /// The lookup searches the groups in order and takes the wildcard groups from the front.
    #[test]
    fn catalog_is_sorted_by_group() {
        let groups: Vec<&str> = CATALOG.iter().map(|rules| rules[0].group).collect();
        for pair in groups.windows(2) {
            assert!(pair[0] < pair[1], "{} before {} in CATALOG", pair[0], pair[1]);
        }
        for g in groups.iter().filter(|g| g.contains('_')) {
            assert!(g.starts_with('_'), "the wildcard group {g} does not start with `_`");
        }
    }

    /// The lookup finds what a walk of every rule finds: the exact folder, else the first
    /// matching folder in path order, for every folder of the catalog and a few names only
    /// wildcards match.
    #[test]
    fn lookup_is_a_walk_of_every_rule() {
        let walk = |group: &str, kind: &str| {
            let all = || CATALOG.iter().flat_map(|rules| rules.iter());
            all()
                .find(|r| r.group == group && r.kind == kind)
                .or_else(|| all().filter(|r| r.matches(group, kind)).min_by(|a, b| a.path_order(b)))
                .map(Rule::name)
        };
        let mut names: Vec<(String, String)> = CATALOG
            .iter()
            .flat_map(|rules| rules.iter())
            .flat_map(|r| {
                let other = r.group.replace('_', "x");
                [(r.group.into(), r.kind.into()), (other, r.kind.replace('_', "Any"))]
            })
            .collect();
        names.extend(
            [("s3.services.k8s.aws", "Bucket"), ("kro.run", "Web"), ("x", "y")]
                .map(|(g, k)| (g.to_string(), k.to_string())),
        );
        for (g, k) in &names {
            assert_eq!(find(g, k).map(Rule::name), walk(g, k), "{g}/{k}");
        }
    }

    /// Argo CD's lookup of its built-in scripts: the exact folder first, then the first
    /// wildcard folder in path order (`_.b.io/_` before `_.io/_`), `_` matching any text but
    /// `/`, within its segment only.
    #[test]
    fn lookup_is_exact_then_wildcards_in_path_order() {
        // Sorted by group, as the catalog is.
        let catalog: &[&[Rule]] = &[
            &[rule("_", "X")],
            &[rule("_.b.io", "_")],
            &[rule("_.io", "_")],
            &[rule("a.b.io", "Thing_"), rule("a.b.io", "Thing")],
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
