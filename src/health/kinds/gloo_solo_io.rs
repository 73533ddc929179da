//! `gloo.solo.io`: Proxy, Settings, Upstream and UpstreamGroup, as Argo CD 3.6.2's scripts
//! (one script for all, the same as `gateway.solo.io`'s).

use super::Rule;
use super::shapes_b::solo_state;

pub(super) const RULES: &[Rule] = &[
    Rule { group: "gloo.solo.io", kind: "Proxy", check: solo_state },
    Rule { group: "gloo.solo.io", kind: "Settings", check: solo_state },
    Rule { group: "gloo.solo.io", kind: "Upstream", check: solo_state },
    Rule { group: "gloo.solo.io", kind: "UpstreamGroup", check: solo_state },
];
