// The better-sqlite3 build this Node.js can load. better-sqlite3 13 is built on
// Node-API and ships prebuilt binaries; it is the driver on Node 22 and newer, where 12 aborts the
// process whenever a statement is garbage-collected (Node 24's ObjectWrap cleanup hooks:
// `RemoveEnvironmentCleanupHook` asserts, better-sqlite3 #1515). 13 crashes on load on Node 20, which
// keeps 12 (installed as the optional dependency `better-sqlite3-node20`, built at install). Both
// have the same API; the types are better-sqlite3's.
import { createRequire } from 'node:module';
import type BetterSqlite3Type from 'better-sqlite3';

const require = createRequire(import.meta.url);

/** The package name of the driver for the running Node.js. */
export const SQLITE_DRIVER = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20';

/** Its entry file, for worker threads that load the driver themselves (src/store/wal-sync.ts). */
export const sqliteDriverPath: string = require.resolve(SQLITE_DRIVER);

const BetterSqlite3: typeof BetterSqlite3Type = require(SQLITE_DRIVER);
export default BetterSqlite3;
