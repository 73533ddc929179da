//! The sync status of each resource, as the automated-sync decision and the blast-radius guard
//! read it from the app's diff.

use serde::{Deserialize, Serialize};

use crate::diff::{AppDiff, SyncStatus};

/// The sync status of one resource, as the diff engine reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct ResourceStatus {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The status.
    pub status: SyncStatus,
    /// Live only, tracked by this app: a prune would delete it.
    pub requires_pruning: bool,
}

impl ResourceStatus {
    /// What [`AutoSyncInput::decide`](crate::sync::AutoSyncInput::decide) takes from the app's diff: the app's sync status and each resource's
    /// (hooks and ignored objects, which have none, left out), for [`AutoSyncInput`](crate::sync::AutoSyncInput).
    pub fn of_diff(diff: &AppDiff) -> (SyncStatus, Vec<ResourceStatus>) {
        let resources = diff
            .resources
            .iter()
            .filter_map(|r| {
                Some(ResourceStatus {
                    group: r.object.group.clone(),
                    kind: r.object.kind.clone(),
                    namespace: r.object.namespace.clone(),
                    name: r.object.name.clone(),
                    status: r.status?,
                    requires_pruning: r.requires_pruning,
                })
            })
            .collect();
        (diff.sync_status, resources)
    }
}
