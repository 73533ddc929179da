//! `tower.ansible.com` (AWX operator): AnsibleJob, as Argo CD 3.6.2's script.

use super::shapes_d::cat;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "tower.ansible.com", kind: "AnsibleJob", check: ansible_job }];

/// The health of each job status.
const JOB_STATUSES: &[(&str, &str)] = &[
    ("successful", "Healthy"),
    ("failed", "Degraded"),
    ("error", "Degraded"),
    ("canceled", "Degraded"),
    ("new", "Progressing"),
    ("pending", "Progressing"),
    ("waiting", "Progressing"),
    ("running", "Progressing"),
];

/// The job result's status from [`JOB_STATUSES`], with `<status> job - <url>`; else
/// Progressing.
fn ansible_job(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let result = status.get("ansibleJobResult")?;
        if !result.is_nil() {
            let job = result.get("status")?;
            if let Some((_, code)) = JOB_STATUSES.iter().find(|(s, _)| job.is(s)) {
                let m = cat(&[job, Lv::Str(" job - "), result.get("url")?])?;
                return Ok(Hs::new(*code, m));
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for AnsibleJob"))
}
