// A real local Ethereum node for the broadcasting tests: anvil 1.7.1 from the npm package
// @foundry-rs/anvil-linux-amd64 (docs/design.md "Stack"), on an ephemeral loopback port, with a chain id
// from the swagger's CAIP-2 list (eip155:11155111) since the API accepts only those.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './sigil.js';

export const ANVIL_BIN = join(ROOT, 'node_modules', '@foundry-rs', 'anvil-linux-amd64', 'bin', 'anvil');

export interface Anvil {
  url: string;
  chainId: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startAnvil(chainId = 11155111): Promise<Anvil> {
  const child = spawn(ANVIL_BIN, ['--port', '0', '--host', '127.0.0.1', '--chain-id', String(chainId)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /Listening on (\S+)/.exec(out);
      if (m) resolve(`http://${m[1]}`);
    });
    child.on('exit', (code) => reject(new Error(`anvil exited with ${code}: ${stderr}`)));
    child.on('error', reject);
  });
  // Keep draining its output so a full pipe never blocks it.
  child.stdout!.resume();
  return {
    url,
    chainId,
    process: child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
