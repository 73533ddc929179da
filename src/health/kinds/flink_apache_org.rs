//! `flink.apache.org`: FlinkDeployment and FlinkSessionJob, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "flink.apache.org", kind: "FlinkDeployment", check: flink_deployment },
    Rule { group: "flink.apache.org", kind: "FlinkSessionJob", check: flink_session_job },
];

/// A successful or `DEPLOYED` reconciliation Healthy; the job manager deploying Progressing,
/// in `ERROR` Degraded with the reconciliation's error; a job submitted suspended and never
/// reconciled Healthy, `Job is suspended`; else Progressing, waiting for the operator.
fn flink_deployment(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let rec = status.get("reconciliationStatus")?;
        if !rec.is_nil() {
            if rec.get("success")?.truthy() || rec.get("state")?.is("DEPLOYED") {
                return Ok(Hs::status("Healthy"));
            }
            let jm = status.get("jobManagerDeploymentStatus")?;
            if jm.is("DEPLOYED_NOT_READY") || jm.is("DEPLOYING") {
                return Ok(Hs::new("Progressing", "Waiting for deploying"));
            }
            if jm.is("ERROR") {
                return Ok(Hs::new("Degraded", rec.get("error")?));
            }
        }
    }
    let spec = env.obj.get("spec")?;
    if !spec.is_nil() && !spec.get("job")?.is_nil() && spec.path(&["job", "state"])?.is("suspended")
    {
        let never = status.is_nil() || {
            let rec = status.get("reconciliationStatus")?;
            rec.is_nil() || rec.get("lastReconciledSpec")?.is_nil()
        };
        if never {
            return Ok(Hs::new("Healthy", "Job is suspended"));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for Flink operator"))
}

/// The job's state: RUNNING, FINISHED Healthy; RECONCILING, CREATED Progressing; SUSPENDED,
/// CANCELED Suspended, each with the state; FAILED Degraded with the error; else Degraded
/// with `status.error` when set, Progressing otherwise.
fn flink_session_job(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let job = status.get("jobStatus")?;
        if !job.is_nil() {
            let state = job.get("state")?;
            for (names, health) in [
                (["RUNNING", "FINISHED"], "Healthy"),
                (["RECONCILING", "CREATED"], "Progressing"),
                (["SUSPENDED", "CANCELED"], "Suspended"),
            ] {
                if names.iter().any(|n| state.is(n)) {
                    return Ok(Hs::new(health, state));
                }
            }
            if state.is("FAILED") {
                let error = status.get("error")?;
                if error.is_nil() {
                    return Ok(Hs::new("Degraded", "FlinkSessionJob failed"));
                }
                return Ok(Hs::new("Degraded", error));
            }
        }
        let error = status.get("error")?;
        if !error.is_nil() {
            return Ok(Hs::new("Degraded", error));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for FlinkSessionJob to be reconciled"))
}
