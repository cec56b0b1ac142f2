// The login methods an auth proxy configuration enables (turnkey-contract.md §5), in a module of their
// own: the CLI's help text names them without loading the domain (src/cli/proxy-config-help.ts).

/** Login methods as @turnkey/react-wallet-kit reads `enabledProviders` (turnkey-contract.md §5). */
export const AUTH_METHODS = ['email', 'sms', 'passkey', 'wallet', 'google', 'apple', 'facebook', 'x', 'discord'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
export const OAUTH_METHODS: readonly AuthMethod[] = ['google', 'apple', 'facebook', 'x', 'discord'];
