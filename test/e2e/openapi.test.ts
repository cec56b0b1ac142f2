// GET /openapi.json on a real `sigil serve` (src/http/openapi.ts): the document is the one the registry
// generates, and it describes real traffic: requests the official @turnkey/http client stamps (a
// query, an activity) pass the served request schemas, and Sigil's answers and refusals pass the
// served response and error schemas (test/unit/openapi.test.ts checks the document itself against
// the official API).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { httpClient } from '../helpers/clients.js';
import { Registry } from '../../src/operations/registry.js';
import { openApiDocument } from '../../src/operations/openapi.js';

let sigil: SigilInstance;
let doc: any;
const ajv = new Ajv2020({ strict: false, validateFormats: false });

beforeAll(async () => {
  sigil = await startSigil();
  const res = await fetch(`${sigil.url}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = await res.json();
  ajv.addSchema({ $id: 'served', components: doc.components }, 'served');
});
afterAll(async () => {
  await sigil?.stop();
});

/** A schema of the served document, its component references resolved inside that document. */
function validator(schema: unknown) {
  return ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"served#/components/')));
}
const requestSchema = (path: string) => validator(doc.paths[path].post.requestBody.content['application/json'].schema);
const responseSchema = (path: string, status: string) => validator(doc.paths[path].post.responses[status].content['application/json'].schema);

async function send(signed: { url: string; body: string; stamp: { stampHeaderName: string; stampHeaderValue: string } }) {
  const res = await fetch(signed.url, { method: 'POST', body: signed.body, headers: { 'content-type': 'application/json', [signed.stamp.stampHeaderName]: signed.stamp.stampHeaderValue } });
  return { status: res.status, body: await res.json() };
}

describe('GET /openapi.json', () => {
  it('serves the document generated from the registry', async () => {
    const version = ((await (await fetch(`${sigil.url}/.well-known/sigil.json`)).json()) as { version: string }).version;
    expect(doc).toEqual(JSON.parse(JSON.stringify(openApiDocument(new Registry(), version))));
  });

  it("describes a query and an activity as @turnkey/http sends them and as Sigil answers", async () => {
    const client = httpClient(sigil);
    const whoami = await client.stampGetWhoami({ organizationId: sigil.root.organizationId });
    const path = new URL(whoami.url).pathname;
    const checkRequest = requestSchema(path);
    expect(checkRequest(JSON.parse(whoami.body)), ajv.errorsText(checkRequest.errors)).toBe(true);
    const answer = await send(whoami);
    expect(answer.status).toBe(200);
    const checkAnswer = responseSchema(path, '200');
    expect(checkAnswer(answer.body), ajv.errorsText(checkAnswer.errors)).toBe(true);

    const wallet = await client.stampCreateWallet({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: String(Date.now()),
      organizationId: sigil.root.organizationId,
      parameters: { walletName: 'openapi', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] },
    });
    const walletPath = new URL(wallet.url).pathname;
    const checkSubmission = requestSchema(walletPath);
    expect(checkSubmission(JSON.parse(wallet.body)), ajv.errorsText(checkSubmission.errors)).toBe(true);
    const created = await send(wallet);
    expect(created.status).toBe(200);
    expect(created.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const checkActivity = responseSchema(walletPath, '200');
    expect(checkActivity(created.body), ajv.errorsText(checkActivity.errors)).toBe(true);
  });

  it('describes a refusal: a submission the request schema refuses gets the served error body', async () => {
    const client = httpClient(sigil);
    const bad = await client.stampCreateWallet({ type: 'ACTIVITY_TYPE_CREATE_WALLET', timestampMs: String(Date.now()), organizationId: sigil.root.organizationId, parameters: { accounts: [] } as any });
    const path = new URL(bad.url).pathname;
    expect(requestSchema(path)(JSON.parse(bad.body))).toBe(false);
    const refused = await send(bad);
    expect(refused.status).toBe(400);
    const checkError = responseSchema(path, 'default');
    expect(checkError(refused.body), ajv.errorsText(checkError.errors)).toBe(true);
  });
});
