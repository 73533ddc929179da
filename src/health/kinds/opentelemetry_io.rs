//! `opentelemetry.io`: OpenTelemetryCollector, as Argo CD 3.6.2's script.

use std::borrow::Cow;

use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "opentelemetry.io", kind: "OpenTelemetryCollector", check: collector }];

/// The first `<digits>/<digits>` in the text (Lua's `(%d+)/(%d+)`), as numbers.
fn ready_total(text: &str) -> Option<(f64, f64)> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if b.get(i) == Some(&b'/') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let end = (i + 1..b.len()).find(|&j| !b[j].is_ascii_digit()).unwrap_or(b.len());
            let ready = text[start..i].parse().ok()?;
            let total = text[i + 1..end].parse().ok()?;
            return Some((ready, total));
        }
    }
    None
}

/// `status.scale.statusReplicas` (`ready/total`): none ready is Degraded (Healthy for a
/// daemonset with no eligible nodes), all ready Healthy, else Progressing. Without it, a
/// sidecar is Healthy.
fn collector(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for OpenTelemetry Collector status"));
    }
    let scale = status.get("scale")?;
    let replicas = if scale.is_nil() { Lv::Nil } else { scale.get("statusReplicas")? };
    if replicas.is_nil() {
        if env.obj.path(&["spec", "mode"])?.is("sidecar") {
            return Ok(Hs::new("Healthy", "Collector is running in sidecar mode"));
        }
        return Ok(Hs::new("Progressing", "Scale status not available"));
    }
    let text: Cow<'_, str> = match replicas {
        Lv::Str(_) | Lv::Num(_) => replicas.text()?,
        other => {
            return Err(Fault::new(format!(
                "bad argument #1 to match (string expected, got {})",
                other.type_name()
            )));
        }
    };
    let Some((ready, total)) = ready_total(&text) else {
        return Ok(Hs::new(
            "Progressing",
            format!("Unable to parse replica status: {}", replicas.to_text()),
        ));
    };
    if ready == 0.0 {
        let spec = env.obj.get("spec")?;
        if !spec.is_nil() && spec.get("mode")?.is("daemonset") && total == 0.0 {
            return Ok(Hs::new("Healthy", "DaemonSet has no eligible nodes (0/0)"));
        }
        return Ok(Hs::new("Degraded", "No replicas are ready"));
    }
    if ready == total {
        return Ok(Hs::new("Healthy", "All replicas are ready"));
    }
    Ok(Hs::new("Progressing", "Replicas are starting up"))
}

#[cfg(test)]
mod tests {
    use super::ready_total;

    #[test]
    fn replicas_are_read_as_luas_pattern_reads_them() {
        for (text, want) in [
            ("2/2", Some((2.0, 2.0))),
            ("ready 12/30 pods", Some((12.0, 30.0))),
            ("1/x then 3/4", Some((3.0, 4.0))),
            ("007/8", Some((7.0, 8.0))),
            ("/3", None),
            ("12/", None),
            ("1 / 2", None),
            ("", None),
        ] {
            assert_eq!(ready_total(text), want, "{text}");
        }
    }
}
