// BIP39 mnemonics: generation, validation with clear errors, and mnemonic -> seed.
// Spec: docs/reference/addresses.md "Derivation" (seed = PBKDF2-HMAC-SHA512(NFKD mnemonic,
// "mnemonic"+passphrase, 2048, 64); lengths 12/15/18/21/24, default 12) and BIP-0039.
// docs/reference/keys.md lists the export languages (MNEMONIC_LANGUAGE_*), so the wordlists of
// @scure/bip39 are wired for them; English is the default everywhere.
//
// PBKDF2 runs in node:crypto (OpenSSL): 1.3 ms instead of 10.4 ms in pure JS (docs/design.md "Stack").
// Validation is our own rather than @scure/bip39's boolean so the error can say *what* is wrong;
// every message contains "invalid mnemonic" because the SDK matches that substring. Messages name
// word positions, never the words: a mnemonic is a secret even when it is mistyped.

import { pbkdf2, pbkdf2Sync, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { wordlist as czech } from '@scure/bip39/wordlists/czech.js';
import { wordlist as french } from '@scure/bip39/wordlists/french.js';
import { wordlist as italian } from '@scure/bip39/wordlists/italian.js';
import { wordlist as japanese } from '@scure/bip39/wordlists/japanese.js';
import { wordlist as korean } from '@scure/bip39/wordlists/korean.js';
import { wordlist as spanish } from '@scure/bip39/wordlists/spanish.js';
import { wordlist as simplifiedChinese } from '@scure/bip39/wordlists/simplified-chinese.js';
import { wordlist as traditionalChinese } from '@scure/bip39/wordlists/traditional-chinese.js';
import { CryptoInputError, describeValue } from './errors.js';
import { sha256 } from './hash.js';

const pbkdf2Async = promisify(pbkdf2);

export const MNEMONIC_WORD_COUNTS = [12, 15, 18, 21, 24] as const;
export type MnemonicWordCount = (typeof MNEMONIC_WORD_COUNTS)[number];
export const DEFAULT_MNEMONIC_WORD_COUNT: MnemonicWordCount = 12;

/** Turnkey's `v1MnemonicLanguage` values (verbatim). */
export const MNEMONIC_LANGUAGES = [
  'MNEMONIC_LANGUAGE_ENGLISH',
  'MNEMONIC_LANGUAGE_SIMPLIFIED_CHINESE',
  'MNEMONIC_LANGUAGE_TRADITIONAL_CHINESE',
  'MNEMONIC_LANGUAGE_CZECH',
  'MNEMONIC_LANGUAGE_FRENCH',
  'MNEMONIC_LANGUAGE_ITALIAN',
  'MNEMONIC_LANGUAGE_JAPANESE',
  'MNEMONIC_LANGUAGE_KOREAN',
  'MNEMONIC_LANGUAGE_SPANISH',
] as const;
export type MnemonicLanguage = (typeof MNEMONIC_LANGUAGES)[number];

const WORDLISTS: Record<MnemonicLanguage, readonly string[]> = {
  MNEMONIC_LANGUAGE_ENGLISH: english,
  MNEMONIC_LANGUAGE_SIMPLIFIED_CHINESE: simplifiedChinese,
  MNEMONIC_LANGUAGE_TRADITIONAL_CHINESE: traditionalChinese,
  MNEMONIC_LANGUAGE_CZECH: czech,
  MNEMONIC_LANGUAGE_FRENCH: french,
  MNEMONIC_LANGUAGE_ITALIAN: italian,
  MNEMONIC_LANGUAGE_JAPANESE: japanese,
  MNEMONIC_LANGUAGE_KOREAN: korean,
  MNEMONIC_LANGUAGE_SPANISH: spanish,
};

// word (NFKD) -> index, built lazily per language.
const INDEXES = new Map<MnemonicLanguage, Map<string, number>>();

function wordIndex(language: MnemonicLanguage): Map<string, number> {
  let index = INDEXES.get(language);
  if (!index) {
    index = new Map(WORDLISTS[language].map((w, i) => [w.normalize('NFKD'), i]));
    INDEXES.set(language, index);
  }
  return index;
}

function assertLanguage(language: string): MnemonicLanguage {
  if (!(MNEMONIC_LANGUAGES as readonly string[]).includes(language)) {
    throw new CryptoInputError('INVALID_MNEMONIC', `invalid mnemonic language: ${describeValue(language)}`);
  }
  return language as MnemonicLanguage;
}

export function isMnemonicWordCount(n: unknown): n is MnemonicWordCount {
  return typeof n === 'number' && (MNEMONIC_WORD_COUNTS as readonly number[]).includes(n);
}

/** Fresh random mnemonic (entropy from node:crypto). */
export function generateMnemonic(
  wordCount: number = DEFAULT_MNEMONIC_WORD_COUNT,
  language: MnemonicLanguage = 'MNEMONIC_LANGUAGE_ENGLISH',
): string {
  if (!isMnemonicWordCount(wordCount)) {
    throw new CryptoInputError(
      'INVALID_MNEMONIC_LENGTH',
      `invalid mnemonic length: ${describeValue(wordCount)}; expected one of ${MNEMONIC_WORD_COUNTS.join(', ')} words`,
    );
  }
  // 12 words = 128 bits of entropy, +32 bits per 3 extra words.
  const entropy = new Uint8Array(randomBytes((wordCount / 3) * 4));
  try {
    return entropyToMnemonic(entropy, language);
  } finally {
    entropy.fill(0);
  }
}

/** BIP39 encoding of 16/20/24/28/32 bytes of entropy. Japanese phrases are joined with U+3000. */
export function entropyToMnemonic(entropy: Uint8Array, language: MnemonicLanguage = 'MNEMONIC_LANGUAGE_ENGLISH'): string {
  if (![16, 20, 24, 28, 32].includes(entropy.length)) {
    throw new CryptoInputError('INVALID_MNEMONIC_LENGTH', `invalid mnemonic entropy: ${entropy.length} bytes`);
  }
  const wordlist = WORDLISTS[assertLanguage(language)];
  // The entropy's bits, then the first entropy.length / 4 bits of its SHA-256, read 11 at a time as
  // word indexes (BIP39). Our own rather than @scure/bip39's, which re-validates all 2048 words of
  // the list on every call: ~6% of a create_wallet's CPU (docs/design.md "The hot path"). The tests compare the two.
  const entropyBits = entropy.length * 8;
  const checksum = sha256(entropy)[0]!;
  const bit = (b: number) => (b < entropyBits ? (entropy[b >> 3]! >> (7 - (b & 7))) & 1 : (checksum >> (7 - (b - entropyBits))) & 1);
  const words = new Array<string>((entropyBits + entropy.length / 4) / 11);
  for (let w = 0; w < words.length; w++) {
    let index = 0;
    for (let b = w * 11; b < w * 11 + 11; b++) index = (index << 1) | bit(b);
    words[w] = wordlist[index]!;
  }
  return words.join(language === 'MNEMONIC_LANGUAGE_JAPANESE' ? '\u3000' : ' ');
}

export interface ParsedMnemonic {
  /** Canonical form: NFKD, lower case, words joined by one ASCII space. */
  mnemonic: string;
  entropy: Uint8Array;
  wordCount: MnemonicWordCount;
}

/**
 * Parse and check a mnemonic: word count, every word in the wordlist, checksum.
 * Surrounding/multiple whitespace and upper case are tolerated; the canonical form is returned.
 */
export function parseMnemonic(mnemonic: string, language: MnemonicLanguage = 'MNEMONIC_LANGUAGE_ENGLISH'): ParsedMnemonic {
  if (typeof mnemonic !== 'string') {
    throw new CryptoInputError('INVALID_MNEMONIC', 'invalid mnemonic: expected a string of words');
  }
  const index = wordIndex(assertLanguage(language));
  const words = mnemonic.normalize('NFKD').toLowerCase().trim().split(/\s+/u).filter((w) => w.length > 0);
  if (!isMnemonicWordCount(words.length)) {
    throw new CryptoInputError(
      'INVALID_MNEMONIC',
      `invalid mnemonic: ${words.length} words; a mnemonic has ${MNEMONIC_WORD_COUNTS.join(', ')} words`,
    );
  }
  // 11 bits per word: ENT bits of entropy followed by ENT/32 checksum bits.
  const totalBits = words.length * 11;
  const checksumBits = totalBits / 33;
  const entropyBits = totalBits - checksumBits;
  const bits = new Uint8Array(totalBits);
  for (let i = 0; i < words.length; i++) {
    const idx = index.get(words[i]!);
    if (idx === undefined) {
      bits.fill(0);
      throw new CryptoInputError('INVALID_MNEMONIC', `invalid mnemonic: word ${i + 1} is not in the BIP39 wordlist`);
    }
    for (let b = 0; b < 11; b++) bits[i * 11 + b] = (idx >> (10 - b)) & 1;
  }
  const entropy = new Uint8Array(entropyBits / 8);
  for (let i = 0; i < entropy.length; i++) {
    let byte = 0;
    for (let b = 0; b < 8; b++) byte = (byte << 1) | bits[i * 8 + b]!;
    entropy[i] = byte;
  }
  const hash = sha256(entropy);
  let checksumOk = true;
  for (let b = 0; b < checksumBits; b++) {
    if (((hash[0]! >> (7 - b)) & 1) !== bits[entropyBits + b]) checksumOk = false;
  }
  bits.fill(0);
  if (!checksumOk) {
    entropy.fill(0);
    throw new CryptoInputError('INVALID_MNEMONIC', 'invalid mnemonic: checksum mismatch (a word is wrong or out of order)');
  }
  return { mnemonic: words.join(' '), entropy, wordCount: words.length };
}

/** Throws CryptoInputError('invalid mnemonic: ...') or returns the canonical mnemonic. */
export function validateMnemonic(mnemonic: string, language: MnemonicLanguage = 'MNEMONIC_LANGUAGE_ENGLISH'): string {
  const parsed = parseMnemonic(mnemonic, language);
  parsed.entropy.fill(0);
  return parsed.mnemonic;
}

export function isValidMnemonic(mnemonic: string, language: MnemonicLanguage = 'MNEMONIC_LANGUAGE_ENGLISH'): boolean {
  try {
    validateMnemonic(mnemonic, language);
    return true;
  } catch {
    return false;
  }
}

/** Same words, another wordlist (e.g. for export in MNEMONIC_LANGUAGE_*). */
export function translateMnemonic(mnemonic: string, from: MnemonicLanguage, to: MnemonicLanguage): string {
  const { entropy } = parseMnemonic(mnemonic, from);
  try {
    return entropyToMnemonic(entropy, to);
  } finally {
    entropy.fill(0);
  }
}

/**
 * BIP39 seed (64 bytes). Exactly the BIP39 function: the mnemonic string is used as given (after
 * NFKD), so callers that accept user input should store/pass `validateMnemonic(...)`'s canonical form.
 */
/**
 * mnemonicToSeed off the event loop: the 2048 PBKDF2 rounds run on libuv's thread pool, so a
 * wallet creation does not stall every other request (docs/design.md "The hot path").
 */
export async function mnemonicToSeedAsync(mnemonic: string, passphrase = ''): Promise<Uint8Array> {
  if (typeof mnemonic !== 'string' || typeof passphrase !== 'string') {
    throw new CryptoInputError('INVALID_MNEMONIC', 'invalid mnemonic: mnemonic and passphrase must be strings');
  }
  const password = Buffer.from(mnemonic.normalize('NFKD'), 'utf8');
  const salt = Buffer.from(('mnemonic' + passphrase).normalize('NFKD'), 'utf8');
  try {
    return new Uint8Array(await pbkdf2Async(password, salt, 2048, 64, 'sha512'));
  } finally {
    password.fill(0);
  }
}

export function mnemonicToSeed(mnemonic: string, passphrase = ''): Uint8Array {
  if (typeof mnemonic !== 'string' || typeof passphrase !== 'string') {
    throw new CryptoInputError('INVALID_MNEMONIC', 'invalid mnemonic: mnemonic and passphrase must be strings');
  }
  const password = Buffer.from(mnemonic.normalize('NFKD'), 'utf8');
  const salt = Buffer.from(('mnemonic' + passphrase).normalize('NFKD'), 'utf8');
  try {
    return new Uint8Array(pbkdf2Sync(password, salt, 2048, 64, 'sha512'));
  } finally {
    password.fill(0);
  }
}
