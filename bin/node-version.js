// Which Node.js runs Sigil (issue 19, "Node.js"): package.json's `engines.node` is the floor, the
// maintained lines are the recommendation. Checked before anything else loads, so a user on an older
// Node reads one clear line instead of a stack trace from a missing API. Plain JavaScript that any
// Node able to parse an ES module can run.
import semver from 'semver';

/** The Node.js lines with upstream support that Sigil is tested on (CI runs the suite on Node 24 too). */
export const RECOMMENDED_NODE_LINES = ['22', '24'];

/** A message naming the supported versions when `version` does not satisfy `range`, else undefined. */
export function unsupportedNodeMessage(version, range) {
  if (semver.satisfies(version, range)) return undefined;
  return (
    `Node.js ${version} is not supported: Sigil needs Node.js ${range} ` +
    `(recommended: ${RECOMMENDED_NODE_LINES.join(' or ')}, the lines with upstream support). ` +
    'Install a supported Node.js and run the command again.'
  );
}
