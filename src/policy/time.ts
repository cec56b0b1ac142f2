// Time in the policy language: `Timestamp('<rfc3339>')` and `CronSpan('<cron>', '<duration>', '<tz>')`
// (docs/reference/policies.md "The language"; docs/reference/policies.md "The language").
//
// Timestamp: RFC 3339 with a zero UTC offset only (`Z`, `z`, `+00:00`, `-00:00`); any other offset is
// rejected so nobody has to reason about which zone a literal meant. Fractions up to nanoseconds.
// Leap seconds (`:60`) are rejected: neither JS time nor the server clock represents them.
//
// CronSpan(cron, duration, tz) is true when `time.now` lies in a window `[fire, fire + duration)`
// for some fire time of the cron schedule, evaluated in the IANA time zone `tz`:
// - cron is strict 5-field `minute hour day-of-month month day-of-week` (dow 0–6, 0 = Sunday) with
//   numbers, ranges `a-b` and lists `a,b,c`, or `*`; no steps (`*/n`), names, `@daily` or seconds.
// - Day-of-month and day-of-week are OR'd when both are restricted (neither is `*`), as in Vixie cron.
// - duration is whole `d`/`h`/`m` units in that order (`8h`, `90m`, `1d12h`), > 0 and ≤ 7 days, and
//   is elapsed time: on DST nights the window's wall-clock end moves (`0 22 * * *`, `8h`, New York
//   ends 07:00 after spring-forward and 05:00 after fall-back).
// - Fire times are wall-clock times in `tz`. A wall time that does not exist (skipped by a DST
//   spring-forward) does not fire that day; a wall time that occurs twice (fall-back) fires at its
//   first occurrence only. The docs are silent on both; these are the choices that never open a
//   window the schedule did not name and never open one twice.
// Time zones come from the ICU data built into Node (`Intl.DateTimeFormat`): pure computation, no
// I/O, and the same answer for the same instant within one Node build.

import { TimestampValue } from './values.js';

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const MS_PER_MINUTE = 60_000;
const MS_PER_HOUR = 3_600_000;
const MS_PER_DAY = 86_400_000;
/** Longest allowed CronSpan duration (docs/reference/policies.md "The language": "at most 7 days"). */
export const MAX_CRON_SPAN_MINUTES = 7 * 24 * 60;

function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

function mod(a: number, b: number): number {
  return ((a % b) + b) % b;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = floorDiv(y, 400);
  const yoe = y - era * 400;
  const doy = floorDiv(153 * (month + (month > 2 ? -3 : 9)) + 2, 5) + day - 1;
  const doe = yoe * 365 + floorDiv(yoe, 4) - floorDiv(yoe, 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Inverse of daysFromCivil: [year, month 1–12, day 1–31]. */
export function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = floorDiv(z, 146097);
  const doe = z - era * 146097;
  const yoe = floorDiv(doe - floorDiv(doe, 1460) + floorDiv(doe, 36524) - floorDiv(doe, 146096), 365);
  const doy = doe - (365 * yoe + floorDiv(yoe, 4) - floorDiv(yoe, 100));
  const mp = floorDiv(5 * doy + 2, 153);
  const day = doy - floorDiv(153 * mp + 2, 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

function daysInMonth(year: number, month: number): number {
  return daysFromCivil(month === 12 ? year + 1 : year, month === 12 ? 1 : month + 1, 1) - daysFromCivil(year, month, 1);
}

// ---------------------------------------------------------------- Timestamp

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parses `Timestamp('…')` text. */
export function parseTimestamp(text: string): Parsed<TimestampValue> {
  const match = RFC3339.exec(text);
  if (!match) return { ok: false, reason: `invalid timestamp '${text}': expected RFC 3339 such as '2026-03-01T00:00:00Z'` };
  const [, ys, mos, ds, hs, mis, ss, frac, offset] = match as unknown as [string, string, string, string, string, string, string, string | undefined, string];
  if (!['Z', 'z', '+00:00', '-00:00'].includes(offset)) {
    return { ok: false, reason: `invalid timestamp '${text}': the UTC offset must be zero ('Z' or '+00:00'), got '${offset}'` };
  }
  const [year, month, day, hour, minute, second] = [ys, mos, ds, hs, mis, ss].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12) return { ok: false, reason: `invalid timestamp '${text}': month ${month} out of range` };
  if (day < 1 || day > daysInMonth(year, month)) return { ok: false, reason: `invalid timestamp '${text}': day ${day} out of range` };
  if (hour > 23 || minute > 59 || second > 59) return { ok: false, reason: `invalid timestamp '${text}': time of day out of range` };
  const seconds = BigInt(daysFromCivil(year, month, day)) * 86_400n + BigInt(hour * 3600 + minute * 60 + second);
  const nanos = frac === undefined ? 0n : BigInt(frac.padEnd(9, '0'));
  return { ok: true, value: new TimestampValue(seconds * 1_000_000_000n + nanos) };
}

// ---------------------------------------------------------------- cron

export interface CronSchedule {
  readonly minutes: readonly boolean[];
  readonly hours: readonly boolean[];
  /** Indexed 1–31. */
  readonly daysOfMonth: readonly boolean[];
  /** Indexed 1–12. */
  readonly months: readonly boolean[];
  /** Indexed 0–6, 0 = Sunday. */
  readonly daysOfWeek: readonly boolean[];
  readonly dayOfMonthRestricted: boolean;
  readonly dayOfWeekRestricted: boolean;
}

const CRON_FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day-of-week', min: 0, max: 6 },
] as const;

function parseCronField(text: string, field: (typeof CRON_FIELDS)[number]): Parsed<boolean[]> {
  const set = new Array<boolean>(field.max + 1).fill(false);
  if (text === '*') {
    for (let i = field.min; i <= field.max; i++) set[i] = true;
    return { ok: true, value: set };
  }
  for (const item of text.split(',')) {
    if (item.includes('/')) return { ok: false, reason: `${field.name} '${text}': step values ('/') are not supported` };
    if (/[A-Za-z]/.test(item)) return { ok: false, reason: `${field.name} '${text}': names are not supported, use numbers` };
    const range = /^(\d{1,2})(?:-(\d{1,2}))?$/.exec(item);
    if (!range) return { ok: false, reason: `${field.name} '${text}': expected a number, a range 'a-b', a list 'a,b' or '*'` };
    const low = Number(range[1]);
    const high = range[2] === undefined ? low : Number(range[2]);
    if (low < field.min || high > field.max) {
      return { ok: false, reason: `${field.name} '${text}': values must be within ${field.min}-${field.max}` };
    }
    if (low > high) return { ok: false, reason: `${field.name} '${text}': range start is after its end` };
    for (let i = low; i <= high; i++) set[i] = true;
  }
  return { ok: true, value: set };
}

/** Parses the first CronSpan argument. */
export function parseCron(text: string): Parsed<CronSchedule> {
  if (text.startsWith('@')) return { ok: false, reason: `invalid cron '${text}': macros such as @daily are not supported` };
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 5) {
    return {
      ok: false,
      reason: `invalid cron '${text}': expected 5 fields (minute hour day-of-month month day-of-week), got ${text.trim() === '' ? 0 : parts.length}`,
    };
  }
  const sets: boolean[][] = [];
  for (let i = 0; i < 5; i++) {
    const parsed = parseCronField(parts[i]!, CRON_FIELDS[i]!);
    if (!parsed.ok) return { ok: false, reason: `invalid cron '${text}': ${parsed.reason}` };
    sets.push(parsed.value);
  }
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = sets as [boolean[], boolean[], boolean[], boolean[], boolean[]];
  return {
    ok: true,
    value: Object.freeze({
      minutes,
      hours,
      daysOfMonth,
      months,
      daysOfWeek,
      dayOfMonthRestricted: parts[2] !== '*',
      dayOfWeekRestricted: parts[4] !== '*',
    }),
  };
}

/** Parses the second CronSpan argument into minutes. */
export function parseDuration(text: string): Parsed<number> {
  const match = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$/.exec(text);
  if (!match || text === '') {
    return { ok: false, reason: `invalid duration '${text}': expected whole days, hours and minutes such as '8h', '90m' or '1d12h'` };
  }
  const minutes = Number(match[1] ?? 0) * 1440 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
  if (minutes <= 0) return { ok: false, reason: `invalid duration '${text}': must be longer than zero` };
  if (minutes > MAX_CRON_SPAN_MINUTES) return { ok: false, reason: `invalid duration '${text}': must be at most 7 days` };
  return { ok: true, value: minutes };
}

// ---------------------------------------------------------------- time zones

/** An IANA time zone with a cached formatter (constructing one costs far more than using it). */
export class TimeZone {
  private readonly formatter: Intl.DateTimeFormat;
  /** The zone's canonical spelling as ICU resolves it (`america/new_york` → `America/New_York`). */
  readonly name: string;

  /** @throws RangeError for a name ICU does not know */
  constructor(name: string) {
    this.formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    this.name = this.formatter.resolvedOptions().timeZone;
  }

  /** Local wall-clock time minus UTC, in milliseconds, at the instant `utcMs`. */
  offsetAt(utcMs: number): number {
    const fields: Record<string, number> = {};
    for (const part of this.formatter.formatToParts(new Date(utcMs))) {
      if (part.type !== 'literal') fields[part.type] = Number(part.value);
    }
    const wall =
      daysFromCivil(fields.year!, fields.month!, fields.day!) * MS_PER_DAY + fields.hour! * MS_PER_HOUR + fields.minute! * MS_PER_MINUTE + fields.second! * 1000;
    return wall - (utcMs - mod(utcMs, 1000));
  }
}

// Memo of resolved zones. Keyed by the spelling used in policies, which anyone creating a policy
// controls (ICU accepts any letter case), so the memo is bounded: past the cap it starts over,
// costing only a formatter construction per zone.
const ZONES = new Map<string, TimeZone>();
const MAX_MEMOIZED_ZONES = 512;
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/** Resolves the third CronSpan argument. Offsets such as '+01:00' are not zone names. */
export function resolveTimeZone(name: string): Parsed<TimeZone> {
  const cached = ZONES.get(name);
  if (cached) return { ok: true, value: cached };
  if (!IANA_NAME.test(name)) return { ok: false, reason: `invalid time zone '${name}': expected an IANA name such as 'America/New_York'` };
  let zone: TimeZone;
  try {
    zone = new TimeZone(name);
  } catch {
    return { ok: false, reason: `invalid time zone '${name}': unknown IANA time zone` };
  }
  if (ZONES.size >= MAX_MEMOIZED_ZONES) ZONES.clear();
  ZONES.set(name, zone);
  return { ok: true, value: zone };
}

// ---------------------------------------------------------------- CronSpan

export interface CronSpanSpec {
  readonly schedule: CronSchedule;
  readonly durationMinutes: number;
  readonly zone: TimeZone;
}

/** Parses and validates the three CronSpan arguments together. */
export function parseCronSpan(cron: string, duration: string, zone: string): Parsed<CronSpanSpec> {
  const schedule = parseCron(cron);
  if (!schedule.ok) return schedule;
  const minutes = parseDuration(duration);
  if (!minutes.ok) return minutes;
  const tz = resolveTimeZone(zone);
  if (!tz.ok) return tz;
  return { ok: true, value: { schedule: schedule.value, durationMinutes: minutes.value, zone: tz.value } };
}

function dayMatches(schedule: CronSchedule, dayIndex: number): boolean {
  const [, month, day] = civilFromDays(dayIndex);
  if (!schedule.months[month]) return false;
  const dom = schedule.daysOfMonth[day]!;
  const dow = schedule.daysOfWeek[mod(dayIndex + 4, 7)]!; // 1970-01-01 was a Thursday
  return schedule.dayOfMonthRestricted && schedule.dayOfWeekRestricted ? dom || dow : dom && dow;
}

/**
 * The UTC instant of local wall time `wallMs` (wall-clock time written as if it were UTC), given
 * the zone offsets in force before and after any transition near it; `null` inside a DST gap.
 */
function wallToInstant(zone: TimeZone, wallMs: number, offsetBefore: number, offsetAfter: number): number | null {
  if (offsetBefore === offsetAfter) return wallMs - offsetBefore;
  let earliest: number | null = null;
  for (const offset of [offsetBefore, offsetAfter]) {
    const instant = wallMs - offset;
    if (zone.offsetAt(instant) === offset && (earliest === null || instant < earliest)) earliest = instant;
  }
  return earliest;
}

/**
 * Whether `now` lies in `[fire, fire + duration)` for a fire time of the schedule. Walks candidate
 * fire times backwards from `now`; the latest fire time not after `now` decides, because every
 * earlier window ends no later than the latest one.
 */
export function cronSpanContains(spec: CronSpanSpec, now: TimestampValue): boolean {
  const { schedule, durationMinutes, zone } = spec;
  const nowMs = now.millis;
  const nowWall = nowMs + zone.offsetAt(nowMs);
  const today = floorDiv(nowWall, MS_PER_DAY);
  // A fire more than `duration` ago cannot cover now; one extra day absorbs offset differences.
  const earliestDay = today - Math.ceil(durationMinutes / 1440) - 1;
  // UTC offsets in one zone differ by far less than this across a transition, so a candidate whose
  // wall time is further than this past now's wall time is certainly in the future.
  const futureSlack = 3 * MS_PER_HOUR;
  for (let dayIndex = today; dayIndex >= earliestDay; dayIndex--) {
    if (!dayMatches(schedule, dayIndex)) continue;
    const dayStart = dayIndex * MS_PER_DAY;
    // Every instant of this local day lies within 14 h of its wall time, so these two samples
    // bracket any transition that can affect it.
    const offsetBefore = zone.offsetAt(dayStart - MS_PER_DAY);
    const offsetAfter = zone.offsetAt(dayStart + 2 * MS_PER_DAY);
    for (let hour = 23; hour >= 0; hour--) {
      if (!schedule.hours[hour]) continue;
      for (let minute = 59; minute >= 0; minute--) {
        if (!schedule.minutes[minute]) continue;
        const wall = dayStart + hour * MS_PER_HOUR + minute * MS_PER_MINUTE;
        if (wall - nowWall > futureSlack) continue;
        const fire = wallToInstant(zone, wall, offsetBefore, offsetAfter);
        if (fire === null || fire > nowMs) continue;
        return nowMs < fire + durationMinutes * MS_PER_MINUTE;
      }
    }
  }
  return false;
}

/** Test seam (read-only): how many zone spellings are memoized. */
export const __TESTS = Object.freeze({ memoizedZoneCount: (): number => ZONES.size });
