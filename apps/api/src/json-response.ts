import type { ServerResponse } from "node:http";

/**
 * Writes a JSON body straight to the socket: one JSON.stringify (or none, for a pre-serialized body),
 * no ETag hashing, no charset negotiation. Every response of the API goes through here.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string>>): void {
  sendSerializedJson(res, status, JSON.stringify(body), headers);
}

/** Like sendJson for a body serialized once up front (the OpenAPI document, an org's playbook list). */
export function sendSerializedJson(res: ServerResponse, status: number, json: string, headers?: Readonly<Record<string, string>>): void {
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(json));
  res.setHeader("Cache-Control", "no-store");
  if (headers !== undefined) {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  }
  res.end(json);
}
