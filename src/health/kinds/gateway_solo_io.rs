//! `gateway.solo.io`: Gateway, MatchableHttpGateway, RouteOption, RouteTable,
//! VirtualHostOption and VirtualService, as Argo CD 3.6.2's scripts (one script for all, the
//! same as `gloo.solo.io`'s).

use super::Rule;
use super::shapes_b::solo_state;

pub(super) const RULES: &[Rule] = &[
    Rule { group: "gateway.solo.io", kind: "Gateway", check: solo_state },
    Rule { group: "gateway.solo.io", kind: "MatchableHttpGateway", check: solo_state },
    Rule { group: "gateway.solo.io", kind: "RouteOption", check: solo_state },
    Rule { group: "gateway.solo.io", kind: "RouteTable", check: solo_state },
    Rule { group: "gateway.solo.io", kind: "VirtualHostOption", check: solo_state },
    Rule { group: "gateway.solo.io", kind: "VirtualService", check: solo_state },
];
