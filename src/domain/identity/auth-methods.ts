// The login methods an auth proxy configuration enables (docs/reference/auth-proxy.md), in a module of their
// own: the CLI's help text names them without loading the domain (src/cli/proxy-config-help.ts).

/** Login methods as @turnkey/react-wallet-kit reads `enabledProviders` (docs/reference/auth-proxy.md). */
export const AUTH_METHODS = ['email', 'sms', 'passkey', 'wallet', 'google', 'apple', 'facebook', 'x', 'discord'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
export const OAUTH_METHODS: readonly AuthMethod[] = ['google', 'apple', 'facebook', 'x', 'discord'];
