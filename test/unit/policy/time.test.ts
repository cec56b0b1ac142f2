// Timestamp and CronSpan (src/policy/time.ts; docs/reference/policies.md "The language":
// time-based policies).
import { describe, expect, it } from 'vitest';
import type { CronSpanSpec } from '../../../src/policy/time.js';
import { __TESTS, civilFromDays, cronSpanContains, daysFromCivil, parseCron, parseCronSpan, parseDuration, parseTimestamp, resolveTimeZone } from '../../../src/policy/time.js';
import { TimestampValue } from '../../../src/policy/values.js';
import { outcome } from './helpers.js';

function nanos(iso: string): bigint {
  const parsed = parseTimestamp(iso);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.value.nanos;
}

function span(cron: string, duration: string, zone: string): CronSpanSpec {
  const parsed = parseCronSpan(cron, duration, zone);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.value;
}

function at(spec: CronSpanSpec, iso: string): boolean {
  return cronSpanContains(spec, TimestampValue.fromDate(new Date(iso))!);
}

describe('civil date arithmetic', () => {
  it('round-trips every day from 1600 to 2400', () => {
    const first = daysFromCivil(1600, 1, 1);
    const last = daysFromCivil(2400, 12, 31);
    for (let d = first; d <= last; d++) {
      const [y, m, day] = civilFromDays(d);
      if (daysFromCivil(y, m, day) !== d) throw new Error(`round trip failed at ${d}`);
    }
    expect(daysFromCivil(1970, 1, 1)).toBe(0);
    expect(civilFromDays(daysFromCivil(2024, 2, 29))).toEqual([2024, 2, 29]);
  });

  it('agrees with Date.UTC', () => {
    for (const [y, m, d] of [[2026, 3, 8], [2000, 2, 29], [1969, 12, 31], [2100, 3, 1]] as const) {
      expect(daysFromCivil(y, m, d) * 86_400_000).toBe(Date.UTC(y, m - 1, d));
    }
  });
});

describe('Timestamp()', () => {
  it.each([
    ['2026-03-01T00:00:00Z', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01t00:00:00z', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T00:00:00+00:00', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T00:00:00-00:00', '2026-03-01T00:00:00.000Z'],
    ['2024-02-29T23:59:59.999Z', '2024-02-29T23:59:59.999Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
  ])('parses %s', (text, iso) => {
    expect(nanos(text)).toBe(BigInt(new Date(iso).getTime()) * 1_000_000n);
  });

  it('keeps nanoseconds', () => {
    expect(nanos('2026-01-01T00:00:00.000000001Z') - nanos('2026-01-01T00:00:00Z')).toBe(1n);
    expect(nanos('2026-01-01T00:00:00.5Z') - nanos('2026-01-01T00:00:00Z')).toBe(500_000_000n);
  });

  it.each([
    ['2026-03-01T00:00:00+01:00', 'the UTC offset must be zero'],
    ['2026-03-01T00:00:00-05:00', 'the UTC offset must be zero'],
    ['2026-03-01T00:00:00', 'expected RFC 3339'],
    ['2026-03-01 00:00:00Z', 'expected RFC 3339'],
    ['2026-03-01', 'expected RFC 3339'],
    ['2026-3-1T00:00:00Z', 'expected RFC 3339'],
    ['2026-03-01T00:00:00.1234567890Z', 'expected RFC 3339'],
    ['2026-13-01T00:00:00Z', 'month 13 out of range'],
    ['2026-00-01T00:00:00Z', 'month 0 out of range'],
    ['2025-02-29T00:00:00Z', 'day 29 out of range'],
    ['2026-04-31T00:00:00Z', 'day 31 out of range'],
    ['2026-03-01T24:00:00Z', 'time of day out of range'],
    ['2026-03-01T23:60:00Z', 'time of day out of range'],
    ['2016-12-31T23:59:60Z', 'time of day out of range'],
    ['yesterday', 'expected RFC 3339'],
  ])('rejects %s', (text, reason) => {
    const parsed = parseTimestamp(text);
    expect(parsed.ok ? 'accepted' : parsed.reason).toContain(reason);
  });
});

describe('cron expressions', () => {
  it('parses numbers, ranges, lists and *', () => {
    const parsed = parseCron('0,30 9-17 1,15 * 1-5');
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const set = (a: readonly boolean[]) => a.flatMap((v, i) => (v ? [i] : []));
    expect(set(parsed.value.minutes)).toEqual([0, 30]);
    expect(set(parsed.value.hours)).toEqual([9, 10, 11, 12, 13, 14, 15, 16, 17]);
    expect(set(parsed.value.daysOfMonth)).toEqual([1, 15]);
    expect(set(parsed.value.months)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(set(parsed.value.daysOfWeek)).toEqual([1, 2, 3, 4, 5]);
    expect(parsed.value.dayOfMonthRestricted).toBe(true);
    expect(parsed.value.dayOfWeekRestricted).toBe(true);
  });

  it('tolerates runs of whitespace between fields', () => {
    expect(parseCron('  0  9 *\t* 1-5 ').ok).toBe(true);
  });

  it.each([
    ['*/5 * * * *', "step values ('/') are not supported"],
    ['0 9 * * MON', 'names are not supported'],
    ['0 9 * JAN *', 'names are not supported'],
    ['@daily', 'macros such as @daily'],
    ['0 0 9 * * *', 'got 6'],
    ['0 9 * *', 'got 4'],
    ['', 'got 0'],
    ['60 * * * *', 'within 0-59'],
    ['0 24 * * *', 'within 0-23'],
    ['0 0 0 * *', 'within 1-31'],
    ['0 0 32 * *', 'within 1-31'],
    ['0 0 * 13 *', 'within 1-12'],
    ['0 0 * * 7', 'within 0-6'],
    ['0 17-9 * * *', 'range start is after its end'],
    ['0 9 ? * *', 'expected a number'],
    ['0 9 L * *', 'names are not supported'],
    ['0 9 * * 1,', 'expected a number'],
    ['0 009 * * *', 'expected a number'],
  ])('rejects %j', (text, reason) => {
    const parsed = parseCron(text);
    expect(parsed.ok ? 'accepted' : parsed.reason).toContain(reason);
  });
});

describe('durations', () => {
  it.each([
    ['8h', 480],
    ['90m', 90],
    ['1d12h', 2160],
    ['1d', 1440],
    ['2h30m', 150],
    ['7d', 10080],
    ['1m', 1],
  ])('%s = %i minutes', (text, minutes) => {
    expect(parseDuration(text)).toEqual({ ok: true, value: minutes });
  });

  it.each([
    ['', 'expected whole days'],
    ['8', 'expected whole days'],
    ['1.5h', 'expected whole days'],
    ['12h1d', 'expected whole days'],
    ['30s', 'expected whole days'],
    ['8H', 'expected whole days'],
    ['0m', 'longer than zero'],
    ['7d1m', 'at most 7 days'],
    ['169h', 'at most 7 days'],
  ])('rejects %j', (text, reason) => {
    const parsed = parseDuration(text);
    expect(parsed.ok ? 'accepted' : parsed.reason).toContain(reason);
  });
});

describe('time zones', () => {
  it('accepts IANA names and caches them', () => {
    const a = resolveTimeZone('America/New_York');
    const b = resolveTimeZone('America/New_York');
    expect(a.ok && b.ok && a.value === b.value).toBe(true);
    expect(resolveTimeZone('UTC').ok).toBe(true);
    expect(resolveTimeZone('Etc/GMT+5').ok).toBe(true);
  });

  it('resolves any spelling ICU accepts to the canonical name', () => {
    const zone = resolveTimeZone('america/new_york');
    expect(zone.ok && zone.value.name).toBe('America/New_York');
  });

  it('keeps the memo bounded however many spellings policies use', () => {
    for (let i = 0; i < 1100; i++) {
      const spelling = Array.from('america/new_york', (ch, j) => ((i >> j) & 1 ? ch.toUpperCase() : ch)).join('');
      expect(resolveTimeZone(spelling).ok).toBe(true);
      expect(__TESTS.memoizedZoneCount()).toBeLessThanOrEqual(512);
    }
    // Nothing observable breaks after the memo starts over.
    const again = resolveTimeZone('America/New_York');
    expect(again.ok && again.value.offsetAt(Date.UTC(2026, 0, 15))).toBe(-5 * 3_600_000);
  });

  it.each(['+01:00', 'GMT+1 ', 'America/', '', 'Mars/Olympus', '../etc/passwd'])('rejects %j', (name) => {
    expect(resolveTimeZone(name).ok).toBe(false);
  });

  it('computes offsets across DST', () => {
    const ny = resolveTimeZone('America/New_York');
    if (!ny.ok) throw new Error('zone');
    expect(ny.value.offsetAt(Date.UTC(2026, 0, 15))).toBe(-5 * 3_600_000);
    expect(ny.value.offsetAt(Date.UTC(2026, 6, 15))).toBe(-4 * 3_600_000);
  });
});

describe('CronSpan windows', () => {
  it('business hours on weekdays, half-open', () => {
    const s = span('0 9 * * 1-5', '8h', 'America/New_York');
    expect(at(s, '2026-03-10T13:00:00Z')).toBe(true); // Tue 09:00 EDT
    expect(at(s, '2026-03-10T12:59:59.999Z')).toBe(false); // 08:59:59.999
    expect(at(s, '2026-03-10T20:59:59.999Z')).toBe(true);
    expect(at(s, '2026-03-10T21:00:00Z')).toBe(false); // 17:00
    expect(at(s, '2026-03-14T15:00:00Z')).toBe(false); // Saturday
    expect(at(s, '2026-03-16T13:30:00Z')).toBe(true); // Monday
  });

  it('windows that cross midnight and DST changes use elapsed time', () => {
    const s = span('0 22 * * *', '8h', 'America/New_York');
    expect(at(s, '2026-03-08T10:59:00Z')).toBe(true); // 06:59 EDT after spring-forward
    expect(at(s, '2026-03-08T11:00:00Z')).toBe(false); // 07:00 EDT
    expect(at(s, '2026-11-01T09:59:00Z')).toBe(true); // 04:59 EST after fall-back
    expect(at(s, '2026-11-01T10:00:00Z')).toBe(false); // 05:00 EST
    expect(at(s, '2026-07-01T01:59:00Z')).toBe(false); // 21:59 EDT, before the window opens
    expect(at(s, '2026-07-01T02:30:00Z')).toBe(true); // 22:30 EDT
  });

  it('skips a fire time that falls in the spring-forward gap', () => {
    const s = span('30 2 * * *', '1h', 'America/New_York');
    expect(at(s, '2026-03-08T07:10:00Z')).toBe(false); // 03:10 EDT; 02:30 did not exist that day
    expect(at(s, '2026-03-09T06:45:00Z')).toBe(true); // 02:45 EDT the next day
    expect(at(s, '2026-03-07T07:45:00Z')).toBe(true); // 02:45 EST the day before
  });

  it('fires a repeated fall-back wall time once, at its first occurrence', () => {
    const s = span('30 1 * * *', '30m', 'America/New_York');
    expect(at(s, '2026-11-01T05:40:00Z')).toBe(true); // 01:40 EDT (first 01:30 was 05:30Z)
    expect(at(s, '2026-11-01T06:40:00Z')).toBe(false); // 01:40 EST, the repeated hour
  });

  it('ORs day-of-month and day-of-week when both are restricted', () => {
    const s = span('0 12 13 * 5', '1h', 'UTC');
    expect(at(s, '2026-03-13T12:30:00Z')).toBe(true); // Friday the 13th
    expect(at(s, '2026-03-20T12:30:00Z')).toBe(true); // a Friday
    expect(at(s, '2026-04-13T12:30:00Z')).toBe(true); // a Monday the 13th
    expect(at(s, '2026-04-14T12:30:00Z')).toBe(false);
  });

  it('ANDs them when one is *', () => {
    const dom = span('0 12 13 * *', '1h', 'UTC');
    const dow = span('0 12 * * 5', '1h', 'UTC');
    expect(at(dom, '2026-03-20T12:30:00Z')).toBe(false);
    expect(at(dow, '2026-04-13T12:30:00Z')).toBe(false);
  });

  it('restricts months', () => {
    const s = span('0 0 1 1,7 *', '1d', 'UTC');
    expect(at(s, '2026-07-01T23:59:00Z')).toBe(true);
    expect(at(s, '2026-08-01T00:30:00Z')).toBe(false);
  });

  it('handles multi-day windows and the 7-day maximum', () => {
    const weekend = span('0 17 * * 5', '2d15h', 'UTC'); // Fri 17:00 → Mon 08:00
    expect(at(weekend, '2026-03-15T23:00:00Z')).toBe(true); // Sunday
    expect(at(weekend, '2026-03-16T07:59:00Z')).toBe(true);
    expect(at(weekend, '2026-03-16T08:00:00Z')).toBe(false);
    const week = span('0 0 * * 1', '7d', 'UTC');
    expect(at(week, '2026-03-15T23:59:59Z')).toBe(true); // Sunday night, 6d23h59m after Monday
  });

  it('works in zones with half-hour offsets and half-hour DST', () => {
    const kolkata = span('0 9 * * *', '1h', 'Asia/Kolkata');
    expect(at(kolkata, '2026-03-10T03:30:00Z')).toBe(true); // 09:00 IST
    expect(at(kolkata, '2026-03-10T03:29:00Z')).toBe(false);
    const lordHowe = span('0 12 * * *', '1h', 'Australia/Lord_Howe'); // +11 in January (DST of 30 min)
    expect(at(lordHowe, '2026-01-15T01:00:00Z')).toBe(true);
    expect(at(lordHowe, '2026-01-15T00:59:00Z')).toBe(false);
  });

  it('every minute', () => {
    const s = span('* * * * *', '1m', 'Europe/Berlin');
    expect(at(s, '2026-03-29T01:00:30Z')).toBe(true); // during Berlin's spring-forward hour
    expect(at(s, '2026-10-25T00:59:59Z')).toBe(true); // during the repeated hour (first occurrence)
  });

  it('evaluates through the language with time.now', () => {
    const source = "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')";
    expect(outcome(source, { time: { now: new Date('2026-03-10T14:00:00Z') } }, 'time')).toBe(true);
    expect(outcome(source, { time: { now: new Date('2026-03-10T23:00:00Z') } }, 'time')).toBe(false);
    expect(outcome(source, {}, 'time')).toBe('error:missing');
    expect(outcome(source, { time: { now: '2026-03-10T14:00:00Z' } }, 'time')).toBe('error:type');
  });

  it('reports a computed invalid argument as a value error', () => {
    const source = "time.now > Timestamp(CaseInsensitiveString('2026-01-01T00:00:00Z')) && time.now > Timestamp(CaseInsensitiveString('soon'))";
    expect(outcome(source, { time: { now: new Date('2027-01-01T00:00:00Z') } }, 'time')).toBe('error:value');
  });
});
