// Policy and smart contract interface operations (interface-spec.md §4.4; turnkey-semantics.md §1.1).
export {};
