// Consensus operations: approve_activity, reject_activity (turnkey-semantics.md §3) and
// update_root_quorum (interface-spec.md §4.3). Declared in the policy-engine work.
export {};
