//! `promoter.argoproj.io` (GitOps Promoter): ScmProvider, ClusterScmProvider, GitRepository,
//! CommitStatus, ArgoCDCommitStatus, PullRequest, GitCommitStatus, WebRequestCommitStatus,
//! TimedCommitStatus, ChangeTransferPolicy and PromotionStrategy, as Argo CD 3.6.2's scripts.
//!
//! Every script first answers a deletion (Progressing with a deletion message, naming the
//! finalizers still present for some kinds), then reads the `Ready` condition the same way
//! ([`ready_gate`]), then the kind's own status.

use super::shapes_d::{cat, deleting, join, lua_eq, lua_string, or, prefix_bytes};
use super::{Env, Fault, Hs, Lv, Rule};

const G: &str = "promoter.argoproj.io";

pub(super) const RULES: &[Rule] = &[
    Rule { group: G, kind: "ArgoCDCommitStatus", check: argocd_commit_status },
    Rule { group: G, kind: "ChangeTransferPolicy", check: change_transfer_policy },
    Rule { group: G, kind: "ClusterScmProvider", check: cluster_scm_provider },
    Rule { group: G, kind: "CommitStatus", check: commit_status },
    Rule { group: G, kind: "GitCommitStatus", check: git_commit_status },
    Rule { group: G, kind: "GitRepository", check: git_repository },
    Rule { group: G, kind: "PromotionStrategy", check: promotion_strategy },
    Rule { group: G, kind: "PullRequest", check: pull_request },
    Rule { group: G, kind: "ScmProvider", check: scm_provider },
    Rule { group: G, kind: "TimedCommitStatus", check: timed_commit_status },
    Rule { group: G, kind: "WebRequestCommitStatus", check: web_request_commit_status },
];

/// The texts of one kind's reading of its `Ready` condition.
struct Texts {
    /// The message while there is no status.
    initial: &'static str,
    /// The condition types read (`Ready`, and `Reconciled` for PullRequest).
    types: &'static [&'static str],
    /// The condition's generation is not the object's.
    stale: &'static str,
    /// `<failed>: <message>` for a `ReconciliationError`.
    failed: &'static str,
    /// `<not_ready> (<reason>): <message>` for another reason.
    not_ready: &'static str,
    /// `<unknown> (<reason>): <message>` for status `Unknown`, when the script reads it.
    unknown: Option<&'static str>,
    /// No condition of the types.
    missing: &'static str,
}

/// What the `Ready` reading leaves: a health to return, or `obj.status` to read further.
enum Gate<'a> {
    Return(Hs),
    Go(Lv<'a>),
}

/// The shared reading: no status is Progressing (`initial`); the first condition of the types
/// whose generation is stale (Progressing), `False` (Degraded) or, where read, `Unknown`
/// (Progressing) decides; no such condition at all is Progressing (`missing`).
fn ready_gate<'a>(env: &Env<'a>, t: &Texts) -> Result<Gate<'a>, Fault> {
    let status = env.obj.get("status")?;
    if !status.truthy() {
        return Ok(Gate::Return(Hs::new("Progressing", t.initial)));
    }
    let mut found = false;
    let conditions = status.get("conditions")?;
    if conditions.truthy() {
        for c in conditions.items()? {
            let ty = c.get("type")?;
            if !t.types.iter().any(|x| ty.is(x)) {
                continue;
            }
            found = true;
            let observed = c.get("observedGeneration")?;
            if observed.truthy() {
                let generation = env.obj.get("metadata")?.get("generation")?;
                if generation.truthy() && !lua_eq(observed, generation) {
                    return Ok(Gate::Return(Hs::new("Progressing", t.stale)));
                }
            }
            let cs = c.get("status")?;
            if cs.is("False") {
                let msg = or(c.get("message")?, "Unknown error");
                let reason = or(c.get("reason")?, "Unknown");
                let text = if reason.is("ReconciliationError") {
                    cat(&[Lv::Str(t.failed), Lv::Str(": "), msg])?
                } else {
                    cat(&[Lv::Str(t.not_ready), Lv::Str(" ("), reason, Lv::Str("): "), msg])?
                };
                return Ok(Gate::Return(Hs::new("Degraded", text)));
            }
            if let Some(unknown) = t.unknown
                && cs.is("Unknown")
            {
                let msg = or(c.get("message")?, "Unknown");
                let reason = or(c.get("reason")?, "Unknown");
                let text = cat(&[Lv::Str(unknown), Lv::Str(" ("), reason, Lv::Str("): "), msg])?;
                return Ok(Gate::Return(Hs::new("Progressing", text)));
            }
        }
    }
    if !found {
        return Ok(Gate::Return(Hs::new("Progressing", t.missing)));
    }
    Ok(Gate::Go(status))
}

/// A finalizer the deletion message explains: its name, what it waits for, the risk.
type Finalizer = (&'static str, &'static str, &'static str);

/// Progressing with the deletion message `base`, followed by a sentence per finalizer still
/// listed in `metadata.finalizers` (explained when it is in `catalog`).
fn deleted(env: &Env<'_>, base: &str, catalog: &[Finalizer]) -> Result<Hs, Fault> {
    let finalizers = env.obj.path(&["metadata", "finalizers"])?;
    if !finalizers.truthy() {
        return Ok(Hs::status("Progressing").with_deletion_message(base));
    }
    let mut parts = vec![base.to_string()];
    for f in finalizers.items()? {
        let known = f.str().and_then(|s| catalog.iter().find(|(name, ..)| *name == s));
        parts.push(match known {
            Some((_, wait, risk)) => cat(&[
                f,
                Lv::Str(": "),
                Lv::Str(wait),
                Lv::Str(" Risk if removed manually: "),
                Lv::Str(risk),
            ])?,
            None => cat(&[f, Lv::Str(": still present.")])?,
        });
    }
    Ok(Hs::status("Progressing").with_deletion_message(parts.join(" ")))
}

/// Progressing with a fixed deletion message.
fn deleted_plain(m: &str) -> Hs {
    Hs::status("Progressing").with_deletion_message(m)
}

// ---------------------------------------------------------------------------------------------
// ScmProvider, ClusterScmProvider, GitRepository: the Ready condition alone.

/// One of the three kinds whose health is their `Ready` condition.
struct Provider {
    deleting: &'static str,
    finalizers: &'static [Finalizer],
    texts: Texts,
    ready: &'static str,
}

fn provider(env: &Env<'_>, p: &Provider) -> Result<Hs, Fault> {
    if deleting(env)? {
        return deleted(env, p.deleting, p.finalizers);
    }
    Ok(match ready_gate(env, &p.texts)? {
        Gate::Return(hs) => hs,
        Gate::Go(_) => Hs::new("Healthy", p.ready),
    })
}

/// The Ready condition: Healthy, or Degraded/Progressing with its reason and message.
fn scm_provider(env: &Env<'_>) -> Result<Hs, Fault> {
    provider(
        env,
        &Provider {
            deleting: "ScmProvider is being deleted.",
            finalizers: &[(
                "scmprovider.promoter.argoproj.io/finalizer",
                "Waiting until no GitRepository in this namespace still references this provider.",
                "GitRepository objects can reference a provider that no longer exists.",
            )],
            texts: Texts {
                initial: "Initializing SCM provider",
                types: &["Ready"],
                stale: "Waiting for ScmProvider spec update to be observed",
                failed: "SCM provider validation failed",
                not_ready: "SCM provider not ready",
                unknown: Some("SCM provider readiness unknown"),
                missing: "ScmProvider Ready condition is missing",
            },
            ready: "SCM provider is ready",
        },
    )
}

/// As ScmProvider, for the cluster-wide provider.
fn cluster_scm_provider(env: &Env<'_>) -> Result<Hs, Fault> {
    provider(
        env,
        &Provider {
            deleting: "ClusterScmProvider is being deleted.",
            finalizers: &[(
                "clusterscmprovider.promoter.argoproj.io/finalizer",
                "Waiting until no GitRepository still references this cluster-wide SCM provider.",
                "GitRepository objects can reference a provider that no longer exists.",
            )],
            texts: Texts {
                initial: "Initializing cluster SCM provider",
                types: &["Ready"],
                stale: "Waiting for ClusterScmProvider spec update to be observed",
                failed: "Cluster SCM provider validation failed",
                not_ready: "Cluster SCM provider not ready",
                unknown: Some("Cluster SCM provider readiness unknown"),
                missing: "ClusterScmProvider Ready condition is missing",
            },
            ready: "Cluster SCM provider is ready",
        },
    )
}

/// The Ready condition of a repository reference.
fn git_repository(env: &Env<'_>) -> Result<Hs, Fault> {
    provider(
        env,
        &Provider {
            deleting: "GitRepository is being deleted.",
            finalizers: &[(
                "gitrepository.promoter.argoproj.io/finalizer",
                "Waiting until no non-deleting PullRequests still reference this repository.",
                "repository metadata may be removed while promotions still depend on it.",
            )],
            texts: Texts {
                initial: "Initializing Git repository",
                types: &["Ready"],
                stale: "Waiting for GitRepository spec update to be observed",
                failed: "Git repository validation failed",
                not_ready: "Git repository not ready",
                unknown: Some("Git repository readiness unknown"),
                missing: "GitRepository Ready condition is missing",
            },
            ready: "Git repository is ready",
        },
    )
}

// ---------------------------------------------------------------------------------------------
// CommitStatus, ArgoCDCommitStatus, PullRequest.

/// Ready, then the commit and phase reported (Healthy either way).
fn commit_status(env: &Env<'_>) -> Result<Hs, Fault> {
    if deleting(env)? {
        return Ok(deleted_plain("Commit status is being deleted"));
    }
    let texts = Texts {
        initial: "Initializing commit status",
        types: &["Ready"],
        stale: "Waiting for commit status spec update to be observed",
        failed: "Commit status reconciliation failed",
        not_ready: "Commit status reconciliation failed",
        unknown: None,
        missing: "Commit status is not ready yet",
    };
    let status = match ready_gate(env, &texts)? {
        Gate::Return(hs) => return Ok(hs),
        Gate::Go(s) => s,
    };
    let sha = status.get("sha")?;
    if !sha.truthy() || !status.get("phase")?.truthy() {
        return Ok(Hs::new("Healthy", "Commit status is healthy"));
    }
    let phase = status.get("phase")?;
    let m = cat(&[Lv::Str("Commit status for commit "), sha, Lv::Str(" reports "), phase])?;
    Ok(Hs::new("Healthy", m))
}

/// Ready, then Degraded when no application is selected, else Healthy with their count.
fn argocd_commit_status(env: &Env<'_>) -> Result<Hs, Fault> {
    if deleting(env)? {
        return Ok(deleted_plain("Argo CD commit status is being deleted"));
    }
    let texts = Texts {
        initial: "Initializing Argo CD commit status",
        types: &["Ready"],
        stale: "Waiting for Argo CD commit status spec update to be observed",
        failed: "Argo CD commit status reconciliation failed",
        not_ready: "Argo CD commit status reconciliation failed",
        unknown: None,
        missing: "Argo CD commit status is not ready yet",
    };
    let status = match ready_gate(env, &texts)? {
        Gate::Return(hs) => return Ok(hs),
        Gate::Go(s) => s,
    };
    let apps = status.get("applicationsSelected")?;
    if !apps.truthy() || apps.len()? == 0 {
        return Ok(Hs::new("Degraded", "Argo CD commit status has no applications configured"));
    }
    Ok(Hs::new(
        "Healthy",
        format!("Argo CD commit status is healthy and is tracking {} applications", apps.len()?),
    ))
}

/// A `Reconciled` or `Ready` condition, then the pull request's state and id.
fn pull_request(env: &Env<'_>) -> Result<Hs, Fault> {
    if deleting(env)? {
        return deleted(
            env,
            "Pull request is being deleted.",
            &[
                (
                    "pullrequest.promoter.argoproj.io/finalizer",
                    "Waiting for SCM closure or reconciliation of the pull request.",
                    "the real PR can stay open after the CR is gone.",
                ),
                (
                    "changetransferpolicy.promoter.argoproj.io/pullrequest-finalizer",
                    "Waiting for the ChangeTransferPolicy to observe PR identity and state.",
                    "promotion status or history can be wrong or racy.",
                ),
            ],
        );
    }
    let texts = Texts {
        initial: "Initializing pull request",
        types: &["Reconciled", "Ready"],
        stale: "Waiting for pull request spec update to be observed",
        failed: "Pull request reconciliation failed",
        not_ready: "Pull request reconciliation failed",
        unknown: None,
        missing: "Pull request is not ready yet",
    };
    let status = match ready_gate(env, &texts)? {
        Gate::Return(hs) => return Ok(hs),
        Gate::Go(s) => s,
    };
    let id = status.get("id")?;
    if !id.truthy() || !status.get("state")?.truthy() {
        return Ok(Hs::new("Healthy", "Pull request is healthy"));
    }
    let state = status.get("state")?;
    Ok(Hs::new("Healthy", cat(&[Lv::Str("Pull request is "), state, Lv::Str(" as PR "), id])?))
}

// ---------------------------------------------------------------------------------------------
// GitCommitStatus, WebRequestCommitStatus, TimedCommitStatus: a phase per environment.

/// One of the kinds that report a phase per environment.
struct PerEnvironment {
    deleting: &'static str,
    texts: Texts,
    reconciled: &'static str,
    /// `<subject> failed for branch(es): ...`, `<subject> pending for ...`.
    subject: &'static str,
    /// `<subject> <passed> N environment(s)`.
    passed: &'static str,
}

/// Ready; then any environment in `failure` is Degraded, any other not in `success` is
/// Progressing (naming their branches), else Healthy with the count.
fn environments(env: &Env<'_>, k: &PerEnvironment) -> Result<Hs, Fault> {
    if deleting(env)? {
        return Ok(deleted_plain(k.deleting));
    }
    let status = match ready_gate(env, &k.texts)? {
        Gate::Return(hs) => return Ok(hs),
        Gate::Go(s) => s,
    };
    let envs = status.get("environments")?;
    if !envs.truthy() || envs.len()? == 0 {
        return Ok(Hs::new("Healthy", k.reconciled));
    }
    let mut pending = Vec::new();
    let mut failure = Vec::new();
    let mut success = 0usize;
    for e in envs.items()? {
        let branch = or(e.get("branch")?, "?");
        let phase = or(e.get("phase")?, "pending");
        if phase.is("failure") {
            failure.push(branch);
        } else if phase.is("success") {
            success += 1;
        } else {
            pending.push(branch);
        }
    }
    if !failure.is_empty() {
        let m = format!("{} failed for branch(es): {}", k.subject, join(&failure, ", ")?);
        return Ok(Hs::new("Degraded", m));
    }
    if !pending.is_empty() {
        let m = format!("{} pending for branch(es): {}", k.subject, join(&pending, ", ")?);
        return Ok(Hs::new("Progressing", m));
    }
    Ok(Hs::new("Healthy", format!("{} {} {success} environment(s)", k.subject, k.passed)))
}

/// Git commit validation per environment.
fn git_commit_status(env: &Env<'_>) -> Result<Hs, Fault> {
    environments(
        env,
        &PerEnvironment {
            deleting: "GitCommitStatus is being deleted",
            texts: Texts {
                initial: "Initializing git commit validation",
                types: &["Ready"],
                stale: "Waiting for GitCommitStatus spec update to be observed",
                failed: "Git commit validation failed",
                not_ready: "Git commit validation not ready",
                unknown: Some("Git commit validation status unknown"),
                missing: "GitCommitStatus Ready condition is missing",
            },
            reconciled: "Git commit validation reconciled",
            subject: "Git commit validation",
            passed: "passed for",
        },
    )
}

/// Web request gating per environment.
fn web_request_commit_status(env: &Env<'_>) -> Result<Hs, Fault> {
    environments(
        env,
        &PerEnvironment {
            deleting: "WebRequestCommitStatus is being deleted",
            texts: Texts {
                initial: "Initializing web request commit validation",
                types: &["Ready"],
                stale: "Waiting for WebRequestCommitStatus spec update to be observed",
                failed: "Web request commit validation failed",
                not_ready: "Web request commit validation not ready",
                unknown: Some("Web request commit validation unknown"),
                missing: "WebRequestCommitStatus Ready condition is missing",
            },
            reconciled: "Web request commit validation reconciled",
            subject: "Web request validation",
            passed: "passed for",
        },
    )
}

/// A timed wait per environment.
fn timed_commit_status(env: &Env<'_>) -> Result<Hs, Fault> {
    environments(
        env,
        &PerEnvironment {
            deleting: "TimedCommitStatus is being deleted",
            texts: Texts {
                initial: "Initializing timed commit gate",
                types: &["Ready"],
                stale: "Waiting for TimedCommitStatus spec update to be observed",
                failed: "Timed commit gate failed",
                not_ready: "Timed commit gate not ready",
                unknown: Some("Timed commit gate status unknown"),
                missing: "TimedCommitStatus Ready condition is missing",
            },
            reconciled: "Timed commit gate reconciled",
            subject: "Timed commit gate",
            passed: "satisfied for",
        },
    )
}

// ---------------------------------------------------------------------------------------------
// ChangeTransferPolicy and PromotionStrategy: dry commits and their commit statuses.

/// `not v or v == ""`.
fn blank(v: Lv<'_>) -> bool {
    !v.truthy() || v.is("")
}

/// `not a or not a.dry or not a.dry.sha or a.dry.sha == ""` for `a` = `side`.
fn missing_dry_sha(side: Lv<'_>) -> Result<bool, Fault> {
    if !side.truthy() {
        return Ok(true);
    }
    let dry = side.get("dry")?;
    if !dry.truthy() {
        return Ok(true);
    }
    Ok(blank(dry.get("sha")?))
}

/// `getShortSha(sha)` as text.
fn short(sha: Lv<'_>) -> Result<String, Fault> {
    if blank(sha) {
        return Ok(String::new());
    }
    let text = lua_string(sha, "len")?;
    Ok(prefix_bytes(&text, 7).into_owned())
}

/// Counts and keys of a list of commit statuses by phase.
#[derive(Default)]
struct Tally<'a> {
    pending: usize,
    success: usize,
    failure: usize,
    pending_keys: Vec<Lv<'a>>,
    failed_keys: Vec<Lv<'a>>,
}

/// `for _, status in ipairs(list or {})`, counting `pending`, `success` and `failure`.
fn tally(list: Lv<'_>) -> Result<Tally<'_>, Fault> {
    let mut t = Tally::default();
    if !list.truthy() {
        return Ok(t);
    }
    for s in list.items()? {
        let phase = s.get("phase")?;
        if phase.is("pending") {
            t.pending += 1;
            t.pending_keys.push(s.get("key")?);
        } else if phase.is("success") {
            t.success += 1;
        } else if phase.is("failure") {
            t.failure += 1;
            t.failed_keys.push(s.get("key")?);
        }
    }
    Ok(t)
}

impl Tally<'_> {
    /// `N pending, N successful, N failed. ` and the keys of the pending and failed ones.
    fn summary(&self, out: &mut String) -> Result<(), Fault> {
        out.push_str(&format!(
            "{} pending, {} successful, {} failed. ",
            self.pending, self.success, self.failure
        ));
        if self.pending > 0 {
            out.push_str(&format!(
                "Pending commit statuses: {}. ",
                join(&self.pending_keys, ", ")?
            ));
        }
        if self.failure > 0 {
            out.push_str(&format!("Failed commit statuses: {}. ", join(&self.failed_keys, ", ")?));
        }
        Ok(())
    }
}

/// Ready; both dry SHAs present (else Progressing); a promotion under way or non-successful
/// active commit statuses are described (Healthy); else up to date.
fn change_transfer_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    if deleting(env)? {
        return deleted(
            env,
            "Change transfer policy is being deleted.",
            &[(
                "changetransferpolicy.promoter.argoproj.io/finalizer",
                "Waiting to clear related PullRequest finalizers and finish cleanup before this policy is removed.",
                "The 'changetransferpolicy.promoter.argoproj.io/pullrequest-finalizer' finalizer may not be cleaned up from PullRequests owned by this ChangeTransferPolicy.",
            )],
        );
    }
    let texts = Texts {
        initial: "Initializing change transfer policy",
        types: &["Ready"],
        stale: "Waiting for change transfer policy spec update to be observed",
        failed: "Change transfer policy reconciliation failed",
        not_ready: "Change transfer policy reconciliation failed",
        unknown: None,
        missing: "Change transfer policy is not ready yet",
    };
    let status = match ready_gate(env, &texts)? {
        Gate::Return(hs) => return Ok(hs),
        Gate::Go(s) => s,
    };
    if missing_dry_sha(status.get("active")?)? {
        return Ok(Hs::new("Progressing", "The active commit DRY SHA is missing or empty."));
    }
    if missing_dry_sha(status.get("proposed")?)? {
        return Ok(Hs::new("Progressing", "The proposed commit DRY SHA is missing or empty."));
    }
    let active = status.get("active")?;
    let proposed = status.get("proposed")?;
    let active_sha = active.path(&["dry", "sha"])?;
    let proposed_sha = proposed.path(&["dry", "sha"])?;
    if !lua_eq(proposed_sha, active_sha) {
        let t = tally(proposed.get("commitStatuses")?)?;
        let mut m = format!(
            "Promotion in progress from '{}' to '{}': ",
            short(active_sha)?,
            short(proposed_sha)?
        );
        t.summary(&mut m)?;
        return Ok(Hs::new("Healthy", m));
    }
    let t = tally(active.get("commitStatuses")?)?;
    if t.pending > 0 || t.failure > 0 {
        let mut m = String::from(
            "Environment is up-to-date, but there are non-successful active commit statuses: ",
        );
        t.summary(&mut m)?;
        return Ok(Hs::new("Healthy", m));
    }
    Ok(Hs::new("Healthy", format!("Environment is up-to-date on commit {}.", short(active_sha)?)))
}

/// `getProposedDrySha(env)`: `proposed.note.drySha` when set and not empty, else
/// `proposed.dry.sha` when set and not empty, else `nil`.
fn proposed_dry_sha(e: Lv<'_>) -> Result<Lv<'_>, Fault> {
    if !e.truthy() {
        return Ok(Lv::Nil);
    }
    let proposed = e.get("proposed")?;
    if !proposed.truthy() {
        return Ok(Lv::Nil);
    }
    let note = proposed.get("note")?;
    if note.truthy() {
        let sha = note.get("drySha")?;
        if sha.truthy() && !sha.is("") {
            return Ok(sha);
        }
    }
    let dry = proposed.get("dry")?;
    if dry.truthy() {
        let sha = dry.get("sha")?;
        if sha.truthy() && !sha.is("") {
            return Ok(sha);
        }
    }
    Ok(Lv::Nil)
}

/// A key of `nonSuccessfulEnvironments` (`t[branch] = ...`), kept in the order Lua's `pairs`
/// gives: the integer keys of the array part ascending, then the others as first inserted.
fn table_order<'a>(keys: Vec<(Lv<'a>, usize, usize)>) -> Vec<(Lv<'a>, usize, usize)> {
    // Later writes to the same key replace the value and keep the key's first position.
    let mut uniq: Vec<(Lv<'a>, usize, usize)> = Vec::new();
    for (k, f, p) in keys {
        match uniq.iter_mut().find(|(u, ..)| lua_eq(*u, k)) {
            Some(slot) => *slot = (slot.0, f, p),
            None => uniq.push((k, f, p)),
        }
    }
    let array_key =
        |k: &Lv<'_>| matches!(k, Lv::Num(n) if n.fract() == 0.0 && *n >= 1.0 && *n < 67_108_864.0);
    let mut ints: Vec<_> = uniq.iter().copied().filter(|(k, ..)| array_key(k)).collect();
    ints.sort_by(|a, b| a.0.num().partial_cmp(&b.0.num()).unwrap_or(std::cmp::Ordering::Equal));
    ints.extend(uniq.into_iter().filter(|(k, ..)| !array_key(k)));
    ints
}

/// Ready; environments present, each with both dry SHAs, all proposing the same one (else
/// Progressing); the first environment with a promotion under way is described (Healthy);
/// then environments with non-successful active commit statuses; else all up to date.
fn promotion_strategy(env: &Env<'_>) -> Result<Hs, Fault> {
    if deleting(env)? {
        return Ok(deleted_plain("Promotion strategy is being deleted"));
    }
    let texts = Texts {
        initial: "Initializing promotion strategy",
        types: &["Ready"],
        stale: "Waiting for promotion strategy spec update to be observed",
        failed: "Promotion strategy reconciliation failed",
        not_ready: "Promotion strategy reconciliation failed",
        unknown: None,
        missing: "Promotion strategy is not ready yet",
    };
    let status = match ready_gate(env, &texts)? {
        Gate::Return(hs) => return Ok(hs),
        Gate::Go(s) => s,
    };
    let envs = status.get("environments")?;
    if !envs.truthy() || envs.len()? == 0 {
        return Ok(Hs::new("Degraded", "Promotion strategy has no environments configured"));
    }
    for e in envs.items()? {
        if missing_dry_sha(e.get("active")?)? {
            let m = cat(&[
                Lv::Str("The active commit DRY SHA is missing or empty in environment '"),
                e.get("branch")?,
                Lv::Str("'."),
            ])?;
            return Ok(Hs::new("Progressing", m));
        }
        if !proposed_dry_sha(e)?.truthy() {
            let m = cat(&[
                Lv::Str("The proposed commit DRY SHA is missing or empty in environment '"),
                e.get("branch")?,
                Lv::Str("'."),
            ])?;
            return Ok(Hs::new("Progressing", m));
        }
    }
    let first = envs.at(1)?;
    let proposed = proposed_dry_sha(first)?;
    for e in envs.items()? {
        if !lua_eq(proposed_dry_sha(e)?, proposed) {
            return Ok(Hs::new(
                "Progressing",
                "Not all environments have the same proposed commit SHA. This likely means the hydrator has not run for all environments yet.",
            ));
        }
    }
    for e in envs.items()? {
        let proposed_sha = e.path(&["proposed", "dry", "sha"])?;
        let active_sha = e.path(&["active", "dry", "sha"])?;
        if !lua_eq(proposed_sha, active_sha) {
            let t = tally(e.path(&["proposed", "commitStatuses"])?)?;
            let mut m = cat(&[
                Lv::Str("Promotion in progress for environment '"),
                e.get("branch")?,
                Lv::Str("' from '"),
            ])?;
            m.push_str(&format!("{}' to '{}': ", short(active_sha)?, short(proposed_sha)?));
            t.summary(&mut m)?;
            m.push_str(&format!(
                "Hydrator has processed dry commit '{}'. ",
                short(proposed_dry_sha(e)?)?
            ));
            return Ok(Hs::new("Healthy", m));
        }
    }
    // nonSuccessfulEnvironments[branch] = {failure, pending}, read back with pairs.
    let mut keys = Vec::new();
    for e in envs.items()? {
        let mut pending = 0;
        let mut failure = 0;
        let list = e.path(&["active", "commitStatuses"])?;
        if list.truthy() {
            for s in list.items()? {
                let phase = s.get("phase")?;
                if phase.is("pending") {
                    pending += 1;
                } else if phase.is("failure") {
                    failure += 1;
                }
            }
        }
        if pending > 0 || failure > 0 {
            let branch = e.get("branch")?;
            if branch.is_nil() {
                return Err(Fault::new("table index is nil (environment without `branch`)"));
            }
            keys.push((branch, failure, pending));
        }
    }
    if !keys.is_empty() {
        let mut parts = Vec::new();
        for (branch, failure, pending) in table_order(keys) {
            parts.push(cat(&[branch])? + &format!(" ({failure} failed, {pending} pending)"));
        }
        return Ok(Hs::new(
            "Healthy",
            format!(
                "Environments are up-to-date, but some environments have non-successful commit statuses: {}.",
                parts.join(", ")
            ),
        ));
    }
    let first_active = first.path(&["active", "dry", "sha"])?;
    Ok(Hs::new(
        "Healthy",
        format!(
            "All environments are up-to-date on commit '{}'. Hydrator has processed dry commit '{}'.",
            short(first_active)?,
            short(proposed_dry_sha(first)?)?
        ),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn env(branch: Value) -> Value {
        json!({"branch": branch, "proposed": {"dry": {"sha": "abc"}},
               "active": {"dry": {"sha": "abc"}, "commitStatuses": [{"key": "k", "phase": "pending"}]}})
    }

    /// The summary lists environments in the order gopher-lua's `pairs` walks the table the
    /// script builds (integer keys ascending, then the others as first inserted), which is
    /// what Argo CD 3.6.2 printed for this object; LuaJIT's hash order differs.
    #[test]
    fn non_successful_environments_in_gopher_lua_order() {
        let obj = json!({
            "apiVersion": "promoter.argoproj.io/v1alpha1", "kind": "PromotionStrategy",
            "metadata": {"name": "p", "generation": 1},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "environments": [env(json!("env/b")), env(json!(5)), env(json!("env/a")),
                                        env(json!(2)), env(json!("env/b"))]}});
        let e = Env { obj: Lv::of(&obj) };
        let health = promotion_strategy(&e).unwrap().finish().health.unwrap();
        assert_eq!(
            health.message,
            "Environments are up-to-date, but some environments have non-successful commit \
             statuses: 2 (0 failed, 1 pending), 5 (0 failed, 1 pending), env/b (0 failed, 1 \
             pending), env/a (0 failed, 1 pending)."
        );
        // A missing branch is the script's `table index is nil`.
        let mut bad = obj.clone();
        bad["status"]["environments"][0].as_object_mut().unwrap().remove("branch");
        let e = Env { obj: Lv::of(&bad) };
        assert!(promotion_strategy(&e).is_err());
    }
}
