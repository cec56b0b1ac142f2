// Where the signed-in credential lives between page loads: IndexedDB, which stores CryptoKey objects
// by structured clone, so a non-extractable private key survives a reload without ever existing as
// bytes the page could read or send. Nothing here is ever sent to the server.

export type SignInMethod = 'api-key' | 'passkey' | 'otp';

export interface StoredSession {
  method: SignInMethod;
  organizationId: string;
  organizationName: string;
  userId: string;
  username: string;
  /** Compressed hex of the key that stamps requests (the API key, or the session key). */
  publicKey: string;
  privateKey: CryptoKey;
  /** Session keys expire (stamp_login); imported API keys carry no expiry here. */
  expiresAt?: number;
  /** The passkey that signed in, asked again to cast votes (method 'passkey'). */
  credentialId?: string;
}

const DB_NAME = 'sigil-dashboard';
const STORE = 'session';
const KEY = 'current';

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB is unavailable'));
  });
}

async function run<T>(mode: IDBTransactionMode, op: (store: IDBObjectStore) => IDBRequest): Promise<T> {
  const db = await open();
  try {
    return await new Promise<T>((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = op(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result as T);
      tx.onerror = () => reject(tx.error ?? new Error('IndexedDB transaction failed'));
      tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
    });
  } finally {
    db.close();
  }
}

export const loadSession = () => run<StoredSession | undefined>('readonly', (s) => s.get(KEY));
export const saveSession = (session: StoredSession) => run<unknown>('readwrite', (s) => s.put(session, KEY));
export const clearSession = () => run<unknown>('readwrite', (s) => s.delete(KEY));
