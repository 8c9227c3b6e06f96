/**
 * Authentication and authorization of the main port (upstream pkg/kubelet/server/auth.go and
 * the apiserver's authenticator/authorizer contracts, reduced to what the kubelet uses).
 */
import type { IncomingMessage } from 'node:http';

/** upstream user.Info */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** undefined = this authenticator has no opinion (no credential of its kind). */
export interface Authenticator {
  authenticate(req: IncomingMessage): Promise<UserInfo | undefined>;
}

/** upstream authorizer.Attributes for a kubelet request (always a resource request on nodes). */
export interface RequestAttributes {
  user: UserInfo;
  verb: string;
  namespace: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  name: string;
  path: string;
}

export interface Decision {
  allowed: boolean;
  reason: string;
}

export interface Authorizer {
  authorize(attrs: RequestAttributes): Promise<Decision>;
}

/** POSTs a review object to the API server and returns its JSON reply (upstream webhook client). */
export interface ReviewClient {
  post(path: string, body: unknown): Promise<unknown>;
}
