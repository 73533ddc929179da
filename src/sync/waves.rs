//! Kind order and the task comparator (`kindOrder`, `syncTasks.Less`, gitops-engine v3.6.2 pkg/sync/sync_tasks.go),
//! prune-wave mirroring and PruneLast (`syncContext.getSyncTasks`, sync_context.go), and the
//! dependency pass (`syncTasks.adjustDeps`, sync_tasks.go).

use std::collections::BTreeMap;

use super::{Phase, Task};

/// Argo CD's kind order (`kindOrder`). A kind's rank is its index minus the length, so
/// `Namespace` is −35 and `APIService` −1; a kind not in the list ranks 0.
pub(super) const KIND_ORDER: [&str; 35] = [
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
];

impl Task<'_> {
    /// The rank of a kind (the bare kind string; the group is not looked at).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::Task;
    /// assert_eq!(Task::kind_rank_of("Namespace"), -35);
    /// assert_eq!(Task::kind_rank_of("APIService"), -1);
    /// assert_eq!(Task::kind_rank_of("MyCRD"), 0);
    /// ```
    pub fn kind_rank_of(kind: &str) -> i32 {
        match KIND_ORDER.iter().position(|k| *k == kind) {
            // The list has 35 entries, so the index always fits an i32.
            Some(i) => i as i32 - KIND_ORDER.len() as i32,
            None => 0,
        }
    }
}

/// The key of the task order: phase, wave, kind rank, name (Argo CD's comparator), then,
/// beyond Argo CD whose sort leaves these ties in no fixed order: group, namespace, applies
/// before prunes, version.
type OrderKey<'t> = ((Phase, i64, i32), &'t [u8], (&'t str, &'t str), bool, &'t str);

fn order_key<'t>(t: &'t Task<'_>) -> OrderKey<'t> {
    (
        (t.phase, t.wave, t.kind_rank),
        t.key.name.as_bytes(),
        (t.key.group.as_str(), t.key.namespace.as_str()),
        t.is_prune(),
        t.key.version.as_str(),
    )
}

/// Sorts the tasks by [`order_key`] (stable). The tasks are large, so the order is found on
/// the keys with each task's index last (which makes the order total, so an unstable sort
/// gives the stable order), and each task is moved once.
pub(crate) fn sort(tasks: &mut Vec<Task<'_>>) {
    let mut order: Vec<(OrderKey<'_>, usize)> =
        tasks.iter().enumerate().map(|(i, t)| (order_key(t), i)).collect();
    order.sort_unstable();
    let order: Vec<usize> = order.into_iter().map(|o| o.1).collect();
    let mut slots: Vec<Option<Task<'_>>> = std::mem::take(tasks).into_iter().map(Some).collect();
    *tasks = order.iter().filter_map(|i| slots.get_mut(*i).and_then(Option::take)).collect();
}

/// Mirrors the waves of the prune tasks: the i-th lowest prune wave and the i-th highest swap.
pub(crate) fn mirror_prune_waves(tasks: &mut [Task<'_>]) {
    let mut waves: Vec<i64> = tasks.iter().filter(|t| t.is_prune()).map(|t| t.wave).collect();
    waves.sort_unstable();
    waves.dedup();
    let n = waves.len();
    let map: BTreeMap<i64, i64> =
        waves.iter().enumerate().map(|(i, w)| (*w, waves[n - 1 - i])).collect();
    for t in tasks.iter_mut().filter(|t| t.is_prune()) {
        if let Some(w) = map.get(&t.wave) {
            t.wave = *w;
        }
    }
}

/// `1 + max(0, max wave of the Sync-phase tasks)`: the wave PruneLast prunes go to.
pub(crate) fn last_sync_wave(tasks: &[Task<'_>]) -> i64 {
    let max = tasks.iter().filter(|t| t.phase == Phase::Sync).map(|t| t.wave).fold(0, i64::max);
    max.saturating_add(1)
}

/// One pass of `adjustDeps` with a dependency function and a referrer function. Each writes
/// its key into the buffer it is given and says whether there is one.
fn adjust(
    tasks: &mut Vec<Task<'_>>,
    is_dep: impl Fn(&Task<'_>, &mut String) -> bool,
    ref_dep: impl Fn(&Task<'_>, &mut String) -> bool,
) {
    let mut first_ref: BTreeMap<String, usize> = BTreeMap::new();
    let mut k = String::new();
    let mut i = 0;
    while i < tasks.len() {
        if tasks[i].target.is_none() {
            i += 1;
            continue;
        }
        k.clear();
        if is_dep(&tasks[i], &mut k) {
            if let Some(&j) = first_ref.get(&k) {
                let (phase, wave) = (tasks[j].phase, tasks[j].wave);
                let mut t = tasks.remove(i);
                t.phase = phase;
                t.wave = wave;
                tasks.insert(j, t);
                for v in first_ref.values_mut() {
                    if *v >= j {
                        *v += 1;
                    }
                }
            }
        } else {
            k.clear();
            if ref_dep(&tasks[i], &mut k) && !first_ref.contains_key(&k) {
                first_ref.insert(k.clone(), i);
            }
        }
        i += 1;
    }
}

/// The dependency pass: Namespaces, then CRDs, pulled in front of their first user.
pub(crate) fn adjust_dependencies(tasks: &mut Vec<Task<'_>>) {
    let put = |k: &mut String, parts: &[&str]| {
        for (n, p) in parts.iter().enumerate() {
            if n > 0 {
                k.push('/');
            }
            k.push_str(p);
        }
        true
    };
    adjust(
        tasks,
        |t, k| t.key.kind == "Namespace" && t.key.group.is_empty() && put(k, &[&t.key.name]),
        |t, k| !t.key.namespace.is_empty() && put(k, &[&t.key.namespace]),
    );
    adjust(
        tasks,
        |t, k| {
            if t.key.kind != "CustomResourceDefinition" || t.key.group != "apiextensions.k8s.io" {
                return false;
            }
            let Some(spec) = t.given_target().map(|o| &o["spec"]) else { return false };
            match (spec["group"].as_str(), spec["names"]["kind"].as_str()) {
                (Some(g), Some(kind)) => put(k, &[g, kind]),
                _ => false,
            }
        },
        |t, k| put(k, &[&t.key.group, &t.key.kind]),
    );
}
