/**
 * Paginated LIST, as client-go's pager: `limit=500`, then `continue` until the server stops
 * giving a token. All pages of one LIST share the response body budget
 * (API_LIMITS.responseBodyBytes), so many pages cannot add up past it, and the page count is
 * bounded. A 410 Gone on a continue token (it expired mid-list) restarts the LIST from the
 * start once, as the pager falls back to a full list.
 */
import { ApiError, ApiLimitError } from '../errors.js';
import { log } from '../util/log.js';
import { API_LIMITS, formatBytes } from './limits.js';
import type { ApiClient } from './types.js';

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

interface Page<T> {
  items?: unknown;
  metadata?: { resourceVersion?: string; continue?: string };
  _t?: T;
}

export async function listAll<T>(
  client: ApiClient,
  path: string,
  query: Record<string, string> = {},
  pageSize: number = API_LIMITS.listPageSize,
): Promise<ListResult<T>> {
  try {
    return await listPages<T>(client, path, query, pageSize);
  } catch (err) {
    if (!(err instanceof ApiError && err.statusCode === 410 && err.reason === 'ContinueExpired')) throw err;
    log('apiclient').info({ path }, 'LIST continue token expired (410 Gone); listing again from the start');
    return listPages<T>(client, path, query, pageSize);
  }
}

async function listPages<T>(
  client: ApiClient,
  path: string,
  query: Record<string, string>,
  pageSize: number,
): Promise<ListResult<T>> {
  const items: T[] = [];
  let budget = API_LIMITS.responseBodyBytes;
  let cont: string | undefined;
  for (let page = 0; ; page++) {
    if (page >= API_LIMITS.listMaxPages)
      throw new ApiLimitError(path, `${API_LIMITS.listMaxPages} pages (LIST page limit)`, 'LIST');
    let list: Page<T>;
    try {
      list = await client.request<Page<T>>({
        method: 'GET',
        path,
        query: { ...query, limit: pageSize, continue: cont },
        maxBodyBytes: budget,
        onBodyBytes: (n) => (budget -= n),
      });
    } catch (err) {
      // Only a continue token can expire mid-list; a 410 on the first page is the caller's.
      if (cont !== undefined && err instanceof ApiError && err.statusCode === 410)
        throw new ApiError(410, 'ContinueExpired', err.message, { cause: err });
      // A later page over what is left of the budget: name the LIST's limit, not the remainder.
      if (page > 0 && err instanceof ApiLimitError && err.limit.endsWith('(response body limit)'))
        throw bodyLimit(path, err);
      throw err;
    }
    if (!Array.isArray(list?.items)) throw new ApiError(0, 'BadResponse', `GET ${path}: a list without an items array`);
    for (const item of list.items as T[]) items.push(item);
    cont = list.metadata?.continue || undefined;
    if (!cont) return { items, resourceVersion: list.metadata?.resourceVersion ?? '' };
    if (budget <= 0) throw bodyLimit(path);
  }
}

const bodyLimit = (path: string, cause?: unknown) =>
  new ApiLimitError(path, `${formatBytes(API_LIMITS.responseBodyBytes)} (response body limit)`, 'response', { cause });
