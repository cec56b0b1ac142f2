// The auth proxy server (paths /v1/<operation>, header X-Auth-Proxy-Config-ID, no stamp;
// turnkey-contract.md §5). The login flows it serves arrive with the OTP and OAuth work; until then
// it answers health checks and refuses its operations with a clear JSON error.
import type { Logger } from 'pino';
import { SigilError } from '../errors/errors.js';
import { baseServer } from './public-api.js';

export async function authProxyServer(opts: {
  logger: Logger;
  bodyLimitBytes: number;
  ready: () => Promise<void>;
}) {
  const app = await baseServer(opts);
  app.post<{ Params: { operation: string } }>('/v1/:operation', async (req, reply) => {
    const e = new SigilError('UNIMPLEMENTED', `auth proxy operation not available in this Sigil version: ${req.params.operation}`);
    return reply.status(e.httpStatus).send(e.toBody());
  });
  return app;
}
