// Help text of `sigil proxy-config` (src/cli/proxy-config.ts), apart from the command so that help.ts,
// which every `sigil` command loads, does not load the store and the domain behind it.
import { AUTH_METHODS } from '../domain/identity/auth-methods.js';

export const PROXY_CONFIG_HELP = {
  usage:
    'sigil proxy-config create --data-dir DIR [--organization-id ID] [--allowed-origins O,O] [--methods M,M]\n' +
    '                          [--session-seconds N] [--otp-length N] [--otp-alphanumeric true|false]\n' +
    '                          [--otp-seconds N] [--token-seconds N] [--app-name NAME] [--require-token-for-account]\n' +
    '                          [--oauth-client-id PROVIDER=ID ...] [--oauth-redirect-url URL] [--json]\n' +
    '       sigil proxy-config list --data-dir DIR [--json]',
  summary: 'create or list auth proxy configurations (the X-Auth-Proxy-Config-ID values)',
  details: `create makes a configuration for the organization (default: the root organization), with the
proxy's own user, P-256 API key (sealed) and a policy letting it run OTP, login and signup activities,
and prints its id. Browsers send that id as X-Auth-Proxy-Config-ID to the auth proxy port.
  --allowed-origins  exact origins browsers may call from (default *)
  --methods          login methods: ${AUTH_METHODS.join(', ')} (default email,sms,passkey,wallet)
  --session-seconds  lifetime of sessions made by proxy logins (default 900)
  --otp-length 6-9, --otp-alphanumeric, --otp-seconds (code lifetime, max 600), --token-seconds
  (verification token lifetime, max 86400), --app-name (shown in messages),
  --require-token-for-account (account lookups by email/phone need a verification token).
list prints every configuration with its settings.`,
};
