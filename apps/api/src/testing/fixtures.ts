/**
 * Test support for the API's tests (not built into dist): a real JWKS server on 127.0.0.1, token
 * signing, the catalog of testing/config, and in-process doubles of the execution client (a dependency
 * of the app, not the module under test; the real queue is exercised end to end by test/).
 */
import { EventEmitter, once } from "node:events";
import { createHmac, randomUUID, generateKeyPairSync, type JsonWebKey, type KeyObject } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { loadConfig, type Catalog } from "@pes/config";
import { JsonText, RequestRefusal, type PlaybookExecutionResult } from "@pes/contracts";
import { sendJson, startTestHttpServer } from "@pes/local-services";
import { createLogger, type Logger } from "@pes/logger";
import {
  QueueUnavailableError,
  type Batches,
  type ExecuteOptions,
  type ExecutionAnswer,
  type ExecutionClient,
  type ExecutionOutcome,
  type ExecutionRequest,
  type ExecutionView,
  type IdempotencyKeys,
  type MessageExecutionRequest,
  type NewBatch,
  type SubmitOptions,
  type SubmittedExecution,
} from "@pes/executions";
import jwt from "jsonwebtoken";
import { createApp, type AppDeps } from "../app.js";
import { createTokenVerifier } from "../auth/token-verifier.js";

export const ISSUER = "https://idp.test/";
export const AUDIENCE = "playbook-execution-service";

export interface SigningKeyPair {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  jwk: JsonWebKey;
}

export function rsaKey(kid: string): SigningKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { kid, privateKey, publicKey, jwk: { ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" } };
}

export function ecKey(kid: string): SigningKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { kid, privateKey, publicKey, jwk: { ...publicKey.export({ format: "jwk" }), kid, alg: "ES256", use: "sig" } };
}

/** How a misbehaving identity provider answers a JWKS request (it may also never answer). */
export type JwksFault = (req: IncomingMessage, res: ServerResponse) => void;

/** A JWKS endpoint as an identity provider serves it, counting fetches. */
export interface JwksServer {
  url: string;
  port: number;
  fetches: number;
  keys: JsonWebKey[];
  /** While set, every JWKS request is answered by this instead of the key set; clear it to heal. */
  fault: JwksFault | undefined;
  close(): Promise<void>;
}

/** Starts the JWKS endpoint on 127.0.0.1, on `port` if given (to bring an identity provider back where it was). */
export async function startJwksServer(keys: JsonWebKey[], port = 0): Promise<JwksServer> {
  const state: { fetches: number; keys: JsonWebKey[]; fault: JwksFault | undefined } = { fetches: 0, keys, fault: undefined };
  const server = await startTestHttpServer(
    (request, response) => {
      if (request.url !== "/.well-known/jwks.json") {
        response.writeHead(404).end();
        return;
      }
      state.fetches += 1;
      if (state.fault !== undefined) {
        state.fault(response.req, response);
        return;
      }
      sendJson(response, 200, { keys: state.keys });
    },
    { port },
  );
  return {
    url: `${server.url}/.well-known/jwks.json`,
    port: server.port,
    get fetches() {
      return state.fetches;
    },
    get keys() {
      return state.keys;
    },
    set keys(next) {
      state.keys = next;
    },
    get fault() {
      return state.fault;
    },
    set fault(next) {
      state.fault = next;
    },
    close: () => server.close(),
  };
}

export interface TokenOptions {
  key: SigningKeyPair;
  claims?: Record<string, unknown>;
  algorithm?: "RS256" | "ES256";
  kid?: string;
  issuer?: string;
  audience?: string;
  /** Seconds; omit `expiresIn` entirely with `null`. */
  expiresIn?: number | null;
  notBefore?: number;
}

/** Signs a token the way an identity provider would; by default valid for acme's `acme-ci`. */
export function signToken(options: TokenOptions): string {
  const signOptions: jwt.SignOptions = {
    algorithm: options.algorithm ?? "RS256",
    keyid: options.kid ?? options.key.kid,
    issuer: options.issuer ?? ISSUER,
    audience: options.audience ?? AUDIENCE,
  };
  if (options.expiresIn !== null) signOptions.expiresIn = options.expiresIn ?? 300;
  if (options.notBefore !== undefined) signOptions.notBefore = options.notBefore;
  return jwt.sign(options.claims ?? { org_id: "acme", client_id: "acme-ci" }, options.key.privateKey, signOptions);
}

/** A hand-made token: `header.payload.signature` with the given signature bytes. */
export function rawToken(header: object, payload: object, sign: (signingInput: string) => string): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const signingInput = `${encode(header)}.${encode(payload)}`;
  return `${signingInput}.${sign(signingInput)}`;
}

export function hmac(secret: string | Buffer, input: string): string {
  return createHmac("sha256", secret).update(input).digest("base64url");
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * testing/config, loaded as production loads CONFIG_DIR: acme (clients acme-ci, acme-bot; three
 * playbooks; Slack, also on chat.acme.example, alerts to C-ALERTS; PagerDuty), globex (globex-ci; no Slack, no incident
 * tool), initech (API not enabled), umbrella (umbrella-ci; playbooks and a data source of teams payments and search).
 */
const catalog = await loadConfig(fileURLToPath(new URL("./config", import.meta.url)));

/** The test organizations' catalog (immutable, so shared). */
export function testCatalog(): Catalog {
  return catalog;
}

export const CANNED_RESULT: PlaybookExecutionResult = {
  highlights: "Root cause: the checkout pods ran out of memory",
  actionResults: [{ title: "p99", shortAnswer: "2.3 s", mostImportantLink: "http://prometheus.test/graph" }],
};

/**
 * Records every request and answers each with `result` (or what `answer` returns), optionally held back.
 * No coalescing: every request is an execution of its own (the real client's sharing is tested on Redis).
 */
export class FakeExecutionClient extends EventEmitter implements ExecutionClient {
  readonly requests: (ExecutionRequest | MessageExecutionRequest)[] = [];
  readonly timeouts: number[] = [];
  /** The options of each execute() or submit() call. */
  readonly options: (ExecuteOptions & SubmitOptions & { executionId?: string })[] = [];
  /** Every execution it started or answered, by id, for read(). */
  readonly executions = new Map<string, { orgId: string; createdAt: Date; outcome?: ExecutionOutcome; teams?: string[] }>();
  ready = true;
  #gate: Promise<void> = Promise.resolve();
  #openGate: () => void = () => {};

  constructor(
    private readonly answer: (request: ExecutionRequest | MessageExecutionRequest) => PlaybookExecutionResult | RequestRefusal = () => CANNED_RESULT,
  ) {
    super();
  }

  /** Until release(), executions are recorded but not answered. */
  hold(): void {
    this.#gate = new Promise((resolve) => {
      this.#openGate = resolve;
    });
  }

  release(): void {
    this.#openGate();
  }

  /** Resolves once `count` requests have been recorded in total. */
  async waitForRequests(count: number): Promise<void> {
    while (this.requests.length < count) await once(this, "request");
  }

  async start(): Promise<void> {}

  async execute(
    request: ExecutionRequest | MessageExecutionRequest,
    timeoutMs: number,
    options: ExecuteOptions & { executionId?: string } = {},
  ): Promise<ExecutionAnswer> {
    this.options.push(options);
    const executionId = options.executionId ?? randomUUID();
    const joined = this.executions.has(executionId);
    this.executions.set(executionId, { orgId: request.orgId, createdAt: new Date() });
    const [outcome] = await this.executeMany([request], timeoutMs);
    if (outcome === undefined) throw new Error("no result");
    this.executions.set(executionId, { orgId: request.orgId, createdAt: new Date(), outcome });
    return { executionId, joined, outcome };
  }

  /** Records the requests as executions still queued (never answered). */
  async submit(requests: readonly (ExecutionRequest | MessageExecutionRequest)[], options: SubmitOptions = {}): Promise<SubmittedExecution[]> {
    if (!this.ready) throw new QueueUnavailableError("Redis is unreachable");
    this.options.push(options);
    return requests.map((request, index) => {
      const executionId = options.executionIds?.[index] ?? randomUUID();
      const joined = this.executions.has(executionId);
      if (!joined) this.executions.set(executionId, { orgId: request.orgId, createdAt: new Date() });
      this.requests.push(request);
      return { executionId, joined };
    });
  }

  async read(orgId: string, executionId: string): Promise<ExecutionView | undefined> {
    const execution = this.executions.get(executionId);
    if (execution === undefined || execution.orgId !== orgId) return undefined;
    const { createdAt, outcome } = execution;
    const teams = execution.teams === undefined ? {} : { teams: execution.teams };
    return outcome === undefined
      ? { id: executionId, status: "queued", createdAt, ...teams }
      : { id: executionId, status: "completed", createdAt, completedAt: createdAt, outcome, ...teams };
  }

  /** In memory, as the real ones are in Redis: key → the request's hash and an id. */
  readonly idempotencyKeys: IdempotencyKeys = (() => {
    const keys = new Map<string, { requestHash: string; id: string }>();
    return {
      async claim(request, proposedId) {
        const scoped = `${request.orgId}\n${request.key}`;
        const found = keys.get(scoped);
        if (found === undefined) {
          keys.set(scoped, { requestHash: request.requestHash, id: proposedId });
          return { id: proposedId, first: true };
        }
        return found.requestHash === request.requestHash ? { id: found.id, first: false } : { mismatch: true };
      },
      async bind(request, id) {
        keys.set(`${request.orgId}\n${request.key}`, { requestHash: request.requestHash, id });
      },
    };
  })();

  /** Records the batches started; reads find none (async batches are tested on the real client, on Redis). */
  readonly batchesStarted: NewBatch[] = [];
  readonly batches: Batches = {
    start: async (batch) => {
      if (!this.ready) throw new QueueUnavailableError("Redis is unreachable");
      this.batchesStarted.push(batch);
      return { created: true };
    },
    read: async () => undefined,
  };

  async executeMany(requests: readonly (ExecutionRequest | MessageExecutionRequest)[], timeoutMs: number): Promise<ExecutionOutcome[]> {
    for (const request of requests) {
      this.requests.push(request);
      this.timeouts.push(timeoutMs);
    }
    this.emit("request");
    await this.#gate;
    return requests.map((request) => {
      const answer = this.answer(request);
      return answer instanceof RequestRefusal ? answer : JsonText.of(answer);
    });
  }

  async isReady(): Promise<boolean> {
    return this.ready;
  }

  async close(): Promise<void> {}
}

/** Redis is down: every enqueue fails the way the real client fails. */
export class UnavailableExecutionClient extends FakeExecutionClient {
  override ready = false;

  override async executeMany(): Promise<ExecutionOutcome[]> {
    throw new QueueUnavailableError("Redis is unreachable");
  }

  override async read(): Promise<ExecutionView | undefined> {
    throw new QueueUnavailableError("Redis is unreachable");
  }
}

/** Log lines as parsed JSON, with a way to wait for one. */
export class LogCapture extends EventEmitter {
  readonly text: string[] = [];
  readonly stream = new Writable({
    write: (chunk: Buffer | string, _encoding, callback) => {
      this.text.push(chunk.toString());
      this.emit("line");
      callback();
    },
  });

  readonly logger: Logger = createLogger({ name: "api-test", level: "debug", destination: this.stream });

  get all(): string {
    return this.text.join("");
  }

  async waitFor(predicate: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.text
        .flatMap((chunk) => chunk.split("\n"))
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find(predicate);
      if (found !== undefined) return found;
      await once(this, "line");
    }
  }
}

export interface TestAppOptions extends Partial<Omit<AppDeps, "tokenVerifier" | "limits">> {
  jwksUrl: string;
  /** The verifier's deadline for one JWKS fetch (its default when omitted). */
  jwksTimeoutMs?: number;
  limits?: Partial<AppDeps["limits"]>;
}

/** createApp with a real verifier against `jwksUrl`, the test catalog, a fake client and a silent logger. */
export function testApp(options: TestAppOptions): { app: ReturnType<typeof createApp>; client: ExecutionClient } {
  const client = options.executionClient ?? new FakeExecutionClient();
  const app = createApp({
    catalog: options.catalog ?? testCatalog(),
    executionClient: client,
    tokenVerifier: createTokenVerifier({
      jwksUrl: options.jwksUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      orgClaim: "org_id",
      jwksTimeoutMs: options.jwksTimeoutMs,
    }),
    logger: options.logger ?? createLogger({ name: "api-test", level: "silent" }),
    limits: { executionTimeoutMs: 5000, batchMaxItems: 5, bodyLimit: "16kb", maxInFlight: 100, ...options.limits },
    allowedChatHosts: options.allowedChatHosts ?? [],
    devJwks: options.devJwks,
    isShuttingDown: options.isShuttingDown,
    now: options.now ?? (() => new Date("2024-05-01T12:00:00Z")),
    queueDashboard: options.queueDashboard,
    batchStream: options.batchStream,
    ...(options.evidence === undefined ? {} : { evidence: options.evidence }),
    ...(options.charts === undefined ? {} : { charts: options.charts }),
    ...(options.audit === undefined ? {} : { audit: options.audit }),
    ...(options.linkSigningSecret === undefined ? {} : { linkSigningSecret: options.linkSigningSecret }),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.feedback === undefined ? {} : { feedback: options.feedback }),
    ...(options.memory === undefined ? {} : { memory: options.memory }),
    ...(options.slackInteractivity === undefined ? {} : { slackInteractivity: options.slackInteractivity }),
  });
  return { app, client };
}
