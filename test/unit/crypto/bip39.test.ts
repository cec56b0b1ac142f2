// BIP39: official Trezor vectors, generation for every length, validation errors, seeds vs @scure/bip39.
import { describe, it, expect } from 'vitest';
import { randomBytes } from 'node:crypto';
import * as scure from '@scure/bip39';
import { wordlist as englishWords } from '@scure/bip39/wordlists/english.js';
import { wordlist as japaneseWords } from '@scure/bip39/wordlists/japanese.js';
import { wordlist as czechWords } from '@scure/bip39/wordlists/czech.js';
import { wordlist as frenchWords } from '@scure/bip39/wordlists/french.js';
import { wordlist as italianWords } from '@scure/bip39/wordlists/italian.js';
import { wordlist as koreanWords } from '@scure/bip39/wordlists/korean.js';
import { wordlist as spanishWords } from '@scure/bip39/wordlists/spanish.js';
import { wordlist as simplifiedChineseWords } from '@scure/bip39/wordlists/simplified-chinese.js';
import { wordlist as traditionalChineseWords } from '@scure/bip39/wordlists/traditional-chinese.js';
import {
  generateMnemonic,
  entropyToMnemonic,
  parseMnemonic,
  validateMnemonic,
  isValidMnemonic,
  mnemonicToSeed,
  translateMnemonic,
  MNEMONIC_WORD_COUNTS,
  MNEMONIC_LANGUAGES,
  type MnemonicLanguage,
} from '../../../src/crypto/bip39.js';
import { CryptoInputError } from '../../../src/crypto/errors.js';
import { loadVectors, hex, unhex } from './helpers.js';

const trezor = loadVectors('bip39-trezor.json');

describe('BIP39 official vectors (trezor/python-mnemonic)', () => {
  for (const [entropy, mnemonic, seed] of trezor.english as [string, string, string][]) {
    it(`${mnemonic.split(' ').length} words: ${mnemonic.slice(0, 40)}...`, () => {
      expect(entropyToMnemonic(unhex(entropy))).toBe(mnemonic);
      const parsed = parseMnemonic(mnemonic);
      expect(hex(parsed.entropy)).toBe(entropy);
      expect(parsed.mnemonic).toBe(mnemonic);
      expect(hex(mnemonicToSeed(mnemonic, trezor.passphrase))).toBe(seed);
    });
  }
});

describe('entropyToMnemonic', () => {
  // Our encoder (src/crypto/bip39.ts) against the library's, for every language and entropy length.
  const wordlists = {
    MNEMONIC_LANGUAGE_ENGLISH: englishWords,
    MNEMONIC_LANGUAGE_JAPANESE: japaneseWords,
    MNEMONIC_LANGUAGE_CZECH: czechWords,
    MNEMONIC_LANGUAGE_FRENCH: frenchWords,
    MNEMONIC_LANGUAGE_ITALIAN: italianWords,
    MNEMONIC_LANGUAGE_KOREAN: koreanWords,
    MNEMONIC_LANGUAGE_SPANISH: spanishWords,
    MNEMONIC_LANGUAGE_SIMPLIFIED_CHINESE: simplifiedChineseWords,
    MNEMONIC_LANGUAGE_TRADITIONAL_CHINESE: traditionalChineseWords,
  } as const;
  it('agrees with @scure/bip39 for every language and length, and on all-zero and all-one entropy', () => {
    expect(Object.keys(wordlists).sort()).toEqual([...MNEMONIC_LANGUAGES].sort());
    for (const [language, words] of Object.entries(wordlists)) {
      for (const bytes of [16, 20, 24, 28, 32]) {
        for (const entropy of [new Uint8Array(bytes), new Uint8Array(bytes).fill(0xff), ...Array.from({ length: 20 }, () => new Uint8Array(randomBytes(bytes)))]) {
          expect(entropyToMnemonic(entropy, language as MnemonicLanguage)).toBe(scure.entropyToMnemonic(entropy, words));
        }
      }
    }
  });
});

describe('generateMnemonic', () => {
  it('defaults to 12 words', () => {
    expect(generateMnemonic().split(' ')).toHaveLength(12);
  });

  for (const n of MNEMONIC_WORD_COUNTS) {
    it(`generates valid ${n}-word mnemonics that @scure/bip39 accepts, with the same seed`, () => {
      const seen = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const m = generateMnemonic(n);
        expect(m.split(' ')).toHaveLength(n);
        expect(scure.validateMnemonic(m, englishWords)).toBe(true);
        expect(validateMnemonic(m)).toBe(m);
        expect(hex(mnemonicToSeed(m, 'pass'))).toBe(hex(scure.mnemonicToSeedSync(m, 'pass')));
        seen.add(m);
      }
      expect(seen.size).toBe(5);
    });
  }

  it('rejects other lengths', () => {
    for (const n of [0, 11, 13, 25, 12.5]) {
      expect(() => generateMnemonic(n)).toThrow(/invalid mnemonic length/);
    }
  });
});

describe('validateMnemonic', () => {
  const good = 'legal winner thank year wave sausage worth useful legal winner thank yellow';

  it('normalizes case and whitespace to the canonical form', () => {
    expect(validateMnemonic(`  LEGAL winner\tthank year wave sausage worth useful legal winner  thank yellow \n`)).toBe(good);
  });

  it('names the bad word position but never the word', () => {
    let err: unknown;
    try {
      validateMnemonic(good.replace('sausage', 'sausagex'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CryptoInputError);
    expect((err as Error).message).toContain('invalid mnemonic');
    expect((err as Error).message).toContain('word 6');
    expect((err as Error).message).not.toContain('sausagex');
    expect((err as CryptoInputError).code).toBe('INVALID_MNEMONIC');
  });

  it('detects a bad checksum', () => {
    expect(() => validateMnemonic(good.replace('yellow', 'year'))).toThrow(/invalid mnemonic: checksum/);
    // swapping two words keeps every word valid but breaks the checksum
    expect(() => validateMnemonic('winner legal thank year wave sausage worth useful legal winner thank yellow')).toThrow(
      /invalid mnemonic/,
    );
  });

  it('rejects wrong word counts and non-strings', () => {
    expect(() => validateMnemonic(good.split(' ').slice(0, 11).join(' '))).toThrow(/invalid mnemonic: 11 words/);
    expect(() => validateMnemonic('')).toThrow(/invalid mnemonic/);
    expect(() => validateMnemonic(undefined as unknown as string)).toThrow(/invalid mnemonic/);
    expect(isValidMnemonic('abandon '.repeat(12).trim())).toBe(false);
    expect(isValidMnemonic(good)).toBe(true);
  });

  it('agrees with @scure/bip39 on random corruptions', () => {
    for (let i = 0; i < 200; i++) {
      const words = generateMnemonic(MNEMONIC_WORD_COUNTS[i % 5]).split(' ');
      const pos = i % words.length;
      words[pos] = englishWords[(i * 7919) % 2048]!;
      const m = words.join(' ');
      expect(isValidMnemonic(m)).toBe(scure.validateMnemonic(m, englishWords));
    }
  });
});

describe('other wordlists', () => {
  it('translates between languages without changing the entropy', () => {
    const en = 'letter advice cage absurd amount doctor acoustic avoid letter advice cage above';
    const ja = translateMnemonic(en, 'MNEMONIC_LANGUAGE_ENGLISH', 'MNEMONIC_LANGUAGE_JAPANESE');
    expect(ja).toBe(scure.entropyToMnemonic(unhex('80808080808080808080808080808080'), japaneseWords));
    expect(ja).toContain('\u3000');
    expect(validateMnemonic(ja, 'MNEMONIC_LANGUAGE_JAPANESE').split(' ')).toHaveLength(12);
    expect(translateMnemonic(ja, 'MNEMONIC_LANGUAGE_JAPANESE', 'MNEMONIC_LANGUAGE_ENGLISH')).toBe(en);
    expect(() => validateMnemonic(ja)).toThrow(/invalid mnemonic/);
  });
});

describe('mnemonicToSeed', () => {
  it('applies NFKD to mnemonic and passphrase like @scure/bip39', () => {
    const m = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
    const pass = 'Ｃａｆé\u0301'; // full-width letters and a combining accent: NFKD changes them
    expect(hex(mnemonicToSeed(m, pass))).toBe(hex(scure.mnemonicToSeedSync(m, pass)));
    expect(hex(mnemonicToSeed(m, pass))).not.toBe(hex(mnemonicToSeed(m, 'Cafe')));
  });
});

describe('BIP39 vectors -> BIP32 master key (xprv column)', () => {
  it('derives the published master xprv from each seed', async () => {
    const { base58check } = await import('@scure/base');
    const { sha256 } = await import('@noble/hashes/sha2.js');
    const { masterKeyFromSeed } = await import('../../../src/crypto/hd.js');
    const b58 = base58check(sha256);
    for (const [, , seed, xprv] of trezor.english as [string, string, string, string][]) {
      const raw = b58.decode(xprv); // version(4) depth(1) fingerprint(4) child(4) chain(32) 00 key(32)
      const master = masterKeyFromSeed('CURVE_SECP256K1', unhex(seed));
      expect(hex(master.chainCode)).toBe(hex(raw.slice(13, 45)));
      expect(hex(master.privateKey)).toBe(hex(raw.slice(46, 78)));
    }
  });
});
