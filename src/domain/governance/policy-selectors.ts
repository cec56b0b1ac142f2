// Policies of the legacy selector form (swagger v1CreatePolicyIntent `selectors: v1Selector[]
// {subject, operator, target}` and v1CreatePolicyIntentV2 `v1SelectorV2 {subject, operator,
// targets[]}`), which applications pinned to older SDKs still send as ACTIVITY_TYPE_CREATE_POLICY
// and _V2. Turnkey replaced selectors by the condition/consensus language; Sigil stores such a
// policy as the expressions that say the same, so it is evaluated, listed and updated like any
// other (`get_policy` shows the translation):
//  - every selector must hold (they are joined with `&&`);
//  - a selector about the approving user (`user.…`, "e.g. user.tags" in the SDK's description of
//    subjects) goes to the consensus, inside one `approvers.any(user, …)`, so one approver must meet
//    them all; every other subject (`activity.…`, `wallet.…`, …) goes to the condition;
//  - targets are string literals, except for the ordering operators, whose target must be an
//    integer; IN / NOT_IN / CONTAINS_ONE / CONTAINS_ALL take the list of targets (V1: its one target).
// The result is checked by the policy compiler like any submitted expression, so an unknown subject
// is refused with the compiler's message.
import { invalid } from '../../errors/errors.js';
import type { CreatePolicyParams, Effect } from './policies.js';

export interface LegacySelector {
  subject?: string;
  operator?: string;
  /** V1: one target. */
  target?: string;
  /** V2: several. */
  targets?: string[];
}

export interface LegacyPolicyParams {
  policyName: string;
  selectors: LegacySelector[];
  effect: Effect;
  notes?: string;
}

const SUBJECT = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$/;

/** A string literal of the policy language, which has no escapes: quoted with a quote it lacks. */
function literal(value: string, at: string): string {
  if (/[\u0000-\u001f]/.test(value)) throw invalid(`${at}: a selector target cannot hold control characters`);
  if (!value.includes("'")) return `'${value}'`;
  if (!value.includes('"')) return `"${value}"`;
  throw invalid(`${at}: a selector target cannot hold both ' and "`);
}

function integer(value: string, at: string): string {
  if (!/^-?\d{1,38}$/.test(value)) throw invalid(`${at}: the ordering operators compare integers, got ${JSON.stringify(value)}`);
  return value;
}

/** One selector as an expression over `subject`. */
function expression(s: LegacySelector, at: string): string {
  const subject = s.subject ?? '';
  if (!SUBJECT.test(subject)) throw invalid(`${at}.subject must be a keyword path such as activity.type or user.tags, got ${JSON.stringify(subject)}`);
  const targets = s.targets ?? (s.target !== undefined ? [s.target] : []);
  if (targets.length === 0) throw invalid(`${at} names no target`);
  const one = () => {
    if (targets.length !== 1) throw invalid(`${at}: ${s.operator} takes exactly one target, got ${targets.length}`);
    return targets[0];
  };
  const list = () => `[${targets.map((t, i) => literal(t, `${at}.targets[${i}]`)).join(', ')}]`;
  switch (s.operator) {
    case 'OPERATOR_EQUAL':
      return `${subject} == ${literal(one(), `${at}.target`)}`;
    case 'OPERATOR_NOT_EQUAL':
      return `${subject} != ${literal(one(), `${at}.target`)}`;
    case 'OPERATOR_MORE_THAN':
      return `${subject} > ${integer(one(), `${at}.target`)}`;
    case 'OPERATOR_MORE_THAN_OR_EQUAL':
      return `${subject} >= ${integer(one(), `${at}.target`)}`;
    case 'OPERATOR_LESS_THAN':
      return `${subject} < ${integer(one(), `${at}.target`)}`;
    case 'OPERATOR_LESS_THAN_OR_EQUAL':
      return `${subject} <= ${integer(one(), `${at}.target`)}`;
    case 'OPERATOR_CONTAINS':
      return `${subject}.contains(${literal(one(), `${at}.target`)})`;
    case 'OPERATOR_IN':
      return `${subject} in ${list()}`;
    case 'OPERATOR_NOT_IN':
      return `!(${subject} in ${list()})`;
    case 'OPERATOR_CONTAINS_ONE':
      return `${list()}.any(t, ${subject}.contains(t))`;
    case 'OPERATOR_CONTAINS_ALL':
      return `${list()}.all(t, ${subject}.contains(t))`;
    default:
      throw invalid(`${at}.operator ${JSON.stringify(s.operator ?? '')} is not an operator of the selector form`);
  }
}

/** The current form of a selector policy: its condition and consensus expressions. */
export function policyFromSelectors(p: LegacyPolicyParams): CreatePolicyParams {
  if (!Array.isArray(p.selectors) || p.selectors.length === 0) {
    throw invalid('selectors must list at least one selector: a policy without any would apply to every activity');
  }
  const condition: string[] = [];
  const approver: string[] = [];
  p.selectors.forEach((s, i) => {
    const e = expression(s, `selectors[${i}]`);
    (/^user\./.test(s.subject ?? '') ? approver : condition).push(e);
  });
  return {
    policyName: p.policyName,
    effect: p.effect,
    notes: p.notes ?? '',
    ...(condition.length > 0 ? { condition: condition.join(' && ') } : {}),
    ...(approver.length > 0 ? { consensus: `approvers.any(user, ${approver.join(' && ')})` } : {}),
  };
}
