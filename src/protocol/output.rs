//! The JSON the CLI commands print with `--output json`, which is also the `result` of the
//! protocol method of the same name: one type per command, built from the engine's result,
//! used by both so that they cannot drift apart.
//!
//! The field order of each type is the order the CLI prints.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diff::{AppDiff, Condition, PatchOp};
use crate::health::AppHealth;

/// The JSON document of a method's `result`, which is also what the CLI command of the same
/// name prints with `--output json`: built from the engine's answer by the protocol's own
/// (private) output types, so that the CLI and `serve` cannot drift apart. The schema of each
/// is in [`Server::json_schema`](super::Server::json_schema).
///
/// ```
/// use gitops_core::protocol::Document;
/// let doc = serde_json::to_value(Document::Blocked("paused")).unwrap();
/// assert_eq!(doc["sync"], false);
/// assert_eq!(doc["message"], "paused");
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Document<'a> {
    /// `diff`: the conditions, notes, resources and sync status of an app's comparison.
    Diff(&'a AppDiff),
    /// `health`: every resource's health and the app's.
    Health(&'a AppHealth),
    /// `plan`: the tasks of a sync plan, in the order they run, under `tasks`.
    Plan(&'a crate::sync::Plan<'a>),
    /// `plan --guard`'s `guard` member: what the blast-radius guard found.
    Guard(&'a crate::sync::GuardVerdict),
    /// `decide`: the automated-sync decision.
    Decision(&'a crate::sync::Decision),
    /// `decide` when automated sync is blocked (reconcile skipped, a sync window): no sync,
    /// with this message.
    Blocked(&'a str),
    /// `actions.list`: the actions an object offers.
    Actions(&'a [crate::actions::ResourceAction]),
    /// `actions.run`: the action's result, and the object it ran on (each patched resource is
    /// written as that object with the patch applied).
    ActionRun(&'a crate::actions::ActionResult, &'a serde_json::Value),
}

impl Serialize for Document<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Document::Diff(d) => DiffOutput::new(d).serialize(serializer),
            Document::Health(h) => HealthOutput::new(h).serialize(serializer),
            Document::Plan(p) => PlanOutput::new(p).serialize(serializer),
            Document::Guard(v) => DecideGuardOutput::new(v).serialize(serializer),
            Document::Decision(d) => DecideOutput::new(d).serialize(serializer),
            Document::Blocked(m) => DecideOutput::blocked(m.to_string()).serialize(serializer),
            Document::Actions(a) => serializer.collect_seq(a),
            Document::ActionRun(r, input) => ActionsRunOutput::new(r, input).serialize(serializer),
        }
    }
}

/// `gitops-core diff --output json`, the `diff` result.
///
/// Keys are in alphabetical order, the order the command has always printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct DiffOutput {
    /// Application conditions (comparison errors and warnings), sorted.
    #[schemars(schema_with = "conditions_schema")]
    pub conditions: Vec<Condition>,
    /// What the comparison left out and why (live objects the app does not own: not
    /// compared, not pruned), sorted; absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The resources, sorted by group, kind, namespace and name.
    pub resources: Vec<DiffOutputResource>,
    /// The app's sync status: `Synced`, `OutOfSync` or `Unknown`.
    #[schemars(schema_with = "sync_status_schema")]
    pub sync_status: String,
}

/// One resource of [`DiffOutput`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct DiffOutputResource {
    /// RFC 6902 operations from the normalized live object to the predicted live object
    /// (Secret values masked).
    #[schemars(schema_with = "patch_schema")]
    pub diff: Vec<PatchOp>,
    /// API group, `""` for the core group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// What the comparison says about the resource, empty when nothing.
    pub message: String,
    /// Whether the live object differs from what Git predicts.
    pub modified: bool,
    /// Name.
    pub name: String,
    /// Namespace, `""` for cluster-scoped objects.
    pub namespace: String,
    /// Live only: a pruning sync deletes it.
    pub requires_pruning: bool,
    /// `Synced`, `OutOfSync`, `Unknown`, or `""` for hooks and ignored objects.
    #[schemars(schema_with = "resource_sync_status_schema")]
    pub status: String,
    /// API version.
    pub version: String,
}

impl DiffOutputResource {
    /// The output of one resource's comparison.
    pub(crate) fn of(r: &crate::diff::ResourceDiff) -> DiffOutputResource {
        DiffOutputResource {
            diff: r.diff.clone(),
            group: r.object.group.clone(),
            kind: r.object.kind.clone(),
            message: r.message.clone(),
            modified: r.modified,
            name: r.object.name.clone(),
            namespace: r.object.namespace.clone(),
            requires_pruning: r.requires_pruning,
            status: r.status.map_or("", |s| s.as_str()).to_string(),
            version: r.object.version.clone(),
        }
    }
}

impl DiffOutput {
    /// The output of an application diff.
    pub(super) fn new(result: &AppDiff) -> DiffOutput {
        DiffOutput {
            conditions: result.conditions.clone(),
            notes: result.notes.clone(),
            resources: result.resources.iter().map(DiffOutputResource::of).collect(),
            sync_status: result.sync_status.as_str().to_string(),
        }
    }
}

/// `gitops-core health --output json`, the `health` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub(super) struct HealthOutput {
    /// The app's health: the worst status among the resources that count.
    #[schemars(with = "crate::health::HealthStatus")]
    pub status: String,
    /// `Caused by ...` naming up to three resources with that status, or empty.
    pub message: String,
    /// Every resource, sorted by group, kind, namespace and name.
    pub resources: Vec<HealthOutputResource>,
}

/// One resource of [`HealthOutput`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub(super) struct HealthOutputResource {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `Healthy`, `Progressing`, `Degraded`, `Suspended`, `Missing`, `Unknown`, or null for
    /// an object that has no health.
    #[schemars(with = "Option<crate::health::HealthStatus>")]
    pub status: Option<String>,
    /// The health message, empty when none.
    pub message: String,
}

impl HealthOutput {
    /// The output of an app health.
    pub(super) fn new(app: &AppHealth) -> HealthOutput {
        HealthOutput {
            status: app.status.as_str().to_string(),
            message: app.message.clone(),
            resources: app.resources.iter().map(HealthOutputResource::of).collect(),
        }
    }
}

impl HealthOutputResource {
    /// The output of one resource's health.
    pub(crate) fn of(r: &crate::health::ResourceHealth) -> HealthOutputResource {
        let o = &r.object;
        HealthOutputResource {
            group: o.group.clone(),
            version: o.version.clone(),
            kind: o.kind.clone(),
            namespace: o.namespace.clone(),
            name: o.name.clone(),
            status: r.health.as_ref().map(|h| h.status.as_str().to_string()),
            message: r.health.as_ref().map_or(String::new(), |h| h.message.clone()),
        }
    }
}

/// A resource's sync status, or `""` for hooks and ignored objects.
fn resource_sync_status_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": ["Synced", "OutOfSync", "Unknown", ""] })
}

/// `gitops-core actions list --output json`, the `actions.list` result: the actions the object
/// offers, sorted by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub(super) struct ActionsListOutput(pub Vec<crate::actions::ResourceAction>);

/// `gitops-core actions run --output json`, the `actions.run` result: the action, the script
/// that ran and the resources it changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub(super) struct ActionsRunOutput {
    /// The action's name.
    pub action: String,
    /// Where the script came from: `argocd-cm <key> action <name>` or its path.
    pub script: String,
    /// The impacted resources, in the order the script listed them.
    pub resources: Vec<ActionsRunResource>,
}

/// One resource of [`ActionsRunOutput`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub(super) struct ActionsRunResource {
    /// `patch` (of the object the action ran on) or `create`.
    pub operation: crate::actions::Operation,
    /// For `patch`, the object as the action left it; for `create`, the object to create.
    pub resource: serde_json::Value,
    /// For `patch`, the RFC 6902 operations turning the input object into `resource`; empty
    /// for `create`.
    #[schemars(schema_with = "patch_schema")]
    pub patch: Vec<PatchOp>,
}

impl ActionsRunOutput {
    /// The output of an action's result on `input` (the object it ran on): each patched
    /// resource as `input` with the patch applied ([`crate::actions::ImpactedResource::apply_to`]).
    pub(super) fn new(
        r: &crate::actions::ActionResult,
        input: &serde_json::Value,
    ) -> ActionsRunOutput {
        ActionsRunOutput {
            action: r.action.clone(),
            script: r.script.clone(),
            resources: r
                .resources
                .iter()
                .map(|x| ActionsRunResource {
                    operation: x.operation,
                    // The patch was made against `input`: it applies.
                    resource: x.apply_to(input).unwrap_or_default(),
                    patch: x.patch.clone(),
                })
                .collect(),
        }
    }
}

/// `gitops-core decide --output json`, the `decide` result.
///
/// Keys are in alphabetical order, the order the command prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct DecideOutput {
    /// What the blast-radius guard found, when the request has a guard and the decision got
    /// as far as it; left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<DecideGuardOutput>,
    /// Why: the app condition the decision raises (e.g. `auto-sync will wipe out all
    /// resources`), else the decision's message.
    pub message: String,
    /// When the next attempt may run (RFC 3339), when the decision is to wait.
    pub next_attempt_at: Option<String>,
    /// Whether the sync is a self-heal.
    pub self_heal: bool,
    /// Whether an automated sync starts now.
    pub sync: bool,
}

impl DecideOutput {
    /// No automated sync because the project's sync windows block it (`message`, from
    /// `sync::SyncWindows::auto_sync_blocked`); the decision itself is not made.
    pub(super) fn blocked(message: String) -> DecideOutput {
        DecideOutput { guard: None, message, next_attempt_at: None, self_heal: false, sync: false }
    }

    /// The output of an automated-sync decision.
    pub(super) fn new(d: &crate::sync::Decision) -> DecideOutput {
        DecideOutput {
            guard: d.guard.as_ref().map(DecideGuardOutput::new),
            message: d.condition.clone().unwrap_or_else(|| d.message.clone()),
            next_attempt_at: d.next_attempt_at.map(crate::vocabulary::format_rfc3339),
            self_heal: d.self_heal,
            sync: d.sync,
        }
    }
}

/// The blast-radius guard's verdict in [`DecideOutput`] (`sync::GuardVerdict`). Keys
/// are in alphabetical order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct DecideGuardOutput {
    /// The sync may go ahead: no limit is exceeded, or the override annotation allows it.
    pub allowed: bool,
    /// The PersistentVolumeClaims of the pruned StatefulSets.
    pub claims: Vec<DecideClaimOutput>,
    /// The limits exceeded, in this order: `maxPruneFraction`, `maxPruneCount`,
    /// `protectedKind`.
    #[schemars(schema_with = "guard_limits_schema")]
    pub exceeded: Vec<String>,
    /// The app's resources that exist in the cluster.
    pub live_resources: usize,
    /// What the guard has to say (empty when nothing).
    pub message: String,
    /// The `gitops-core.io/allow-prune` annotation let the sync through.
    pub overridden: bool,
    /// Every resource the sync would delete, sorted by group, kind, namespace, name.
    pub prunes: Vec<DecidePruneOutput>,
}

/// A resource the sync would delete. Keys are in alphabetical order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub(super) struct DecidePruneOutput {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// Its kind is protected.
    pub protected: bool,
}

/// A PersistentVolumeClaim of a pruned StatefulSet. Keys are in alphabetical order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct DecideClaimOutput {
    /// It is among the live objects or claims given (else expected from `spec.replicas`).
    pub found: bool,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// The pod ordinal.
    pub ordinal: u64,
    /// `whenDeleted Retain`, `whenDeleted Delete` or `PrunePropagationPolicy=orphan`.
    pub reason: String,
    /// The StatefulSet's name.
    pub stateful_set: String,
    /// It stays after the prune, tracked by no one.
    pub survives: bool,
    /// The `volumeClaimTemplates` entry.
    pub template: String,
}

impl DecideGuardOutput {
    /// The output of a guard verdict.
    pub(super) fn new(v: &crate::sync::GuardVerdict) -> DecideGuardOutput {
        DecideGuardOutput {
            allowed: v.allowed,
            claims: v
                .claims
                .iter()
                .map(|c| DecideClaimOutput {
                    found: c.found,
                    name: c.name.clone(),
                    namespace: c.namespace.clone(),
                    ordinal: c.ordinal,
                    reason: c.reason.clone(),
                    stateful_set: c.stateful_set.clone(),
                    survives: c.survives,
                    template: c.template.clone(),
                })
                .collect(),
            exceeded: v.exceeded.iter().map(|l| l.code().to_string()).collect(),
            live_resources: v.live_resources,
            message: v.message.clone(),
            overridden: v.overridden,
            prunes: v
                .prunes
                .iter()
                .map(|p| DecidePruneOutput {
                    group: p.group.clone(),
                    kind: p.kind.clone(),
                    name: p.name.clone(),
                    namespace: p.namespace.clone(),
                    protected: p.protected,
                })
                .collect(),
        }
    }
}

/// `gitops-core plan --output json`, the `plan` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub(super) struct PlanOutput {
    /// The tasks in the order they run: phase, wave, kind order, name.
    pub tasks: Vec<PlanOutputTask>,
}

/// One task of [`PlanOutput`]. Keys are in alphabetical order, the order the command prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct PlanOutputTask {
    /// `Create`, `Apply`, `ServerSideApply`, `Replace`, `Update`, `Delete` or `Skip`.
    #[schemars(schema_with = "plan_action_schema")]
    pub action: String,
    /// API group.
    pub group: String,
    /// The hook type (`PreSync`, `Sync`, `PostSync`, `SyncFail`) of a hook, else null.
    #[schemars(with = "Option<crate::sync::Phase>")]
    pub hook: Option<String>,
    /// Kind.
    pub kind: String,
    /// Why the task is skipped (e.g. `ignored (no prune)`), or why it is invalid; else empty.
    pub message: String,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// `PreSync`, `Sync`, `PostSync` or `SyncFail`.
    #[schemars(with = "crate::sync::Phase")]
    pub phase: String,
    /// A prune that waits for `Prune=confirm` approval (`message` says so).
    pub requires_confirmation: bool,
    /// API version.
    pub version: String,
    /// The effective sync wave.
    pub wave: i64,
}

impl PlanOutput {
    /// The output of a sync plan.
    pub(super) fn new(plan: &crate::sync::Plan) -> PlanOutput {
        PlanOutput {
            tasks: plan
                .tasks()
                .map(|t| PlanOutputTask {
                    action: t.action.code().to_string(),
                    group: t.key.group.clone(),
                    hook: t.hook_type().map(|p| p.as_str().to_string()),
                    kind: t.key.kind.clone(),
                    message: match &t.action {
                        crate::sync::TaskAction::Skip { reason } => reason.clone(),
                        // Argo CD's sync waits here, prunes nothing, and says so.
                        crate::sync::TaskAction::Delete if t.requires_confirmation => format!(
                            "waiting for pruning confirmation of {}/{}/{}",
                            t.key.group, t.key.kind, t.key.name
                        ),
                        _ => t.invalid.clone().unwrap_or_default(),
                    },
                    name: t.key.name.clone(),
                    namespace: t.key.namespace.clone(),
                    phase: t.phase.as_str().to_string(),
                    requires_confirmation: t.requires_confirmation,
                    version: t.key.version.clone(),
                    wave: t.wave,
                })
                .collect(),
        }
    }
}

// The schemas of types the output takes from the engine (`diff::SyncStatus`, `diff::Condition`,
// `sync::TaskAction`, `sync::GuardLimit`) or from json-patch: written here, each kept
// once in `$defs` under its name and referenced where used.

/// `schema`, kept in `$defs` as `name`, as a reference.
pub(super) fn defined(
    generator: &mut schemars::SchemaGenerator,
    name: &str,
    schema: impl FnOnce() -> serde_json::Value,
) -> schemars::Schema {
    if !generator.definitions().contains_key(name) {
        let value = schema();
        generator.definitions_mut().insert(name.to_owned(), value);
    }
    let path = generator.settings().definitions_path.trim_start_matches('/').to_owned();
    schemars::json_schema!({ "$ref": format!("#/{path}/{name}") })
}

/// A list of `item`s.
fn list_of(item: schemars::Schema) -> schemars::Schema {
    schemars::json_schema!({ "type": "array", "items": item })
}

pub(crate) fn sync_status_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    defined(generator, "SyncStatus", || {
        serde_json::json!({
            "description": "A sync status (`diff::SyncStatus`).",
            "oneOf": [
                {
                    "const": "Synced",
                    "description": "Live matches Git.",
                    "type": "string"
                },
                {
                    "const": "OutOfSync",
                    "description": "Live differs from Git.",
                    "type": "string"
                },
                {
                    "const": "Unknown",
                    "description": "The comparison could not be made.",
                    "type": "string"
                }
            ]
        })
    })
}

fn plan_action_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    defined(generator, "PlanAction", || {
        serde_json::json!({
            "description": "What a sync does with a task's object (`sync::TaskAction`).",
            "oneOf": [
                {
                    "const": "Create",
                    "description": "`kubectl create`.",
                    "type": "string"
                },
                {
                    "const": "Apply",
                    "description": "`kubectl apply` (client side).",
                    "type": "string"
                },
                {
                    "const": "ServerSideApply",
                    "description": "Server-side apply.",
                    "type": "string"
                },
                {
                    "const": "Replace",
                    "description": "`kubectl replace`.",
                    "type": "string"
                },
                {
                    "const": "Update",
                    "description": "A PUT with the live `resourceVersion`.",
                    "type": "string"
                },
                {
                    "const": "Delete",
                    "description": "Delete the live object (prune).",
                    "type": "string"
                },
                {
                    "const": "Skip",
                    "description": "Nothing is sent; `message` says why.",
                    "type": "string"
                }
            ]
        })
    })
}

pub(crate) fn conditions_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    list_of(defined(generator, "Condition", || {
        serde_json::json!({
            "description": "An application condition.",
            "properties": {
                "message": {
                    "description": "The message.",
                    "type": "string"
                },
                "type": {
                    "description": "`ComparisonError`, `RepeatedResourceWarning`, ...",
                    "type": "string"
                }
            },
            "required": [
                "type",
                "message"
            ],
            "type": "object"
        })
    }))
}

fn patch_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    list_of(defined(generator, "PatchOp", || {
        serde_json::json!({
            "description": "One RFC 6902 operation.",
            "properties": {
                "from": {
                    "description": "The source pointer, for `move` and `copy`.",
                    "type": [
                        "string",
                        "null"
                    ]
                },
                "op": {
                    "description": "`add`, `remove`, `replace`, `move`, `copy` or `test`.",
                    "type": "string"
                },
                "path": {
                    "description": "RFC 6901 pointer of the target.",
                    "type": "string"
                },
                "value": {
                    "description": "The value, for `add`, `replace` and `test`."
                }
            },
            "required": [
                "op",
                "path"
            ],
            "type": "object"
        })
    }))
}

fn guard_limits_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    list_of(defined(generator, "GuardLimit", || {
        serde_json::json!({
            "description": "The stable codes of the guard's limits (`sync::GuardLimit`).",
            "oneOf": [
                {
                    "const": "maxPruneFraction",
                    "description": "More than `maxPruneFraction` of the app's live resources would be pruned.",
                    "type": "string"
                },
                {
                    "const": "maxPruneCount",
                    "description": "More than `maxPruneCount` resources would be pruned.",
                    "type": "string"
                },
                {
                    "const": "protectedKind",
                    "description": "A resource of a protected kind would be pruned.",
                    "type": "string"
                }
            ]
        })
    }))
}

/// `needsRefresh` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct NeedsRefreshResult {
    /// The event needs the app refreshed (Argo CD's `skipResourceUpdate` is false).
    pub needs_refresh: bool,
}

/// `operation` result. Times are RFC 3339.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct OperationResult {
    /// The app's `skip-reconcile` annotation is true: the controller does not process it at
    /// all, and nothing else is answered.
    pub skip_reconcile: bool,
    /// What to do with the operation now: `resume`, `terminate` (with `message`),
    /// `waitForRetry` (until `at`) or `retry` (with `message` and `latestRevisions`). Left
    /// out when no operation is in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The operation message to write, for `terminate` and `retry`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the retry starts, for `waitForRetry`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// For `retry`: sync the latest revisions (`retry.refresh`), not the operation's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_revisions: Option<bool>,
    /// When to pick the operation up again if it is still in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_pick_up_at: Option<String>,
    /// For `failedAttempt`: the controller's answer to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_attempt: Option<AttemptResult>,
    /// For `wave`: when the next pass may run (after the wave delay, except after the last
    /// wave).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_pass_at: Option<String>,
}

/// The controller's answer to a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct AttemptResult {
    /// Retry (the phase goes back to Running) or give up (Failed or Error stays).
    pub retry: bool,
    /// The operation message.
    pub message: String,
    /// The retry count after this answer.
    pub retry_count: i64,
    /// When the retry starts.
    pub next_attempt_at: String,
}
