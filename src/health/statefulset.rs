//! `apps/v1` StatefulSet.

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};

/// Argo CD's StatefulSet check.
pub(crate) fn health(r: &Reader<'_>) -> Result<HealthResult, HealthError> {
    use HealthStatus::{Healthy, Progressing};
    let observed = r.int64("/status/observedGeneration")?;
    if observed == 0 || r.int64("/metadata/generation")? > observed {
        return Ok(HealthResult::new(
            Progressing,
            "Waiting for statefulset spec update to be observed...",
        ));
    }
    let replicas = r.opt_int("/spec/replicas")?;
    let ready = r.int("/status/readyReplicas")?;
    let updated = r.int("/status/updatedReplicas")?;
    if let Some(want) = replicas.filter(|want| ready < *want) {
        return Ok(HealthResult::new(
            Progressing,
            format!("Waiting for {} pods to be ready...", want - ready),
        ));
    }
    let strategy = r.str("/spec/updateStrategy/type")?;
    if strategy == "RollingUpdate" && r.opt_object("/spec/updateStrategy/rollingUpdate")?.is_some()
    {
        let partition = r.opt_int("/spec/updateStrategy/rollingUpdate/partition")?;
        if let (Some(want), Some(partition)) = (replicas, partition)
            && updated < want - partition
        {
            return Ok(HealthResult::new(
                Progressing,
                format!(
                    "Waiting for partitioned roll out to finish: {updated} out of {} new pods have been updated...",
                    want - partition
                ),
            ));
        }
        return Ok(HealthResult::new(
            Healthy,
            format!("partitioned roll out complete: {updated} new pods have been updated..."),
        ));
    }
    if strategy == "OnDelete" {
        return Ok(HealthResult::new(Healthy, format!("statefulset has {ready} ready pods")));
    }
    let update_revision = r.str("/status/updateRevision")?;
    let current_revision = r.str("/status/currentRevision")?;
    if update_revision != current_revision {
        return Ok(HealthResult::new(
            Progressing,
            format!(
                "waiting for statefulset rolling update to complete {updated} pods at revision {update_revision}..."
            ),
        ));
    }
    Ok(HealthResult::new(
        Healthy,
        format!(
            "statefulset rolling update complete {} pods at revision {current_revision}...",
            r.int("/status/currentReplicas")?
        ),
    ))
}
