import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import type { TokenVerifier } from "../auth/token-verifier.js";
import { AppError } from "../errors.js";

/** Who may open the admin pages. */
export interface AdminAccess {
  /** A bearer token must grant this in `scope`, `scp` or `roles` (ADMIN_SCOPE). */
  scope: string;
  /**
   * HTTP Basic credentials from the environment (ADMIN_USER, ADMIN_PASSWORD), for a browser, which
   * cannot send a bearer token when it opens a page. Undefined: bearer tokens only.
   */
  basic: { user: string; password: string } | undefined;
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * Lets through a bearer token of the identity provider that grants `access.scope`, or the Basic
 * credentials when configured: no or a bad credential is a 401, a valid token without the scope a 403.
 * With Basic configured, the 401 challenges for it, so that a browser asks for the user and password.
 */
export function requireAdmin(access: AdminAccess, verifier: TokenVerifier): RequestHandler {
  const basic = access.basic;
  // Compared as digests: equal lengths for timingSafeEqual, whatever the caller sends.
  const expected = basic === undefined ? undefined : digest(`${basic.user}:${basic.password}`);
  const challenge = basic === undefined ? undefined : { "WWW-Authenticate": 'Basic realm="pes admin", charset="UTF-8"' };
  const refuse = (message: string) => new AppError("unauthenticated", message, challenge);

  return async (req, _res, next) => {
    const authorization = req.headers.authorization;
    if (authorization === undefined || authorization === "") throw refuse("Missing Authorization header");
    const [, scheme = "", credentials = ""] = /^(\S+) +(\S+) *$/.exec(authorization) ?? [];
    if (/^bearer$/i.test(scheme)) {
      const token = await verifier.verify(credentials);
      if (!token.scopes.includes(access.scope)) throw new AppError("forbidden", "The token does not grant the admin scope");
      next();
      return;
    }
    if (/^basic$/i.test(scheme) && expected !== undefined) {
      if (!timingSafeEqual(digest(Buffer.from(credentials, "base64").toString("utf8")), expected)) {
        throw refuse("Wrong user name or password");
      }
      next();
      return;
    }
    throw refuse(expected === undefined ? "Authorization header must use the Bearer scheme" : "Authorization header must use the Bearer or Basic scheme");
  };
}
