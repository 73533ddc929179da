//! `batch/v1` Job.

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};

/// Argo CD's Job check, on its conditions. `spec.suspend` is not read, and a condition's
/// status only counts for `Suspended`: a resumed Job (`Suspended=False`) is Healthy even while
/// it still runs, as in Argo CD.
pub(crate) fn health(r: &Reader<'_>) -> Result<HealthResult, HealthError> {
    let mut failed = false;
    let mut complete = false;
    let mut suspended = false;
    let mut fail_message = "";
    let mut message = "";
    for c in r.items("/status/conditions")? {
        match r.str(&format!("{c}/type"))? {
            "Failed" => {
                failed = true;
                complete = true;
                fail_message = r.str(&format!("{c}/message"))?;
            }
            "Complete" => {
                complete = true;
                message = r.str(&format!("{c}/message"))?;
            }
            "Suspended" => {
                complete = true;
                message = r.str(&format!("{c}/message"))?;
                if r.str(&format!("{c}/status"))? == "True" {
                    suspended = true;
                }
            }
            _ => {}
        }
    }
    Ok(if !complete {
        HealthResult::new(HealthStatus::Progressing, message)
    } else if failed {
        HealthResult::new(HealthStatus::Degraded, fail_message)
    } else if suspended {
        HealthResult::new(HealthStatus::Suspended, message)
    } else {
        HealthResult::new(HealthStatus::Healthy, message)
    })
}
