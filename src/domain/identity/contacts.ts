// Rules for the contact fields of a user: email addresses and E.164 phone numbers
// (docs/reference/organizations.md; error messages from docs/reference/api.md "Limits").
import { SigilError, invalid } from '../../errors/errors.js';

// Deliberately plain: one @, no spaces, a dot in the domain. Full RFC 5322 is not what users mean.
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/;
const E164 = /^\+[1-9]\d{1,14}$/;

export function checkEmail(email: string, field = 'userEmail'): string {
  if (email.length > 320 || !EMAIL.test(email)) {
    throw new SigilError('INVALID_EMAIL', `invalid email address: ${field} ${JSON.stringify(email.slice(0, 64))}`);
  }
  return email;
}

export function checkPhoneNumber(phone: string, field = 'userPhoneNumber'): string {
  if (!E164.test(phone)) {
    throw invalid(`invalid phone number: ${field} must be in E.164 format such as +13214567890`);
  }
  return phone;
}

export function checkName(name: string, field: string, max = 256): string {
  if (name.trim() === '') throw invalid(`${field} must not be empty`);
  if (name.length > max) throw invalid(`${field} must be at most ${max} characters`);
  return name;
}
