//! `sparkoperator.k8s.io` (Spark operator): SparkApplication, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "sparkoperator.k8s.io", kind: "SparkApplication", check: spark_application }];

/// The health of each application state other than `RUNNING`; `None` for a message read from
/// `applicationState.errorMessage`.
const STATES: &[(&str, &str, Option<&str>)] = &[
    ("SUBMITTED", "Progressing", Some("SparkApplication was submitted successfully")),
    ("COMPLETED", "Healthy", Some("SparkApplication was Completed")),
    ("FAILED", "Degraded", None),
    ("SUBMISSION_FAILED", "Degraded", None),
    ("PENDING_RERUN", "Progressing", Some("SparkApplication is Pending Rerun")),
    ("INVALIDATING", "Missing", Some("SparkApplication is in InvalidatingState")),
    (
        "SUCCEEDING",
        "Progressing",
        Some(
            "The driver pod has been completed successfully. The executor pods terminate and are cleaned up.\n                                Under this circumstances, we assume the executor pod are completed.",
        ),
    ),
    ("FAILING", "Degraded", None),
    (
        "UNKNOWN",
        "Progressing",
        Some(
            "SparkApplication is in UnknownState because either driver pod or one or all executor pods in unknown state  ",
        ),
    ),
];

const RUNNING: &str = "SparkApplication is Running";

/// The executor range of dynamic allocation, `(min, max)` as the script's values: from
/// `spec.dynamicAllocation` when enabled, else from the Spark configuration when one of its
/// dynamic allocations is enabled (`tonumber` of its values). `None` when neither.
fn executor_range<'a>(spec: Lv<'a>) -> Result<Option<(Lv<'a>, Lv<'a>)>, Fault> {
    let inf = Lv::Num(f64::INFINITY);
    let dynamic = spec.get("dynamicAllocation")?;
    if dynamic.truthy() && dynamic.get("enabled")?.truthy() {
        let max = dynamic.get("maxExecutors")?;
        let min = dynamic.get("minExecutors")?;
        return Ok(Some((
            if min.truthy() { min } else { Lv::Num(0.0) },
            if max.truthy() { max } else { inf },
        )));
    }
    let conf = spec.get("sparkConf")?;
    if conf.is_nil() {
        return Ok(None);
    }
    for prefix in ["spark.streaming.dynamicAllocation", "spark.dynamicAllocation"] {
        if conf.get(&format!("{prefix}.enabled"))?.is("true") {
            let read = |k: &str, default: Lv<'a>| -> Result<Lv<'a>, Fault> {
                let v = conf.get(&format!("{prefix}.{k}"))?;
                Ok(if v.is_nil() { default } else { v.to_number().map_or(Lv::Nil, Lv::Num) })
            };
            let max = read("maxExecutors", inf)?;
            let min = read("minExecutors", Lv::Num(0.0))?;
            return Ok(Some((min, max)));
        }
    }
    Ok(None)
}

/// `count >= min and count <= max`: numbers only, else the comparison fault.
fn within(count: f64, min: Lv<'_>, max: Lv<'_>) -> Result<bool, Fault> {
    let num = |v: Lv<'_>| {
        v.num()
            .ok_or_else(|| Fault::new(format!("attempt to compare number with {}", v.type_name())))
    };
    Ok(count >= num(min)? && count <= num(max)?)
}

/// `RUNNING` is Healthy when the running executors are the instances asked for, or within
/// the dynamic allocation's range, or at least one with no executor configuration; the other
/// states from [`STATES`]; an empty state Progressing; else waiting for executors.
fn spark_application(env: &Env<'_>) -> Result<Hs, Fault> {
    let waiting = Hs::new("Progressing", "Waiting for Executor pods");
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(waiting);
    }
    let app = status.get("applicationState")?;
    let state = app.get("state")?;
    if state.is_nil() {
        return Ok(waiting);
    }
    if state.is("") {
        return Ok(Hs::new(
            "Progressing",
            "SparkApplication was added, enqueuing it for submission",
        ));
    }
    if state.is("RUNNING") {
        let executors = status.get("executorState")?;
        if !executors.is_nil() {
            let count = executors.pairs()?.filter(|(_, v)| v.is("RUNNING")).count() as f64;
            let spec = env.obj.get("spec")?;
            let instances = spec.get("executor")?.get("instances")?;
            if instances.is_num(count) {
                return Ok(Hs::new("Healthy", RUNNING));
            }
            match executor_range(spec)? {
                Some((min, max)) if min.truthy() => {
                    if within(count, min, max)? {
                        return Ok(Hs::new("Healthy", RUNNING));
                    }
                }
                _ => {
                    if spec.get("dynamicAllocation")?.is_nil()
                        && spec.get("executor")?.get("instances")?.is_nil()
                        && count >= 1.0
                    {
                        return Ok(Hs::new("Healthy", RUNNING));
                    }
                }
            }
        }
    }
    for (name, code, message) in STATES {
        if state.is(name) {
            return Ok(match message {
                Some(m) => Hs::new(*code, *m),
                None => Hs::new(*code, app.get("errorMessage")?),
            });
        }
    }
    Ok(waiting)
}
